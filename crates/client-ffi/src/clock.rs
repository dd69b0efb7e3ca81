//! [`CallerClock`]: the caller's clock (microseconds, any origin, as its
//! engine counts frame time) mapped onto [`Instant`]s for the client core.

use std::time::{Duration, Instant};

/// Maps the caller's microseconds to instants: the first reading is the
/// origin, later ones count from it. The clock never runs backwards: an
/// earlier reading than the newest gives the newest instant again.
#[derive(Debug, Clone, Copy)]
pub struct CallerClock {
    origin_us: u64,
    origin: Instant,
    newest: Instant,
}

impl CallerClock {
    /// A clock whose reading `now_us` is the instant `origin`.
    pub fn new(now_us: u64, origin: Instant) -> Self {
        Self {
            origin_us: now_us,
            origin,
            newest: origin,
        }
    }

    /// The instant of reading `now_us` (at least the newest so far).
    pub fn at(&mut self, now_us: u64) -> Instant {
        let since = Duration::from_micros(now_us.saturating_sub(self.origin_us));
        let at = self.origin.checked_add(since).unwrap_or(self.newest);
        self.newest = self.newest.max(at);
        self.newest
    }

    /// The caller's reading of `instant`, in microseconds (may be below the
    /// origin's reading for an instant before it).
    pub fn reading(&self, instant: Instant) -> f64 {
        let after = instant.saturating_duration_since(self.origin).as_secs_f64();
        let before = self.origin.saturating_duration_since(instant).as_secs_f64();
        self.origin_us as f64 + (after - before) * 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_count_from_the_first_and_never_run_backwards() {
        let origin = Instant::now();
        let mut c = CallerClock::new(5_000_000, origin);
        assert_eq!(c.at(5_000_000), origin);
        let later = c.at(5_250_000);
        assert_eq!(later - origin, Duration::from_millis(250));
        assert_eq!(c.at(5_100_000), later);
        assert_eq!(c.at(0), later);
        assert_eq!(c.reading(later), 5_250_000.0);
        assert_eq!(c.reading(origin), 5_000_000.0);
    }
}
