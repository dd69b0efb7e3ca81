//! The lag-compensation history: where every player was, tick by tick.
//!
//! Each player has a [`PoseHistory`], a ring of `(tick, pose)` records taken
//! every N ticks (the game decides when by asking
//! [`LagCompensation::is_record_tick`]; it can switch recording off, e.g. during
//! a buy phase when no shot can land). When a shot arrives stamped with the
//! time the shooter saw, [`LagCompensation::rewind`] interpolates the two
//! records around that time, never further back than the maximum rewind and
//! never past the newest record.
//!
//! The pose type is the game's: anything that implements [`Interpolate`].

use crate::player::PlayerId;
use crate::tick::{Tick, TickTime};

/// A value that can be blended between two samples: `t = 0` gives `a`,
/// `t = 1` gives `b` (lerp positions, slerp rotations...).
pub trait Interpolate: Sized {
    /// The value `t` of the way from `a` to `b`.
    fn interpolate(a: &Self, b: &Self, t: f32) -> Self;
}

impl Interpolate for f32 {
    fn interpolate(a: &Self, b: &Self, t: f32) -> Self {
        a + (b - a) * t
    }
}

impl Interpolate for f64 {
    fn interpolate(a: &Self, b: &Self, t: f32) -> Self {
        a + (b - a) * f64::from(t)
    }
}

impl<const N: usize> Interpolate for [f32; N] {
    fn interpolate(a: &Self, b: &Self, t: f32) -> Self {
        std::array::from_fn(|i| f32::interpolate(&a[i], &b[i], t))
    }
}

/// A fixed-capacity ring of `(tick, pose)` records in increasing tick order.
#[derive(Debug, Clone)]
pub struct PoseHistory<P> {
    records: Vec<(Tick, P)>,
    capacity: usize,
    /// Index of the oldest record once the ring is full.
    head: usize,
}

impl<P: Interpolate + Clone> PoseHistory<P> {
    /// An empty history keeping the newest `capacity` records (at least 1).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            records: Vec::with_capacity(capacity),
            capacity,
            head: 0,
        }
    }

    /// The number of records kept.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Forgets every record (e.g. after a teleport or respawn, so a rewind
    /// never blends across it).
    pub fn clear(&mut self) {
        self.records.clear();
        self.head = 0;
    }

    fn get(&self, i: usize) -> &(Tick, P) {
        &self.records[(self.head + i) % self.records.len()]
    }

    /// The newest record.
    pub fn newest(&self) -> Option<&(Tick, P)> {
        (!self.is_empty()).then(|| self.get(self.len() - 1))
    }

    /// The oldest record.
    pub fn oldest(&self) -> Option<&(Tick, P)> {
        (!self.is_empty()).then(|| self.get(0))
    }

    /// Records `pose` at `tick`, evicting the oldest record when full. A
    /// record for the newest tick replaces it; one older than the newest is
    /// refused (`false`).
    pub fn record(&mut self, tick: Tick, pose: P) -> bool {
        if let Some(&(newest, _)) = self.newest() {
            if tick < newest {
                return false;
            }
            if tick == newest {
                let last = (self.head + self.len() - 1) % self.len();
                self.records[last].1 = pose;
                return true;
            }
        }
        if self.records.len() < self.capacity {
            self.records.push((tick, pose));
        } else {
            self.records[self.head] = (tick, pose);
            self.head = (self.head + 1) % self.capacity;
        }
        true
    }

    /// The pose at `time`, interpolated between the two records around it;
    /// clamped to the oldest and newest records. `None` when empty.
    pub fn sample(&self, time: TickTime) -> Option<P> {
        let (newest_tick, newest) = self.newest()?;
        let target = time.as_ticks_f64();
        if target >= f64::from(*newest_tick) {
            return Some(newest.clone());
        }
        let (oldest_tick, oldest) = self.get(0);
        if target <= f64::from(*oldest_tick) {
            return Some(oldest.clone());
        }
        // Binary search for the last record at or before `target`.
        let (mut lo, mut hi) = (0, self.len() - 1);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if f64::from(self.get(mid).0) <= target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let (ta, a) = self.get(lo);
        let (tb, b) = self.get(hi);
        let t = (target - f64::from(*ta)) / f64::from(tb - ta);
        Some(P::interpolate(a, b, t as f32))
    }
}

/// How the history is recorded and how far it may rewind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RewindLimits {
    /// Record every this many ticks (at least 1).
    pub record_interval_ticks: u32,
    /// The furthest a rewind may reach back, in ticks (fractional).
    pub max_rewind_ticks: f64,
}

impl RewindLimits {
    /// Limits for a tick rate, a record interval and a maximum rewind in
    /// milliseconds.
    pub fn new(tick_rate_hz: u32, record_interval_ticks: u32, max_rewind_ms: u32) -> Self {
        Self {
            record_interval_ticks: record_interval_ticks.max(1),
            max_rewind_ticks: f64::from(max_rewind_ms) * f64::from(tick_rate_hz) / 1000.0,
        }
    }

    /// Records a history must keep to cover the maximum rewind.
    pub fn records_needed(&self) -> usize {
        (self.max_rewind_ticks / f64::from(self.record_interval_ticks)).ceil() as usize + 2
    }
}

/// The per-player pose histories of one match.
///
/// ```
/// use hightick_engine::lag_comp::{LagCompensation, RewindLimits};
/// use hightick_engine::{PlayerId, tick::TickTime};
/// // 128 Hz, a record every 4 ticks, at most 200 ms back.
/// let mut history = LagCompensation::<[f32; 3]>::new(2, RewindLimits::new(128, 4, 200));
/// for tick in 0..=40 {
///     if history.is_record_tick(tick) {
///         history.record(PlayerId(0), tick, [tick as f32, 0.0, 0.0]);
///     }
/// }
/// let pose = history.rewind(PlayerId(0), TickTime::new(30, 0.5), 40).unwrap();
/// assert_eq!(pose[0], 30.5);
/// ```
#[derive(Debug, Clone)]
pub struct LagCompensation<P> {
    histories: Vec<PoseHistory<P>>,
    limits: RewindLimits,
    recording: bool,
}

impl<P: Interpolate + Clone> LagCompensation<P> {
    /// Histories for `players` players, each sized to cover the maximum rewind.
    pub fn new(players: usize, limits: RewindLimits) -> Self {
        let records = limits.records_needed();
        Self {
            histories: (0..players)
                .map(|_| PoseHistory::with_capacity(records))
                .collect(),
            limits,
            recording: true,
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> RewindLimits {
        self.limits
    }

    /// Switches recording on or off (off during a buy phase).
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
    }

    /// Whether recording is on.
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// Whether poses should be evaluated and recorded at `tick`: recording is
    /// on and `tick` is a multiple of the record interval.
    pub fn is_record_tick(&self, tick: Tick) -> bool {
        self.recording && tick.is_multiple_of(self.limits.record_interval_ticks)
    }

    /// Records `player`'s pose at `tick` (an unknown player is ignored).
    pub fn record(&mut self, player: PlayerId, tick: Tick, pose: P) {
        if let Some(h) = self.histories.get_mut(usize::from(player.0)) {
            h.record(tick, pose);
        }
    }

    /// Forgets `player`'s history (after a respawn or teleport).
    pub fn clear(&mut self, player: PlayerId) {
        if let Some(h) = self.histories.get_mut(usize::from(player.0)) {
            h.clear();
        }
    }

    /// One player's history.
    pub fn history(&self, player: PlayerId) -> Option<&PoseHistory<P>> {
        self.histories.get(usize::from(player.0))
    }

    /// `player`'s pose at `target` as seen from tick `now`: `target` is
    /// clamped to at most the maximum rewind before `now`, then the two records
    /// around it are interpolated (clamped to the newest and oldest record).
    /// `None` for an unknown player or an empty history.
    pub fn rewind(&self, player: PlayerId, target: TickTime, now: Tick) -> Option<P> {
        let earliest = f64::from(now) - self.limits.max_rewind_ticks;
        let target = TickTime::from_ticks_f64(target.as_ticks_f64().max(earliest));
        self.histories.get(usize::from(player.0))?.sample(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> RewindLimits {
        RewindLimits::new(128, 4, 200)
    }

    #[test]
    fn interpolates_between_the_two_records_around_the_target() {
        let mut lc = LagCompensation::<f32>::new(1, limits());
        for t in 0..=100 {
            if lc.is_record_tick(t) {
                lc.record(PlayerId(0), t, t as f32 * 2.0);
            }
        }
        // Between records 80 and 84.
        let p = lc.rewind(PlayerId(0), TickTime::new(81, 0.5), 100).unwrap();
        assert!((p - 163.0).abs() < 1e-4, "{p}");
        // Exactly on a record.
        assert_eq!(lc.rewind(PlayerId(0), TickTime::at(92), 100), Some(184.0));
        // In the future: clamped to the newest.
        assert_eq!(lc.rewind(PlayerId(0), TickTime::at(150), 100), Some(200.0));
    }

    #[test]
    fn max_rewind_clamps_old_targets() {
        let l = limits(); // 200 ms at 128 Hz = 25.6 ticks
        assert!((l.max_rewind_ticks - 25.6).abs() < 1e-9);
        let mut lc = LagCompensation::<f64>::new(1, l);
        for t in 0..=200 {
            if lc.is_record_tick(t) {
                lc.record(PlayerId(0), t, f64::from(t));
            }
        }
        // Asking for tick 10 at tick 200 rewinds only to 174.4.
        let p = lc.rewind(PlayerId(0), TickTime::at(10), 200).unwrap();
        assert!((p - 174.4).abs() < 1e-3, "{p}");
        // Within the limit it is honoured.
        let p = lc
            .rewind(PlayerId(0), TickTime::new(180, 0.25), 200)
            .unwrap();
        assert!((p - 180.25).abs() < 1e-3, "{p}");
    }

    #[test]
    fn ring_keeps_enough_records_to_cover_the_max_rewind() {
        let l = limits();
        let mut h = PoseHistory::<f32>::with_capacity(l.records_needed());
        for t in (0..1000).step_by(4) {
            h.record(t, t as f32);
        }
        assert_eq!(h.len(), l.records_needed());
        let oldest = h.oldest().unwrap().0;
        assert!(f64::from(996 - oldest) >= l.max_rewind_ticks);
    }

    #[test]
    fn recording_switch_and_ordering() {
        let mut lc = LagCompensation::<f32>::new(2, limits());
        assert!(lc.is_record_tick(8) && !lc.is_record_tick(9));
        lc.set_recording(false);
        assert!(!lc.is_record_tick(8));
        assert_eq!(lc.rewind(PlayerId(1), TickTime::at(1), 2), None);
        assert_eq!(lc.rewind(PlayerId(7), TickTime::at(1), 2), None);
        let mut h = PoseHistory::<f32>::with_capacity(4);
        assert!(h.record(8, 1.0));
        assert!(!h.record(4, 0.0), "older than the newest is refused");
        assert!(h.record(8, 2.0), "same tick replaces");
        assert_eq!(h.len(), 1);
        assert_eq!(h.sample(TickTime::at(0)), Some(2.0));
        h.clear();
        assert!(h.sample(TickTime::at(0)).is_none());
    }

    #[test]
    fn arrays_interpolate_component_wise() {
        let p = <[f32; 2]>::interpolate(&[0.0, 10.0], &[4.0, 20.0], 0.25);
        assert_eq!(p, [1.0, 12.5]);
    }
}
