//! Turns worker reports into what the admin API serves: per-mode frame
//! statistics merged over matches, traffic summed over workers, and the
//! per-second timeline.

use std::collections::{BTreeMap, VecDeque};

use hightick_telemetry::{BudgetTarget, FrameStats, Subsystem};

use crate::tick_totals::TickTotals;
use crate::worker::{WorkerPulse, WorkerReport};
use hightick_host_api::{DropCount, ModeStats, NetworkStats, TargetStats, TimelinePoint};
use hightick_telemetry::BudgetStat;

/// Seconds of timeline kept.
pub(crate) const TIMELINE_SECONDS: usize = 3600;

/// Every match of a mode merged into one [`FrameStats`], with the match count
/// and each match's p99.
#[derive(Debug)]
pub(crate) struct MergedMode {
    pub stats: FrameStats,
    pub matches: usize,
    pub late_starts: u64,
    pub match_p99_us: Vec<f64>,
}

/// Merges the matches of all workers by mode, those retired since the last
/// reset included (in the statistics and late starts; not in the match
/// count or the per-match p99s).
pub(crate) fn merge_modes(reports: &[WorkerReport]) -> BTreeMap<String, MergedMode> {
    let mut modes: BTreeMap<String, MergedMode> = BTreeMap::new();
    for m in reports.iter().flat_map(|r| &r.matches) {
        let p99 = ns_to_us(m.stats.quantile_ns(BudgetTarget::Tick, 0.99) as f64);
        match modes.get_mut(&m.info.mode) {
            Some(merged) => {
                // Same recorder configuration everywhere: merging cannot fail
                // short of a bug, and a bug here must not take the host down.
                let _ = merged.stats.merge(&m.stats);
                merged.matches += 1;
                merged.late_starts += m.late_starts;
                merged.match_p99_us.push(p99);
            }
            None => {
                modes.insert(
                    m.info.mode.clone(),
                    MergedMode {
                        stats: m.stats.clone(),
                        matches: 1,
                        late_starts: m.late_starts,
                        match_p99_us: vec![p99],
                    },
                );
            }
        }
    }
    for r in reports.iter().flat_map(|r| &r.retired) {
        match modes.get_mut(r.mode) {
            Some(merged) => {
                let _ = merged.stats.merge(&r.stats);
                merged.late_starts += r.late_starts;
            }
            None => {
                modes.insert(
                    r.mode.to_owned(),
                    MergedMode {
                        stats: r.stats.clone(),
                        matches: 0,
                        late_starts: r.late_starts,
                        match_p99_us: Vec::new(),
                    },
                );
            }
        }
    }
    modes
}

/// The statistics of `target` in `stats`, with its budgets and the budget
/// windows in which it broke its mean or p99 limit.
pub(crate) fn target_stats(stats: &FrameStats, target: BudgetTarget) -> TargetStats {
    let budget = stats.budget().get(target);
    TargetStats {
        name: target.as_str().to_owned(),
        mean_us: ns_to_us(stats.mean_ns(target)),
        p50_us: ns_to_us(stats.quantile_ns(target, 0.5) as f64),
        p99_us: ns_to_us(stats.quantile_ns(target, 0.99) as f64),
        max_us: ns_to_us(stats.max_ns(target) as f64),
        budget_mean_us: budget.mean_ns.map(|ns| ns_to_us(ns as f64)),
        budget_p99_us: budget.p99_ns.map(|ns| ns_to_us(ns as f64)),
        violations: stats.violations(target, BudgetStat::Mean)
            + stats.violations(target, BudgetStat::P99),
    }
}

fn ns_to_us(ns: f64) -> f64 {
    ns / 1000.0
}

/// The API's per-mode statistics.
pub(crate) fn mode_stats(modes: &BTreeMap<String, MergedMode>) -> Vec<ModeStats> {
    modes
        .iter()
        .map(|(mode, m)| ModeStats {
            mode: mode.clone(),
            matches: m.matches,
            ticks: m.stats.frames(),
            overruns: m.stats.late_ticks(),
            late_starts: m.late_starts,
            tick: target_stats(&m.stats, BudgetTarget::Tick),
            subsystems: Subsystem::ALL
                .iter()
                .map(|&s| target_stats(&m.stats, BudgetTarget::Subsystem(s)))
                .collect(),
            match_p99_us: m.match_p99_us.clone(),
        })
        .collect()
}

/// Traffic summed over workers.
pub(crate) fn network_stats(reports: &[WorkerReport]) -> NetworkStats {
    let mut n = NetworkStats::default();
    let mut drops: BTreeMap<&'static str, u64> = BTreeMap::new();
    for r in reports {
        let t = &r.traffic;
        n.packets_in += t.packets_in;
        n.bytes_in += t.bytes_in;
        n.packets_out += t.packets_out;
        n.bytes_out += t.bytes_out;
        n.send_dropped += t.send_dropped;
        n.unknown_clients += t.unknown_clients;
        n.adapt_skipped += t.adapt_skipped;
        n.adapt_decreases += t.adapt_decreases;
        for &(reason, count) in &r.drops {
            *drops.entry(reason).or_default() += count;
        }
        *drops.entry("malformed_message").or_default() += t.malformed_messages;
    }
    n.drops = drops
        .into_iter()
        .filter(|&(_, count)| count > 0)
        .map(|(reason, count)| DropCount {
            reason: reason.to_owned(),
            count,
        })
        .collect();
    n
}

/// Every worker's totals merged.
fn merge_all(pulses: &[WorkerPulse]) -> Option<TickTotals> {
    let mut all: Option<TickTotals> = None;
    for t in pulses.iter().filter_map(|p| p.totals.as_ref()) {
        match all.as_mut() {
            Some(a) => a.merge(t),
            None => all = Some(t.clone()),
        }
    }
    all
}

/// The per-second history: each sample is the difference between two
/// cumulative snapshots.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    previous: Option<(f64, f64, TickTotals)>,
    points: VecDeque<TimelinePoint>,
}

impl Timeline {
    /// Adds the second that ended at `t_s` (host uptime) with the process at
    /// `cpu_s` CPU seconds.
    pub(crate) fn sample(&mut self, t_s: f64, cpu_s: f64, pulses: &[WorkerPulse]) {
        let Some(now) = merge_all(pulses) else {
            self.previous = None;
            return;
        };
        let matches = pulses.iter().map(|p| p.matches).sum();
        let players = pulses.iter().map(|p| p.players_connected).sum();
        if let Some((t0, cpu0, before)) = &self.previous
            && now.frames >= before.frames
            && t_s > *t0
        {
            let frames = (now.frames - before.frames).max(1) as f64;
            let mean = |target| {
                now.sum_ns(target).saturating_sub(before.sum_ns(target)) as f64 / frames / 1000.0
            };
            let mut interval = now.tick.clone();
            let p99 = match interval.subtract(&before.tick) {
                Ok(()) if !interval.is_empty() => interval.value_at_quantile(0.99) as f64 / 1000.0,
                _ => 0.0,
            };
            self.points.push_back(TimelinePoint {
                t_s,
                tick_mean_us: mean(BudgetTarget::Tick),
                tick_p99_us: p99,
                subsystem_mean_us: Subsystem::ALL
                    .iter()
                    .map(|&s| mean(BudgetTarget::Subsystem(s)))
                    .collect(),
                cpu_cores: (cpu_s - cpu0).max(0.0) / (t_s - t0),
                matches,
                players,
            });
            if self.points.len() > TIMELINE_SECONDS {
                self.points.pop_front();
            }
        }
        // A reset or a retired match makes the cumulative counts drop: start
        // the next interval from here.
        self.previous = Some((t_s, cpu_s, now));
    }

    /// Forgets everything (after a stats reset).
    pub(crate) fn clear(&mut self) {
        self.previous = None;
        self.points.clear();
    }

    /// The points, oldest first.
    pub(crate) fn points(&self) -> Vec<TimelinePoint> {
        self.points.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use hightick_telemetry::{FrameRecorder, ModeBudget, RecorderConfig, TscClock};

    use super::*;

    /// A recorder on a mock clock, and a way to add a frame of `ns`
    /// nanoseconds of movement (the tick is the frame).
    fn recorder() -> (FrameRecorder, impl Fn(&mut FrameRecorder, u64)) {
        let (clock, time) = TscClock::mock();
        let recorder =
            FrameRecorder::with_clock(RecorderConfig::default(), ModeBudget::unlimited(), clock)
                .unwrap();
        let frame = move |r: &mut FrameRecorder, ns: u64| {
            let frame = r.begin(0);
            {
                let _m = frame.enter(Subsystem::Movement);
                time.advance(ns);
            }
            frame.end();
        };
        (recorder, frame)
    }

    fn pulse(recorders: &mut [&mut FrameRecorder], players: usize) -> WorkerPulse {
        WorkerPulse {
            matches: recorders.len(),
            totals: TickTotals::sum(recorders.iter_mut().map(|r| r.stats())),
            players_connected: players,
        }
    }

    /// A match retired since the reset keeps counting in its mode's
    /// statistics (ticks, late starts), not in its match count.
    #[test]
    fn retired_matches_still_count_in_their_mode() {
        use crate::retired::Retired;
        use crate::worker::{MatchReport, Traffic};
        let (mut live, frame_live) = recorder();
        let (mut gone, frame_gone) = recorder();
        frame_live(&mut live, 1_000);
        for _ in 0..3 {
            frame_gone(&mut gone, 2_000);
        }
        let mut retired = Retired::default();
        retired.add("5v5", gone.stats(), 2);
        let info = hightick_host_api::MatchInfo {
            mode: "5v5".to_owned(),
            ..hightick_host_api::MatchInfo::new("m1", "127.0.0.1:1".parse().unwrap())
        };
        let report = WorkerReport {
            matches: vec![MatchReport {
                info,
                stats: live.stats().clone(),
                late_starts: 1,
            }],
            retired: retired.modes().to_vec(),
            traffic: Traffic::default(),
            drops: Vec::new(),
            players_connected: 0,
        };
        let modes = merge_modes(std::slice::from_ref(&report));
        let m = &modes["5v5"];
        assert_eq!((m.matches, m.stats.frames(), m.late_starts), (1, 4, 3));
        assert_eq!(mode_stats(&modes)[0].ticks, 4);
        retired.clear();
        assert!(retired.modes().is_empty());
    }

    #[test]
    fn a_timeline_second_is_the_difference_of_two_pulses_over_workers() {
        let (mut a, frame_a) = recorder();
        let (mut b, frame_b) = recorder();
        let (mut c, frame_c) = recorder();
        frame_a(&mut a, 50_000);
        let mut timeline = Timeline::default();
        let first = [pulse(&mut [&mut a, &mut b], 10), pulse(&mut [&mut c], 5)];
        timeline.sample(1.0, 0.5, &first);
        // The first sample only opens the interval.
        assert!(timeline.points().is_empty());
        // In the next second: 100 and 300 us on worker 0, 200 us on worker 1.
        frame_a(&mut a, 100_000);
        frame_b(&mut b, 300_000);
        frame_c(&mut c, 200_000);
        let second = [pulse(&mut [&mut a, &mut b], 10), pulse(&mut [&mut c], 5)];
        timeline.sample(2.0, 0.75, &second);
        let points = timeline.points();
        assert_eq!(points.len(), 1);
        let p = &points[0];
        assert_eq!((p.matches, p.players), (3, 15));
        assert!((p.tick_mean_us - 200.0).abs() < 1e-9, "{}", p.tick_mean_us);
        let movement = Subsystem::Movement.index();
        assert!((p.subsystem_mean_us[movement] - 200.0).abs() < 1e-9);
        // The 50 us frame before the interval is not in its p99.
        assert!((p.tick_p99_us - 300.0).abs() <= 3.0, "{}", p.tick_p99_us);
        assert!((p.cpu_cores - 0.25).abs() < 1e-9);
    }
}
