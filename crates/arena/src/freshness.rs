//! Freshness: how stale each client's view of the other players is, where
//! the client stands. Per client a [`ClientWorld`] applies every snapshot the
//! client receives; after each server tick every pair (client, another
//! player's body the client holds) is held against the server's exact state.
//!
//! - Staleness, in ticks, once the client's newest applied snapshot is of
//!   server tick `T`, held against the server's state after `T` (kept by
//!   [`Truth`], so a transport's delay is not counted, only what snapshots
//!   left out): 0 if the client's transform is what the server would have
//!   sent then (every part within half a quantization step, [`Precision`]),
//!   else `T` minus the server tick of the snapshot that last changed that
//!   transform at the client.
//! - Position error: the distance between the client's position and the
//!   server's exact one, in centimetres.
//! - In view: the target within [`VIEW_CONE_HALF_ANGLE`] of the viewer's
//!   yaw (horizontally), the pairs a player looks at.
//!
//! What it is for: judging what a snapshot budget and the priority
//! accumulator cost a crowd (the `plaza_freshness` bench; docs/PERFORMANCE.md,
//! "A crowd that stays fresh"). It reads only [`ArenaReplica::transform`] and
//! the [`ClientWorld`]'s public API, so it holds whatever the transform's
//! encoding. What it is not: a transport. [`measure`] runs a [`BotMatch`] and
//! leaves moving each tick's packets to a [`Carrier`]: [`Direct`] hands the
//! snapshots straight over; the bench carries them through `hightick_net`'s
//! in-memory server, sealed and opened.
//!
//! ```
//! use hightick_arena::freshness::{Direct, Schedule, measure};
//! use hightick_arena::scenario::Scenario;
//!
//! let mut scenario = Scenario::plaza100(128);
//! scenario.match_config.snapshot_budget_bytes = 896;
//! let mut m = scenario.bot_match(7)?;
//! let schedule = Schedule { warmup_ticks: 16, measure_ticks: 8, max_ticks: 2_000 };
//! let report = measure(&mut m, &mut Direct, &schedule);
//! assert_eq!(report.ticks, 8);
//! assert!(report.pairs > 0);
//! println!("staleness p99 {} ticks", report.staleness_p99_ticks);
//! # Ok::<(), hightick_arena::game::SetupError>(())
//! ```

use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
use std::time::Instant;

use glam::Vec2;
use hightick_engine::replication::{ChangeDetection, ClientWorld, PacketFate};
use hightick_engine::tick::Tick;
use hightick_engine::{EntityId, Match, PlayerId};
use hightick_proto::MessageKind;
use hightick_telemetry::bench::Stats;

use crate::game::{Arena, ArenaReplica, Phase, ReplicaTransform};
use crate::scenario::BotMatch;
use crate::wrap_angle;

/// Half the opening of the view cone: a target within this angle of the
/// viewer's yaw is in view.
pub const VIEW_CONE_HALF_ANGLE: f32 = FRAC_PI_4;

/// Staleness beyond this many ticks is counted here.
const MAX_STALENESS_TICKS: usize = 4_096;
/// Position errors are counted in millimetres up to this many, beyond in
/// the last bin.
const MAX_ERROR_MM: usize = 20_000;

/// How far apart two transforms may be and still be the same on the wire:
/// half a quantization step of each part (the arena's wire as of writing:
/// positions in steps of 256 m / 16383 on x and z, 32 m / 2047 on y, each
/// about 1/64 m; yaw in 10
/// bits over a turn, pitch in 8 bits over half a turn, crouch in 2 bits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// Per axis, metres.
    pub position: f32,
    /// Radians.
    pub yaw: f32,
    /// Radians.
    pub pitch: f32,
    /// Crouch amount (0..=1).
    pub crouch: f32,
}

impl Default for Precision {
    fn default() -> Self {
        // A hair over half a step, so a value on the rounding edge counts
        // as the code it was sent as.
        let half = |range: f32, bits: u32| range / ((1u32 << bits) - 1) as f32 * 0.5 * 1.001;
        Self {
            position: half(32.0, 11),
            yaw: half(2.0 * PI, 10),
            pitch: half(PI, 8),
            crouch: half(1.0, 2),
        }
    }
}

impl Precision {
    /// Whether the client's `held` transform is what the server would send
    /// for a body at `position` looking along `yaw` and `pitch`, crouched by
    /// `crouch`.
    fn same(&self, held: &ReplicaTransform, position: [f32; 3], view: [f32; 3]) -> bool {
        let [yaw, pitch, crouch] = view;
        held.position
            .iter()
            .zip(position)
            .all(|(h, p)| (h - p).abs() <= self.position)
            && wrap_angle(held.yaw - yaw).abs() <= self.yaw
            && (held.pitch - pitch.clamp(-FRAC_PI_2, FRAC_PI_2)).abs() <= self.pitch
            && (held.crouch - crouch.clamp(0.0, 1.0)).abs() <= self.crouch
    }
}

/// One client: its replicated world and, per entity, the transform it held
/// after the last snapshot and the server tick that last changed it.
#[derive(Debug)]
struct ClientView {
    player: PlayerId,
    world: ClientWorld<ArenaReplica>,
    held: Box<[Option<ReplicaTransform>]>,
    changed_at: Box<[Tick]>,
    /// The newest server tick whose snapshot the client applied.
    applied: Tick,
}

/// Counts per value, and the quantiles of what was counted.
#[derive(Debug, Clone)]
struct Histogram {
    counts: Box<[u64]>,
    total: u64,
}

impl Histogram {
    fn new(bins: usize) -> Self {
        Self {
            counts: vec![0; bins].into_boxed_slice(),
            total: 0,
        }
    }

    fn add(&mut self, value: usize) {
        let last = self.counts.len() - 1;
        self.counts[value.min(last)] += 1;
        self.total += 1;
    }

    /// The mean value counted (the last bin at its value); 0 when empty.
    fn mean(&self) -> f64 {
        let sum: f64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(v, &n)| v as f64 * n as f64)
            .sum();
        sum / self.total.max(1) as f64
    }

    /// The least value at or below which a share `q` of the counts lie
    /// (nearest rank); 0 when empty.
    fn quantile(&self, q: f64) -> usize {
        let rank = ((q * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (value, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return value;
            }
        }
        0
    }
}

/// Every client's view and what the pairs measured so far. See the
/// [module docs](self).
#[derive(Debug)]
pub struct Freshness {
    clients: Box<[ClientView]>,
    precision: Precision,
    staleness: Histogram,
    in_view: Histogram,
    error_mm: Histogram,
    missing: u64,
    live: u64,
    apply_errors: u64,
}

impl Freshness {
    /// A probe for the clients of `players` (client `i` plays `players[i]`)
    /// in a match of `entities` entity slots.
    pub fn new(players: &[PlayerId], entities: usize) -> Self {
        Self {
            clients: players
                .iter()
                .map(|&player| ClientView {
                    player,
                    world: ClientWorld::new(entities),
                    held: vec![None; entities].into_boxed_slice(),
                    changed_at: vec![0; entities].into_boxed_slice(),
                    applied: 0,
                })
                .collect(),
            precision: Precision::default(),
            staleness: Histogram::new(MAX_STALENESS_TICKS + 1),
            in_view: Histogram::new(MAX_STALENESS_TICKS + 1),
            error_mm: Histogram::new(MAX_ERROR_MM + 1),
            missing: 0,
            live: 0,
            apply_errors: 0,
        }
    }

    /// Client `client` read `message`: a snapshot is applied to its world
    /// (other messages are ignored), and every transform it changed is
    /// stamped with the snapshot's server tick.
    pub fn receive(&mut self, client: usize, message: &[u8]) {
        if message.first() != Some(&MessageKind::Snapshot.as_u8()) {
            return;
        }
        let view = &mut self.clients[client];
        let tick = match view.world.apply(message) {
            Ok(info) if info.applied => info.header.server_tick,
            Ok(_) => return,
            Err(_) => {
                self.apply_errors += 1;
                return;
            }
        };
        view.applied = view.applied.max(tick);
        for (i, (held, changed_at)) in view
            .held
            .iter_mut()
            .zip(view.changed_at.iter_mut())
            .enumerate()
        {
            let now = view
                .world
                .get(EntityId(i as u16))
                .and_then(|e| e.state.transform);
            if now != *held {
                *held = now;
                *changed_at = tick;
            }
        }
    }

    /// Measures every pair against the server's state after the newest tick
    /// whose snapshot the client applied (`truth`, kept over the last
    /// ticks): so the transport's delay is not counted, only what the
    /// snapshots left out. A client that applied nothing kept in `truth` yet
    /// is skipped.
    pub fn observe(&mut self, truth: &Truth) {
        let cos_cone = VIEW_CONE_HALF_ANGLE.cos();
        for view in self.clients.iter() {
            let Some(state) = truth.at(view.applied) else {
                continue;
            };
            let Some(viewer) = state.iter().find(|b| b.player == view.player) else {
                continue;
            };
            let eye = viewer.position;
            let forward = Vec2::new(viewer.view[0].sin(), viewer.view[0].cos());
            for target in state.iter() {
                if target.player == view.player {
                    continue;
                }
                let body = usize::from(target.body.0);
                let held = view
                    .world
                    .get(target.body)
                    .and(view.held.get(body).copied().flatten());
                let Some(held) = held else {
                    self.missing += 1;
                    continue;
                };
                let p = target.position;
                let fresh = self.precision.same(&held, p.to_array(), target.view);
                let staleness = if fresh {
                    0
                } else {
                    view.applied.saturating_sub(view.changed_at[body]) as usize
                };
                self.staleness.add(staleness);
                self.live += u64::from(target.alive);
                let to = Vec2::new(p.x - eye.x, p.z - eye.z);
                let length = to.length();
                if length < 1e-3 || to.dot(forward) >= cos_cone * length {
                    self.in_view.add(staleness);
                }
                let error_m = (glam::Vec3::from_array(held.position) - p).length();
                self.error_mm.add((error_m * 1000.0).round() as usize);
            }
        }
    }

    /// Pairs measured (the client held the other's body and its transform).
    pub fn pairs(&self) -> u64 {
        self.staleness.total
    }

    /// Pairs whose target the client did not hold (or held without a
    /// transform) when measured.
    pub fn missing(&self) -> u64 {
        self.missing
    }

    /// Snapshots that failed to apply.
    pub fn apply_errors(&self) -> u64 {
        self.apply_errors
    }
}

/// One body as the server had it after a tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyState {
    /// Its player.
    pub player: PlayerId,
    /// Its entity.
    pub body: EntityId,
    /// Feet position.
    pub position: glam::Vec3,
    /// Yaw, pitch, crouch.
    pub view: [f32; 3],
    /// Alive this round.
    pub alive: bool,
}

/// The server's bodies after each of the last [`TRUTH_TICKS`] ticks.
#[derive(Debug)]
pub struct Truth {
    ticks: Box<[Tick]>,
    bodies: Box<[Vec<BodyState>]>,
}

/// Ticks of server state [`Truth`] keeps: clients further behind than this
/// are not measured.
pub const TRUTH_TICKS: usize = 64;

impl Default for Truth {
    fn default() -> Self {
        Self {
            ticks: vec![0; TRUTH_TICKS].into_boxed_slice(),
            bodies: (0..TRUTH_TICKS).map(|_| Vec::new()).collect(),
        }
    }
}

impl Truth {
    /// Keeps `arena`'s bodies as they are after tick `tick`.
    pub fn record(&mut self, arena: &Arena, tick: Tick) {
        let i = tick as usize % TRUTH_TICKS;
        self.ticks[i] = tick;
        let bodies = &mut self.bodies[i];
        bodies.clear();
        bodies.extend(arena.fighters().map(|(player, f)| BodyState {
            player,
            body: f.body,
            position: f.position(),
            view: [f.yaw, f.pitch, f.movement.crouch],
            alive: f.alive,
        }));
    }

    /// The bodies after tick `tick`, if kept.
    pub fn at(&self, tick: Tick) -> Option<&[BodyState]> {
        let i = tick as usize % TRUTH_TICKS;
        (tick > 0 && self.ticks[i] == tick).then(|| self.bodies[i].as_slice())
    }
}

/// Moves each tick's packets between the match and its clients.
pub trait Carrier<D: ChangeDetection> {
    /// Puts client `i`'s tick (`player`'s events and snapshot) in a packet
    /// and returns its size on the wire in bytes (0: nothing sent).
    fn send(&mut self, game: &mut Match<Arena, D>, i: usize, player: PlayerId) -> usize;

    /// Client `i` opens the packet sent this tick and hands each message it
    /// reads to `read`; its acks go back and the match takes in the fates.
    fn receive(
        &mut self,
        game: &mut Match<Arena, D>,
        i: usize,
        player: PlayerId,
        read: &mut dyn FnMut(&[u8]),
    );
}

/// The carrier with no transport: each client reads its snapshot straight
/// from the match, every packet is acknowledged at once, events are dropped.
/// Sizes are snapshot payload bytes (no packet framing, no seal).
#[derive(Debug, Clone, Copy, Default)]
pub struct Direct;

impl<D: ChangeDetection> Carrier<D> for Direct {
    fn send(&mut self, game: &mut Match<Arena, D>, _i: usize, player: PlayerId) -> usize {
        while game.pop_event(player).is_some() {}
        let len = game.snapshot(player).len();
        if len > 0 {
            game.packet_sent(player, game.tick_number() as u16);
        }
        len
    }

    fn receive(
        &mut self,
        game: &mut Match<Arena, D>,
        _i: usize,
        player: PlayerId,
        read: &mut dyn FnMut(&[u8]),
    ) {
        let snapshot = game.snapshot(player);
        if !snapshot.is_empty() {
            read(snapshot);
            game.on_delivery(player, game.tick_number() as u16, PacketFate::Acked);
        }
    }
}

/// When [`measure`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Ticks of the Combat phase run before measuring (the bots spread out,
    /// the accumulator settles).
    pub warmup_ticks: u32,
    /// Ticks of the Combat phase measured; ticks of other phases (a round
    /// decided early) are skipped.
    pub measure_ticks: u32,
    /// Ticks run at most, whatever was measured by then.
    pub max_ticks: u32,
}

/// What [`measure`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct FreshnessReport {
    /// Clients (one per player).
    pub clients: usize,
    /// Ticks measured.
    pub ticks: u32,
    /// Pairs measured over those ticks.
    pub pairs: u64,
    /// Pairs whose target the client did not hold.
    pub missing: u64,
    /// Pairs measured with the target in the viewer's view cone.
    pub in_view_pairs: u64,
    /// Pairs measured with the target alive (the dead lie still).
    pub live_pairs: u64,
    /// Pairs whose client transform was what the server would send.
    pub fresh_pairs: u64,
    /// Of those, the pairs in view.
    pub in_view_fresh_pairs: u64,
    /// Median staleness over all pairs, ticks.
    pub staleness_p50_ticks: u32,
    /// 99th percentile staleness over all pairs, ticks.
    pub staleness_p99_ticks: u32,
    /// 99th percentile staleness over the pairs in view, ticks.
    pub staleness_in_view_p99_ticks: u32,
    /// Largest staleness seen, ticks.
    pub staleness_max_ticks: u32,
    /// Mean staleness over all pairs, ticks.
    pub staleness_mean_ticks: f64,
    /// Mean staleness over the pairs in view, ticks.
    pub staleness_in_view_mean_ticks: f64,
    /// 99th percentile position error, centimetres (to the millimetre).
    pub position_error_p99_cm: f64,
    /// Bytes sent per client per second of match time.
    pub bytes_per_client_s: f64,
    /// Mean server tick (the match tick and every client's packet), us.
    pub tick_mean_us: f64,
    /// Records that waited for a later tick (budget spent), all clients.
    pub deferred_records: u64,
    /// Snapshots that failed to apply.
    pub apply_errors: u64,
    /// Share of entity records copied from one encoded for another client
    /// in the same tick, percent (the whole run).
    pub records_shared_pct: f64,
}

/// Runs `m` with its packets moved by `carrier` until `schedule` is done,
/// measuring freshness on the Combat ticks after the warm-up. Timed per
/// tick: the match tick and every client's [`Carrier::send`]; untimed: the
/// clients reading and the measuring.
pub fn measure<D: ChangeDetection, C: Carrier<D>>(
    m: &mut BotMatch<D>,
    carrier: &mut C,
    schedule: &Schedule,
) -> FreshnessReport {
    let players: Vec<PlayerId> = m.players().collect();
    let mut probe = Freshness::new(&players, usize::from(m.game.config().max_entities));
    let mut truth = Truth::default();
    let mut lens = vec![0usize; players.len()];
    let mut tick_ns = Vec::with_capacity(schedule.measure_ticks as usize);
    let mut bytes = 0u64;
    let mut combat = 0u32;
    let mut measured = 0u32;
    let deferred = |m: &BotMatch<D>| -> u64 {
        players
            .iter()
            .filter_map(|&p| m.game.replication_stats(p))
            .map(|s| s.deferred)
            .sum()
    };
    let mut deferred_before = 0;
    for _ in 0..schedule.max_ticks {
        if measured == schedule.measure_ticks {
            break;
        }
        let start = Instant::now();
        m.step();
        for (i, &p) in players.iter().enumerate() {
            lens[i] = carrier.send(&mut m.game, i, p);
        }
        let ns = start.elapsed().as_nanos() as f64;
        truth.record(m.game.game(), m.game.tick_number());
        for (i, &p) in players.iter().enumerate() {
            carrier.receive(&mut m.game, i, p, &mut |message| probe.receive(i, message));
        }
        if m.game.game().clock().phase != Phase::Combat {
            continue;
        }
        combat += 1;
        if combat == schedule.warmup_ticks {
            deferred_before = deferred(m);
        }
        if combat > schedule.warmup_ticks {
            measured += 1;
            tick_ns.push(ns);
            bytes += lens.iter().map(|&l| l as u64).sum::<u64>();
            probe.observe(&truth);
        }
    }
    let rate = f64::from(m.game.config().tick_rate_hz);
    let seconds = f64::from(measured.max(1)) / rate;
    let q = |h: &Histogram, q: f64| h.quantile(q) as u32;
    FreshnessReport {
        clients: players.len(),
        ticks: measured,
        pairs: probe.pairs(),
        missing: probe.missing(),
        in_view_pairs: probe.in_view.total,
        live_pairs: probe.live,
        fresh_pairs: probe.staleness.counts[0],
        in_view_fresh_pairs: probe.in_view.counts[0],
        staleness_p50_ticks: q(&probe.staleness, 0.5),
        staleness_p99_ticks: q(&probe.staleness, 0.99),
        staleness_in_view_p99_ticks: q(&probe.in_view, 0.99),
        staleness_max_ticks: q(&probe.staleness, 1.0),
        staleness_mean_ticks: probe.staleness.mean(),
        staleness_in_view_mean_ticks: probe.in_view.mean(),
        position_error_p99_cm: probe.error_mm.quantile(0.99) as f64 / 10.0,
        bytes_per_client_s: bytes as f64 / players.len().max(1) as f64 / seconds,
        tick_mean_us: Stats::from_samples(tick_ns).mean_ns() / 1e3,
        deferred_records: deferred(m) - deferred_before,
        apply_errors: probe.apply_errors(),
        records_shared_pct: {
            let s = m.game.shared_record_stats();
            100.0 * s.copied as f64 / (s.copied + s.encoded).max(1) as f64
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let mut h = Histogram::new(8);
        for v in [0, 0, 0, 1, 5, 9] {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), 0);
        assert_eq!(h.quantile(0.6), 1);
        assert_eq!(h.quantile(0.99), 7, "9 is counted in the last bin");
        assert_eq!(h.mean(), 13.0 / 6.0);
        assert_eq!(Histogram::new(4).quantile(0.99), 0);
    }

    #[test]
    fn precision_tells_one_code_from_the_next() {
        let p = Precision::default();
        let held = ReplicaTransform {
            position: [1.0, 0.0, 2.0],
            yaw: PI - 0.001,
            pitch: 0.1,
            crouch: 0.0,
        };
        let view = [held.yaw, held.pitch, held.crouch];
        assert!(p.same(&held, [1.0 + 0.0075, 0.0, 2.0 - 0.0075], view));
        assert!(!p.same(&held, [1.0 + 0.0085, 0.0, 2.0], view));
        assert!(
            p.same(&held, held.position, [-PI + 0.001, 0.1, 0.0]),
            "wraps"
        );
        assert!(!p.same(&held, held.position, [held.yaw - 0.01, 0.1, 0.0]));
        assert!(!p.same(&held, held.position, [held.yaw, 0.1, 1.0]));
    }
}
