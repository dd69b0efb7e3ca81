//! Ticks, sub-tick times and the fixed step that paces a match.
//!
//! The engine never reads a clock: the host passes [`Instant`]s in and asks
//! [`FixedStep`] how many ticks are due and when the next deadline is.

use std::time::{Duration, Instant};

/// A simulation tick number. Tick 0 is match creation; the first simulated
/// tick is 1.
pub type Tick = u32;

/// A point in simulated time: a tick plus a fraction of the next tick
/// (`0.0..1.0`), e.g. the moment a client rendered when it fired.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct TickTime {
    /// The whole tick.
    pub tick: Tick,
    /// How far towards `tick + 1`, in `0.0..1.0`.
    pub fraction: f32,
}

impl TickTime {
    /// A whole tick.
    pub const fn at(tick: Tick) -> Self {
        Self {
            tick,
            fraction: 0.0,
        }
    }

    /// A tick plus a fraction; the fraction is clamped to `0.0..1.0` (NaN is 0).
    pub fn new(tick: Tick, fraction: f32) -> Self {
        let fraction = if fraction.is_finite() {
            fraction.clamp(0.0, 0.999_999)
        } else {
            0.0
        };
        Self { tick, fraction }
    }

    /// The time as a float number of ticks.
    pub fn as_ticks_f64(self) -> f64 {
        f64::from(self.tick) + f64::from(self.fraction)
    }

    /// The time from a float number of ticks (negative clamps to 0).
    pub fn from_ticks_f64(ticks: f64) -> Self {
        let ticks = if ticks.is_finite() {
            ticks.max(0.0)
        } else {
            0.0
        };
        let whole = ticks.floor().min(f64::from(Tick::MAX));
        Self::new(whole as Tick, (ticks - whole) as f32)
    }
}

/// The fixed step of a match: a tick period and the deadline of the next tick.
///
/// ```
/// use hightick_engine::tick::FixedStep;
/// use std::time::{Duration, Instant};
/// let start = Instant::now();
/// let mut step = FixedStep::new(128, start);
/// assert_eq!(step.period(), Duration::from_nanos(7_812_500));
/// assert_eq!(step.due(start), 0);
/// assert_eq!(step.due(start + Duration::from_millis(20)), 2);
/// step.advance();
/// step.advance();
/// assert_eq!(step.due(start + Duration::from_millis(20)), 0);
/// assert_eq!(step.next_deadline(), start + Duration::from_nanos(3 * 7_812_500));
/// ```
#[derive(Debug, Clone)]
pub struct FixedStep {
    period: Duration,
    start: Instant,
    ticks_run: u64,
}

impl FixedStep {
    /// A step of `1 / tick_rate_hz` seconds whose first deadline is one
    /// period after `start`. A rate of 0 is treated as 1 Hz.
    pub fn new(tick_rate_hz: u32, start: Instant) -> Self {
        let hz = u64::from(tick_rate_hz.max(1));
        Self {
            period: Duration::from_nanos(1_000_000_000 / hz),
            start,
            ticks_run: 0,
        }
    }

    /// The tick period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// When the next tick is due.
    pub fn next_deadline(&self) -> Instant {
        self.start
            + self
                .period
                .saturating_mul((self.ticks_run + 1).min(u64::from(u32::MAX)) as u32)
    }

    /// How many ticks are due at `now` (0 if the next deadline is still ahead).
    pub fn due(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.start).as_nanos();
        let due_total = elapsed / self.period.as_nanos().max(1);
        (due_total as u64).saturating_sub(self.ticks_run)
    }

    /// Records that one tick was run.
    pub fn advance(&mut self) {
        self.ticks_run += 1;
    }

    /// Skips ticks the host decided not to run (e.g. after a long stall),
    /// so the next deadline is the first one after `now`.
    pub fn skip_to(&mut self, now: Instant) {
        self.ticks_run += self.due(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_time_round_trips_and_clamps() {
        let t = TickTime::new(10, 0.25);
        assert_eq!(t.as_ticks_f64(), 10.25);
        assert_eq!(TickTime::from_ticks_f64(10.25), t);
        assert_eq!(TickTime::new(3, f32::NAN).fraction, 0.0);
        assert!(TickTime::new(3, 1.5).fraction < 1.0);
        assert_eq!(TickTime::from_ticks_f64(-4.0), TickTime::at(0));
    }

    #[test]
    fn skip_drops_missed_deadlines() {
        let start = Instant::now();
        let mut step = FixedStep::new(100, start);
        let late = start + Duration::from_millis(1_005);
        assert_eq!(step.due(late), 100);
        step.skip_to(late);
        assert_eq!(step.due(late), 0);
        assert_eq!(step.next_deadline(), start + Duration::from_millis(1_010));
    }
}
