//! The frame recorder: opens and closes frames, turns each closed frame into a
//! [`FrameRecord`], feeds the histograms and budget counters, and keeps a ring
//! of sampled records for JSON lines.

use std::io;

use serde::{Deserialize, Serialize};

use crate::budget::{BudgetTarget, ModeBudget};
use crate::clock::TscClock;
use crate::error::TelemetryError;
use crate::record::FrameRecord;
use crate::sample::SampleRing;
use crate::scope::{LiveFrame, Scope};
use crate::stats::{BudgetWindow, FrameStats, TARGETS};
use crate::sub_scope::{MAX_SUB_SCOPES, SubScopeId, SubScopeRegistry};
use crate::subsystem::Subsystem;
use crate::summary::FrameSummary;

/// Closed frames a recorder keeps before adding them to its statistics.
const PENDING_FRAMES: usize = 32;

/// How a recorder is set up. Every field has a default; see [`RecorderConfig::validate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecorderConfig {
    /// Ticks per second; a frame longer than one tick period is a late tick.
    pub tick_rate_hz: f64,
    /// Significant digits the histograms keep (1..=5); 2 means 1% precision.
    pub histogram_sigfig: u8,
    /// Largest frame time the histograms resolve, in milliseconds; longer
    /// frames are recorded as this value (their exact maximum is still kept).
    pub histogram_max_ms: u64,
    /// How many distinct sub-scope names the recorder can hold.
    pub max_sub_scopes: usize,
    /// Keep every Nth frame record for [`FrameRecorder::write_samples_jsonl`]; 0 keeps none.
    pub sample_every: u32,
    /// How many sampled records are kept until written; when full, the oldest
    /// is dropped (and counted).
    pub sample_capacity: usize,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        Self {
            tick_rate_hz: 128.0,
            histogram_sigfig: 2,
            histogram_max_ms: 10_000,
            max_sub_scopes: 64,
            sample_every: 0,
            sample_capacity: 256,
        }
    }
}

impl RecorderConfig {
    /// Checks every field, naming the first one out of range.
    pub fn validate(&self) -> Result<(), TelemetryError> {
        let bad =
            |field: &'static str, message: String| Err(TelemetryError::Config { field, message });
        if !(self.tick_rate_hz.is_finite() && self.tick_rate_hz > 0.0 && self.tick_rate_hz <= 1e6) {
            return bad(
                "tick_rate_hz",
                format!("must be in (0, 1e6], got {}", self.tick_rate_hz),
            );
        }
        if !(1..=5).contains(&self.histogram_sigfig) {
            return bad(
                "histogram_sigfig",
                format!("must be 1..=5, got {}", self.histogram_sigfig),
            );
        }
        if !(1..=3_600_000).contains(&self.histogram_max_ms) {
            return bad(
                "histogram_max_ms",
                format!("must be 1..=3600000, got {}", self.histogram_max_ms),
            );
        }
        if self.max_sub_scopes > MAX_SUB_SCOPES {
            return bad(
                "max_sub_scopes",
                format!(
                    "must be at most {MAX_SUB_SCOPES}, got {}",
                    self.max_sub_scopes
                ),
            );
        }
        if self.sample_every > 0 && !(1..=1 << 20).contains(&self.sample_capacity) {
            return bad(
                "sample_capacity",
                format!(
                    "must be 1..=1048576 when sampling, got {}",
                    self.sample_capacity
                ),
            );
        }
        Ok(())
    }

    /// One tick period in nanoseconds (7,812,500 at 128 Hz).
    pub fn tick_period_ns(&self) -> u64 {
        (1e9 / self.tick_rate_hz).round() as u64
    }
}

/// What [`Frame::end`] reports about the frame it closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameOutcome {
    /// The frame's tick.
    pub tick: u64,
    /// The whole frame, in nanoseconds.
    pub total_ns: u64,
    /// Whether the frame overran the tick period.
    pub late: bool,
    /// How many targets (subsystems and the tick) exceeded their p99 limit in it.
    pub over_p99: u32,
}

/// Records frames one after another: per-subsystem histograms, late ticks,
/// budget counters, sampled frame records. One recorder per thread (it is
/// `Send`, not `Sync`); all memory is reserved when it is built.
#[derive(Debug)]
pub struct FrameRecorder {
    config: RecorderConfig,
    clock: TscClock,
    epoch_raw: u64,
    tick_period_ns: u64,
    live: LiveFrame,
    sub_scopes: SubScopeRegistry,
    stats: FrameStats,
    /// Closed frames not yet in `stats`: per target nanoseconds and lateness.
    /// They go in [`PENDING_FRAMES`] at a time (or when the statistics are
    /// read), so a frame writes one short row instead of touching a line of
    /// every target's histogram.
    pending: Vec<([u64; TARGETS], bool)>,
    window: BudgetWindow,
    last: FrameRecord,
    sub_scope_total_ns: Vec<u64>,
    samples: SampleRing,
    frames_seen: u64,
}

impl FrameRecorder {
    /// A recorder on the machine's TSC clock, judged against `budget`.
    pub fn new(config: RecorderConfig, budget: ModeBudget) -> Result<Self, TelemetryError> {
        Self::with_clock(config, budget, TscClock::new())
    }

    /// A recorder on the given clock (a mock clock in tests, or a clone shared
    /// by the recorders of one thread).
    pub fn with_clock(
        config: RecorderConfig,
        budget: ModeBudget,
        clock: TscClock,
    ) -> Result<Self, TelemetryError> {
        config.validate()?;
        let tick_period_ns = config.tick_period_ns();
        let stats = FrameStats::new(
            tick_period_ns,
            config.histogram_max_ms * 1_000_000,
            config.histogram_sigfig,
            budget,
        )
        .map_err(|e| TelemetryError::Config {
            field: "histogram_sigfig",
            message: format!("{e:?}"),
        })?;
        let subs = config.max_sub_scopes;
        let samples = if config.sample_every == 0 {
            SampleRing::new(0, subs)
        } else {
            SampleRing::new(config.sample_capacity, subs)
        };
        Ok(Self {
            epoch_raw: clock.raw(),
            tick_period_ns,
            live: LiveFrame::new(clock.clone(), subs),
            sub_scopes: SubScopeRegistry::new(subs),
            stats,
            pending: Vec::with_capacity(PENDING_FRAMES),
            window: BudgetWindow::new(),
            last: FrameRecord::new(subs),
            sub_scope_total_ns: vec![0; subs],
            samples,
            frames_seen: 0,
            clock,
            config,
        })
    }

    /// Opens the frame of `tick`. Scopes opened through the returned [`Frame`]
    /// charge their time to it; the frame closes on [`Frame::end`] or drop.
    #[inline]
    pub fn begin(&mut self, tick: u64) -> Frame<'_> {
        let start_raw = self.clock.raw();
        self.live.begin(start_raw, self.sub_scopes.len());
        Frame {
            recorder: self,
            tick,
            start_raw,
            open: true,
            #[cfg(feature = "tracy")]
            _tracy: crate::tracy::tick_frame(tick),
        }
    }

    /// Registers a sub-scope name up front (scopes also register names on
    /// first use while there is room). Registering the same name again returns
    /// the same id.
    pub fn register_sub_scope(
        &self,
        subsystem: Subsystem,
        name: &'static str,
    ) -> Result<SubScopeId, TelemetryError> {
        self.sub_scopes.register(subsystem, name)
    }

    /// Every registered sub-scope, in id order.
    pub fn sub_scopes(&self) -> impl Iterator<Item = (SubScopeId, Subsystem, &'static str)> + '_ {
        self.sub_scopes.iter()
    }

    /// The subsystem and name of a registered sub-scope.
    pub fn sub_scope_name(&self, id: SubScopeId) -> Option<(Subsystem, &'static str)> {
        self.sub_scopes.name(id)
    }

    /// Total nanoseconds spent in a sub-scope over every recorded frame.
    pub fn sub_scope_total_ns(&self, id: SubScopeId) -> u64 {
        self.sub_scope_total_ns
            .get(id.index())
            .copied()
            .unwrap_or(0)
    }

    /// Scopes whose name found no room in the sub-scope registry (their time
    /// still counts for their subsystem).
    pub fn sub_scope_overflow(&self) -> u64 {
        self.sub_scopes.overflow()
    }

    /// Scopes opened deeper than [`MAX_SCOPE_DEPTH`](crate::scope::MAX_SCOPE_DEPTH).
    pub fn depth_overflow(&self) -> u64 {
        self.live.depth_overflow()
    }

    /// The record of the last closed frame.
    pub fn last_frame(&self) -> &FrameRecord {
        &self.last
    }

    /// Histograms and counters so far.
    pub fn stats(&mut self) -> &FrameStats {
        self.flush_pending();
        &self.stats
    }

    /// Mean, percentiles and maximum per subsystem and for the tick.
    pub fn summary(&mut self) -> FrameSummary {
        FrameSummary::from_stats(self.stats())
    }

    /// The configuration this recorder was built with.
    pub fn config(&self) -> &RecorderConfig {
        &self.config
    }

    /// The clock frames are timed with.
    pub fn clock(&self) -> &TscClock {
        &self.clock
    }

    /// Forgets all statistics, sub-scope totals, the budget window and unsent
    /// samples (e.g. after a warm-up); keeps registered sub-scopes and memory.
    pub fn reset(&mut self) {
        self.pending.clear();
        self.stats.reset();
        self.window = BudgetWindow::new();
        self.sub_scope_total_ns.fill(0);
        self.samples.clear();
    }

    /// Sampled records dropped because the ring was full before being written.
    pub fn samples_dropped(&self) -> u64 {
        self.samples.dropped()
    }

    /// Writes the sampled frame records kept so far as JSON lines (oldest
    /// first) and forgets them; returns how many were written. One line:
    ///
    /// `{"tick":7,"start_ns":..,"total_ns":..,"late":false,"unattributed_ns":..,
    ///   "subsystems":{"replication":..,..},"sub_scopes":{"movement":{"collide":..}}}`
    pub fn write_samples_jsonl(
        &mut self,
        out: &mut impl io::Write,
    ) -> Result<usize, TelemetryError> {
        let mut written = 0;
        while let Some(record) = self.samples.oldest() {
            crate::sample::write_json_line(&mut *out, record, &self.sub_scopes)?;
            self.samples.pop_oldest();
            written += 1;
        }
        Ok(written)
    }

    /// Puts the closed frames still pending into the statistics.
    fn flush_pending(&mut self) {
        self.stats.record_frames(&self.pending);
        self.pending.clear();
    }

    fn close(&mut self, tick: u64, start_raw: u64) -> FrameOutcome {
        let end_raw = self.clock.raw();
        self.live.finish(end_raw);
        let total_ns = self.clock.nanos_between(start_raw, end_raw);
        let late = total_ns > self.tick_period_ns;

        let record = &mut self.last;
        record.tick = tick;
        record.start_ns = self.clock.nanos_between(self.epoch_raw, start_raw);
        record.total_ns = total_ns;
        record.late = late;
        let mut per_target = [0u64; TARGETS];
        for s in Subsystem::ALL {
            let ns = self.clock.raw_to_nanos(self.live.subsystem_raw(s));
            record.subsystem_ns[s.index()] = ns;
            per_target[s.index()] = ns;
        }
        per_target[BudgetTarget::Tick.index()] = total_ns;
        for ((slot, total), raw) in record
            .sub_scope_ns
            .iter_mut()
            .zip(self.sub_scope_total_ns.iter_mut())
            .zip(self.live.sub_raw())
            .take(self.sub_scopes.len())
        {
            *slot = self.clock.raw_to_nanos(raw);
            *total += *slot;
        }

        if self.pending.len() >= PENDING_FRAMES {
            self.flush_pending();
        }
        self.pending.push((per_target, late));
        let over_p99 = self.window.observe(&per_target, &mut self.stats);
        self.frames_seen += 1;
        let every = u64::from(self.config.sample_every);
        if every > 0 && self.frames_seen.is_multiple_of(every) {
            self.samples.push(&self.last);
        }
        FrameOutcome {
            tick,
            total_ns,
            late,
            over_p99,
        }
    }
}

/// An open frame. Open scopes through it; close it with [`Frame::end`] (or
/// let it drop). While it is open the recorder is borrowed, so frames never
/// overlap.
#[derive(Debug)]
pub struct Frame<'r> {
    recorder: &'r mut FrameRecorder,
    tick: u64,
    start_raw: u64,
    open: bool,
    /// Feature `tracy`: the tick's Tracy frame, ended after the frame closes.
    #[cfg(feature = "tracy")]
    _tracy: Option<crate::tracy::TickFrame>,
}

impl Frame<'_> {
    /// Opens a scope charged to `subsystem` and its sub-scope `name` (a static
    /// name such as `"collide"`; `""` means no sub-scope). Time inside scopes
    /// nested in it is charged to them, not to this one.
    #[inline]
    pub fn scope(&self, subsystem: Subsystem, name: &'static str) -> Scope<'_> {
        let sub = self.recorder.sub_scopes.lookup(subsystem, name);
        self.recorder
            .live
            .open(subsystem, sub)
            .traced(subsystem, name)
    }

    /// Opens a scope charged to `subsystem` with no sub-scope.
    #[inline]
    pub fn enter(&self, subsystem: Subsystem) -> Scope<'_> {
        self.recorder
            .live
            .open(subsystem, None)
            .traced(subsystem, "")
    }

    /// The tick this frame records.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Closes the frame: its record is final, histograms and counters are fed.
    pub fn end(mut self) -> FrameOutcome {
        self.open = false;
        self.recorder.close(self.tick, self.start_raw)
    }
}

impl Drop for Frame<'_> {
    fn drop(&mut self) {
        if self.open {
            self.recorder.close(self.tick, self.start_raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use crate::clock::MockTime;

    fn recorder(config: RecorderConfig, budget: ModeBudget) -> (FrameRecorder, MockTime) {
        let (clock, time) = TscClock::mock();
        (
            FrameRecorder::with_clock(config, budget, clock).unwrap(),
            time,
        )
    }

    /// A recorder of a 1 kHz tick (1 ms period) with no budget.
    fn millisecond_recorder() -> (FrameRecorder, MockTime) {
        let config = RecorderConfig {
            tick_rate_hz: 1_000.0,
            ..RecorderConfig::default()
        };
        recorder(config, ModeBudget::unlimited())
    }

    #[test]
    fn a_frame_record_splits_time_by_subsystem_and_sub_scope() {
        let (mut rec, time) = recorder(RecorderConfig::default(), ModeBudget::unlimited());
        let frame = rec.begin(42);
        time.advance(3);
        {
            let _m = frame.scope(Subsystem::Movement, "step");
            time.advance(10);
            {
                let _c = frame.scope(Subsystem::Physics, "collide");
                time.advance(25);
            }
            time.advance(5);
        }
        {
            let _f = frame.enter(Subsystem::Fow);
            time.advance(40);
        }
        time.advance(2);
        let outcome = frame.end();
        assert_eq!(outcome.tick, 42);
        assert_eq!(outcome.total_ns, 85);
        assert!(!outcome.late);

        let r = rec.last_frame();
        assert_eq!(r.tick, 42);
        assert_eq!(r.subsystem(Subsystem::Movement), 15);
        assert_eq!(r.subsystem(Subsystem::Physics), 25);
        assert_eq!(r.subsystem(Subsystem::Fow), 40);
        assert_eq!(r.unattributed_ns(), 5);
        let ids: Vec<_> = rec.sub_scopes().collect();
        assert_eq!(ids.len(), 2);
        let (step, _, _) = ids[0];
        let (collide, subsystem, name) = ids[1];
        assert_eq!((subsystem, name), (Subsystem::Physics, "collide"));
        assert_eq!(
            rec.sub_scope_name(step),
            Some((Subsystem::Movement, "step"))
        );
        assert_eq!(r.sub_scope(step), 15);
        assert_eq!(r.sub_scope(collide), 25);
        assert_eq!(rec.sub_scope_total_ns(collide), 25);
        assert_eq!(rec.stats().frames(), 1);
        assert_eq!(rec.stats().sum_ns(BudgetTarget::Tick), 85);
    }

    /// Frames reach the statistics in batches; reading them folds in the
    /// frames still pending, and a reset forgets those too.
    #[test]
    fn every_frame_is_in_the_statistics_whenever_they_are_read() {
        let (mut rec, time) = millisecond_recorder();
        let frames = 2 * PENDING_FRAMES as u64 + 7;
        let mut sum = 0;
        for tick in 0..frames {
            let frame = rec.begin(tick);
            // Every tenth frame overruns the 1 ms period.
            let ns = if tick % 10 == 9 {
                1_500_000
            } else {
                1_000 + tick
            };
            time.advance(ns);
            frame.end();
            sum += ns;
            // Read part-way through a batch: nothing missing, nothing twice.
            if tick == PENDING_FRAMES as u64 + 3 {
                assert_eq!(rec.stats().frames(), tick + 1);
            }
        }
        let stats = rec.stats();
        assert_eq!(stats.frames(), frames);
        assert_eq!(stats.histogram(BudgetTarget::Tick).len(), frames);
        assert_eq!(stats.sum_ns(BudgetTarget::Tick), sum);
        assert_eq!(stats.max_ns(BudgetTarget::Tick), 1_500_000);
        assert_eq!(stats.late_ticks(), frames / 10);
        assert_eq!(rec.summary().frames, frames);

        for tick in 0..3 {
            let frame = rec.begin(frames + tick);
            time.advance(10);
            frame.end();
        }
        rec.reset();
        let frame = rec.begin(frames + 3);
        time.advance(20);
        frame.end();
        let stats = rec.stats();
        assert_eq!(stats.frames(), 1);
        assert_eq!(stats.histogram(BudgetTarget::Tick).len(), 1);
        assert_eq!(stats.sum_ns(BudgetTarget::Tick), 20);
    }

    #[test]
    fn recorders_can_move_to_worker_threads() {
        fn send<T: Send>() {}
        send::<FrameRecorder>();
    }

    #[test]
    fn dropping_a_frame_closes_it() {
        let (mut rec, time) = recorder(RecorderConfig::default(), ModeBudget::unlimited());
        {
            let frame = rec.begin(1);
            let _s = frame.enter(Subsystem::Network);
            time.advance(9);
        }
        assert_eq!(rec.stats().frames(), 1);
        assert_eq!(rec.last_frame().subsystem(Subsystem::Network), 9);
    }

    #[test]
    fn frames_longer_than_the_tick_period_are_late() {
        let (mut rec, time) = millisecond_recorder();
        for (tick, ns) in [(0, 999_999), (1, 1_000_000), (2, 1_000_001)] {
            let frame = rec.begin(tick);
            time.advance(ns);
            let outcome = frame.end();
            assert_eq!(outcome.late, tick == 2);
        }
        assert_eq!(rec.stats().late_ticks(), 1);
        assert!(rec.last_frame().late);
    }

    #[test]
    fn budget_windows_count_violations_through_the_recorder() {
        let mut budget = ModeBudget::unlimited();
        budget.window_ticks = 10;
        budget.set(
            BudgetTarget::Subsystem(Subsystem::Replication),
            Budget::from_us(1.0, 1.5),
        );
        let (mut rec, time) = recorder(RecorderConfig::default(), budget);
        for tick in 0..20 {
            let frame = rec.begin(tick);
            let scope = frame.enter(Subsystem::Replication);
            time.advance(if tick < 10 { 500 } else { 2_000 });
            drop(scope);
            let outcome = frame.end();
            assert_eq!(outcome.over_p99, u32::from(tick >= 10));
        }
        let s = rec.stats();
        let target = BudgetTarget::Subsystem(Subsystem::Replication);
        assert_eq!(s.frames_over_p99(target), 10);
        assert_eq!(s.violations(target, crate::BudgetStat::Mean), 1);
        assert_eq!(s.violations(target, crate::BudgetStat::P99), 1);
    }

    #[test]
    fn sampled_records_are_written_as_json_lines() {
        let config = RecorderConfig {
            sample_every: 2,
            sample_capacity: 2,
            ..RecorderConfig::default()
        };
        let (mut rec, time) = recorder(config, ModeBudget::unlimited());
        for tick in 100..108 {
            let frame = rec.begin(tick);
            let _s = frame.scope(Subsystem::Movement, "collide\"quoted\"");
            time.advance(tick);
        }
        // 8 frames, every 2nd sampled = 4 samples into a ring of 2.
        assert_eq!(rec.samples_dropped(), 2);
        let mut out = Vec::new();
        assert_eq!(rec.write_samples_jsonl(&mut out).unwrap(), 2);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["tick"], 105);
        assert_eq!(lines[1]["tick"], 107);
        assert_eq!(lines[1]["total_ns"], 107);
        assert_eq!(lines[1]["subsystems"]["movement"], 107);
        assert_eq!(lines[1]["subsystems"]["fow"], 0);
        assert_eq!(lines[1]["sub_scopes"]["movement"]["collide\"quoted\""], 107);
        assert_eq!(lines[1]["late"], false);
        assert_eq!(rec.write_samples_jsonl(&mut Vec::new()).unwrap(), 0);
    }

    #[test]
    fn configs_out_of_range_name_the_field() {
        let cases = [
            RecorderConfig {
                tick_rate_hz: 0.0,
                ..RecorderConfig::default()
            },
            RecorderConfig {
                histogram_sigfig: 6,
                ..RecorderConfig::default()
            },
            RecorderConfig {
                sample_every: 1,
                sample_capacity: 0,
                ..RecorderConfig::default()
            },
        ];
        let fields: Vec<String> = cases
            .iter()
            .map(|c| match c.validate() {
                Err(TelemetryError::Config { field, .. }) => field.to_owned(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            fields,
            ["tick_rate_hz", "histogram_sigfig", "sample_capacity"]
        );
        let parsed: RecorderConfig = toml::from_str("tick_rate_hz = 30.0").unwrap();
        assert_eq!(parsed.tick_period_ns(), 33_333_333);
        assert_eq!(parsed.max_sub_scopes, 64);
    }

    #[test]
    fn reset_forgets_statistics_but_keeps_sub_scopes() {
        let (mut rec, time) = recorder(RecorderConfig::default(), ModeBudget::unlimited());
        let frame = rec.begin(0);
        let s = frame.scope(Subsystem::Gameplay, "economy");
        time.advance(10);
        drop(s);
        frame.end();
        rec.reset();
        assert_eq!(rec.stats().frames(), 0);
        let (id, _, name) = rec.sub_scopes().next().unwrap();
        assert_eq!(name, "economy");
        assert_eq!(rec.sub_scope_total_ns(id), 0);
    }
}
