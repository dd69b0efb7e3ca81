//! [`DurationHistogram`]: durations in fixed buckets (seconds), updated with
//! atomics from any thread and written by [`Exposition::histogram`].

use std::fmt::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::text::{Exposition, Kind};

/// Upper bounds (seconds) of the buckets for waits and response times:
/// 1 ms to 2 minutes.
pub const WAIT_BOUNDS_S: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// A cumulative-bucket histogram of durations over [`WAIT_BOUNDS_S`].
#[derive(Debug, Default)]
pub struct DurationHistogram {
    buckets: [AtomicU64; WAIT_BOUNDS_S.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl DurationHistogram {
    /// Adds one observation.
    pub fn record(&self, d: Duration) {
        let s = d.as_secs_f64();
        if let Some(i) = WAIT_BOUNDS_S.iter().position(|&b| s <= b) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.sum_us.fetch_add(us, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Writes it as the histogram family `name` (which should end in
    /// `_seconds`).
    pub fn render<W: Write>(
        &self,
        m: &mut Exposition<'_, W>,
        name: &str,
        help: &str,
    ) -> fmt::Result {
        m.family(name, Kind::Histogram, help)?;
        let mut cumulative = 0;
        let buckets = WAIT_BOUNDS_S.iter().zip(&self.buckets).map(|(&bound, n)| {
            cumulative += n.load(Ordering::Relaxed);
            (bound, cumulative)
        });
        let sum = self.sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        // The count is read after the buckets: a concurrent record can only
        // make +Inf larger than the last bucket, never smaller.
        let buckets: Vec<(f64, u64)> = buckets.collect();
        m.histogram(name, &[], buckets, self.count(), sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative() {
        let h = DurationHistogram::default();
        h.record(Duration::from_micros(500));
        h.record(Duration::from_millis(30));
        h.record(Duration::from_secs(500));
        let mut text = String::new();
        h.render(&mut Exposition::new(&mut text), "x_seconds", "test")
            .unwrap();
        for line in [
            "x_seconds_bucket{le=\"0.001\"} 1\n",
            "x_seconds_bucket{le=\"0.05\"} 2\n",
            "x_seconds_bucket{le=\"120\"} 2\n",
            "x_seconds_bucket{le=\"+Inf\"} 3\n",
            "x_seconds_count 3\n",
        ] {
            assert!(text.contains(line), "{line}{text}");
        }
    }
}
