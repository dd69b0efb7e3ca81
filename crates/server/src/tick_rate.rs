//! A match's own tick rate: `POST /v1/matches` may run a mode at another
//! rate than its own (within [`TICK_RATES_HZ`]); the game rescales what it
//! counts in ticks, the host ticks it at its own period.

use std::time::Duration;

#[cfg(doc)]
use hightick_host_api::TICK_RATES_HZ;

/// One tick period at `rate_hz` (a rate of 0 counts as 1 Hz).
pub(crate) fn period(rate_hz: u32) -> Duration {
    Duration::from_nanos(1_000_000_000 / u64::from(rate_hz.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_follow_the_rate() {
        assert_eq!(period(64), Duration::from_nanos(15_625_000));
        assert_eq!(period(128), Duration::from_nanos(7_812_500));
        assert_eq!(period(0), Duration::from_secs(1));
    }
}
