//! The driver: one tokio task stepping many virtual players.
//!
//! A run has a few drivers (one per core by default). Each owns its share
//! of the players, a [`TimerWheel`] saying when each sleeping player wakes,
//! one [`KeepAlivePool`] per target, and the set of futures in flight
//! (requests, connection set-ups, matches being played). Its loop waits for
//! whichever comes first: a future finishing, or the next 1 ms tick, when
//! it admits new players (ramp-up or arrivals), releases paced players and
//! wakes the players whose time has come. A player is a
//! `Player` struct, not a task: a sleeping player
//! costs its struct and one wheel entry.
//!
//! Everything a driver measures goes into its own [`Interval`] behind a
//! mutex the run's collector takes once per interval.
//!
//! A target with several URLs (`gateway = ["http://a:8080",
//! "http://b:8080"]`) has a pool per URL. Player `i` starts on URL `i % n`;
//! when a request there fails at the transport level (refused, reset,
//! timed out) the player fails over to the next URL, round robin, and the
//! retry goes there, within the step's retry policy. So does a step whose
//! retries all answered a status of the policy's `on_status` (each URL
//! once per step). The player stays where it moved, push socket included:
//! a dead gateway's players move once. Failovers and requests per URL are
//! counted in the [`Interval`].

use std::collections::VecDeque;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use http::Request;
use http::header::{CONTENT_TYPE, HOST};
use http_body_util::Full;
use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::bots::link::LinkProxies;
use crate::bots::match_bot::MatchBotConfig;
use crate::bots::play::{MatchPlayer, MatchTicket, decode_token};
use crate::distributed::allow::AllowList;
use crate::interval::{ErrorKind, Interval, MatchSample};
use crate::keepalive::{self, Answer, KeepAlivePool, Sender, Waiting};
use crate::player::{Phase, Player, PlayerValues};
use crate::push::{Arrived, Dial, PushLink};
use crate::request_log::{Entry, RequestLog};
use crate::scenario::arrivals::arrival_offset;
use crate::scenario::template::Escape;
use crate::scenario::{Capture, HttpStep, Model, PushWait, Scenario, Step, StepKind};
use crate::wheel::TimerWheel;

/// Which part of a distributed run this process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// This agent's index.
    pub index: u32,
    /// Agents in the run.
    pub count: u32,
}

impl Shard {
    /// The whole run in one process.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };
}

/// What drivers share with the run: the pacing rate and the stop signal.
#[derive(Debug)]
pub struct Control {
    /// The paced rate for this whole process, per second (f64 bits; 0: not paced).
    rate_bits: AtomicU64,
    /// Set to end the run early.
    pub stop: AtomicBool,
    /// Set when match bots should stop.
    pub match_stop: Arc<AtomicBool>,
}

impl Control {
    /// Not paced, not stopped.
    pub fn new() -> Self {
        Self {
            rate_bits: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            match_stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Sets this process's paced rate (0: not paced).
    pub fn set_rate(&self, per_second: f64) {
        self.rate_bits
            .store(per_second.max(0.0).to_bits(), Ordering::Relaxed);
    }

    /// This process's paced rate (0: not paced).
    pub fn rate(&self) -> f64 {
        f64::from_bits(self.rate_bits.load(Ordering::Relaxed))
    }
}

impl Default for Control {
    fn default() -> Self {
        Self::new()
    }
}

/// What a driver shares with the collector.
#[derive(Debug)]
pub struct DriverSlot {
    /// Measurements of the current interval.
    pub interval: Mutex<Interval>,
    /// Players alive.
    pub users: AtomicU64,
    /// Futures in flight.
    pub in_flight: AtomicU64,
}

impl DriverSlot {
    /// An empty slot for a scenario with `steps` steps.
    pub fn new(steps: usize) -> Self {
        Self {
            interval: Mutex::new(Interval::new(steps)),
            users: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
        }
    }
}

/// Everything one driver needs to know.
#[derive(Debug, Clone)]
pub struct DriverPlan {
    /// The scenario.
    pub scenario: Arc<Scenario>,
    /// The targets' resolved addresses, URL by URL in the order of
    /// [`Scenario::target_urls`].
    pub addrs: Vec<SocketAddr>,
    /// How each of them is dialled: TLS for `https://`
    /// ([`crate::run::secure_targets`]), else `None`.
    pub secure: Vec<Option<crate::tls::Secure>>,
    /// This process's part of the run.
    pub shard: Shard,
    /// This driver's index in the process.
    pub driver: u32,
    /// Drivers in the process.
    pub drivers: u32,
    /// When the run (and the ramp-up) starts.
    pub start: Instant,
    /// When no more steps start.
    pub end: Instant,
    /// Seed of this driver's random draws.
    pub seed: u64,
    /// The raw per-request log, when the scenario asks for one.
    pub log: Option<RequestLog>,
    /// The game `play_match` steps play.
    pub player: MatchPlayer,
    /// Where load may go: a connect token naming a server off this list
    /// fails its step (an agent's `--allow-target`; anywhere for local runs).
    pub allow: Arc<AllowList>,
    /// The proxies of the scenario's `link`, if it has one.
    pub(crate) links: Option<Arc<LinkProxies>>,
}

/// A flight's outcome; `url` is a target URL's index (its pool's), in the
/// order of [`Scenario::target_urls`].
enum Done {
    Http {
        player: u32,
        url: usize,
        sender: Option<Sender>,
        result: Result<Answer, ErrorKind>,
    },
    Connected {
        url: usize,
        result: Result<Sender, ErrorKind>,
    },
    Match {
        player: u32,
        result: Result<MatchSample, ErrorKind>,
    },
    PushOpened {
        player: u32,
        result: Result<PushLink, ErrorKind>,
    },
    Pushed {
        player: u32,
        link: Option<PushLink>,
        result: Result<Arrived, ErrorKind>,
    },
}

type Flight = Pin<Box<dyn Future<Output = Done> + Send>>;

const TICK: Duration = Duration::from_millis(1);
/// How long in-flight work may finish after the run ends.
const GRACE: Duration = Duration::from_secs(3);

struct Driver {
    scenario: Arc<Scenario>,
    plan: DriverPlan,
    slot: Arc<DriverSlot>,
    control: Arc<Control>,
    players: Vec<Player>,
    free: Vec<u32>,
    alive: u64,
    wheel: TimerWheel,
    /// One pool per target URL, in the order of [`Scenario::target_urls`].
    pools: Vec<KeepAlivePool>,
    /// Per target, the index of its first URL's pool.
    first_pool: Vec<usize>,
    /// Each player's push socket, once a push step opened it.
    links: Vec<Option<PushLink>>,
    flights: FuturesUnordered<Flight>,
    rng: SmallRng,
    due: Vec<u32>,
    paced: VecDeque<u32>,
    tokens: f64,
    last_tick: Instant,
    /// Closed model: local index of the next player to admit.
    next_local: u64,
    /// Open model: the next arrival and the per-driver rate it was drawn at.
    next_arrival: Option<(Instant, f64)>,
    arrivals: u64,
    capacity: usize,
    url: String,
    header: String,
    body: String,
    bot: MatchBotConfig,
}

/// Runs one driver until the plan's end (or a stop), then lets in-flight
/// work finish for a short grace period.
pub async fn drive(plan: DriverPlan, slot: Arc<DriverSlot>, control: Arc<Control>) {
    let mut driver = Driver::new(plan, slot, control);
    driver.run().await;
}

impl Driver {
    fn new(plan: DriverPlan, slot: Arc<DriverSlot>, control: Arc<Control>) -> Self {
        let scenario = plan.scenario.clone();
        let sources: Arc<[IpAddr]> = Arc::from(scenario.http.sources.clone());
        let per_process = (plan.shard.count as usize).max(1);
        let per_driver = per_process * plan.drivers.max(1) as usize;
        let connections = scenario
            .http
            .connections
            .div_ceil(plan.drivers.max(1) as usize);
        let pools = plan
            .addrs
            .iter()
            .map(|a| {
                let offset = (plan.driver as usize) * connections;
                KeepAlivePool::new(*a, connections, sources.clone(), offset)
            })
            .collect();
        let first_pool = scenario
            .targets
            .iter()
            .scan(0, |next, t| {
                let first = *next;
                *next += t.urls.len();
                Some(first)
            })
            .collect();
        let capacity = (scenario.users as usize).div_ceil(per_driver).max(1);
        let think_span = scenario
            .all_steps()
            .map(|s| s.think.mean().as_millis() as usize)
            .max()
            .unwrap_or(0);
        let slots = (think_span * 4).clamp(1024, 1 << 16);
        let bot = MatchBotConfig {
            mode: scenario.matches.mode.clone(),
            settings: scenario.matches.settings.clone(),
            seed: scenario.matches.seed,
            ..MatchBotConfig::default()
        };
        Self {
            rng: SmallRng::seed_from_u64(plan.seed),
            wheel: TimerWheel::new(plan.start, TICK, slots),
            last_tick: plan.start,
            players: Vec::with_capacity(if scenario.model == Model::Open {
                capacity
            } else {
                capacity.min(1 << 20)
            }),
            scenario,
            slot,
            control,
            free: Vec::new(),
            alive: 0,
            pools,
            first_pool,
            links: Vec::new(),
            flights: FuturesUnordered::new(),
            due: Vec::new(),
            paced: VecDeque::new(),
            tokens: 0.0,
            next_local: 0,
            next_arrival: None,
            arrivals: 0,
            capacity,
            url: String::new(),
            header: String::new(),
            body: String::new(),
            bot,
            plan,
        }
    }

    async fn run(&mut self) {
        let mut ticker = tokio::time::interval(TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                Some(done) = self.flights.next(), if !self.flights.is_empty() => {
                    self.complete(done, Instant::now());
                }
                _ = ticker.tick() => {
                    let now = Instant::now();
                    if now >= self.plan.end || self.control.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    self.tick(now);
                }
            }
        }
        // The run is over: no new steps; what is in flight may finish.
        self.control.match_stop.store(true, Ordering::Relaxed);
        let grace = tokio::time::sleep(GRACE);
        tokio::pin!(grace);
        while !self.flights.is_empty() {
            tokio::select! {
                Some(done) = self.flights.next() => self.settle(done, Instant::now()),
                _ = &mut grace => break,
            }
        }
        self.publish();
    }

    fn record(&self, f: impl FnOnce(&mut Interval)) {
        let mut interval = self.slot.interval.lock();
        f(&mut interval);
    }

    fn publish(&self) {
        self.slot.users.store(self.alive, Ordering::Relaxed);
        self.slot
            .in_flight
            .store(self.flights.len() as u64, Ordering::Relaxed);
    }

    fn share(&self) -> f64 {
        f64::from(self.plan.shard.count.max(1)) * f64::from(self.plan.drivers.max(1))
    }

    fn tick(&mut self, now: Instant) {
        match self.scenario.model {
            Model::Closed => self.admit_closed(now),
            Model::Open => self.admit_open(now),
        }
        self.release_paced(now);
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.wheel.advance(now, &mut due);
        for &p in &due {
            self.wake(p, now);
        }
        self.due = due;
        self.last_tick = now;
        self.publish();
    }

    /// Closed model: players join over the ramp-up (evenly, or a stampede
    /// first), in global order.
    fn admit_closed(&mut self, now: Instant) {
        let s = self.scenario.clone();
        let (a, d) = (
            u64::from(self.plan.shard.count.max(1)),
            u64::from(self.plan.drivers.max(1)),
        );
        loop {
            let id = u64::from(self.plan.shard.index)
                + a * (u64::from(self.plan.driver) + d * self.next_local);
            if id >= s.users {
                return;
            }
            let at = self.plan.start + arrival_offset(id, s.users, s.ramp_up, s.stampede.as_ref());
            if at > now {
                return;
            }
            self.next_local += 1;
            let player = Player::new(id, &s, at, &mut self.rng);
            self.players.push(player);
            self.alive += 1;
            let p = (self.players.len() - 1) as u32;
            self.wake(p, now);
        }
    }

    /// Open model: Poisson arrivals at the (ramped or paced) rate.
    fn admit_open(&mut self, now: Instant) {
        let s = &self.scenario;
        let paced = self.control.rate();
        let total = if s.pacing.is_some() && paced > 0.0 {
            paced * f64::from(self.plan.shard.count.max(1))
        } else {
            let ramp = if s.ramp_up.is_zero() {
                1.0
            } else {
                (now.saturating_duration_since(self.plan.start).as_secs_f64()
                    / s.ramp_up.as_secs_f64())
                .min(1.0)
            };
            s.arrival_rate * ramp
        };
        let rate = total / self.share();
        if rate <= 0.0 {
            self.next_arrival = None;
            return;
        }
        let redraw = match self.next_arrival {
            None => true,
            Some((at, drawn)) => at > now && (rate / drawn - 1.0).abs() > 0.05,
        };
        if redraw {
            let gap = exponential(&mut self.rng, rate);
            self.next_arrival = Some((now + gap, rate));
        }
        while let Some((at, _)) = self.next_arrival {
            if at > now {
                break;
            }
            self.arrive(at, now);
            let gap = exponential(&mut self.rng, rate);
            self.next_arrival = Some((at + gap, rate));
        }
    }

    fn arrive(&mut self, at: Instant, now: Instant) {
        let id = self.arrivals * self.share() as u64
            + u64::from(self.plan.shard.index) * u64::from(self.plan.drivers.max(1))
            + u64::from(self.plan.driver);
        self.arrivals += 1;
        let p = if let Some(p) = self.free.pop() {
            self.players[p as usize].reuse(id, &self.scenario, at, &mut self.rng);
            p
        } else if self.players.len() < self.capacity {
            self.players
                .push(Player::new(id, &self.scenario, at, &mut self.rng));
            (self.players.len() - 1) as u32
        } else {
            let first = self.scenario.all_steps().next().map_or(0, |s| s.id);
            self.record(|i| i.record_error(first, ErrorKind::Overflow, 0));
            return;
        };
        self.alive += 1;
        self.wake(p, now);
    }

    /// Closed model with pacing: players start steps at the paced rate.
    fn release_paced(&mut self, now: Instant) {
        if self.scenario.pacing.is_none() || self.scenario.model != Model::Closed {
            return;
        }
        let rate = self.control.rate() / f64::from(self.plan.drivers.max(1));
        let dt = now.saturating_duration_since(self.last_tick).as_secs_f64();
        self.tokens = (self.tokens + rate * dt).min((rate * 0.05).max(1.0));
        while self.tokens >= 1.0 {
            let Some(p) = self.paced.pop_front() else {
                break;
            };
            self.tokens -= 1.0;
            let player = &mut self.players[p as usize];
            // Waiting for the pace is the generator's choice, not the
            // target's slowness: it does not count as response time.
            player.began += now.saturating_duration_since(player.due);
            player.due = now;
            self.start(p, now);
        }
    }

    fn wake(&mut self, p: u32, now: Instant) {
        let player = &self.players[p as usize];
        match player.phase {
            Phase::Done => return self.leave(p),
            Phase::Idle => return,
            Phase::Setup | Phase::Behaviour(_) => {}
        }
        if self.scenario.pacing.is_some() && self.scenario.model == Model::Closed {
            self.paced.push_back(p);
            return;
        }
        self.start(p, now);
    }

    fn leave(&mut self, p: u32) {
        self.alive = self.alive.saturating_sub(1);
        if let Some(link) = self.links.get_mut(p as usize) {
            *link = None;
        }
        if self.scenario.model == Model::Open {
            self.free.push(p);
        }
    }

    fn start(&mut self, p: u32, now: Instant) {
        let scenario = self.scenario.clone();
        let Some(step) = self.players[p as usize].current(&scenario) else {
            return;
        };
        match &step.kind {
            StepKind::Http(h) => {
                if let Some(push) = &h.push {
                    match self.links.get_mut(p as usize) {
                        Some(Some(link)) => link.discard_queued(),
                        _ => return self.open_push(p, h, push, step, now),
                    }
                }
                match self.build_request(h, p) {
                    Some(request) => {
                        let pool = self.pool_of(p, h.target);
                        self.send(p, pool, request, h.timeout)
                    }
                    None => self.failed(p, step, ErrorKind::Template, now),
                }
            }
            StepKind::PlayMatch(m) => {
                self.body.clear();
                let player = &self.players[p as usize];
                let mut values = PlayerValues {
                    player,
                    rng: &mut self.rng,
                    agent: self.plan.shard.index,
                };
                if m.token
                    .render(&mut self.body, &mut values, Escape::None)
                    .is_err()
                {
                    return self.failed(p, step, ErrorKind::Template, now);
                }
                let Some(token) = decode_token(&self.body, m.encoding) else {
                    return self.failed(p, step, ErrorKind::Match, now);
                };
                let servers = token.server_addresses.as_slice();
                if !servers.iter().all(|a| self.plan.allow.allows_addr(*a)) {
                    return self.failed(p, step, ErrorKind::Match, now);
                }
                let loopback = token
                    .server_addresses
                    .as_slice()
                    .first()
                    .is_some_and(|a| a.ip().is_loopback());
                let via = match (&self.plan.links, servers.first()) {
                    (Some(links), Some(&server)) => match links.via(player.id, server) {
                        Ok(via) => via,
                        Err(_) => return self.failed(p, step, ErrorKind::Match, now),
                    },
                    _ => None,
                };
                let config = MatchBotConfig {
                    via,
                    bind: if loopback {
                        SocketAddr::from(([127, 0, 0, 1], 0))
                    } else {
                        SocketAddr::from(([0, 0, 0, 0], 0))
                    },
                    ..self.bot.clone()
                };
                let index = (player.id % 65_536) as u16;
                let handle = tokio::spawn(self.plan.player.play(MatchTicket {
                    token,
                    index,
                    config,
                    tick_rate_hz: scenario.matches.tick_rate_hz,
                    limit: m.duration,
                    stop: self.control.match_stop.clone(),
                }));
                self.flights.push(Box::pin(async move {
                    let result = match handle.await {
                        Ok(Ok(sample)) => Ok(sample),
                        _ => Err(ErrorKind::Match),
                    };
                    Done::Match { player: p, result }
                }));
            }
        }
    }

    /// The pool of the URL of `target` player `p` uses now.
    fn pool_of(&self, p: u32, target: usize) -> usize {
        self.first_pool[target] + self.players[p as usize].route(target)
    }

    /// Moves player `p` on to `target`'s next URL (when it has several),
    /// closing its push socket, which was opened on the old one.
    fn fail_over(&mut self, p: u32, target: usize) {
        if self.players[p as usize].fail_over(&self.scenario, target) {
            if let Some(link) = self.links.get_mut(p as usize) {
                *link = None;
            }
            self.record(|i| i.failovers += 1);
        }
    }

    /// Opens player `p`'s push socket; the step starts when it is open.
    fn open_push(&mut self, p: u32, h: &HttpStep, push: &PushWait, step: &Step, now: Instant) {
        let pool = self.pool_of(p, h.target);
        let player = &self.players[p as usize];
        let target = &self.scenario.targets[h.target].urls[player.route(h.target)];
        let mut values = PlayerValues {
            player,
            rng: &mut self.rng,
            agent: self.plan.shard.index,
        };
        let mut path = target.prefix.clone();
        let mut headers = Vec::with_capacity(push.headers.len());
        let rendered = push
            .url
            .render(&mut path, &mut values, Escape::None)
            .is_ok()
            && push.headers.iter().all(|(name, t)| {
                let mut value = String::new();
                let ok = t.render(&mut value, &mut values, Escape::None).is_ok();
                headers.push((name.clone(), value));
                ok
            });
        if !rendered {
            return self.failed(p, step, ErrorKind::Template, now);
        }
        let sources = &self.scenario.http.sources;
        let dial = Dial {
            addr: self.plan.addrs[pool],
            source: (!sources.is_empty()).then(|| sources[player.id as usize % sources.len()]),
            authority: target.authority.clone(),
            path,
            headers,
            timeout: h.timeout,
            secure: self.plan.secure.get(pool).cloned().flatten(),
        };
        self.flights.push(Box::pin(async move {
            let result = crate::push::open(dial).await;
            Done::PushOpened { player: p, result }
        }));
    }

    /// Waits on player `p`'s push socket for the push answering its step
    /// (false: the player has no socket).
    fn await_push(&mut self, p: u32, push: &PushWait, answer: &[u8]) -> bool {
        let Some(link) = self.links.get_mut(p as usize).and_then(Option::take) else {
            return false;
        };
        let event = push.event.clone();
        let max_wait = push.max_wait;
        let same = push.same.clone().and_then(|pointer| {
            let doc = serde_json::from_slice::<serde_json::Value>(answer).ok()?;
            let value = doc.pointer(&pointer)?.clone();
            Some((pointer, value))
        });
        self.flights.push(Box::pin(async move {
            let same = same.as_ref().map(|(p, v)| (p.as_str(), v));
            let (link, result) = link.wait(&event, same, max_wait).await;
            Done::Pushed {
                player: p,
                link,
                result,
            }
        }));
        true
    }

    /// The push a step waited for came (or not).
    fn pushed(
        &mut self,
        p: u32,
        link: Option<PushLink>,
        result: Result<Arrived, ErrorKind>,
        now: Instant,
    ) {
        if let Some(slot) = self.links.get_mut(p as usize) {
            *slot = link;
        }
        let scenario = self.scenario.clone();
        let Some(step) = self.players[p as usize].current(&scenario) else {
            return;
        };
        let StepKind::Http(h) = &step.kind else {
            return;
        };
        let arrived = match result {
            Ok(arrived) => arrived,
            Err(kind) => {
                self.record(|i| i.record_error(step.id, kind, 0));
                if self.links.get(p as usize).is_some_and(Option::is_none) {
                    // The socket closed (its gateway went away, say): the
                    // step starts over, on the next URL if there is one.
                    self.fail_over(p, h.target);
                    return self.retry(p, step, &h.retry, now);
                }
                return self.give_up(p, step, now);
            }
        };
        let player = &mut self.players[p as usize];
        if !capture_doc(player, &h.captures, &arrived.doc) {
            self.record(|i| i.record_error(step.id, ErrorKind::Capture, 0));
            return self.give_up(p, step, now);
        }
        let step_us = micros(now, player.began);
        let latency = h
            .push
            .as_ref()
            .map(|w| w.latency_id)
            .zip(arrived.latency_us);
        self.record(|i| {
            i.record_step_time(step.id, step_us);
            if let Some((id, us)) = latency {
                i.record_ok(id, us);
            }
        });
        self.succeeded(p, step, now);
    }

    /// Renders a step's request for player `p` (`None`: a variable is
    /// missing or the rendering is not a valid request).
    fn build_request(&mut self, h: &HttpStep, p: u32) -> Option<Request<Full<Bytes>>> {
        let player = &self.players[p as usize];
        let target = &self.scenario.targets[h.target].urls[player.route(h.target)];
        let mut values = PlayerValues {
            player,
            rng: &mut self.rng,
            agent: self.plan.shard.index,
        };
        let poll = h.poll_url.as_ref().filter(|_| player.polling);
        self.url.clear();
        self.url.push_str(&target.prefix);
        poll.unwrap_or(&h.url)
            .render(&mut self.url, &mut values, Escape::None)
            .ok()?;
        let method = if poll.is_some() {
            http::Method::GET
        } else {
            h.method.clone()
        };
        let mut builder = Request::builder()
            .method(method)
            .uri(self.url.as_str())
            .header(HOST, target.authority.as_str());
        for (name, t) in &h.headers {
            self.header.clear();
            t.render(&mut self.header, &mut values, Escape::None).ok()?;
            builder = builder.header(name, self.header.as_str());
        }
        let body = match h.body.as_ref().filter(|_| poll.is_none()) {
            Some(t) => {
                self.body.clear();
                let escape = if h.json { Escape::Json } else { Escape::None };
                t.render(&mut self.body, &mut values, escape).ok()?;
                if h.json {
                    builder = builder.header(CONTENT_TYPE, "application/json");
                }
                Bytes::copy_from_slice(self.body.as_bytes())
            }
            None => Bytes::new(),
        };
        builder.body(Full::new(body)).ok()
    }

    fn send(&mut self, p: u32, url: usize, request: Request<Full<Bytes>>, timeout: Duration) {
        let pool = &mut self.pools[url];
        if let Some(sender) = pool.take_idle() {
            self.flights
                .push(exchange_flight(p, url, sender, request, timeout));
            return;
        }
        pool.waiting.push_back(Waiting {
            player: p,
            request,
            timeout,
        });
        self.dial(url);
    }

    fn dial(&mut self, url: usize) {
        if let Some((addr, source)) = self.pools[url].reserve() {
            let timeout = self.scenario.http.timeout;
            let secure = self.plan.secure.get(url).cloned().flatten();
            self.flights.push(Box::pin(async move {
                let result = keepalive::connect(addr, source, secure, timeout).await;
                Done::Connected { url, result }
            }));
        }
    }

    /// A free connection: to the oldest waiting request, or idle.
    fn hand_over(&mut self, url: usize, sender: Sender) {
        let pool = &mut self.pools[url];
        match pool.waiting.pop_front() {
            Some(w) => self
                .flights
                .push(exchange_flight(w.player, url, sender, w.request, w.timeout)),
            None => pool.release(sender),
        }
    }

    fn connection_lost(&mut self, url: usize) {
        self.pools[url].lost();
        if !self.pools[url].waiting.is_empty() {
            self.dial(url);
        }
    }

    fn complete(&mut self, done: Done, now: Instant) {
        match done {
            Done::Connected {
                url,
                result: Ok(sender),
            } => self.hand_over(url, sender),
            Done::Connected {
                url,
                result: Err(kind),
            } => {
                let waiter = self.pools[url].waiting.pop_front();
                self.connection_lost(url);
                if let Some(w) = waiter {
                    self.record(|i| i.record_url(url));
                    self.log_request(w.player, Err(kind), now);
                    self.request_failed(w.player, kind, now);
                }
            }
            Done::Http {
                player,
                url,
                sender,
                result,
            } => {
                match sender {
                    Some(s) => self.hand_over(url, s),
                    None => self.connection_lost(url),
                }
                let outcome = result.as_ref().map(|a| a.status).map_err(|k| *k);
                self.record(|i| i.record_url(url));
                self.log_request(player, outcome, now);
                match result {
                    Ok(answer) => self.answered(player, answer, now),
                    Err(kind) => self.request_failed(player, kind, now),
                }
            }
            Done::Match { player, result } => self.match_over(player, result, now),
            Done::PushOpened { player, result } => match result {
                Ok(link) => {
                    let slot = player as usize;
                    if self.links.len() <= slot {
                        self.links.resize_with(slot + 1, || None);
                    }
                    self.links[slot] = Some(link);
                    self.start(player, now);
                }
                Err(kind) => self.request_failed(player, kind, now),
            },
            Done::Pushed {
                player,
                link,
                result,
            } => self.pushed(player, link, result, now),
        }
    }

    /// One line in the raw request log, if there is one.
    fn log_request(&self, p: u32, outcome: Result<u16, ErrorKind>, now: Instant) {
        let Some(log) = &self.plan.log else {
            return;
        };
        let player = &self.players[p as usize];
        let Some(step) = player.current(&self.scenario) else {
            return;
        };
        log.log(Entry {
            at_ms: now.saturating_duration_since(self.plan.start).as_millis() as u64,
            player: p,
            step: step.id,
            outcome,
            latency_us: micros(now, player.due),
        });
    }

    /// After the run: record what finishes, start nothing.
    fn settle(&mut self, done: Done, now: Instant) {
        match done {
            Done::Http {
                player,
                url,
                result: Ok(answer),
                ..
            } => {
                self.record(|i| i.record_url(url));
                self.log_request(player, Ok(answer.status), now);
                let scenario = self.scenario.clone();
                let player = &self.players[player as usize];
                if let Some(step) = player.current(&scenario) {
                    let us = micros(now, player.due);
                    let ok = matches!(&step.kind, StepKind::Http(h) if h.accepts(answer.status) || h.wait_while.contains(&answer.status));
                    self.record(|i| {
                        if ok {
                            i.record_ok(step.id, us);
                        } else {
                            i.record_error(step.id, ErrorKind::Status, us);
                        }
                    });
                }
            }
            Done::Match {
                result: Ok(sample), ..
            } => self.record(|i| i.matches.add(&sample)),
            _ => {}
        }
    }

    fn answered(&mut self, p: u32, answer: Answer, now: Instant) {
        let scenario = self.scenario.clone();
        let Some(step) = self.players[p as usize].current(&scenario) else {
            return;
        };
        let StepKind::Http(h) = &step.kind else {
            return;
        };
        let (due, began) = {
            let player = &self.players[p as usize];
            (player.due, player.began)
        };
        let us = micros(now, due);
        if h.wait_while.contains(&answer.status) {
            self.record(|i| i.record_ok(step.id, us));
            let player = &mut self.players[p as usize];
            if !h.wait_captures.is_empty() && !capture(player, &h.wait_captures, &answer.body) {
                self.record(|i| i.record_error(step.id, ErrorKind::Capture, us));
                return self.give_up(p, step, now);
            }
            player.polling = h.poll_url.is_some();
            if now.saturating_duration_since(began) > h.max_wait {
                self.record(|i| i.record_error(step.id, ErrorKind::Timeout, 0));
                return self.give_up(p, step, now);
            }
            let player = &mut self.players[p as usize];
            player.due = now + h.wait_interval;
            self.wheel.schedule(player.due, p);
            return;
        }
        if !h.accepts(answer.status) {
            self.record(|i| i.record_error(step.id, ErrorKind::Status, us));
            if h.retry.retries_status(answer.status) {
                return self.retry_status(p, step, h, now);
            }
            return self.give_up(p, step, now);
        }
        if !h.captures.is_empty()
            && !capture(&mut self.players[p as usize], &h.captures, &answer.body)
        {
            if let Some(push) = &h.push
                && self.await_push(p, push, &answer.body)
            {
                // Not in the answer yet: it comes by push.
                self.record(|i| i.record_ok(step.id, us));
                return;
            }
            self.record(|i| i.record_error(step.id, ErrorKind::Capture, us));
            return self.give_up(p, step, now);
        }
        let step_us = micros(now, began);
        self.record(|i| {
            i.record_ok(step.id, us);
            i.record_step_time(step.id, step_us);
        });
        self.succeeded(p, step, now);
    }

    fn request_failed(&mut self, p: u32, kind: ErrorKind, now: Instant) {
        let scenario = self.scenario.clone();
        let Some(step) = self.players[p as usize].current(&scenario) else {
            return;
        };
        self.failed(p, step, kind, now);
    }

    /// Records a failure of the current step and retries it or gives up.
    fn failed(&mut self, p: u32, step: &Step, kind: ErrorKind, now: Instant) {
        let us = micros(now, self.players[p as usize].due);
        self.record(|i| i.record_error(step.id, kind, us));
        match (&step.kind, kind) {
            (StepKind::Http(h), ErrorKind::Connect | ErrorKind::Timeout | ErrorKind::Transport) => {
                self.fail_over(p, h.target);
                self.retry(p, step, &h.retry, now)
            }
            _ => self.give_up(p, step, now),
        }
    }

    /// A retryable status: tried again where it is while the policy's
    /// attempts last; once they are spent, on the target's next URL (each
    /// URL once per step), with the policy's retries again.
    fn retry_status(&mut self, p: u32, step: &Step, h: &HttpStep, now: Instant) {
        let urls = self.scenario.targets[h.target].urls.len();
        let player = &mut self.players[p as usize];
        if u32::from(player.retries) + 1 >= h.retry.attempts && usize::from(player.hops) + 1 < urls
        {
            player.hops += 1;
            player.retries = 0;
            self.fail_over(p, h.target);
        }
        self.retry(p, step, &h.retry, now)
    }

    fn retry(&mut self, p: u32, step: &Step, policy: &crate::retry::RetryPolicy, now: Instant) {
        let player = &mut self.players[p as usize];
        if u32::from(player.retries) + 1 >= policy.attempts {
            return self.give_up(p, step, now);
        }
        player.retries += 1;
        let delay = policy.delay(u32::from(player.retries), &mut self.rng);
        player.due = now + delay;
        self.wheel.schedule(player.due, p);
        self.record(|i| i.record_retry(step.id));
    }

    /// The step failed for good: a setup starts over after a backoff, a
    /// behaviour is left for the next one after the step's think time.
    fn give_up(&mut self, p: u32, step: &Step, now: Instant) {
        let scenario = self.scenario.clone();
        let player = &mut self.players[p as usize];
        let wait = match (&step.kind, player.phase) {
            (StepKind::Http(h), Phase::Setup) => {
                h.retry.delay(h.retry.attempts.max(1), &mut self.rng)
            }
            _ => step.think.sample(&mut self.rng),
        };
        player.abandon(&scenario, &mut self.rng);
        // Never straight away: a step that fails at once must not spin.
        self.after(p, now + wait.max(TICK));
    }

    fn succeeded(&mut self, p: u32, step: &Step, now: Instant) {
        let scenario = self.scenario.clone();
        let think = step.think.sample(&mut self.rng);
        self.players[p as usize].advance(&scenario, &mut self.rng);
        self.after(p, now + think);
    }

    /// Schedules the player's next step at `at` (or lets it go).
    fn after(&mut self, p: u32, at: Instant) {
        let player = &mut self.players[p as usize];
        match player.phase {
            Phase::Done => self.leave(p),
            Phase::Idle => {}
            Phase::Setup | Phase::Behaviour(_) => {
                player.due = at;
                player.began = at;
                self.wheel.schedule(at, p);
            }
        }
    }

    fn match_over(&mut self, p: u32, result: Result<MatchSample, ErrorKind>, now: Instant) {
        let scenario = self.scenario.clone();
        let Some(step) = self.players[p as usize].current(&scenario) else {
            return;
        };
        match result {
            Ok(sample) => {
                let us = micros(now, self.players[p as usize].began);
                self.record(|i| {
                    i.matches.add(&sample);
                    i.record_ok(step.id, us);
                    i.record_step_time(step.id, us);
                });
                self.succeeded(p, step, now);
            }
            Err(kind) => self.failed(p, step, kind, now),
        }
    }
}

fn exchange_flight(
    player: u32,
    url: usize,
    sender: Sender,
    request: Request<Full<Bytes>>,
    timeout: Duration,
) -> Flight {
    Box::pin(async move {
        let (sender, result) = keepalive::exchange(sender, request, timeout).await;
        Done::Http {
            player,
            url,
            sender,
            result,
        }
    })
}

/// Stores `captures` from a JSON body; false if one is missing.
fn capture(player: &mut Player, captures: &[Capture], body: &[u8]) -> bool {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    capture_doc(player, captures, &doc)
}

/// Stores `captures` from a JSON document; false if one is missing.
fn capture_doc(player: &mut Player, captures: &[Capture], doc: &serde_json::Value) -> bool {
    for c in captures {
        let value = match doc.pointer(&c.pointer) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Null) | None => return false,
            Some(other) => other.to_string(),
        };
        if let Some(slot) = player.captures.get_mut(c.slot as usize) {
            *slot = Some(value.into_boxed_str());
        }
    }
    true
}

fn micros(now: Instant, since: Instant) -> u64 {
    now.saturating_duration_since(since).as_micros() as u64
}

/// An exponential gap with `rate` per second.
fn exponential(rng: &mut impl Rng, rate: f64) -> Duration {
    let u: f64 = rng.random();
    Duration::from_secs_f64((-(1.0 - u).ln() / rate).min(3_600.0))
}
