//! Builds the run summary of a demo from what the server reported over the
//! steady window and what the bots saw.

use hightick_lab::summary::{
    BotRow, DropRow, HostFacts, NetworkRow, RunSummary, SubsystemRow, TickRow, TimelinePoint,
    games_per_core,
};
use hightick_server::{HostStats, NetworkStats, TargetStats};

/// The measured window: server stats at its start and end and the server
/// process's CPU seconds at both.
#[derive(Debug)]
pub struct Window {
    pub start: HostStats,
    pub end: HostStats,
    pub cpu_start_s: f64,
    pub cpu_end_s: f64,
    pub wall_s: f64,
    /// Uptime of the server when the run (not the window) began.
    pub run_start_uptime_s: f64,
}

/// What the run was.
#[derive(Debug)]
pub struct RunShape {
    pub mode: String,
    pub tick_rate_hz: u32,
    pub matches: u32,
    pub players_per_match: u32,
    pub warmup_s: f64,
}

fn subsystem_row(t: &TargetStats) -> SubsystemRow {
    SubsystemRow {
        name: t.name.clone(),
        mean_us: t.mean_us,
        p50_us: t.p50_us,
        p99_us: t.p99_us,
        max_us: t.max_us,
        budget_mean_us: t.budget_mean_us,
        budget_p99_us: t.budget_p99_us,
        violations: t.violations,
    }
}

fn network_row(start: &NetworkStats, end: &NetworkStats, clients: u32, wall_s: f64) -> NetworkRow {
    let per_client_s = f64::from(clients.max(1)) * wall_s.max(1e-9);
    let packets_in = end.packets_in.saturating_sub(start.packets_in);
    let packets_out = end.packets_out.saturating_sub(start.packets_out);
    let bytes_in = end.bytes_in.saturating_sub(start.bytes_in);
    let bytes_out = end.bytes_out.saturating_sub(start.bytes_out);
    let drops = end
        .drops
        .iter()
        .map(|d| {
            let before = start
                .drops
                .iter()
                .find(|s| s.reason == d.reason)
                .map_or(0, |s| s.count);
            DropRow {
                reason: d.reason.clone(),
                count: d.count.saturating_sub(before),
            }
        })
        .filter(|d| d.count > 0)
        .collect();
    NetworkRow {
        clients,
        packets_in,
        packets_out,
        bytes_in,
        bytes_out,
        client_bytes_out_per_s: bytes_out as f64 / per_client_s,
        client_packets_out_per_s: packets_out as f64 / per_client_s,
        client_bytes_in_per_s: bytes_in as f64 / per_client_s,
        drops,
    }
}

/// Host facts from /proc.
pub fn host_facts() -> HostFacts {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split(':').nth(1))
        })
        .map_or_else(|| "unknown".to_owned(), |m| m.trim().to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let distro = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("PRETTY_NAME=")
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_default();
    let git_commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    HostFacts {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
        cpu_model,
        os: format!("Linux {} ({distro})", kernel.trim()),
        git_commit,
    }
}

/// The summary of a run.
pub fn build(shape: &RunShape, window: &Window, bots: BotRow) -> RunSummary {
    let end = &window.end;
    let mode = end.modes.iter().find(|m| m.mode == shape.mode);
    let server_cpu_cores =
        (window.cpu_end_s - window.cpu_start_s).max(0.0) / window.wall_s.max(1e-9);
    let tick = mode.map(|m| TickRow {
        ticks: m.ticks,
        late_ticks: m.late_starts + m.overruns,
        mean_us: m.tick.mean_us,
        p50_us: m.tick.p50_us,
        p99_us: m.tick.p99_us,
        max_us: m.tick.max_us,
        budget_p99_us: m.tick.budget_p99_us,
    });
    let within_budget = mode.is_some_and(|m| {
        m.tick
            .budget_p99_us
            .is_none_or(|budget| m.match_p99_us.iter().all(|&p99| p99 <= budget))
    });
    let timeline = end
        .timeline
        .iter()
        .filter(|p| p.t_s >= window.run_start_uptime_s)
        .map(|p| TimelinePoint {
            t_s: p.t_s - window.run_start_uptime_s,
            tick_mean_us: p.tick_mean_us,
            tick_p99_us: p.tick_p99_us,
            server_cpu_cores: p.cpu_cores,
            players: p.players as u32,
            subsystem_mean_us: p.subsystem_mean_us.clone(),
        })
        .collect();
    let clients = shape.matches * shape.players_per_match;
    RunSummary {
        title: "hightick demo".to_owned(),
        mode: shape.mode.clone(),
        tick_rate_hz: shape.tick_rate_hz,
        matches: shape.matches,
        players_per_match: shape.players_per_match,
        duration_s: window.wall_s,
        warmup_s: shape.warmup_s,
        host: host_facts(),
        tick: tick.unwrap_or_default(),
        subsystems: mode.map_or_else(Vec::new, |m| {
            m.subsystems.iter().map(subsystem_row).collect()
        }),
        network: network_row(&window.start.network, &end.network, clients, window.wall_s),
        server_cpu_cores,
        gpc: games_per_core(shape.matches, server_cpu_cores),
        within_budget,
        bots,
        timeline,
    }
}
