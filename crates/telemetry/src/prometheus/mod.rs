//! Prometheus text exposition (format 0.0.4): [`text::Exposition`], the one
//! writer every `/metrics` in the workspace uses (with [`text::name_problem`],
//! the naming conventions it enforces), [`durations::DurationHistogram`] for
//! waits and response times, and [`render`], the frame statistics.
//!
//! The frame statistics' families, each with `# HELP` and `# TYPE` once and its samples together:
//!
//! | family | type | extra labels |
//! | --- | --- | --- |
//! | `hightick_tick_duration_seconds` | histogram | |
//! | `hightick_subsystem_duration_seconds` | histogram | `subsystem` |
//! | `hightick_ticks_total` | counter | |
//! | `hightick_late_ticks_total` | counter | |
//! | `hightick_budget_over_p99_frames_total` | counter | `budget` |
//! | `hightick_budget_violations_total` | counter | `budget`, `stat` |
//! | `hightick_budget_seconds` | gauge | `budget`, `stat` |
//! | `hightick_tick_period_seconds` | gauge | |
//!
//! Every series carries the caller's labels (typically `mode`). `budget` is
//! `tick` or a subsystem name, `stat` is `mean` or `p99`; budget families only
//! list limits that are set. Histogram buckets are [`BUCKET_BOUNDS_NS`]
//! (cumulative, to the HDR histograms' precision) plus `+Inf`; `_sum` is exact.

pub mod durations;
pub mod text;

use std::fmt::{self, Display, Write};

use self::text::{Exposition, Kind};
use crate::budget::BudgetTarget;
use crate::error::TelemetryError;
use crate::stats::TARGETS;
use crate::stats::{BudgetStat, FrameStats};
use crate::subsystem::Subsystem;

/// Upper bounds of the histogram buckets, in nanoseconds: 1 us to 1 s, with
/// the tick periods of 128 Hz (7.8125 ms), 64 Hz and 30 Hz among them.
pub const BUCKET_BOUNDS_NS: [u64; 21] = [
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    7_812_500,
    10_000_000,
    15_625_000,
    25_000_000,
    33_333_333,
    50_000_000,
    100_000_000,
    250_000_000,
    1_000_000_000,
];

/// One set of statistics and the labels that tell it apart (e.g. `mode`).
#[derive(Debug, Clone, Copy)]
pub struct Series<'a> {
    /// Label names and values added to every sample of this series.
    pub labels: &'a [(&'a str, &'a str)],
    /// The statistics to expose.
    pub stats: &'a FrameStats,
}

const RESERVED_LABELS: [&str; 4] = ["le", "subsystem", "budget", "stat"];

/// Renders `series` as Prometheus text into `out`. Label names must match
/// `[a-zA-Z_][a-zA-Z0-9_]*`, must not start with `__`, repeat, or be one of
/// the labels this module adds (`le`, `subsystem`, `budget`, `stat`).
pub fn render(out: &mut impl Write, series: &[Series<'_>]) -> Result<(), TelemetryError> {
    for s in series {
        check_labels(s.labels)?;
    }
    let mut text = Exposition::new(out);

    text.family(
        "hightick_tick_duration_seconds",
        Kind::Histogram,
        "Duration of whole frames (ticks).",
    )?;
    for s in series {
        frame_histogram(
            &mut text,
            "hightick_tick_duration_seconds",
            s,
            BudgetTarget::Tick,
            &[],
        )?;
    }

    text.family(
        "hightick_subsystem_duration_seconds",
        Kind::Histogram,
        "Exclusive time per frame spent in each subsystem.",
    )?;
    for s in series {
        for sub in Subsystem::ALL {
            let target = BudgetTarget::Subsystem(sub);
            frame_histogram(
                &mut text,
                "hightick_subsystem_duration_seconds",
                s,
                target,
                &[("subsystem", sub.as_str())],
            )?;
        }
    }

    text.family("hightick_ticks_total", Kind::Counter, "Frames recorded.")?;
    for s in series {
        text.sample_with("hightick_ticks_total", s.labels, &[], s.stats.frames())?;
    }

    text.family(
        "hightick_late_ticks_total",
        Kind::Counter,
        "Frames that overran the tick period.",
    )?;
    for s in series {
        text.sample_with(
            "hightick_late_ticks_total",
            s.labels,
            &[],
            s.stats.late_ticks(),
        )?;
    }

    text.family(
        "hightick_budget_over_p99_frames_total",
        Kind::Counter,
        "Frames in which a budget target took longer than its p99 limit.",
    )?;
    for s in series {
        for target in targets_with(s.stats, BudgetStat::P99) {
            let value = s.stats.frames_over_p99(target);
            let extra = [("budget", target.as_str())];
            text.sample_with(
                "hightick_budget_over_p99_frames_total",
                s.labels,
                &extra,
                value,
            )?;
        }
    }

    text.family(
        "hightick_budget_violations_total",
        Kind::Counter,
        "Budget windows whose mean or p99 broke the limit.",
    )?;
    for s in series {
        for stat in BudgetStat::ALL {
            for target in targets_with(s.stats, stat) {
                let value = s.stats.violations(target, stat);
                let extra = [("budget", target.as_str()), ("stat", stat.as_str())];
                text.sample_with("hightick_budget_violations_total", s.labels, &extra, value)?;
            }
        }
    }

    text.family(
        "hightick_budget_seconds",
        Kind::Gauge,
        "Configured budget limits.",
    )?;
    for s in series {
        for stat in BudgetStat::ALL {
            for target in targets_with(s.stats, stat) {
                let limit = limit_ns(s.stats, target, stat).unwrap_or(0);
                let extra = [("budget", target.as_str()), ("stat", stat.as_str())];
                text.sample_with("hightick_budget_seconds", s.labels, &extra, Seconds(limit))?;
            }
        }
    }

    text.family(
        "hightick_tick_period_seconds",
        Kind::Gauge,
        "The tick period frames are judged late against.",
    )?;
    for s in series {
        let period = Seconds(s.stats.tick_period_ns());
        text.sample_with("hightick_tick_period_seconds", s.labels, &[], period)?;
    }
    Ok(())
}

fn limit_ns(stats: &FrameStats, target: BudgetTarget, stat: BudgetStat) -> Option<u64> {
    let budget = stats.budget().get(target);
    match stat {
        BudgetStat::Mean => budget.mean_ns,
        BudgetStat::P99 => budget.p99_ns,
    }
}

fn targets_with(stats: &FrameStats, stat: BudgetStat) -> impl Iterator<Item = BudgetTarget> + '_ {
    BudgetTarget::all().filter(move |&t| limit_ns(stats, t, stat).is_some())
}

fn check_labels(labels: &[(&str, &str)]) -> Result<(), TelemetryError> {
    for (i, (name, _)) in labels.iter().enumerate() {
        let mut chars = name.chars();
        let well_formed = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        let repeated = labels[..i].iter().any(|(other, _)| other == name);
        if !well_formed || name.starts_with("__") || RESERVED_LABELS.contains(name) || repeated {
            return Err(TelemetryError::LabelName((*name).to_owned()));
        }
    }
    Ok(())
}

/// Nanoseconds shown as seconds.
struct Seconds(u64);

impl Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0 as f64 / 1e9)
    }
}

fn frame_histogram<W: Write>(
    text: &mut Exposition<'_, W>,
    family: &str,
    series: &Series<'_>,
    target: BudgetTarget,
    extra: &[(&str, &str)],
) -> fmt::Result {
    let stats = series.stats;
    let mut labels = series.labels.to_vec();
    labels.extend_from_slice(extra);
    let buckets =
        BUCKET_BOUNDS_NS.map(|bound| (bound as f64 / 1e9, stats.frames_at_or_below(target, bound)));
    let count = stats.histogram(target).len();
    let sum = stats.sum_ns(target) as f64 / 1e9;
    text.histogram(family, &labels, buckets, count, sum)
}

// Every target gets one histogram series; keep the table above in step.
const _: () = assert!(TARGETS == Subsystem::COUNT + 1);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Budget, ModeBudget};
    use crate::clock::TscClock;
    use crate::recorder::{FrameRecorder, RecorderConfig};

    fn stats() -> FrameStats {
        let mut budget = ModeBudget::unlimited();
        budget.set(BudgetTarget::Tick, Budget::from_us(40.0, 100.0));
        let (clock, time) = TscClock::mock();
        let mut rec = FrameRecorder::with_clock(RecorderConfig::default(), budget, clock).unwrap();
        for ns in [500, 3_000, 120_000] {
            let frame = rec.begin(0);
            let s = frame.enter(Subsystem::Movement);
            time.advance(ns);
            drop(s);
            frame.end();
        }
        rec.stats().clone()
    }

    #[test]
    fn labels_are_checked() {
        let s = stats();
        for bad in ["le", "subsystem", "1mode", "__x", "mo-de", ""] {
            let labels = [(bad, "x")];
            let err = render(
                &mut String::new(),
                &[Series {
                    labels: &labels,
                    stats: &s,
                }],
            );
            assert!(matches!(err, Err(TelemetryError::LabelName(_))), "{bad}");
        }
        let twice = [("mode", "a"), ("mode", "b")];
        let err = render(
            &mut String::new(),
            &[Series {
                labels: &twice,
                stats: &s,
            }],
        );
        assert!(matches!(err, Err(TelemetryError::LabelName(_))));
    }

    #[test]
    fn label_values_are_escaped() {
        let s = stats();
        let mut text = String::new();
        let labels = [("mode", "a\"b\\c\nd")];
        render(
            &mut text,
            &[Series {
                labels: &labels,
                stats: &s,
            }],
        )
        .unwrap();
        assert!(
            text.contains(r#"hightick_ticks_total{mode="a\"b\\c\nd"} 3"#),
            "{text}"
        );
    }

    #[test]
    fn buckets_sum_and_counters_have_the_recorded_values() {
        let s = stats();
        let mut text = String::new();
        render(
            &mut text,
            &[Series {
                labels: &[("mode", "5v5")],
                stats: &s,
            }],
        )
        .unwrap();
        let has = |line: &str| assert!(text.lines().any(|l| l == line), "missing {line}\n{text}");
        has(r#"hightick_tick_duration_seconds_bucket{mode="5v5",le="0.000001"} 1"#);
        has(r#"hightick_tick_duration_seconds_bucket{mode="5v5",le="0.005"} 3"#);
        has(r#"hightick_tick_duration_seconds_bucket{mode="5v5",le="0.0001"} 2"#);
        has(r#"hightick_tick_duration_seconds_bucket{mode="5v5",le="+Inf"} 3"#);
        has(r#"hightick_tick_duration_seconds_sum{mode="5v5"} 0.0001235"#);
        has(r#"hightick_tick_duration_seconds_count{mode="5v5"} 3"#);
        has(r#"hightick_subsystem_duration_seconds_count{mode="5v5",subsystem="fow"} 3"#);
        has(r#"hightick_budget_over_p99_frames_total{mode="5v5",budget="tick"} 1"#);
        has(r#"hightick_budget_seconds{mode="5v5",budget="tick",stat="p99"} 0.0001"#);
        has(r#"hightick_tick_period_seconds{mode="5v5"} 0.0078125"#);
        has("# TYPE hightick_late_ticks_total counter");
    }
}
