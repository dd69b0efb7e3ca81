//! A worker thread: one UDP socket, one secure-layer [`Server`] for every
//! connection that socket carries, and the matches placed on it.
//!
//! The loop, each wake-up:
//! 1. take commands from the admin side (create a match, report, reset, drain);
//! 2. if a match's deadline has come, run its tick inside one telemetry frame
//!    (the matches of a phase group share their deadlines and so tick back to
//!    back on one wake-up, in the order they joined: [`crate::phase`]):
//!    drain the socket in batches and route what arrived (inputs, acks,
//!    connects) [network "receive"], `Match::tick_in` [the game's subsystems],
//!    build and seal one packet per client and send them in one batch
//!    [network "send"];
//! 3. otherwise sleep until the next deadline or net timer (never spinning);
//!    a worker with no match and no connection sleeps until a command or a
//!    datagram wakes it ([`crate::doorbell`]), with no periodic wake-up;
//!    between ticks the socket fills and the next tick drains it, so a busy
//!    worker makes about one receive and one send call per match tick.
//!
//! Receive work is charged to the match that ticks next: every match's
//! clients are drained then, so on average each pays for its own share.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hightick_engine::mode::{HostedGame, Mode};
use hightick_engine::{Match, PlayerId};
use hightick_net::{Server, ServerConfig, ServerEvent};
use hightick_telemetry::{BudgetTarget, Budgets, FrameStats, ModeBudget, Subsystem};
use tokio::sync::oneshot;

use crate::adapt::{AdaptConfig, LinkReading};
use crate::doorbell::Doorbell;
use crate::hosted::{HostedMatch, Seat};
use crate::phase::PhasePlan;
use crate::placement::WorkerLoad;
use crate::results::ResultSender;
use crate::retired::{Retired, RetiredMode};
use crate::tick_totals::TickTotals;
use hightick_host_api::MatchInfo;
use hightick_process as process;
use hightick_udp::{BATCH, ReceiveBatch, SendBatch};

/// How often a worker publishes the share of a core it used.
const BUSY_PERIOD: Duration = Duration::from_secs(1);
/// Longest a worker sleeps, so commands are never kept waiting long.
const MAX_SLEEP: Duration = Duration::from_millis(10);
/// Share of a tick period a match's frame may spend receiving: under a flood
/// the rest stays in (or overflows) the kernel's buffer and ticks stay on time.
const RECEIVE_SHARE_OF_PERIOD: u32 = 4;
/// How often the secure layer's timers run (keep-alives, resends, loss and
/// connection timeouts) and its own packets go out. Their own granularity is
/// tens of milliseconds to seconds; asking the layer for its next deadline
/// costs a pass over every slot, so the worker runs them on this cadence
/// instead of asking. They run between ticks, never inside a match's frame,
/// and ride on the wake-up of the next tick when it comes within another
/// period: a busy worker wakes for its ticks only.
const NET_TIMER_PERIOD: Duration = Duration::from_millis(5);
/// How often seats are checked against the seat timeout.
const SEAT_CHECK_PERIOD: Duration = Duration::from_millis(100);
/// Longest client message (inputs, resync requests).
const MESSAGE_BYTES: usize = 1500;

/// What the admin side asks of a worker.
#[derive(Debug)]
pub(crate) enum WorkerCommand {
    /// A match of `mode` at `tick_rate_hz`, with the game's `settings`
    /// (JSON, read by the game on the worker).
    Create {
        id: String,
        mode: &'static Mode,
        settings: serde_json::Value,
        tick_rate_hz: u32,
        roster: Vec<u64>,
        seed: u64,
        reply: oneshot::Sender<Result<MatchInfo, String>>,
    },
    Report {
        reply: oneshot::Sender<WorkerReport>,
    },
    /// What the per-second timeline needs, without cloning every match's
    /// histograms.
    Pulse {
        reply: oneshot::Sender<WorkerPulse>,
    },
    ResetStats,
    /// No new matches; running ones may go on until `deadline`.
    Drain {
        deadline: Instant,
    },
    /// Players reach this worker at `address` from now on.
    Advertise {
        address: SocketAddr,
    },
}

/// One match as a worker reports it.
#[derive(Debug, Clone)]
pub(crate) struct MatchReport {
    pub info: MatchInfo,
    pub stats: FrameStats,
    pub late_starts: u64,
}

/// One worker's share of a timeline second: its matches' tick totals
/// summed, and how many matches and players it has.
#[derive(Debug, Clone)]
pub(crate) struct WorkerPulse {
    pub totals: Option<TickTotals>,
    pub matches: usize,
    pub players_connected: usize,
}

/// Traffic counters of one worker since it started.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Traffic {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    pub send_dropped: u64,
    pub oversized: u64,
    pub unknown_clients: u64,
    pub malformed_messages: u64,
    /// Ticks a client got no packet on (its link congested: [`crate::adapt`]).
    pub adapt_skipped: u64,
    /// Times a client's send share was cut.
    pub adapt_decreases: u64,
}

/// A worker's answer to [`WorkerCommand::Report`].
#[derive(Debug, Clone)]
pub(crate) struct WorkerReport {
    pub matches: Vec<MatchReport>,
    /// The matches retired since the last reset, merged per mode.
    pub retired: Vec<RetiredMode>,
    pub traffic: Traffic,
    pub drops: Vec<(&'static str, u64)>,
    pub players_connected: usize,
}

/// Everything a worker is started with.
#[derive(Debug)]
pub(crate) struct WorkerSetup {
    pub index: usize,
    pub socket: UdpSocket,
    pub public_address: SocketAddr,
    pub net: ServerConfig,
    pub max_matches: usize,
    pub budgets: Arc<Budgets>,
    pub linger: Duration,
    pub seat_timeout: Duration,
    pub adapt: AdaptConfig,
    pub timer_slack_us: u64,
    pub phase_group_share: f64,
    pub pin_to: Option<usize>,
    pub commands: Receiver<WorkerCommand>,
    /// Rung after each command: an idle worker sleeps on it.
    pub bell: Arc<Doorbell>,
    pub results: ResultSender,
    pub load: Arc<WorkerLoad>,
}

/// A worker's state, hosting matches of game `G`. See the [module docs](self).
pub(crate) struct Worker<G: HostedGame> {
    index: usize,
    socket: UdpSocket,
    address: SocketAddr,
    net: Server,
    matches: Vec<HostedMatch<G>>,
    /// What the matches retired since the last reset counted.
    retired: Retired,
    max_matches: usize,
    /// Which matches share a deadline, and where in the period each group ticks.
    phases: PhasePlan,
    /// Per net slot: the match index and player it carries.
    slot_owner: Vec<Option<(usize, PlayerId)>>,
    /// Client id -> match id and player, for every seat hosted.
    roster: HashMap<u64, (String, PlayerId)>,
    budgets: Arc<Budgets>,
    linger: Duration,
    /// A seat empty this long is released; a match empty this long ends.
    seat_timeout: Duration,
    /// Per-client adaptation to congested links.
    adapt: AdaptConfig,
    seats_checked_at: Instant,
    commands: Receiver<WorkerCommand>,
    bell: Arc<Doorbell>,
    results: ResultSender,
    load: Arc<WorkerLoad>,
    receive: ReceiveBatch,
    send: SendBatch,
    message: Box<[u8; MESSAGE_BYTES]>,
    traffic: Traffic,
    drain_deadline: Option<Instant>,
    unix_at: Instant,
    net_timers_at: Instant,
    /// When the busy share was last sampled, and the thread's CPU time then
    /// (`None` before the first sample).
    busy_at: (Instant, Option<Duration>),
    timer_slack_us: u64,
    pin_to: Option<usize>,
}

impl<G: HostedGame> std::fmt::Debug for Worker<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("index", &self.index)
            .field("address", &self.address)
            .field("matches", &self.matches.len())
            .finish_non_exhaustive()
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl<G: HostedGame> Worker<G> {
    pub(crate) fn new(setup: WorkerSetup) -> Result<Self, hightick_net::NetError> {
        let now = Instant::now();
        let slots = setup.net.max_clients;
        let net = Server::new(setup.net, now, unix_now(), &mut rand::rng())?;
        Ok(Self {
            index: setup.index,
            socket: setup.socket,
            address: setup.public_address,
            net,
            matches: Vec::with_capacity(setup.max_matches),
            retired: Retired::default(),
            max_matches: setup.max_matches,
            phases: PhasePlan::new(now, setup.phase_group_share),
            slot_owner: vec![None; slots],
            roster: HashMap::with_capacity(slots),
            budgets: setup.budgets,
            linger: setup.linger,
            seat_timeout: setup.seat_timeout,
            adapt: setup.adapt,
            seats_checked_at: now,
            commands: setup.commands,
            bell: setup.bell,
            results: setup.results,
            load: setup.load,
            receive: ReceiveBatch::new(),
            send: SendBatch::new(),
            message: Box::new([0; MESSAGE_BYTES]),
            traffic: Traffic::default(),
            drain_deadline: None,
            unix_at: now,
            net_timers_at: now,
            busy_at: (now, None),
            timer_slack_us: setup.timer_slack_us,
            pin_to: setup.pin_to,
        })
    }

    /// Runs until drained (or until the admin side is gone).
    pub(crate) fn run(mut self) {
        process::set_timer_slack(self.timer_slack_us * 1000);
        if let Some(core) = self.pin_to {
            process::pin_to_core(core);
        }
        self.load.beats.fetch_add(1, Ordering::Relaxed);
        loop {
            self.load.wakeups.fetch_add(1, Ordering::Relaxed);
            if !self.take_commands() {
                // The host is gone: stop as a drain would at its deadline.
                self.drain_deadline = Some(Instant::now());
            }
            let now = Instant::now();
            self.publish_busy(now);
            if self.drain_deadline.is_some_and(|d| now >= d) {
                for i in 0..self.matches.len() {
                    self.matches[i].finished_at.get_or_insert(now - self.linger);
                }
            }
            self.check_seats(now);
            self.retire_finished(now);
            if self.drain_deadline.is_some() && self.matches.is_empty() {
                self.service_network(now, now, Timers::Due);
                self.flush();
                self.load.stopped.store(true, Ordering::Relaxed);
                break;
            }
            match self.due_match(now) {
                Some(i) => self.run_tick(i, now),
                None => {
                    // Between ticks the socket is left to fill: the next tick
                    // drains it. Only the net timers (and handshakes with no
                    // match to tick) bring a receive in between.
                    if now >= self.net_timers_at {
                        let next = self.matches.iter().map(|m| m.deadline).min();
                        let until = next.unwrap_or(now + MAX_SLEEP).min(now + MAX_SLEEP);
                        self.service_network(now, until, Timers::Due);
                        self.flush();
                    }
                    self.sleep();
                }
            }
        }
    }

    /// Once a second: the share of a core this thread used since the last
    /// time, for placing new matches (see [`crate::placement`]), and a beat
    /// that shows the loop is alive.
    fn publish_busy(&mut self, now: Instant) {
        let (at, cpu_then) = self.busy_at;
        let wall = now.saturating_duration_since(at);
        if wall < BUSY_PERIOD {
            return;
        }
        self.load.beats.fetch_add(1, Ordering::Relaxed);
        let cpu = process::thread_cpu_time();
        if let Some(cpu_then) = cpu_then {
            let share = cpu.saturating_sub(cpu_then).as_secs_f64() / wall.as_secs_f64();
            self.load
                .busy_permille
                .store((share * 1000.0).round() as u32, Ordering::Relaxed);
            self.load
                .measured_matches
                .store(self.matches.len(), Ordering::Relaxed);
        }
        self.busy_at = (now, Some(cpu));
    }

    /// Handles every waiting command; `false` when the admin side is gone.
    fn take_commands(&mut self) -> bool {
        loop {
            match self.commands.try_recv() {
                Ok(command) => self.handle(command),
                Err(TryRecvError::Empty) => return true,
                Err(TryRecvError::Disconnected) => return false,
            }
        }
    }

    fn handle(&mut self, command: WorkerCommand) {
        match command {
            WorkerCommand::Create {
                id,
                mode,
                settings,
                tick_rate_hz,
                roster,
                seed,
                reply,
            } => {
                let created = serde_path_to_error::deserialize::<_, G::Settings>(settings)
                    .map_err(|e| format!("{}: {}", e.path(), e.inner()))
                    .and_then(|settings| {
                        self.create(id, mode, &settings, tick_rate_hz, &roster, seed)
                    });
                let _ = reply.send(created);
            }
            WorkerCommand::Report { reply } => {
                let _ = reply.send(self.report());
            }
            WorkerCommand::Pulse { reply } => {
                let _ = reply.send(self.pulse());
            }
            WorkerCommand::ResetStats => {
                self.retired.clear();
                for m in &mut self.matches {
                    if let Some(r) = m.recorder.as_mut() {
                        r.reset();
                    }
                    m.reset_start_counters();
                }
            }
            WorkerCommand::Drain { deadline } => {
                self.drain_deadline = Some(deadline);
            }
            WorkerCommand::Advertise { address } => {
                self.address = address;
                self.net.set_public_address(address);
            }
        }
    }

    fn create(
        &mut self,
        id: String,
        mode: &'static Mode,
        settings: &G::Settings,
        tick_rate_hz: u32,
        roster: &[u64],
        seed: u64,
    ) -> Result<MatchInfo, String> {
        if self.drain_deadline.is_some() {
            return Err("the host is draining".to_owned());
        }
        if self.matches.len() >= self.max_matches {
            return Err("worker full".to_owned());
        }
        if let Some(taken) = roster.iter().find(|c| self.roster.contains_key(c)) {
            return Err(format!(
                "client {taken} already holds a seat in a running match"
            ));
        }
        let seats: usize = self.matches.iter().map(|m| m.seats.len()).sum();
        if seats + roster.len() > self.slot_owner.len() {
            return Err("worker out of client slots".to_owned());
        }
        let budget = self
            .budgets
            .mode(mode.name)
            .cloned()
            .unwrap_or_else(|_| ModeBudget::unlimited());
        // The match's own rate: its phase is a share of its own period; what
        // it counts for in its phase group is its budgeted mean tick.
        let period = crate::tick_rate::period(tick_rate_hz);
        let cost = budget
            .get(BudgetTarget::Tick)
            .mean_ns
            .map(Duration::from_nanos);
        let (phase, first) = self.phases.join(period, cost, Instant::now());
        let hosted = HostedMatch::new(
            id,
            mode,
            settings,
            tick_rate_hz,
            roster,
            seed,
            budget,
            phase,
            first,
        );
        let hosted = match hosted {
            Ok(hosted) => hosted,
            Err(e) => {
                self.phases.leave(phase);
                return Err(e);
            }
        };
        for seat in &hosted.seats {
            self.roster
                .insert(seat.client_id, (hosted.id.clone(), seat.player));
        }
        let info = hosted.info(self.index, self.address);
        self.matches.push(hosted);
        self.load
            .matches
            .store(self.matches.len(), Ordering::Relaxed);
        Ok(info)
    }

    fn report(&mut self) -> WorkerReport {
        WorkerReport {
            matches: self
                .matches
                .iter_mut()
                .filter_map(|m| {
                    Some(MatchReport {
                        info: m.info(self.index, self.address),
                        stats: m.recorder.as_mut()?.stats().clone(),
                        late_starts: m.late_starts,
                    })
                })
                .collect(),
            retired: self.retired.modes().to_vec(),
            traffic: self.traffic,
            drops: self
                .net
                .counters()
                .iter()
                .map(|(kind, count)| (kind.name(), count))
                .chain(std::iter::once(("oversized", self.traffic.oversized)))
                .chain(std::iter::once((
                    "event_queue_full",
                    self.matches.iter().map(|m| m.game.events_dropped()).sum(),
                )))
                .chain(std::iter::once((
                    "event_queue_overflow",
                    self.matches.iter().map(|m| m.game.event_overflows()).sum(),
                )))
                .collect(),
            players_connected: self.net.connected_clients(),
        }
    }

    fn pulse(&mut self) -> WorkerPulse {
        let stats = self
            .matches
            .iter_mut()
            .filter_map(|m| Some(m.recorder.as_mut()?.stats()));
        WorkerPulse {
            totals: TickTotals::sum(stats),
            matches: self.matches.len(),
            players_connected: self.net.connected_clients(),
        }
    }

    /// The match whose deadline came first, if it has come.
    fn due_match(&self, now: Instant) -> Option<usize> {
        let (i, m) = self
            .matches
            .iter()
            .enumerate()
            .min_by_key(|(_, m)| m.deadline)?;
        (m.deadline <= now).then_some(i)
    }

    fn run_tick(&mut self, i: usize, now: Instant) {
        // The recorder is moved out for the frame so the rest of the worker
        // (other matches receive inputs meanwhile) stays borrowable.
        let Some(mut recorder) = self.matches[i].recorder.take() else {
            return;
        };
        let frame = recorder.begin(u64::from(self.matches[i].game.tick_number()) + 1);
        // After the sleep every seat's connection is cold: asked for all at
        // once, its cache misses overlap the receive and the tick instead of
        // queueing in the send loop (see `hightick_net::prefetch`).
        for seat in &self.matches[i].seats {
            if let Some(slot) = seat.slot {
                self.net.prefetch(slot);
            }
        }
        {
            let _receive = frame.scope(Subsystem::Network, "receive");
            let until = now + self.matches[i].period / RECEIVE_SHARE_OF_PERIOD;
            self.service_network(now, until, Timers::Overdue);
        }
        self.matches[i].game.tick_in(&frame);
        {
            let _send = frame.scope(Subsystem::Network, "send");
            self.send_tick(i, now);
            self.flush();
        }
        frame.end();
        let m = &mut self.matches[i];
        m.recorder = Some(recorder);
        m.advance_deadline(now);
        if m.finished_at.is_none() && m.game.result().is_some() {
            m.finished_at = Some(now);
        }
    }

    /// Drains the socket (one batch at least, more while the clock is
    /// before `until`), routes what arrived, runs net timers if they are due
    /// and `timers` allows, and queues whatever the secure layer has to send.
    fn service_network(&mut self, now: Instant, until: Instant, timers: Timers) {
        if now.duration_since(self.unix_at) >= Duration::from_secs(1) {
            self.unix_at = now;
            self.net.set_unix_time(now, unix_now());
        }
        loop {
            let n = self.receive.receive(&self.socket).unwrap_or_default();
            for j in 0..n {
                let Some((from, bytes)) = self.receive.datagram(j) else {
                    continue;
                };
                self.traffic.packets_in += 1;
                self.traffic.bytes_in += bytes.len() as u64;
                if bytes.is_empty() {
                    self.traffic.oversized += 1;
                    continue;
                }
                self.net.handle_datagram(now, from, bytes);
            }
            if n < BATCH || Instant::now() >= until {
                break;
            }
        }
        while let Some(event) = self.net.poll_event() {
            match event {
                ServerEvent::Connected {
                    slot, client_id, ..
                } => self.seat(slot, client_id),
                ServerEvent::Disconnected { slot, .. } => self.unseat(slot, now),
            }
        }
        // Seated clients get their packets from their match's tick; what else
        // the secure layer sends (handshake replies, keep-alives, farewells)
        // and the losses its timers find wait for the timer cadence, except
        // handshake replies, which go at once.
        let timers_due = match timers {
            Timers::Due => now >= self.net_timers_at,
            Timers::Overdue => now >= self.net_timers_at + NET_TIMER_PERIOD,
        };
        if timers_due {
            self.net_timers_at = now + NET_TIMER_PERIOD;
            self.net.handle_timeout(now);
            while let Some(event) = self.net.poll_event() {
                if let ServerEvent::Disconnected { slot, .. } = event {
                    self.unseat(slot, now);
                }
            }
        }
        // What arrived, and the losses the timers (or the last tick's
        // writes) found: only the slots with something waiting.
        while let Some(slot) = self.net.poll_readable() {
            self.route_messages(slot);
        }
        if !timers_due && !self.net.replies_pending() {
            return;
        }
        loop {
            if self.send.is_full() {
                self.flush();
            }
            let Some(buf) = self.send.buffer() else {
                break;
            };
            let Some(t) = self.net.poll_transmit(now, buf) else {
                break;
            };
            self.send.commit(t.len, t.destination);
        }
    }

    /// Inputs and resync requests from `slot` to its match; delivery
    /// notifications to the match's replication writer.
    fn route_messages(&mut self, slot: usize) {
        let Some(Some((i, player))) = self.slot_owner.get(slot).copied() else {
            // Not seated (yet): nothing of it is for a match.
            return;
        };
        let game = &mut self.matches[i].game;
        while let Some(m) = self.net.poll_message(slot, &mut self.message[..]) {
            if game.handle_message(player, &self.message[..m.len]).is_err() {
                self.traffic.malformed_messages += 1;
            }
        }
        game.absorb_deliveries(player, &mut self.net, slot);
    }

    /// A client finished its handshake: seat it, or turn it away if it is on
    /// no roster here.
    fn seat(&mut self, slot: usize, client_id: u64) {
        let Some((match_id, player)) = self.roster.get(&client_id) else {
            self.traffic.unknown_clients += 1;
            let _ = self.net.disconnect(slot);
            return;
        };
        let player = *player;
        let Some(i) = self.matches.iter().position(|m| m.id == *match_id) else {
            let _ = self.net.disconnect(slot);
            return;
        };
        // Whether first connect, a comeback or a rejoin that replaced a
        // dead connection: a full state from here on.
        if !self.matches[i].seat_connected(player, slot) {
            return;
        }
        if let Some(owner) = self.slot_owner.get_mut(slot) {
            *owner = Some((i, player));
        }
    }

    fn unseat(&mut self, slot: usize, now: Instant) {
        let Some(owner) = self.slot_owner.get_mut(slot) else {
            return;
        };
        if let Some((i, player)) = owner.take()
            && let Some(m) = self.matches.get_mut(i)
        {
            m.seat_lost(player, slot, now);
        }
    }

    /// Every [`SEAT_CHECK_PERIOD`]: seats empty for the seat timeout are
    /// released (the game's hook), and a match nobody has been connected to
    /// for as long ends as abandoned (retired at once: no one is there to
    /// hear its end).
    fn check_seats(&mut self, now: Instant) {
        if now < self.seats_checked_at + SEAT_CHECK_PERIOD {
            return;
        }
        self.seats_checked_at = now;
        for m in &mut self.matches {
            if m.check_seats(now, self.seat_timeout).abandoned {
                m.finished_at = Some(now.checked_sub(self.linger).unwrap_or(now));
            }
        }
    }

    /// One packet per connected client of match `i`: its events and snapshot
    /// (`Match::transmit_tick`), sealed into the send batch.
    fn send_tick(&mut self, i: usize, now: Instant) {
        let m = &mut self.matches[i];
        for seat in &mut m.seats {
            let Some(slot) = seat.slot else {
                continue;
            };
            if self.adapt.enabled
                && !adapt_seat(
                    &self.adapt,
                    seat,
                    &mut m.game,
                    &self.net,
                    slot,
                    now,
                    &mut self.traffic,
                )
            {
                self.traffic.adapt_skipped += 1;
                continue;
            }
            if self.send.is_full() {
                let flushed = self.send.flush(&self.socket);
                count_flush(&mut self.traffic, flushed);
            }
            let Some(buf) = self.send.buffer() else {
                continue;
            };
            if let Some(t) = m
                .game
                .transmit_tick(seat.player, &mut self.net, slot, now, buf)
            {
                self.send.commit(t.len, t.destination);
            }
        }
    }

    fn flush(&mut self) {
        if !self.send.is_empty() {
            let flushed = self.send.flush(&self.socket);
            count_flush(&mut self.traffic, flushed);
        }
    }

    /// Matches whose result came in at least `linger` ago (or abandoned by a
    /// drain): clients told goodbye, result written, seats freed.
    fn retire_finished(&mut self, now: Instant) {
        let linger = self.linger;
        let mut retired = false;
        let mut i = 0;
        while i < self.matches.len() {
            let done = self.matches[i]
                .finished_at
                .is_some_and(|at| now.saturating_duration_since(at) >= linger);
            if !done {
                i += 1;
                continue;
            }
            let mut m = self.matches.remove(i);
            if let Some(r) = m.recorder.as_mut() {
                self.retired.add(m.mode, r.stats(), m.late_starts);
            }
            self.phases.leave(m.phase);
            for seat in &m.seats {
                self.roster.remove(&seat.client_id);
                if let Some(slot) = seat.slot {
                    let _ = self.net.disconnect(slot);
                }
            }
            self.results.send(m.result());
            retired = true;
        }
        if retired {
            // Indices moved: rebuild the slot map from the seats.
            self.slot_owner.iter_mut().for_each(|o| *o = None);
            for (i, m) in self.matches.iter().enumerate() {
                for seat in &m.seats {
                    if let Some(slot) = seat.slot {
                        self.slot_owner[slot] = Some((i, seat.player));
                    }
                }
            }
            self.load
                .matches
                .store(self.matches.len(), Ordering::Relaxed);
        }
    }

    fn sleep(&self) {
        // Nothing to tick, no connection, no drain: nothing is due until a
        // command or a datagram comes, and either wakes the worker.
        if self.matches.is_empty() && self.net.is_idle() && self.drain_deadline.is_none() {
            self.bell.wait(&self.socket);
            return;
        }
        let now = Instant::now();
        let next_tick = self.matches.iter().map(|m| m.deadline).min();
        let mut wake = next_tick.map_or(now + MAX_SLEEP, |d| d.min(now + MAX_SLEEP));
        // A worker with no connection and no handshake under way has no net
        // timer to run: it sleeps the longest. Otherwise due timers ride on
        // the next tick's wake-up when it comes within another period, and
        // get a wake-up of their own when none does (no match, or a slow
        // rate).
        let timers_ride = next_tick.is_some_and(|d| d <= self.net_timers_at + NET_TIMER_PERIOD);
        if !self.net.is_idle() && !timers_ride {
            wake = wake.min(self.net_timers_at.max(now + Duration::from_micros(100)));
        }
        if wake > now {
            std::thread::sleep(wake - now);
        }
    }
}

/// Whether a network service may run the secure layer's timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timers {
    /// If they are due (between ticks).
    Due,
    /// Only if they are a period overdue (inside a match's frame they wait
    /// for the next gap between ticks, unless a worker that never has one
    /// would starve them).
    Overdue,
}

/// Moves `seat`'s send share by its connection's reading (on `slot`) and
/// sets its snapshot budget for the next tick; whether this tick's packet
/// goes.
fn adapt_seat<G: HostedGame>(
    config: &AdaptConfig,
    seat: &mut Seat,
    game: &mut Match<G>,
    net: &Server,
    slot: usize,
    now: Instant,
    traffic: &mut Traffic,
) -> bool {
    let Some(endpoint) = net.endpoint(slot) else {
        return true;
    };
    let reading = LinkReading {
        rtt: endpoint.rtt(),
        loss: endpoint.packet_loss(),
        measured: endpoint.stats().packets_acked > 0,
    };
    let cuts = seat.link.decreases();
    seat.link.observe(config, now, reading);
    traffic.adapt_decreases += seat.link.decreases() - cuts;
    let full = game.config().snapshot_budget_bytes;
    let budget = seat.link.budget(full);
    if game.snapshot_budget(seat.player) != Some(budget) {
        let _ = game.set_snapshot_budget(seat.player, budget);
    }
    seat.link.take_send()
}

fn count_flush(traffic: &mut Traffic, flushed: hightick_udp::Flushed) {
    traffic.packets_out += flushed.sent as u64;
    traffic.bytes_out += flushed.bytes as u64;
    traffic.send_dropped += flushed.dropped as u64;
}
