//! What `/metrics` shows: requests by route and status, and latency
//! histograms with fixed buckets, written as Prometheus text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the admission-latency buckets.
pub const LATENCY_BUCKETS_S: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// A cumulative-bucket histogram of durations, updated with atomics.
#[derive(Debug, Default)]
pub struct LatencyHistogram {
    buckets: [AtomicU64; LATENCY_BUCKETS_S.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl LatencyHistogram {
    /// Adds one observation.
    pub fn record(&self, d: Duration) {
        let s = d.as_secs_f64();
        if let Some(i) = LATENCY_BUCKETS_S.iter().position(|&b| s <= b) {
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

    /// Writes the histogram as Prometheus text.
    pub fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (bound, bucket) in LATENCY_BUCKETS_S.iter().zip(&self.buckets) {
            cumulative += bucket.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let count = self.count();
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

/// Requests answered, by route template and status code.
#[derive(Debug, Default)]
pub struct RequestCounts {
    counts: Mutex<BTreeMap<(String, u16), u64>>,
}

impl RequestCounts {
    /// Counts one answered request.
    pub fn record(&self, route: &str, status: u16) {
        if let Ok(mut map) = self.counts.lock() {
            if let Some(n) = map.get_mut(&(route.to_owned(), status)) {
                *n += 1;
            } else {
                map.insert((route.to_owned(), status), 1);
            }
        }
    }

    /// How many requests to `route` were answered with `status`.
    pub fn get(&self, route: &str, status: u16) -> u64 {
        self.counts
            .lock()
            .map(|m| m.get(&(route.to_owned(), status)).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Writes the counters as Prometheus text.
    pub fn render(&self, out: &mut String) {
        let name = "hightick_gateway_requests_total";
        let _ = writeln!(
            out,
            "# HELP {name} HTTP requests answered, by route and status.\n# TYPE {name} counter"
        );
        if let Ok(map) = self.counts.lock() {
            for ((route, status), n) in map.iter() {
                let _ = writeln!(out, "{name}{{route=\"{route}\",status=\"{status}\"}} {n}");
            }
        }
    }
}

/// Writes one gauge or counter line with its help and type.
pub fn single(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let h = LatencyHistogram::default();
        h.record(Duration::from_micros(500));
        h.record(Duration::from_millis(30));
        h.record(Duration::from_secs(500));
        let mut text = String::new();
        h.render(&mut text, "x_seconds", "test");
        assert!(
            text.contains("x_seconds_bucket{le=\"0.001\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("x_seconds_bucket{le=\"0.05\"} 2\n"), "{text}");
        assert!(text.contains("x_seconds_bucket{le=\"120\"} 2\n"), "{text}");
        assert!(text.contains("x_seconds_bucket{le=\"+Inf\"} 3\n"), "{text}");
        assert!(text.contains("x_seconds_count 3\n"), "{text}");
    }

    #[test]
    fn request_counts_group_by_route_and_status() {
        let c = RequestCounts::default();
        c.record("/v1/me/profile", 200);
        c.record("/v1/me/profile", 200);
        c.record("/v1/me/profile", 401);
        assert_eq!(c.get("/v1/me/profile", 200), 2);
        let mut text = String::new();
        c.render(&mut text);
        assert!(
            text.contains(
                "hightick_gateway_requests_total{route=\"/v1/me/profile\",status=\"401\"} 1"
            ),
            "{text}"
        );
    }
}
