//! [`Fleet`]: many match bots on tokio, ticking at the match rate in groups
//! of [`GROUP`] (one task and one timer wake-up a tick for the whole group),
//! with live counters while they run and a [`FleetReport`] at the end. A
//! group whose bots' servers are all on loopback (and that goes through no
//! relay) shares one socket ([`SharedSocket`]): one `recvmmsg` and one
//! `sendmmsg` a tick for the group.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use hightick_engine::BotGame;
use hightick_engine::events::ReliableEvent;
use hightick_net::ConnectToken;
use tokio::task::JoinHandle;

use crate::bots::match_bot::{MatchBot, MatchBotConfig};
use crate::bots::shared_socket::SharedSocket;
use crate::counters::{BotCounters, LiveCounters};
use crate::error::SwarmError;
use hightick_client::Quality;

/// One bot to run: the server it plays on and its connect token's bytes.
#[derive(Debug, Clone)]
pub struct BotTarget {
    /// The game server's address (must be listed in the token).
    pub server: SocketAddr,
    /// The encoded connect token.
    pub token: Vec<u8>,
}

/// How a fleet runs.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// How long the bots play (a stop signal may end it sooner).
    pub duration: Duration,
    /// Bot ticks per second (the match rate).
    pub tick_rate_hz: u32,
    /// The bots' settings.
    pub bot: MatchBotConfig,
    /// Relays in the path (the impairment proxy): a bot whose server is
    /// `server` sends through `via` (overriding `bot.via`).
    pub relays: Vec<Relay>,
}

/// A relay a fleet's bots send through to reach a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relay {
    /// The game server's address.
    pub server: SocketAddr,
    /// Where its bots send instead.
    pub via: SocketAddr,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            duration: Duration::from_secs(10),
            tick_rate_hz: 128,
            bot: MatchBotConfig::default(),
            relays: Vec::new(),
        }
    }
}

/// What a fleet saw, summed over its bots.
#[derive(Debug, Clone)]
pub struct FleetReport {
    /// Bots launched.
    pub bots: u64,
    /// Bots that could not start (socket, map).
    pub failed: u64,
    /// The bots' counters, summed (`connected` and `disconnected` count bots).
    pub counters: BotCounters,
    /// Snapshot inter-arrival over every bot, microseconds.
    pub interarrival: Histogram<u64>,
    /// Wall time the fleet ran.
    pub elapsed: Duration,
    /// The names of the game's kinds of event (`counters.events` by index).
    pub event_kinds: &'static [&'static str],
    /// What the players would have seen, over every bot.
    pub quality: Quality,
}

impl FleetReport {
    /// Median snapshot inter-arrival, microseconds.
    pub fn interarrival_p50_us(&self) -> u64 {
        self.interarrival.value_at_quantile(0.5)
    }

    /// 99th percentile snapshot inter-arrival, microseconds.
    pub fn interarrival_p99_us(&self) -> u64 {
        self.interarrival.value_at_quantile(0.99)
    }

    /// Events of the kind called `name` (0 if the game has no such kind).
    pub fn events_named(&self, name: &str) -> u64 {
        self.counters.events_named(self.event_kinds, name)
    }
}

impl fmt::Display for FleetReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.counters;
        writeln!(
            f,
            "bots {} (failed {}), connected {}, disconnected {}, over {:.1} s",
            self.bots,
            self.failed,
            c.connected,
            c.disconnected,
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "snapshots {}, decode errors {}, desyncs {}, resyncs requested {}",
            c.snapshots, c.decode_errors, c.desyncs, c.resyncs_requested
        )?;
        write!(f, "events")?;
        for (name, n) in self.event_kinds.iter().zip(c.events) {
            if n > 0 {
                write!(f, " {name} {n}")?;
            }
        }
        writeln!(f)?;
        writeln!(
            f,
            "in {} B / {} packets, out {} B / {} packets",
            c.bytes_in, c.packets_in, c.bytes_out, c.packets_out
        )?;
        writeln!(
            f,
            "snapshot inter-arrival p50 {} us, p99 {} us",
            self.interarrival_p50_us(),
            self.interarrival_p99_us()
        )?;
        let q = &self.quality;
        write!(
            f,
            "snapshot age beyond the fastest path p50 {} us, p99 {} us; \
             position error p99 {} mm ({} checked, {} not); \
             client events dropped {}",
            q.snapshot_age_us.value_at_quantile(0.5),
            q.snapshot_age_us.value_at_quantile(0.99),
            q.position_error_mm.value_at_quantile(0.99),
            q.position_error_mm.len(),
            q.positions_unchecked,
            c.events_dropped
        )
    }
}

/// Bots one task steps at their common tick. A task and a timer per bot
/// cost a wake-up each per bot tick; a group pays one for all of them.
pub(crate) const GROUP: usize = 32;

struct BotOutcome {
    counters: BotCounters,
    interarrival: Option<Histogram<u64>>,
    quality: Quality,
}

/// A running fleet: one tokio task per group of bots, live counters, a
/// report at the end.
#[derive(Debug)]
pub struct Fleet {
    event_kinds: &'static [&'static str],
    live: Arc<LiveCounters>,
    stop: Arc<AtomicBool>,
    /// Each group's task and its number of bots.
    groups: Vec<(GroupTask, usize)>,
    bots: usize,
    started: Instant,
}

/// A group's task: one outcome per bot.
type GroupTask = JoinHandle<Vec<Result<BotOutcome, SwarmError>>>;

/// One bot of a group, before it binds.
struct Member {
    token: ConnectToken,
    index: u16,
    config: MatchBotConfig,
}

impl Member {
    /// Whether it can take a seat on a [`SharedSocket`]: no relay, no
    /// address of its own beyond loopback, every server it may reach on
    /// IPv4 loopback.
    fn can_share(&self) -> bool {
        self.config.via.is_none()
            && self.config.bind.ip().is_loopback()
            && self
                .token
                .server_addresses
                .as_slice()
                .iter()
                .all(|a| matches!(a.ip(), IpAddr::V4(ip) if ip.is_loopback()))
    }
}

impl fmt::Debug for BotOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BotOutcome")
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl Fleet {
    /// Starts one bot of game `G` per target, a task each on the current
    /// tokio runtime. Every token is checked first: one that does not
    /// decode or does not list its server fails the launch. The fleet stops
    /// after `config.duration` or when `stop` is set.
    pub fn launch<G: BotGame>(
        targets: &[BotTarget],
        config: &FleetConfig,
        stop: Arc<AtomicBool>,
    ) -> Result<Self, SwarmError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| SwarmError::NoRuntime)?;
        let mut tokens = Vec::with_capacity(targets.len());
        for (bot, t) in targets.iter().enumerate() {
            let token = ConnectToken::decode(&t.token)
                .map_err(|source| SwarmError::Token { bot, source })?;
            if !token.server_addresses.contains(&t.server) {
                return Err(SwarmError::ServerNotInToken {
                    bot,
                    server: t.server,
                });
            }
            tokens.push(token);
        }
        let live = Arc::new(LiveCounters::default());
        let started = Instant::now();
        let end = started + config.duration;
        let period = Duration::from_nanos(1_000_000_000 / u64::from(config.tick_rate_hz.max(1)));
        let mut members: Vec<Member> = tokens
            .into_iter()
            .zip(targets)
            .enumerate()
            .map(|(i, (token, target))| {
                let mut bot = config.bot.clone();
                if let Some(r) = config.relays.iter().find(|r| r.server == target.server) {
                    bot.via = Some(r.via);
                }
                Member {
                    token,
                    index: i as u16,
                    config: bot,
                }
            })
            .collect();
        let bots = members.len();
        let mut groups = Vec::with_capacity(bots.div_ceil(GROUP));
        while !members.is_empty() {
            let group: Vec<Member> = members.drain(..GROUP.min(members.len())).collect();
            let size = group.len();
            let (live, stop) = (live.clone(), stop.clone());
            let task = runtime
                .spawn(async move { run_group::<G>(group, end, period, &live, &stop).await });
            groups.push((task, size));
        }
        Ok(Self {
            event_kinds: <G::Event as ReliableEvent>::KINDS,
            live,
            stop,
            groups,
            bots,
            started,
        })
    }

    /// The names of the game's kinds of event (`live().events` by index).
    pub fn event_kinds(&self) -> &'static [&'static str] {
        self.event_kinds
    }

    /// The fleet's counters so far (for a progress line).
    pub fn live(&self) -> BotCounters {
        self.live.read()
    }

    /// Bots in the fleet.
    pub fn bots(&self) -> usize {
        self.bots
    }

    /// Whether every bot has left (its match ended, or the fleet stopped):
    /// [`finish`](Self::finish) then returns at once.
    pub fn is_finished(&self) -> bool {
        self.groups.iter().all(|(task, _)| task.is_finished())
    }

    /// Asks every bot to stop at its next tick.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for every bot and sums what they saw.
    pub async fn finish(self) -> FleetReport {
        let mut report = FleetReport {
            bots: self.bots as u64,
            failed: 0,
            counters: BotCounters::default(),
            interarrival: Histogram::new_with_bounds(1, 60_000_000, 2)
                .expect("constant histogram bounds are valid"),
            elapsed: Duration::ZERO,
            event_kinds: self.event_kinds,
            quality: Quality::default(),
        };
        for (task, size) in self.groups {
            let Ok(outcomes) = task.await else {
                report.failed += size as u64;
                continue;
            };
            for outcome in outcomes {
                let Ok(outcome) = outcome else {
                    report.failed += 1;
                    continue;
                };
                report.counters.add(&outcome.counters);
                report.quality.add(&outcome.quality);
                if let Some(h) = outcome.interarrival {
                    // Same bounds on both sides: cannot fail.
                    let _ = report.interarrival.add(&h);
                }
            }
        }
        report.elapsed = self.started.elapsed();
        report
    }
}

/// Runs a fleet of game `G` to its end: [`Fleet::launch`], then
/// [`Fleet::finish`].
pub async fn run_fleet<G: BotGame>(
    targets: &[BotTarget],
    config: &FleetConfig,
    stop: Arc<AtomicBool>,
) -> Result<FleetReport, SwarmError> {
    Ok(Fleet::launch::<G>(targets, config, stop)?.finish().await)
}

/// Binds a group's bots and ticks them together every `period` (or at
/// once when the group fell behind: ticks are skipped rather than bunched)
/// until `end` or `stop`; a bot whose match ended leaves when the server
/// closes it. The bots share one socket when they can
/// ([`Member::can_share`]), else each binds its own. One outcome per bot,
/// in no particular order.
async fn run_group<G: BotGame>(
    members: Vec<Member>,
    end: Instant,
    period: Duration,
    live: &LiveCounters,
    stop: &AtomicBool,
) -> Vec<Result<BotOutcome, SwarmError>> {
    let mut outcomes = Vec::with_capacity(members.len());
    // A socket that cannot be bound (no device `lo` to bind to, say) leaves
    // each bot its own.
    let mut shared = if members.iter().all(Member::can_share) {
        SharedSocket::bind().ok()
    } else {
        None
    };
    // Seat k is bots[k], `None` once it left (or never started).
    let mut bots = Vec::with_capacity(members.len());
    for (seat, m) in members.into_iter().enumerate() {
        let bot = match shared {
            Some(_) => MatchBot::<G>::seated(m.token, m.index, &m.config, seat),
            None => MatchBot::<G>::bind(m.token, m.index, &m.config).await,
        };
        match bot {
            Ok(bot) => bots.push(Some((bot, BotCounters::default()))),
            Err(e) => {
                bots.push(None);
                outcomes.push(Err(e));
            }
        }
    }
    let mut playing = bots.iter().flatten().count();
    let mut next = Instant::now();
    while playing > 0 && !stop.load(Ordering::Relaxed) {
        next += period;
        let now = Instant::now();
        if next < now {
            next = now;
        }
        let last = next >= end;
        tokio::time::sleep_until(next.min(end).into()).await;
        if let Some(socket) = shared.as_mut() {
            let now = Instant::now();
            socket.receive(|seat, from, bytes| {
                if let Some(Some((bot, _))) = bots.get_mut(seat) {
                    bot.core_mut().handle_datagram(now, from, bytes);
                }
            });
        }
        for slot in bots.iter_mut() {
            let Some((bot, reported)) = slot else {
                continue;
            };
            match shared.as_mut() {
                Some(socket) => bot.tick_seated(socket),
                None => bot.tick_now(),
            }
            let counters = bot.counters();
            live.advance(reported, &counters);
            *reported = counters;
            if bot.is_disconnected() {
                if let Some((bot, _)) = slot.take() {
                    outcomes.push(Ok(outcome(bot, shared.as_mut())));
                }
                playing -= 1;
            }
        }
        if let Some(socket) = shared.as_mut() {
            socket.flush();
        }
        if last {
            break;
        }
    }
    for (bot, _) in bots.into_iter().flatten() {
        outcomes.push(Ok(outcome(bot, shared.as_mut())));
    }
    if let Some(socket) = shared.as_mut() {
        socket.flush();
    }
    outcomes
}

/// What a bot saw, once it says goodbye (on its group's `shared` socket if
/// it has a seat there).
fn outcome<G: BotGame>(mut bot: MatchBot<G>, shared: Option<&mut SharedSocket>) -> BotOutcome {
    let counters = bot.counters();
    let interarrival = Some(bot.interarrival().clone());
    let quality = bot.quality().clone();
    match shared {
        Some(socket) => bot.disconnect_seated(socket),
        None => bot.disconnect(),
    }
    BotOutcome {
        counters,
        interarrival,
        quality,
    }
}
