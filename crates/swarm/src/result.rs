//! [`RunResult`]: what a run leaves behind, small enough to read and to
//! keep (per-step summaries with their histograms, a per-interval
//! timeline, match metrics, threshold outcomes), as JSON.

use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::SwarmError;
use crate::interval::{
    ErrorKind, Interval, MatchSample, StepSample, decode_histogram, encode_histogram,
};
use crate::request_log::LogSummary;
use crate::threshold::{Metric, Threshold, format_value};

/// One step's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// The step's name (`all` for every step together).
    pub name: String,
    /// Requests, ok or not.
    pub requests: u64,
    /// Successful requests.
    pub ok: u64,
    /// Failed requests.
    pub failed: u64,
    /// Retries.
    pub retries: u64,
    /// Requests per second over the run.
    pub rps: f64,
    /// Failed over requests.
    pub error_rate: f64,
    /// Mean response time of successes, microseconds.
    pub mean_us: f64,
    /// Median, microseconds.
    pub p50_us: u64,
    /// 90th percentile, microseconds.
    pub p90_us: u64,
    /// 95th percentile, microseconds.
    pub p95_us: u64,
    /// 99th percentile, microseconds.
    pub p99_us: u64,
    /// 99.9th percentile, microseconds.
    pub p999_us: u64,
    /// Slowest, microseconds.
    pub max_us: u64,
    /// Median time from first attempt to success (retries and queue waits), microseconds.
    pub step_time_p50_us: u64,
    /// 99th percentile of the same, microseconds.
    pub step_time_p99_us: u64,
    /// Mean of the same, microseconds (0 in results written before it was kept).
    #[serde(default)]
    pub step_time_mean_us: f64,
    /// Failures by kind.
    pub errors: BTreeMap<String, u64>,
    /// The response-time histogram, HdrHistogram V2, base64.
    pub histogram: String,
}

impl StepSummary {
    fn build(name: &str, s: &StepSample, elapsed_s: f64) -> Self {
        let q = |h: &Histogram<u64>, q: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q)
            }
        };
        let mut bytes = Vec::new();
        encode_histogram(&s.latency, &mut bytes);
        let requests = s.requests();
        Self {
            name: name.to_owned(),
            requests,
            ok: s.ok(),
            failed: s.failed(),
            retries: s.retries,
            rps: requests as f64 / elapsed_s.max(1e-9),
            error_rate: if requests == 0 {
                0.0
            } else {
                s.failed() as f64 / requests as f64
            },
            mean_us: if s.latency.is_empty() {
                0.0
            } else {
                s.latency.mean()
            },
            p50_us: q(&s.latency, 0.5),
            p90_us: q(&s.latency, 0.9),
            p95_us: q(&s.latency, 0.95),
            p99_us: q(&s.latency, 0.99),
            p999_us: q(&s.latency, 0.999),
            max_us: if s.latency.is_empty() {
                0
            } else {
                s.latency.max()
            },
            step_time_p50_us: q(&s.step_time, 0.5),
            step_time_p99_us: q(&s.step_time, 0.99),
            step_time_mean_us: if s.step_time.is_empty() {
                0.0
            } else {
                s.step_time.mean()
            },
            errors: ErrorKind::ALL
                .iter()
                .filter(|k| s.errors[k.index()] > 0)
                .map(|k| (k.name().to_owned(), s.errors[k.index()]))
                .collect(),
            histogram: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The response-time histogram back from its base64.
    pub fn latency(&self) -> Result<Histogram<u64>, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.histogram)
            .map_err(|e| format!("histogram base64: {e}"))?;
        decode_histogram(&bytes)
    }
}

/// One error kind's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// The kind.
    pub kind: String,
    /// How many.
    pub count: u64,
    /// Median time to fail, microseconds.
    pub p50_us: u64,
    /// 99th percentile time to fail, microseconds.
    pub p99_us: u64,
}

/// What match-playing players saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchSummary {
    /// Matches begun.
    pub started: u64,
    /// Matches played to their end event.
    pub finished: u64,
    /// Snapshots applied.
    pub snapshots: u64,
    /// Contradictions with what a client held.
    pub desyncs: u64,
    /// Messages that did not decode.
    pub decode_errors: u64,
    /// Connections cut short.
    pub disconnects: u64,
    /// Lost over settled packets.
    pub packet_loss: f64,
    /// Snapshot inter-arrival median, microseconds.
    pub interarrival_p50_us: u64,
    /// Snapshot inter-arrival 99th percentile, microseconds.
    pub interarrival_p99_us: u64,
    /// Round-trip time median, microseconds.
    pub rtt_p50_us: u64,
    /// Round-trip time 99th percentile, microseconds.
    pub rtt_p99_us: u64,
}

impl MatchSummary {
    pub(crate) fn build(m: &MatchSample) -> Self {
        let q = |h: &Histogram<u64>, q: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q)
            }
        };
        Self {
            started: m.started,
            finished: m.finished,
            snapshots: m.snapshots,
            desyncs: m.desyncs,
            decode_errors: m.decode_errors,
            disconnects: m.disconnects,
            packet_loss: m.packet_loss(),
            interarrival_p50_us: q(&m.interarrival, 0.5),
            interarrival_p99_us: q(&m.interarrival, 0.99),
            rtt_p50_us: q(&m.rtt, 0.5),
            rtt_p99_us: q(&m.rtt, 0.99),
        }
    }
}

/// One step in one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepPoint {
    /// Requests.
    pub requests: u64,
    /// Failed requests.
    pub failed: u64,
    /// Median response time, microseconds.
    pub p50_us: u64,
    /// 99th percentile, microseconds.
    pub p99_us: u64,
    /// Steps that succeeded in the interval: the median time from their
    /// first attempt to their success (queue waits included), microseconds.
    #[serde(default)]
    pub step_time_p50_us: u64,
    /// The 99th percentile of the same, microseconds.
    #[serde(default)]
    pub step_time_p99_us: u64,
    /// How many steps succeeded in the interval (each once, however many
    /// requests and polls it took).
    #[serde(default)]
    pub steps_done: u64,
}

/// One interval of a load run: requests, rates and response times (an
/// HTTP-load timeline, not a host's frame-time one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadPoint {
    /// Seconds since the start, at the interval's end.
    pub t_s: f64,
    /// Players alive.
    pub users: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// Requests completed in the interval.
    pub requests: u64,
    /// Of which failed.
    pub failed: u64,
    /// Requests per second.
    pub rps: f64,
    /// Median response time over every step, microseconds.
    pub p50_us: u64,
    /// 90th percentile, microseconds.
    pub p90_us: u64,
    /// 99th percentile, microseconds.
    pub p99_us: u64,
    /// Slowest, microseconds.
    pub max_us: u64,
    /// The paced rate set after this interval, per second.
    pub paced_rate: Option<f64>,
    /// The percentile pacing measured, microseconds.
    pub paced_measure_us: Option<f64>,
    /// Per step.
    pub steps: Vec<StepPoint>,
    /// What the `play_match` steps that ended in the interval saw (none
    /// ended: `None`).
    #[serde(default)]
    pub matches: Option<MatchSummary>,
}

/// How a threshold came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdOutcome {
    /// The threshold, as text (`p99 of login <= 200.00 ms`).
    pub threshold: String,
    /// The measured value (durations in microseconds).
    pub value: f64,
    /// The measured value in the threshold's unit.
    pub shown: String,
    /// Whether it passed.
    pub passed: bool,
}

/// Requests one target URL received (how players spread over a target's URLs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UrlSummary {
    /// The target's name.
    pub target: String,
    /// The URL.
    pub url: String,
    /// Requests sent to it, answered or not.
    pub requests: u64,
}

/// Pacing's settings and where it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PacingSummary {
    /// The target, milliseconds.
    pub target_ms: f64,
    /// The percentile held, e.g. 99.
    pub percentile: f64,
    /// The last rate set, per second.
    pub final_rate: f64,
}

/// What a run leaves behind. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The scenario's name.
    pub scenario: String,
    /// `closed` or `open`.
    pub model: String,
    /// Players (closed) or the most alive (open).
    pub users: u64,
    /// Agents that ran shards (1: a local run).
    pub agents: u32,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// Seconds from start to the last measurement.
    pub elapsed_s: f64,
    /// The ramp-up, seconds.
    pub ramp_up_s: f64,
    /// The measurement interval, seconds.
    pub interval_s: f64,
    /// Most players alive at once.
    pub peak_users: u64,
    /// Every step together.
    pub total: StepSummary,
    /// Per step.
    pub steps: Vec<StepSummary>,
    /// Per error kind (only kinds that happened).
    pub errors: Vec<ErrorSummary>,
    /// Match-playing players, if any played.
    pub matches: Option<MatchSummary>,
    /// Pacing, if on.
    pub pacing: Option<PacingSummary>,
    /// Threshold outcomes.
    pub thresholds: Vec<ThresholdOutcome>,
    /// Whether every threshold passed.
    pub passed: bool,
    /// Players that moved to another of a target's URLs after a failure.
    #[serde(default)]
    pub failovers: u64,
    /// Requests per target URL, in scenario order.
    #[serde(default)]
    pub target_urls: Vec<UrlSummary>,
    /// Per interval.
    pub timeline: Vec<LoadPoint>,
    /// What the raw per-request log took, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_log: Option<LogSummary>,
}

/// The parts a result is built from.
#[derive(Debug)]
pub struct Totals<'a> {
    /// Step names by id.
    pub step_names: &'a [String],
    /// Everything measured.
    pub total: &'a Interval,
    /// Seconds the run lasted.
    pub elapsed_s: f64,
}

impl Totals<'_> {
    /// Every step merged into one sample.
    pub fn all_steps(&self) -> StepSample {
        let mut all = StepSample::empty();
        for s in &self.total.steps {
            all.add(s);
        }
        all
    }

    /// The value of `t`'s metric, in its unit (durations in microseconds).
    pub fn measure(&self, t: &Threshold) -> f64 {
        let step = t
            .step
            .as_ref()
            .and_then(|n| self.step_names.iter().position(|x| x == n))
            .and_then(|i| self.total.steps.get(i).cloned());
        let sample = || step.clone().unwrap_or_else(|| self.all_steps());
        let m = &self.total.matches;
        match t.metric {
            Metric::Latency(stat) => stat.of(&sample().latency),
            Metric::ErrorRate => {
                let s = sample();
                if s.requests() == 0 {
                    0.0
                } else {
                    s.failed() as f64 / s.requests() as f64
                }
            }
            Metric::Errors => sample().failed() as f64,
            Metric::Requests => sample().requests() as f64,
            Metric::Throughput => sample().ok() as f64 / self.elapsed_s.max(1e-9),
            Metric::Desyncs => m.desyncs as f64,
            Metric::DecodeErrors => m.decode_errors as f64,
            Metric::Disconnects => m.disconnects as f64,
            Metric::SnapshotInterarrival(stat) => stat.of(&m.interarrival),
            Metric::Rtt(stat) => stat.of(&m.rtt),
            Metric::PacketLoss => m.packet_loss(),
        }
    }

    /// Every threshold's outcome.
    pub fn judge(&self, thresholds: &[Threshold]) -> Vec<ThresholdOutcome> {
        thresholds
            .iter()
            .map(|t| {
                let value = self.measure(t);
                ThresholdOutcome {
                    threshold: t.to_string(),
                    value,
                    shown: format_value(t.metric.unit(), value),
                    passed: t.bound.passes(value),
                }
            })
            .collect()
    }

    /// Per-step summaries and the all-steps one.
    pub fn step_summaries(&self) -> (StepSummary, Vec<StepSummary>) {
        let steps = self
            .step_names
            .iter()
            .zip(&self.total.steps)
            .map(|(n, s)| StepSummary::build(n, s, self.elapsed_s))
            .collect();
        (
            StepSummary::build("all", &self.all_steps(), self.elapsed_s),
            steps,
        )
    }

    /// Per error kind, the kinds that happened.
    pub fn error_summaries(&self) -> Vec<ErrorSummary> {
        ErrorKind::ALL
            .iter()
            .zip(&self.total.errors)
            .filter(|(_, h)| !h.is_empty())
            .map(|(k, h)| ErrorSummary {
                kind: k.name().to_owned(),
                count: h.len(),
                p50_us: h.value_at_quantile(0.5),
                p99_us: h.value_at_quantile(0.99),
            })
            .collect()
    }

    /// The match summary, if any match was played.
    pub fn match_summary(&self) -> Option<MatchSummary> {
        (self.total.matches.started > 0).then(|| MatchSummary::build(&self.total.matches))
    }
}

impl RunResult {
    /// As pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Reads a result file.
    pub fn load(path: &std::path::Path) -> Result<Self, SwarmError> {
        let text = std::fs::read_to_string(path).map_err(|e| SwarmError::Result {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| SwarmError::Result {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// The thresholds that failed.
    pub fn failures(&self) -> impl Iterator<Item = &ThresholdOutcome> {
        self.thresholds.iter().filter(|t| !t.passed)
    }
}
