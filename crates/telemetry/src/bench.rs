//! A minimal harness for `harness = false` benchmarks that print `FIGURE` lines.
//!
//! Criterion is excellent for exploring; our benchmarks exist to print one
//! headline figure each, in the form `FIGURE <name> <value> <unit>`, which
//! scripts and CI read. [`measure`] times a closure in batches, repeats the
//! batch a number of times and reports the median, because the machines we run
//! on are shared and noisy: medians hold up, means do not.
//!
//! ```
//! use hightick_telemetry::bench::{measure, figure};
//! let stats = measure(|| std::hint::black_box(2u64).pow(10), 1_000, 5);
//! figure("example_pow_ns", stats.median_ns(), "ns");
//! ```

use std::time::{Duration, Instant};

/// Timing of one measured operation: per-iteration nanoseconds of every sample.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Nanoseconds per iteration, one entry per sample, sorted ascending.
    pub samples_ns: Vec<f64>,
}

impl Stats {
    /// Builds stats from per-iteration sample times (any order).
    pub fn from_samples(mut samples_ns: Vec<f64>) -> Self {
        samples_ns.sort_by(f64::total_cmp);
        Self { samples_ns }
    }

    /// The median of the samples, in nanoseconds per iteration.
    pub fn median_ns(&self) -> f64 {
        self.quantile_ns(0.5)
    }

    /// The q-quantile (0..=1) of the samples by nearest rank, in ns per iteration.
    pub fn quantile_ns(&self, q: f64) -> f64 {
        if self.samples_ns.is_empty() {
            return f64::NAN;
        }
        let rank = (q.clamp(0.0, 1.0) * (self.samples_ns.len() - 1) as f64).round() as usize;
        self.samples_ns[rank]
    }

    /// The arithmetic mean of the samples, in nanoseconds per iteration.
    pub fn mean_ns(&self) -> f64 {
        if self.samples_ns.is_empty() {
            return f64::NAN;
        }
        self.samples_ns.iter().sum::<f64>() / self.samples_ns.len() as f64
    }

    /// The median in microseconds.
    pub fn median_us(&self) -> f64 {
        self.median_ns() / 1_000.0
    }
}

/// Runs `op` `iters` times per sample for `samples` samples (after one warm-up
/// sample) and returns per-iteration times.
pub fn measure<R>(mut op: impl FnMut() -> R, iters: u32, samples: u32) -> Stats {
    let iters = iters.max(1);
    let mut run = |n: u32| {
        let start = Instant::now();
        for _ in 0..n {
            std::hint::black_box(op());
        }
        start.elapsed()
    };
    run(iters); // warm-up: caches, branch predictors, lazy set-up
    let samples_ns = (0..samples.max(1))
        .map(|_| per_iter_ns(run(iters), iters))
        .collect();
    Stats::from_samples(samples_ns)
}

fn per_iter_ns(elapsed: Duration, iters: u32) -> f64 {
    elapsed.as_nanos() as f64 / f64::from(iters)
}

/// Formats a headline figure line: `FIGURE <name> <value> <unit>`.
pub fn figure_line(name: &str, value: f64, unit: &str) -> String {
    let precision = if value.abs() >= 100.0 { 1 } else { 3 };
    format!("FIGURE {name} {value:.precision$} {unit}")
}

/// Prints a headline figure line on standard output.
pub fn figure(name: &str, value: f64, unit: &str) {
    println!("{}", figure_line(name, value, unit));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_quantiles_use_sorted_samples() {
        let s = Stats::from_samples(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(s.median_ns(), 3.0);
        assert_eq!(s.quantile_ns(0.0), 1.0);
        assert_eq!(s.quantile_ns(1.0), 5.0);
        assert_eq!(s.mean_ns(), 3.0);
    }

    #[test]
    fn figure_lines_have_the_house_format() {
        assert_eq!(figure_line("x_us", 1.5, "us"), "FIGURE x_us 1.500 us");
        assert_eq!(
            figure_line("y", 1234.56, "games/core"),
            "FIGURE y 1234.6 games/core"
        );
    }

    #[test]
    fn measure_returns_the_requested_samples() {
        let s = measure(|| 1 + 1, 10, 7);
        assert_eq!(s.samples_ns.len(), 7);
        assert!(s.samples_ns.windows(2).all(|w| w[0] <= w[1]));
    }
}
