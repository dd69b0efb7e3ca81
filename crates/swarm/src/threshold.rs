//! Pass/fail thresholds: a metric of the run (a step's p99, the error rate,
//! desyncs seen by match bots...) held against a limit. A run whose
//! threshold fails makes `hightick swarm run` exit non-zero, so CI can gate
//! on it.
//!
//! ```toml
//! [[threshold]]
//! metric = "p99"          # p50, p90, p95, p99, p99.9, mean, max
//! step = "login"          # absent: every step together
//! max = "200ms"
//!
//! [[threshold]]
//! metric = "error_rate"   # failed requests / requests
//! max = 0.01
//!
//! [[threshold]]
//! metric = "desyncs"      # match bots: state that contradicted what they held
//! max = 0
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

/// A statistic of a latency distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Stat {
    /// A quantile in `(0, 1]`.
    Quantile(f64),
    /// The mean.
    Mean,
    /// The largest value.
    Max,
}

impl Stat {
    /// Reads `p99`, `p99.9`, `p50`, `mean`, `max`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "mean" => Some(Self::Mean),
            "max" => Some(Self::Max),
            _ => {
                let q: f64 = text.strip_prefix('p')?.parse().ok()?;
                (q > 0.0 && q <= 100.0).then_some(Self::Quantile(q / 100.0))
            }
        }
    }

    /// The statistic of a histogram.
    pub fn of(&self, h: &hdrhistogram::Histogram<u64>) -> f64 {
        if h.is_empty() {
            return 0.0;
        }
        match *self {
            Self::Quantile(q) => h.value_at_quantile(q) as f64,
            Self::Mean => h.mean(),
            Self::Max => h.max() as f64,
        }
    }
}

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Quantile(q) => write!(f, "p{}", q * 100.0),
            Self::Mean => f.write_str("mean"),
            Self::Max => f.write_str("max"),
        }
    }
}

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Metric {
    /// Response time of a step (or all steps), microseconds.
    Latency(Stat),
    /// Failed requests over requests, in `[0, 1]`.
    ErrorRate,
    /// Failed requests.
    Errors,
    /// Requests completed (ok or not).
    Requests,
    /// Successful requests per second over the run.
    Throughput,
    /// Match bots: contradictions with what the client held.
    Desyncs,
    /// Match bots: messages that did not decode.
    DecodeErrors,
    /// Match bots: connections that ended before the match or the run did.
    Disconnects,
    /// Match bots: snapshot inter-arrival time, microseconds.
    SnapshotInterarrival(Stat),
    /// Match bots: round-trip time from acks, microseconds.
    Rtt(Stat),
    /// Match bots: lost packets over packets sent and settled, in `[0, 1]`.
    PacketLoss,
}

/// How a metric's limit is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A duration string (`"200ms"`), kept in microseconds.
    Duration,
    /// A fraction in `[0, 1]`.
    Fraction,
    /// A whole number.
    Count,
    /// A number per second.
    PerSecond,
}

impl Metric {
    /// The names a scenario file may use.
    pub const NAMES: &'static str = "p50, p90, p95, p99, p99.9, mean, max, error_rate, errors, requests, rps, desyncs, decode_errors, disconnects, snapshot_interarrival_p99 (or _p50, ...), rtt_p99 (or _p50, ...), packet_loss";

    /// Reads a metric name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "error_rate" => Self::ErrorRate,
            "errors" => Self::Errors,
            "requests" => Self::Requests,
            "rps" => Self::Throughput,
            "desyncs" => Self::Desyncs,
            "decode_errors" => Self::DecodeErrors,
            "disconnects" => Self::Disconnects,
            "packet_loss" => Self::PacketLoss,
            _ => {
                if let Some(stat) = text.strip_prefix("snapshot_interarrival_") {
                    Self::SnapshotInterarrival(Stat::parse(stat)?)
                } else if let Some(stat) = text.strip_prefix("rtt_") {
                    Self::Rtt(Stat::parse(stat)?)
                } else {
                    Self::Latency(Stat::parse(text)?)
                }
            }
        })
    }

    /// How its limit is written.
    pub fn unit(&self) -> Unit {
        match self {
            Self::Latency(_) | Self::SnapshotInterarrival(_) | Self::Rtt(_) => Unit::Duration,
            Self::ErrorRate | Self::PacketLoss => Unit::Fraction,
            Self::Errors
            | Self::Requests
            | Self::Desyncs
            | Self::DecodeErrors
            | Self::Disconnects => Unit::Count,
            Self::Throughput => Unit::PerSecond,
        }
    }

    /// Whether it is about requests of steps (may name a step).
    pub fn is_per_step(&self) -> bool {
        matches!(
            self,
            Self::Latency(_) | Self::ErrorRate | Self::Errors | Self::Requests | Self::Throughput
        )
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Latency(s) => write!(f, "{s}"),
            Self::ErrorRate => f.write_str("error_rate"),
            Self::Errors => f.write_str("errors"),
            Self::Requests => f.write_str("requests"),
            Self::Throughput => f.write_str("rps"),
            Self::Desyncs => f.write_str("desyncs"),
            Self::DecodeErrors => f.write_str("decode_errors"),
            Self::Disconnects => f.write_str("disconnects"),
            Self::SnapshotInterarrival(s) => write!(f, "snapshot_interarrival_{s}"),
            Self::Rtt(s) => write!(f, "rtt_{s}"),
            Self::PacketLoss => f.write_str("packet_loss"),
        }
    }
}

/// Which side of the limit passes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Bound {
    /// Passes at or below.
    Max(f64),
    /// Passes at or above.
    Min(f64),
}

impl Bound {
    /// Whether `value` passes.
    pub fn passes(&self, value: f64) -> bool {
        match *self {
            Self::Max(limit) => value <= limit,
            Self::Min(limit) => value >= limit,
        }
    }
}

/// One threshold of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// What it measures.
    pub metric: Metric,
    /// The step it is about (by name), or every step.
    pub step: Option<String>,
    /// The limit.
    pub bound: Bound,
}

/// Formats a metric's value in its unit (durations in ms).
pub fn format_value(unit: Unit, value: f64) -> String {
    match unit {
        Unit::Duration => format!("{:.2} ms", value / 1_000.0),
        Unit::Fraction => format!("{:.4}", value),
        Unit::Count => format!("{value:.0}"),
        Unit::PerSecond => format!("{value:.1}/s"),
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.metric)?;
        if let Some(step) = &self.step {
            write!(f, " of {step}")?;
        }
        let unit = self.metric.unit();
        match self.bound {
            Bound::Max(l) => write!(f, " <= {}", format_value(unit, l)),
            Bound::Min(l) => write!(f, " >= {}", format_value(unit, l)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_metric_names() {
        assert_eq!(
            Metric::parse("p99"),
            Some(Metric::Latency(Stat::Quantile(0.99)))
        );
        let Some(Metric::Latency(Stat::Quantile(q))) = Metric::parse("p99.9") else {
            panic!("p99.9")
        };
        assert!((q - 0.999).abs() < 1e-12);
        assert_eq!(Metric::parse("max"), Some(Metric::Latency(Stat::Max)));
        assert_eq!(
            Metric::parse("snapshot_interarrival_p50"),
            Some(Metric::SnapshotInterarrival(Stat::Quantile(0.5)))
        );
        assert_eq!(Metric::parse("rtt_mean"), Some(Metric::Rtt(Stat::Mean)));
        assert_eq!(Metric::parse("desyncs"), Some(Metric::Desyncs));
        for bad in ["p0", "p101", "q99", "rtt_", "latency", ""] {
            assert_eq!(Metric::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn bounds_pass_on_their_side() {
        assert!(Bound::Max(1.0).passes(1.0) && !Bound::Max(1.0).passes(1.01));
        assert!(Bound::Min(5.0).passes(6.0) && !Bound::Min(5.0).passes(4.0));
        let t = Threshold {
            metric: Metric::Latency(Stat::Quantile(0.99)),
            step: Some("login".into()),
            bound: Bound::Max(200_000.0),
        };
        assert_eq!(t.to_string(), "p99 of login <= 200.00 ms");
    }
}
