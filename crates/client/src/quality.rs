//! [`QualityProbe`]: what a player would see through its link, measured
//! from the client at each of its frames (a match bot's ticks, in the
//! swarm).
//!
//! - **Snapshot age**: how far behind the server's current tick the newest
//!   snapshot the client holds is, in microseconds. The server ticks on a
//!   fixed schedule, tick `k` at `T0 + k * period`; the probe takes `T0`
//!   from the fastest snapshot of the last quarter to half second (the
//!   least `arrival - k * period`; a window, because a host that falls
//!   more than four periods behind skips ahead and shifts its schedule for
//!   good: the ages of the half second after a skip read high by it),
//!   after a calibration of two seconds of snapshots before it records
//!   anything. So the age it records is the age *beyond the fastest path*: the caller adds that path's delay (for a bot behind the
//!   impairment proxy, the shortest one-way delay the proxy decided; on
//!   loopback, about 0). Arrivals are when the bot reads its socket, once a
//!   frame, so ages are at frames, as a player sees them, and the fastest
//!   path includes the bot's phase against the server's ticks: ages may
//!   read up to one tick short.
//! - **Interpolation error**: at each frame the client would draw every
//!   entity at render tick `R = estimate - render_delay` from its
//!   interpolation buffer. Once snapshots for the ticks around `R` have
//!   arrived, the server's position at `R` is known (the exact samples at
//!   `floor(R)` and `ceil(R)`, lerped) and the distance to what was drawn is
//!   recorded in millimetres (the client must track positions:
//!   [`GameClient::track_positions`]). Where either sample never arrived (lost, or
//!   the entity was not in those snapshots) the frame's entity is counted
//!   as not checked: what the server held at a tick the client never heard
//!   about cannot be known from the client.

use std::collections::VecDeque;
use std::time::Instant;

use hdrhistogram::Histogram;
use hightick_engine::{EntityId, Game};

use crate::core::GameClient;

/// Entities checked per frame at most (rotating over the world).
const PER_FRAME: usize = 16;
/// Drawn positions waiting for the server's truth.
const PENDING: usize = 512;
/// Significant digits of the probe's histograms: values within 1%. Every
/// match bot holds two; at 3 digits their counts were 368 KiB a bot,
/// almost half of a bot's memory (0.73 MiB a bot in a lab sweep against
/// 0.39 MiB at 2: docs/PERFORMANCE.md, "Memory per match bot").
const SIGNIFICANT_DIGITS: u8 = 2;

#[derive(Debug, Clone, Copy)]
struct Drawn {
    entity: EntityId,
    render_tick: f32,
    position: [f32; 3],
}

/// What the probe measured (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct Quality {
    /// Snapshot age beyond the fastest path at each frame, microseconds.
    pub snapshot_age_us: Histogram<u64>,
    /// Distance between drawn and server positions, millimetres.
    pub position_error_mm: Histogram<u64>,
    /// Drawn positions that could not be checked (a sample never came).
    pub positions_unchecked: u64,
}

impl Default for Quality {
    fn default() -> Self {
        let histogram = || {
            Histogram::new_with_bounds(1, 3_600_000_000, SIGNIFICANT_DIGITS)
                .expect("constant histogram bounds are valid")
        };
        Self {
            snapshot_age_us: histogram(),
            position_error_mm: histogram(),
            positions_unchecked: 0,
        }
    }
}

impl Quality {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Quality) {
        // Same bounds on both sides: cannot fail.
        let _ = self.snapshot_age_us.add(&other.snapshot_age_us);
        let _ = self.position_error_mm.add(&other.position_error_mm);
        self.positions_unchecked += other.positions_unchecked;
    }
}

/// See the [module docs](self).
#[derive(Debug)]
pub struct QualityProbe {
    period_ns: f64,
    render_delay_ticks: f32,
    origin: Instant,
    calibration: u64,
    snapshots: u64,
    newest: Option<u32>,
    /// Least `arrival - origin - tick * period` of this window and of the
    /// one before, nanoseconds (`INFINITY`: none yet).
    fastest_ns: [f64; 2],
    /// Snapshots per window (a quarter of a second's worth).
    window: u64,
    next_entity: usize,
    pending: VecDeque<Drawn>,
    quality: Quality,
}

impl QualityProbe {
    /// A probe for a server ticking at `tick_rate_hz`, drawing
    /// `render_delay_ticks` behind its estimate of the server's tick.
    pub fn new(tick_rate_hz: u32, render_delay_ticks: f32, origin: Instant) -> Self {
        let rate = tick_rate_hz.max(1);
        Self {
            period_ns: 1e9 / f64::from(rate),
            render_delay_ticks,
            origin,
            calibration: 2 * u64::from(rate),
            snapshots: 0,
            newest: None,
            fastest_ns: [f64::INFINITY; 2],
            window: u64::from(rate / 4).max(8),
            next_entity: 0,
            pending: VecDeque::with_capacity(PENDING),
            quality: Quality::default(),
        }
    }

    /// What it measured so far.
    pub fn quality(&self) -> &Quality {
        &self.quality
    }

    /// One frame at `now`: notes a new snapshot, records the age, draws
    /// entities and checks earlier drawings.
    pub fn frame<G: Game>(&mut self, now: Instant, client: &GameClient<G>) {
        let Some((tick, arrival)) = client.newest_snapshot() else {
            return;
        };
        let since = |t: Instant| t.saturating_duration_since(self.origin).as_nanos() as f64;
        if self.newest != Some(tick) {
            self.newest = Some(tick);
            self.snapshots += 1;
            let offset = since(arrival) - f64::from(tick) * self.period_ns;
            self.fastest_ns[1] = self.fastest_ns[1].min(offset);
            if self.snapshots.is_multiple_of(self.window) {
                self.fastest_ns = [self.fastest_ns[1], f64::INFINITY];
            }
        }
        if self.snapshots < self.calibration {
            return;
        }
        let fastest = self.fastest_ns[0].min(self.fastest_ns[1]);
        let age_ns = since(now) - f64::from(tick) * self.period_ns - fastest;
        let age_us = (age_ns / 1000.0).max(1.0) as u64;
        self.quality.snapshot_age_us.saturating_record(age_us);
        self.check(client);
        if let Some(estimate) = client.server_tick_estimate(now) {
            self.draw(client, estimate - self.render_delay_ticks);
        }
    }

    /// Draws up to [`PER_FRAME`] entities at `render_tick`.
    fn draw<G: Game>(&mut self, client: &GameClient<G>, render_tick: f32) {
        let held = client.world().iter().count();
        if held == 0 {
            return;
        }
        let start = self.next_entity % held;
        for e in client.world().iter().skip(start).take(PER_FRAME) {
            let Some(position) = client.interpolated(e.entity, render_tick) else {
                continue;
            };

            if self.pending.len() == PENDING {
                self.pending.pop_front();
                self.quality.positions_unchecked += 1;
            }
            self.pending.push_back(Drawn {
                entity: e.entity,
                render_tick,
                position,
            });
        }
        self.next_entity = start + PER_FRAME;
    }

    /// Checks every drawing whose surrounding snapshots have come.
    fn check<G: Game>(&mut self, client: &GameClient<G>) {
        let buffer = client.interpolation();
        let mut keep = self.pending.len();
        while keep > 0 {
            keep -= 1;
            let Some(d) = self.pending.pop_front() else {
                break;
            };
            let before = d.render_tick.floor().max(0.0) as u32;
            let after = d.render_tick.ceil().max(0.0) as u32;
            let Some(newest) = buffer.newest_tick(d.entity) else {
                self.quality.positions_unchecked += 1;
                continue;
            };
            if newest < after {
                self.pending.push_back(d); // not yet known
                continue;
            }
            let truth = match (
                buffer.sample(d.entity, before),
                buffer.sample(d.entity, after),
            ) {
                (Some(a), Some(b)) => {
                    let f = d.render_tick - before as f32;
                    [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * f)
                }
                _ => {
                    self.quality.positions_unchecked += 1;
                    continue;
                }
            };
            let error = crate::prediction::distance(d.position, truth);
            let mm = (f64::from(error) * 1000.0).round().max(1.0) as u64;
            self.quality.position_error_mm.saturating_record(mm);
        }
    }
}
