//! [`TickTotals`]: what a worker's per-second pulse carries of its matches'
//! cumulative statistics, and what the host's timeline reads of them.

use hdrhistogram::Histogram;
use hightick_telemetry::{BudgetTarget, FrameStats};

/// What the timeline reads of matches' cumulative statistics, summed over
/// them whatever the mode: frames, each target's total time, and the tick
/// histogram (one of the eleven a [`FrameStats`] holds, so a worker answers
/// the per-second pulse without cloning the others).
#[derive(Debug, Clone)]
pub(crate) struct TickTotals {
    /// Match-ticks recorded.
    pub frames: u64,
    sum_ns: [u64; BudgetTarget::COUNT],
    /// The whole tick's histogram, nanoseconds.
    pub tick: Histogram<u64>,
}

impl TickTotals {
    /// The totals of `matches`' statistics summed; `None` for none.
    pub(crate) fn sum<'a>(mut matches: impl Iterator<Item = &'a FrameStats>) -> Option<Self> {
        let mut totals = Self::of(matches.next()?);
        for stats in matches {
            totals.add(stats);
        }
        Some(totals)
    }

    /// The totals of one match.
    fn of(stats: &FrameStats) -> Self {
        let mut sum_ns = [0; BudgetTarget::COUNT];
        for target in BudgetTarget::all() {
            sum_ns[target.index()] = stats.sum_ns(target);
        }
        Self {
            frames: stats.frames(),
            sum_ns,
            tick: stats.histogram(BudgetTarget::Tick).clone(),
        }
    }

    /// Adds another match's statistics.
    fn add(&mut self, stats: &FrameStats) {
        self.frames += stats.frames();
        for target in BudgetTarget::all() {
            let sum = &mut self.sum_ns[target.index()];
            *sum = sum.saturating_add(stats.sum_ns(target));
        }
        // Same recorder configuration everywhere: adding cannot fail short
        // of a bug, and a bug here must not take the host down.
        let _ = self.tick.add(stats.histogram(BudgetTarget::Tick));
    }

    /// Adds another worker's totals.
    pub(crate) fn merge(&mut self, other: &TickTotals) {
        self.frames += other.frames;
        for (sum, other) in self.sum_ns.iter_mut().zip(other.sum_ns) {
            *sum = sum.saturating_add(other);
        }
        let _ = self.tick.add(&other.tick);
    }

    pub(crate) fn sum_ns(&self, target: BudgetTarget) -> u64 {
        self.sum_ns[target.index()]
    }
}
