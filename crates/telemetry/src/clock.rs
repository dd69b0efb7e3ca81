//! The frame clock: the CPU's time-stamp counter, read raw on the hot path and
//! scaled to nanoseconds only when a frame closes.

use std::sync::Arc;

/// A TSC-based clock (via `quanta`), falling back to the OS monotonic clock
/// where the CPU has no invariant TSC. Cloning is cheap; clones share the
/// calibration (and, for a mock clock, the mocked time).
#[derive(Debug, Clone)]
pub struct TscClock {
    inner: quanta::Clock,
}

impl TscClock {
    /// The fastest clock this machine has. The first call in a process
    /// calibrates the TSC against the monotonic clock (a few milliseconds).
    pub fn new() -> Self {
        Self {
            inner: quanta::Clock::new(),
        }
    }

    /// A clock that only moves when the returned [`MockTime`] is advanced; its
    /// raw units are nanoseconds. For tests that check accounting exactly.
    pub fn mock() -> (Self, MockTime) {
        let (inner, mock) = quanta::Clock::mock();
        (Self { inner }, MockTime(mock))
    }

    /// The raw counter (TSC ticks, or nanoseconds for the fallback and mock
    /// clocks). Only differences of raw readings mean anything.
    #[inline(always)]
    pub fn raw(&self) -> u64 {
        self.inner.raw()
    }

    /// Nanoseconds between two raw readings; 0 if `end` is not after `start`
    /// (a thread that migrated between cores whose counters disagree).
    #[inline]
    pub fn nanos_between(&self, start: u64, end: u64) -> u64 {
        self.inner.delta_as_nanos(start, end)
    }

    /// Converts a raw duration (a sum of raw differences) to nanoseconds.
    #[inline]
    pub fn raw_to_nanos(&self, raw: u64) -> u64 {
        self.inner.delta_as_nanos(0, raw)
    }
}

impl Default for TscClock {
    fn default() -> Self {
        Self::new()
    }
}

/// The control handle of a mock [`TscClock`].
#[derive(Debug, Clone)]
pub struct MockTime(Arc<quanta::Mock>);

impl MockTime {
    /// Moves the mock clock forward by `nanos`.
    pub fn advance(&self, nanos: u64) {
        self.0.increment(nanos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mock_clock_reads_nanoseconds() {
        let (clock, time) = TscClock::mock();
        let a = clock.raw();
        time.advance(1_500);
        let b = clock.raw();
        assert_eq!(clock.nanos_between(a, b), 1_500);
        assert_eq!(clock.nanos_between(b, a), 0);
        assert_eq!(clock.raw_to_nanos(b - a), 1_500);
    }

    #[test]
    fn real_clock_moves_forward() {
        let clock = TscClock::new();
        let a = clock.raw();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = clock.raw();
        assert!(clock.nanos_between(a, b) >= 1_000_000);
    }
}
