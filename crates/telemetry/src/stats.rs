//! Cumulative frame statistics: an HDR histogram, exact sum and maximum per
//! budget target (every subsystem and the whole tick), late ticks, and the
//! budget counters, with the per-window judgment that feeds them.

use hdrhistogram::Histogram;

use crate::budget::{BudgetTarget, ModeBudget};

/// Which limit of a budget a counter is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BudgetStat {
    /// The window mean.
    Mean,
    /// The window 99th percentile.
    P99,
}

impl BudgetStat {
    /// Both stats.
    pub const ALL: [BudgetStat; 2] = [BudgetStat::Mean, BudgetStat::P99];

    /// `"mean"` or `"p99"`: the metric label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            BudgetStat::Mean => "mean",
            BudgetStat::P99 => "p99",
        }
    }
}

/// Per-target arrays hold every subsystem, then the whole tick.
pub(crate) const TARGETS: usize = BudgetTarget::COUNT;

/// Everything a recorder has accumulated since it was created (or reset).
/// Histograms are allocated once, here; recording into them never allocates.
/// Statistics of recorders built with the same configuration can be merged,
/// e.g. every match of one mode on a host.
#[derive(Debug, Clone)]
pub struct FrameStats {
    frames: u64,
    late_ticks: u64,
    tick_period_ns: u64,
    histograms: Box<[Histogram<u64>]>,
    sum_ns: [u64; TARGETS],
    max_ns: [u64; TARGETS],
    over_p99: [u64; TARGETS],
    violations: [[u64; 2]; TARGETS],
    budget: ModeBudget,
}

impl FrameStats {
    /// Empty statistics whose histograms track 0..=`max_ns` with `sigfig`
    /// significant digits (values above `max_ns` are clamped to it).
    pub(crate) fn new(
        tick_period_ns: u64,
        max_ns: u64,
        sigfig: u8,
        budget: ModeBudget,
    ) -> Result<Self, hdrhistogram::CreationError> {
        let histogram = Histogram::new_with_bounds(1, max_ns.max(2), sigfig)?;
        Ok(Self {
            frames: 0,
            late_ticks: 0,
            tick_period_ns,
            histograms: vec![histogram; TARGETS].into_boxed_slice(),
            sum_ns: [0; TARGETS],
            max_ns: [0; TARGETS],
            over_p99: [0; TARGETS],
            violations: [[0; 2]; TARGETS],
            budget,
        })
    }

    /// Adds one frame: nanoseconds per target in [`BudgetTarget::index`] order.
    #[cfg(test)]
    pub(crate) fn record(&mut self, ns: &[u64; TARGETS], late: bool) {
        self.record_frames(&[(*ns, late)]);
    }

    /// Adds frames (nanoseconds per target in [`BudgetTarget::index`] order,
    /// and whether the frame was late), one target at a time: a batch of
    /// frames reads each histogram's few hot lines once, not once a frame.
    pub(crate) fn record_frames(&mut self, frames: &[([u64; TARGETS], bool)]) {
        self.frames += frames.len() as u64;
        self.late_ticks += frames.iter().filter(|(_, late)| *late).count() as u64;
        for (i, histogram) in self.histograms.iter_mut().enumerate() {
            for (ns, _) in frames {
                let v = ns[i];
                histogram.saturating_record(v);
                self.sum_ns[i] = self.sum_ns[i].saturating_add(v);
                self.max_ns[i] = self.max_ns[i].max(v);
            }
        }
    }

    /// Frames recorded.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Frames whose total time overran the tick period.
    pub fn late_ticks(&self) -> u64 {
        self.late_ticks
    }

    /// The tick period late ticks are judged against, in nanoseconds.
    pub fn tick_period_ns(&self) -> u64 {
        self.tick_period_ns
    }

    /// The budgets these statistics are judged against.
    pub fn budget(&self) -> &ModeBudget {
        &self.budget
    }

    /// The histogram of one target's per-frame nanoseconds (one value per frame,
    /// zero for frames in which the subsystem did not run).
    pub fn histogram(&self, target: BudgetTarget) -> &Histogram<u64> {
        &self.histograms[target.index()]
    }

    /// Exact sum of one target's nanoseconds over all frames.
    pub fn sum_ns(&self, target: BudgetTarget) -> u64 {
        self.sum_ns[target.index()]
    }

    /// Exact largest single-frame value of one target, in nanoseconds.
    pub fn max_ns(&self, target: BudgetTarget) -> u64 {
        self.max_ns[target.index()]
    }

    /// Exact mean nanoseconds per frame of one target (0 before any frame).
    pub fn mean_ns(&self, target: BudgetTarget) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            self.sum_ns(target) as f64 / self.frames as f64
        }
    }

    /// The `q`-quantile (0..=1) of one target, in nanoseconds, to the
    /// histogram's precision (0 before any frame).
    pub fn quantile_ns(&self, target: BudgetTarget, q: f64) -> u64 {
        self.histogram(target).value_at_quantile(q.clamp(0.0, 1.0))
    }

    /// How many frames had at most `ns` nanoseconds of `target`, to the
    /// histogram's precision.
    pub fn frames_at_or_below(&self, target: BudgetTarget, ns: u64) -> u64 {
        self.histogram(target).count_between(0, ns)
    }

    /// Frames in which `target` took longer than its p99 limit.
    pub fn frames_over_p99(&self, target: BudgetTarget) -> u64 {
        self.over_p99[target.index()]
    }

    /// Budget windows in which `target` broke its `stat` limit.
    pub fn violations(&self, target: BudgetTarget, stat: BudgetStat) -> u64 {
        self.violations[target.index()][stat as usize]
    }

    /// Budget windows that broke any limit, summed over targets and stats.
    pub fn total_violations(&self) -> u64 {
        self.violations.iter().flatten().sum()
    }

    /// Adds `other`'s frames and counters into these statistics. Budgets and
    /// tick period stay this side's.
    pub fn merge(&mut self, other: &FrameStats) -> Result<(), crate::error::TelemetryError> {
        for (mine, theirs) in self.histograms.iter_mut().zip(other.histograms.iter()) {
            mine.add(theirs)
                .map_err(|e| crate::error::TelemetryError::Merge(format!("{e:?}")))?;
        }
        self.frames += other.frames;
        self.late_ticks += other.late_ticks;
        for i in 0..TARGETS {
            self.sum_ns[i] = self.sum_ns[i].saturating_add(other.sum_ns[i]);
            self.max_ns[i] = self.max_ns[i].max(other.max_ns[i]);
            self.over_p99[i] += other.over_p99[i];
            self.violations[i][0] += other.violations[i][0];
            self.violations[i][1] += other.violations[i][1];
        }
        Ok(())
    }

    /// Forgets every frame and counter (e.g. after a warm-up); keeps allocations.
    pub fn reset(&mut self) {
        for h in self.histograms.iter_mut() {
            h.reset();
        }
        self.frames = 0;
        self.late_ticks = 0;
        self.sum_ns = [0; TARGETS];
        self.max_ns = [0; TARGETS];
        self.over_p99 = [0; TARGETS];
        self.violations = [[0; 2]; TARGETS];
    }
}

/// The current budget window of one recorder: per target, the window's sum
/// and how many of its frames exceeded the p99 limit. When the window is full
/// it is judged: a mean over the limit, or more than 1% of frames over the p99
/// limit (which is exactly "the window's p99 is over the limit"), counts one
/// violation of that stat.
#[derive(Debug, Clone)]
pub(crate) struct BudgetWindow {
    frames: u32,
    sum_ns: [u64; TARGETS],
    over_p99: [u32; TARGETS],
}

impl BudgetWindow {
    pub(crate) fn new() -> Self {
        Self {
            frames: 0,
            sum_ns: [0; TARGETS],
            over_p99: [0; TARGETS],
        }
    }

    /// Adds one frame; returns how many targets exceeded their p99 limit in it.
    pub(crate) fn observe(&mut self, ns: &[u64; TARGETS], stats: &mut FrameStats) -> u32 {
        let mut over = 0;
        for (i, &v) in ns.iter().enumerate() {
            self.sum_ns[i] = self.sum_ns[i].saturating_add(v);
            if stats.budget.targets()[i]
                .p99_ns
                .is_some_and(|limit| v > limit)
            {
                self.over_p99[i] += 1;
                stats.over_p99[i] += 1;
                over += 1;
            }
        }
        self.frames += 1;
        if self.frames >= stats.budget.window_ticks {
            self.judge(stats);
        }
        over
    }

    fn judge(&mut self, stats: &mut FrameStats) {
        let frames = u64::from(self.frames);
        for (i, budget) in stats.budget.targets().iter().enumerate() {
            if budget
                .mean_ns
                .is_some_and(|limit| self.sum_ns[i] > limit.saturating_mul(frames))
            {
                stats.violations[i][BudgetStat::Mean as usize] += 1;
            }
            if budget.p99_ns.is_some() && u64::from(self.over_p99[i]) * 100 > frames {
                stats.violations[i][BudgetStat::P99 as usize] += 1;
            }
        }
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use crate::subsystem::Subsystem;

    const MOVE: BudgetTarget = BudgetTarget::Subsystem(Subsystem::Movement);

    fn frame(movement: u64, tick: u64) -> [u64; TARGETS] {
        let mut ns = [0; TARGETS];
        ns[MOVE.index()] = movement;
        ns[BudgetTarget::Tick.index()] = tick;
        ns
    }

    fn stats(budget: ModeBudget) -> FrameStats {
        FrameStats::new(7_812_500, 10_000_000_000, 2, budget).unwrap()
    }

    #[test]
    fn record_keeps_exact_sums_and_maxima_and_histogram_counts() {
        let mut s = stats(ModeBudget::unlimited());
        s.record(&frame(100, 1_000), false);
        s.record(&frame(300, 9_000_000), true);
        assert_eq!(s.frames(), 2);
        assert_eq!(s.late_ticks(), 1);
        assert_eq!(s.sum_ns(MOVE), 400);
        assert_eq!(s.max_ns(MOVE), 300);
        assert_eq!(s.mean_ns(MOVE), 200.0);
        assert_eq!(s.histogram(MOVE).len(), 2);
        assert_eq!(s.frames_at_or_below(BudgetTarget::Tick, 1_000), 1);
        // Subsystems that did not run record zero, so every histogram counts every frame.
        let fow = BudgetTarget::Subsystem(Subsystem::Fow);
        assert_eq!(s.histogram(fow).len(), 2);
        assert_eq!(s.quantile_ns(fow, 1.0), 0);
    }

    #[test]
    fn values_past_the_range_are_clamped_not_lost() {
        let mut s = FrameStats::new(1_000, 1_000_000, 2, ModeBudget::unlimited()).unwrap();
        s.record(&frame(5_000_000, 5_000_000), true);
        assert_eq!(s.histogram(MOVE).len(), 1);
        assert_eq!(s.max_ns(MOVE), 5_000_000);
    }

    #[test]
    fn windows_judge_mean_and_p99_limits() {
        let mut budget = ModeBudget::unlimited();
        budget.window_ticks = 100;
        budget.set(MOVE, Budget::from_us(1.0, 2.0));
        let mut s = stats(budget);
        let mut w = BudgetWindow::new();
        // Window 1: mean 1.0 us exactly, one frame (1%) over p99: within budget.
        for i in 0..100 {
            let v = if i == 0 { 2_500 } else { 975 };
            w.observe(&frame(v, v), &mut s);
        }
        assert_eq!(s.violations(MOVE, BudgetStat::Mean), 0);
        assert_eq!(s.violations(MOVE, BudgetStat::P99), 0);
        assert_eq!(s.frames_over_p99(MOVE), 1);
        // Window 2: two frames (2%) over p99, and the mean goes over too.
        for i in 0..100 {
            let over = w.observe(&frame(if i < 2 { 30_000 } else { 900 }, 0), &mut s);
            assert_eq!(over, u32::from(i < 2));
        }
        assert_eq!(s.violations(MOVE, BudgetStat::Mean), 1);
        assert_eq!(s.violations(MOVE, BudgetStat::P99), 1);
        assert_eq!(s.frames_over_p99(MOVE), 3);
        assert_eq!(s.total_violations(), 2);
        // Unlimited targets never count.
        assert_eq!(s.violations(BudgetTarget::Tick, BudgetStat::Mean), 0);
    }

    #[test]
    fn merge_adds_frames_and_counters() {
        let mut a = stats(ModeBudget::unlimited());
        let mut b = stats(ModeBudget::unlimited());
        a.record(&frame(10, 100), false);
        b.record(&frame(30, 300), true);
        b.record(&frame(50, 500), false);
        a.merge(&b).unwrap();
        assert_eq!(a.frames(), 3);
        assert_eq!(a.late_ticks(), 1);
        assert_eq!(a.sum_ns(MOVE), 90);
        assert_eq!(a.max_ns(BudgetTarget::Tick), 500);
        assert_eq!(a.histogram(MOVE).len(), 3);
        a.reset();
        assert_eq!(a.frames(), 0);
        assert_eq!(a.histogram(MOVE).len(), 0);
    }
}
