//! Building the frame-time parts of a [`RunSummary`](crate::RunSummary) from the
//! telemetry crate's [`FrameStats`] (one match's recorder, or several merged).

use hightick_telemetry::{BudgetStat, BudgetTarget, FrameStats, FrameSummary, Subsystem};

use crate::summary::{SubsystemRow, TickRow, TimelinePoint};

fn ns_to_us(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

impl TickRow {
    /// The whole-tick row of these statistics, with the tick's p99 budget.
    pub fn from_stats(stats: &FrameStats) -> TickRow {
        let t = FrameSummary::from_stats(stats).tick;
        TickRow {
            ticks: stats.frames(),
            late_ticks: stats.late_ticks(),
            mean_us: t.mean_us,
            p50_us: t.p50_us,
            p99_us: t.p99_us,
            max_us: t.max_us,
            budget_p99_us: stats.budget().get(BudgetTarget::Tick).p99_ns.map(ns_to_us),
        }
    }
}

impl SubsystemRow {
    /// One row per subsystem, in the telemetry crate's order, with budgets and the
    /// number of budget windows in which the subsystem broke its mean or p99 limit.
    pub fn all_from_stats(stats: &FrameStats) -> Vec<SubsystemRow> {
        let summary = FrameSummary::from_stats(stats);
        Subsystem::ALL
            .into_iter()
            .map(|s| {
                let target = BudgetTarget::Subsystem(s);
                let t = summary.time(target);
                let budget = stats.budget().get(target);
                SubsystemRow {
                    name: s.as_str().to_string(),
                    mean_us: t.mean_us,
                    p50_us: t.p50_us,
                    p99_us: t.p99_us,
                    max_us: t.max_us,
                    budget_mean_us: budget.mean_ns.map(ns_to_us),
                    budget_p99_us: budget.p99_ns.map(ns_to_us),
                    violations: BudgetStat::ALL
                        .into_iter()
                        .map(|stat| stats.violations(target, stat))
                        .sum(),
                }
            })
            .collect()
    }
}

impl TimelinePoint {
    /// A sample at `t_s` seconds from the statistics of the interval just ended
    /// (subsystem means in the order of [`SubsystemRow::all_from_stats`]).
    pub fn from_stats(
        t_s: f64,
        stats: &FrameStats,
        server_cpu_cores: f64,
        players: u32,
    ) -> TimelinePoint {
        let summary = FrameSummary::from_stats(stats);
        TimelinePoint {
            t_s,
            tick_mean_us: summary.tick.mean_us,
            tick_p99_us: summary.tick.p99_us,
            server_cpu_cores,
            players,
            subsystem_mean_us: Subsystem::ALL
                .into_iter()
                .map(|s| summary.time(BudgetTarget::Subsystem(s)).mean_us)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_telemetry::{Budget, FrameRecorder, ModeBudget, RecorderConfig, TscClock};

    #[test]
    fn rows_carry_times_budgets_and_violations() {
        let (clock, time) = TscClock::mock();
        let mut budget = ModeBudget::unlimited();
        budget.window_ticks = 10;
        budget.set(
            BudgetTarget::Subsystem(Subsystem::Movement),
            Budget::from_us(20.0, 40.0),
        );
        budget.set(BudgetTarget::Tick, Budget::from_us(100.0, 250.0));
        let mut rec = FrameRecorder::with_clock(RecorderConfig::default(), budget, clock).unwrap();
        // Movement takes 1..=100 us over 100 frames: later windows break its budget.
        for tick in 1..=100u64 {
            let frame = rec.begin(tick);
            let s = frame.enter(Subsystem::Movement);
            time.advance(tick * 1_000);
            drop(s);
            frame.end();
        }
        let stats = rec.stats();
        let tick = TickRow::from_stats(stats);
        assert_eq!(tick.ticks, 100);
        assert_eq!(tick.mean_us, 50.5);
        assert_eq!(tick.budget_p99_us, Some(250.0));

        let rows = SubsystemRow::all_from_stats(stats);
        assert_eq!(rows.len(), Subsystem::ALL.len());
        let movement = rows.iter().find(|r| r.name == "movement").unwrap();
        assert_eq!(movement.mean_us, 50.5);
        assert_eq!(movement.budget_mean_us, Some(20.0));
        assert_eq!(movement.budget_p99_us, Some(40.0));
        assert!(movement.violations > 0);
        assert!(movement.mean_over_budget());
        let fow = rows.iter().find(|r| r.name == "fow").unwrap();
        assert_eq!(
            (fow.mean_us, fow.violations, fow.budget_mean_us),
            (0.0, 0, None)
        );

        let point = TimelinePoint::from_stats(2.0, stats, 0.5, 10);
        assert_eq!(point.subsystem_mean_us.len(), rows.len());
        let m = rows.iter().position(|r| r.name == "movement").unwrap();
        assert_eq!(point.subsystem_mean_us[m], 50.5);
        assert_eq!(point.tick_mean_us, 50.5);
    }
}
