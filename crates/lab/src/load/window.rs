//! The measured window of a load run, turned into a [`RunSummary`]: what each server
//! instance reported at the window's start and end, the instances' CPU seconds, and
//! what the bots saw. Several instances merge into one summary: counts add up, means
//! are weighted by ticks, and percentiles are the worst instance's (exact for one
//! instance, conservative for several).

use std::collections::BTreeMap;

use hightick_host_api::{HostStats, ModeStats, NetworkStats, TargetStats};

use crate::summary::{
    BotRow, DropRow, HostFacts, NetworkRow, RunSummary, TickRow, TimelinePoint, games_per_core,
};

/// One instance over the window.
#[derive(Debug)]
pub(crate) struct InstanceWindow {
    pub start: HostStats,
    pub end: HostStats,
    pub cpu_start_s: f64,
    pub cpu_end_s: f64,
    /// The instance's uptime when the run (not the window) began.
    pub run_start_uptime_s: f64,
}

/// What the run was.
#[derive(Debug)]
pub(crate) struct RunShape {
    pub title: String,
    pub mode: String,
    pub tick_rate_hz: u32,
    pub matches: u32,
    pub players_per_match: u32,
    pub warmup_s: f64,
}

/// Targets of the same name from several instances, with their instance's tick count.
fn merge_target(parts: &[(&TargetStats, u64)]) -> TargetStats {
    let ticks: u64 = parts.iter().map(|(_, n)| n).sum();
    let weighted = |f: fn(&TargetStats) -> f64| {
        if ticks == 0 {
            parts.first().map_or(0.0, |(t, _)| f(t))
        } else {
            parts.iter().map(|(t, n)| f(t) * *n as f64).sum::<f64>() / ticks as f64
        }
    };
    let worst = |f: fn(&TargetStats) -> f64| parts.iter().map(|(t, _)| f(t)).fold(0.0, f64::max);
    let first = parts.first().map(|(t, _)| *t);
    TargetStats {
        name: first.map_or_else(String::new, |t| t.name.clone()),
        mean_us: weighted(|t| t.mean_us),
        p50_us: weighted(|t| t.p50_us),
        p99_us: worst(|t| t.p99_us),
        max_us: worst(|t| t.max_us),
        budget_mean_us: first.and_then(|t| t.budget_mean_us),
        budget_p99_us: first.and_then(|t| t.budget_p99_us),
        violations: parts.iter().map(|(t, _)| t.violations).sum(),
    }
}

fn tick_row(modes: &[&ModeStats]) -> TickRow {
    let parts: Vec<(&TargetStats, u64)> = modes.iter().map(|m| (&m.tick, m.ticks)).collect();
    let merged = merge_target(&parts);
    TickRow {
        ticks: modes.iter().map(|m| m.ticks).sum(),
        late_ticks: modes.iter().map(|m| m.late_starts + m.overruns).sum(),
        mean_us: merged.mean_us,
        p50_us: merged.p50_us,
        p99_us: merged.p99_us,
        max_us: merged.max_us,
        budget_p99_us: merged.budget_p99_us,
    }
}

fn subsystem_rows(modes: &[&ModeStats]) -> Vec<TargetStats> {
    let Some(first) = modes.first() else {
        return Vec::new();
    };
    first
        .subsystems
        .iter()
        .map(|s| {
            let parts: Vec<(&TargetStats, u64)> = modes
                .iter()
                .filter_map(|m| {
                    let t = m.subsystems.iter().find(|t| t.name == s.name)?;
                    Some((t, m.ticks))
                })
                .collect();
            merge_target(&parts)
        })
        .collect()
}

/// Traffic over the window, summed over instances, per client per second.
fn network_row(windows: &[InstanceWindow], clients: u32, wall_s: f64) -> NetworkRow {
    let delta = |f: fn(&NetworkStats) -> u64| -> u64 {
        windows
            .iter()
            .map(|w| f(&w.end.network).saturating_sub(f(&w.start.network)))
            .sum()
    };
    let mut drops: BTreeMap<String, u64> = BTreeMap::new();
    for w in windows {
        for d in &w.end.network.drops {
            let before = w
                .start
                .network
                .drops
                .iter()
                .find(|s| s.reason == d.reason)
                .map_or(0, |s| s.count);
            *drops.entry(d.reason.clone()).or_default() += d.count.saturating_sub(before);
        }
    }
    let per_client_s = f64::from(clients.max(1)) * wall_s.max(1e-9);
    let (bytes_in, bytes_out) = (delta(|n| n.bytes_in), delta(|n| n.bytes_out));
    let packets_out = delta(|n| n.packets_out);
    NetworkRow {
        clients,
        packets_in: delta(|n| n.packets_in),
        packets_out,
        bytes_in,
        bytes_out,
        client_bytes_out_per_s: bytes_out as f64 / per_client_s,
        client_packets_out_per_s: packets_out as f64 / per_client_s,
        client_bytes_in_per_s: bytes_in as f64 / per_client_s,
        adapt_skipped: delta(|n| n.adapt_skipped),
        adapt_decreases: delta(|n| n.adapt_decreases),
        drops: drops
            .into_iter()
            .filter(|(_, count)| *count > 0)
            .map(|(reason, count)| DropRow { reason, count })
            .collect(),
    }
}

/// The instances' one-second samples since the run began, merged by second.
fn timeline(windows: &[InstanceWindow]) -> Vec<TimelinePoint> {
    let mut by_second: BTreeMap<i64, (TimelinePoint, u32)> = BTreeMap::new();
    for w in windows {
        for p in w
            .end
            .timeline
            .iter()
            .filter(|p| p.t_s >= w.run_start_uptime_s)
        {
            let t_s = p.t_s - w.run_start_uptime_s;
            let (point, n) = by_second.entry(t_s.round() as i64).or_insert_with(|| {
                (
                    TimelinePoint {
                        t_s,
                        subsystem_mean_us: vec![0.0; p.subsystem_mean_us.len()],
                        ..TimelinePoint::default()
                    },
                    0,
                )
            });
            *n += 1;
            point.tick_mean_us += p.tick_mean_us;
            point.tick_p99_us = point.tick_p99_us.max(p.tick_p99_us);
            point.cpu_cores += p.cpu_cores;
            point.matches += p.matches;
            point.players += p.players;
            for (sum, v) in point.subsystem_mean_us.iter_mut().zip(&p.subsystem_mean_us) {
                *sum += v;
            }
        }
    }
    by_second
        .into_values()
        .map(|(mut point, n)| {
            let n = f64::from(n.max(1));
            point.tick_mean_us /= n;
            for v in &mut point.subsystem_mean_us {
                *v /= n;
            }
            point
        })
        .collect()
}

/// The summary of a run (budgets as the servers reported them; a
/// [`BudgetBook`](crate::BudgetBook) may judge it again).
pub(crate) fn build(
    shape: &RunShape,
    windows: &[InstanceWindow],
    wall_s: f64,
    bots: BotRow,
    host: HostFacts,
) -> RunSummary {
    let modes: Vec<&ModeStats> = windows
        .iter()
        .filter_map(|w| w.end.modes.iter().find(|m| m.mode == shape.mode))
        .collect();
    let cpu_s: f64 = windows
        .iter()
        .map(|w| (w.cpu_end_s - w.cpu_start_s).max(0.0))
        .sum();
    let server_cpu_cores = cpu_s / wall_s.max(1e-9);
    let match_tick_p99_us: Vec<f64> = modes
        .iter()
        .flat_map(|m| m.match_p99_us.iter().copied())
        .collect();
    let tick = tick_row(&modes);
    let within_budget = tick
        .budget_p99_us
        .is_none_or(|limit| match_tick_p99_us.iter().all(|&p| p <= limit));
    let clients = shape.matches * shape.players_per_match;
    RunSummary {
        title: shape.title.clone(),
        mode: shape.mode.clone(),
        tick_rate_hz: shape.tick_rate_hz,
        matches: shape.matches,
        players_per_match: shape.players_per_match,
        duration_s: wall_s,
        warmup_s: shape.warmup_s,
        host,
        tick,
        subsystems: subsystem_rows(&modes),
        network: network_row(windows, clients, wall_s),
        server_cpu_cores,
        gpc: games_per_core(shape.matches, server_cpu_cores),
        within_budget,
        bots,
        timeline: timeline(windows),
        match_tick_p99_us,
        quality: None,
        link: None,
        samples: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_host_api::TimelinePoint as HostPoint;

    fn target(name: &str, mean: f64, p99: f64) -> TargetStats {
        TargetStats {
            name: name.into(),
            mean_us: mean,
            p50_us: mean,
            p99_us: p99,
            max_us: p99 * 2.0,
            budget_mean_us: Some(50.0),
            budget_p99_us: Some(100.0),
            violations: 1,
        }
    }

    fn stats(ticks: u64, mean: f64, p99: f64, bytes_out: u64, uptime: f64) -> HostStats {
        HostStats {
            uptime_s: uptime,
            process_cpu_seconds: 0.0,
            draining: false,
            workers: 1,
            matches: 1,
            players_connected: 10,
            modes: vec![ModeStats {
                mode: "5v5".into(),
                matches: 1,
                ticks,
                overruns: 1,
                late_starts: 2,
                tick: target("tick", mean, p99),
                subsystems: vec![target("fow", mean / 2.0, p99 / 2.0)],
                match_p99_us: vec![p99],
            }],
            network: NetworkStats {
                bytes_out,
                packets_out: bytes_out / 100,
                ..NetworkStats::default()
            },
            timeline: vec![HostPoint {
                t_s: uptime,
                tick_mean_us: mean,
                tick_p99_us: p99,
                subsystem_mean_us: vec![mean / 2.0],
                cpu_cores: 0.25,
                matches: 1,
                players: 10,
            }],
        }
    }

    fn window(ticks: u64, mean: f64, p99: f64, cpu: f64) -> InstanceWindow {
        InstanceWindow {
            start: stats(0, 0.0, 0.0, 1_000, 1.0),
            end: stats(ticks, mean, p99, 11_000, 3.0),
            cpu_start_s: 1.0,
            cpu_end_s: 1.0 + cpu,
            run_start_uptime_s: 0.5,
        }
    }

    fn shape(matches: u32) -> RunShape {
        RunShape {
            title: "t".into(),
            mode: "5v5".into(),
            tick_rate_hz: 128,
            matches,
            players_per_match: 10,
            warmup_s: 1.0,
        }
    }

    #[test]
    fn one_instance_is_reported_as_it_is() {
        let run = build(
            &shape(1),
            &[window(100, 40.0, 90.0, 0.5)],
            2.0,
            BotRow::default(),
            HostFacts::default(),
        );
        assert_eq!(run.tick.ticks, 100);
        assert_eq!(run.tick.late_ticks, 3);
        assert_eq!(run.tick.mean_us, 40.0);
        assert_eq!(run.tick.p99_us, 90.0);
        assert_eq!(run.server_cpu_cores, 0.25);
        assert!((run.gpc - 3.6).abs() < 1e-9);
        assert_eq!(run.subsystems[0].name, "fow");
        assert_eq!(run.network.bytes_out, 10_000);
        assert_eq!(run.network.client_bytes_out_per_s, 500.0);
        assert_eq!(run.match_tick_p99_us, vec![90.0]);
        assert!(run.within_budget);
        assert_eq!(run.timeline.len(), 1);
        assert_eq!(run.timeline[0].t_s, 2.5);
    }

    #[test]
    fn instances_merge_counts_means_and_worst_percentiles() {
        let windows = [window(100, 40.0, 90.0, 0.5), window(300, 80.0, 150.0, 1.5)];
        let run = build(
            &shape(2),
            &windows,
            2.0,
            BotRow::default(),
            HostFacts::default(),
        );
        assert_eq!(run.tick.ticks, 400);
        assert_eq!(run.tick.late_ticks, 6);
        assert_eq!(run.tick.mean_us, 70.0, "weighted by ticks");
        assert_eq!(run.tick.p99_us, 150.0, "the worst instance's");
        assert_eq!(run.subsystems[0].mean_us, 35.0);
        assert_eq!(run.subsystems[0].violations, 2);
        assert_eq!(run.server_cpu_cores, 1.0, "CPU adds up");
        assert_eq!(run.network.bytes_out, 20_000);
        assert_eq!(run.match_tick_p99_us, vec![90.0, 150.0]);
        assert!(!run.within_budget, "one match over the 100 us budget");
        assert_eq!(run.timeline.len(), 1);
        assert_eq!(run.timeline[0].cpu_cores, 0.5);
        assert_eq!(run.timeline[0].players, 20);
        assert_eq!(run.timeline[0].tick_mean_us, 60.0);
    }
}
