//! What a report needs from a run: mean, p50, p90, p99 and max per subsystem
//! and for the whole tick, serializable so runs can be stored and compared.

use serde::{Deserialize, Serialize};

use crate::budget::{BudgetTarget, ModeBudget};
use crate::stats::{BudgetStat, FrameStats};
use crate::subsystem::Subsystem;

/// Frame times of one target over a run, in microseconds. Mean and max are
/// exact; percentiles are to the histograms' precision.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TimeSummary {
    /// Mean per frame.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Longest frame.
    pub max_us: f64,
}

impl TimeSummary {
    fn of(stats: &FrameStats, target: BudgetTarget) -> Self {
        let q = |q| ns_to_us(stats.quantile_ns(target, q) as f64);
        Self {
            mean_us: ns_to_us(stats.mean_ns(target)),
            p50_us: q(0.5),
            p90_us: q(0.9),
            p99_us: q(0.99),
            max_us: ns_to_us(stats.max_ns(target) as f64),
        }
    }
}

fn ns_to_us(ns: f64) -> f64 {
    ns / 1_000.0
}

/// One subsystem's frame times.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SubsystemSummary {
    /// The subsystem.
    pub subsystem: Subsystem,
    /// Its exclusive time per frame.
    #[serde(flatten)]
    pub time: TimeSummary,
}

/// A run's frame times: the whole tick and every subsystem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameSummary {
    /// Frames recorded.
    pub frames: u64,
    /// Frames that overran the tick period.
    pub late_ticks: u64,
    /// Budget windows that broke a limit (all targets and stats).
    pub budget_violations: u64,
    /// The whole frame.
    pub tick: TimeSummary,
    /// Every subsystem, in [`Subsystem::ALL`] order.
    pub subsystems: Vec<SubsystemSummary>,
}

impl FrameSummary {
    /// Summarizes statistics (e.g. a recorder's, or several merged).
    pub fn from_stats(stats: &FrameStats) -> Self {
        Self {
            frames: stats.frames(),
            late_ticks: stats.late_ticks(),
            budget_violations: stats.total_violations(),
            tick: TimeSummary::of(stats, BudgetTarget::Tick),
            subsystems: Subsystem::ALL
                .into_iter()
                .map(|subsystem| SubsystemSummary {
                    subsystem,
                    time: TimeSummary::of(stats, BudgetTarget::Subsystem(subsystem)),
                })
                .collect(),
        }
    }

    /// The times of one target.
    pub fn time(&self, target: BudgetTarget) -> TimeSummary {
        match target {
            BudgetTarget::Tick => self.tick,
            BudgetTarget::Subsystem(s) => self
                .subsystems
                .iter()
                .find(|x| x.subsystem == s)
                .map(|x| x.time)
                .unwrap_or_default(),
        }
    }

    /// Every limit of `budget` the whole run is over (its mean and p99 are
    /// compared, not windows), for a report's verdict.
    pub fn budget_misses(&self, budget: &ModeBudget) -> Vec<BudgetMiss> {
        let mut misses = Vec::new();
        for target in BudgetTarget::all() {
            let time = self.time(target);
            let limits = budget.get(target);
            for (stat, limit, actual) in [
                (BudgetStat::Mean, limits.mean_ns, time.mean_us),
                (BudgetStat::P99, limits.p99_ns, time.p99_us),
            ] {
                let Some(limit) = limit.map(|ns| ns_to_us(ns as f64)) else {
                    continue;
                };
                if actual > limit {
                    misses.push(BudgetMiss {
                        target: target.as_str().to_owned(),
                        stat,
                        limit_us: limit,
                        actual_us: actual,
                    });
                }
            }
        }
        misses
    }
}

/// A budget limit a run is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetMiss {
    /// `"tick"` or a subsystem name.
    pub target: String,
    /// Which limit.
    pub stat: BudgetStat,
    /// The limit, in microseconds.
    pub limit_us: f64,
    /// The run's value, in microseconds.
    pub actual_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use crate::clock::TscClock;
    use crate::recorder::{FrameRecorder, RecorderConfig};

    #[test]
    fn summaries_report_mean_percentiles_and_max_in_microseconds() {
        let (clock, time) = TscClock::mock();
        let mut rec =
            FrameRecorder::with_clock(RecorderConfig::default(), ModeBudget::unlimited(), clock)
                .unwrap();
        // Movement takes 1..=100 us over 100 frames.
        for tick in 1..=100u64 {
            let frame = rec.begin(tick);
            let s = frame.enter(Subsystem::Movement);
            time.advance(tick * 1_000);
            drop(s);
            frame.end();
        }
        let summary = rec.summary();
        assert_eq!(summary.frames, 100);
        let m = summary.time(BudgetTarget::Subsystem(Subsystem::Movement));
        assert_eq!(m.mean_us, 50.5);
        assert_eq!(m.max_us, 100.0);
        // Two significant digits: within 1%.
        for (got, want) in [(m.p50_us, 50.0), (m.p90_us, 90.0), (m.p99_us, 99.0)] {
            assert!((got - want).abs() <= want * 0.01, "{got} vs {want}");
        }
        assert_eq!(summary.tick.mean_us, 50.5);
        assert_eq!(
            summary.time(BudgetTarget::Subsystem(Subsystem::Fow)).max_us,
            0.0
        );

        let json = serde_json::to_string(&summary).unwrap();
        let back: FrameSummary = serde_json::from_str(&json).unwrap();
        assert_eq!(back, summary);
        assert!(
            json.contains(r#""subsystem":"movement","mean_us":50.5"#),
            "{json}"
        );

        let mut budget = ModeBudget::unlimited();
        budget.set(BudgetTarget::Tick, Budget::from_us(40.0, 150.0));
        let misses = summary.budget_misses(&budget);
        assert_eq!(misses.len(), 1);
        assert_eq!(
            (misses[0].target.as_str(), misses[0].stat),
            ("tick", BudgetStat::Mean)
        );
        assert_eq!(misses[0].limit_us, 40.0);
    }
}
