//! A host's statistics (`GET /v1/stats`, `/v1/timeline`), as the host
//! writes them and the lab and demo read them.

use serde::{Deserialize, Serialize};

/// Frame-time statistics of one target (the whole tick or a subsystem): a
/// row of `/v1/stats`, and of the lab's run summaries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetStats {
    /// `tick` or the subsystem name.
    pub name: String,
    /// Mean microseconds per match-tick.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest.
    pub max_us: f64,
    /// Budget on the mean, if any.
    pub budget_mean_us: Option<f64>,
    /// Budget on the p99, if any.
    pub budget_p99_us: Option<f64>,
    /// Budget windows that broke a limit.
    pub violations: u64,
}

impl TargetStats {
    /// True when the mean is above its budget.
    pub fn mean_over_budget(&self) -> bool {
        self.budget_mean_us.is_some_and(|b| self.mean_us > b)
    }

    /// True when the p99 is above its budget.
    pub fn p99_over_budget(&self) -> bool {
        self.budget_p99_us.is_some_and(|b| self.p99_us > b)
    }
}

/// Statistics of every match of one mode on the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeStats {
    /// Mode name.
    pub mode: String,
    /// Matches of this mode now hosted.
    pub matches: usize,
    /// Match-ticks recorded.
    pub ticks: u64,
    /// Match-ticks whose work overran the tick period.
    pub overruns: u64,
    /// Match-ticks that started more than one tick period after their deadline.
    pub late_starts: u64,
    /// The whole match-tick.
    pub tick: TargetStats,
    /// Per subsystem, in the telemetry crate's order.
    pub subsystems: Vec<TargetStats>,
    /// p99 tick time of each match, microseconds.
    pub match_p99_us: Vec<f64>,
}

/// Datagrams dropped for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCount {
    /// Reason, as the net layer names it.
    pub reason: String,
    /// Datagrams.
    pub count: u64,
}

/// Traffic counters of the whole host since it started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetworkStats {
    /// Datagrams received.
    pub packets_in: u64,
    /// Their bytes.
    pub bytes_in: u64,
    /// Datagrams sent.
    pub packets_out: u64,
    /// Their bytes.
    pub bytes_out: u64,
    /// Datagrams the kernel refused to send.
    pub send_dropped: u64,
    /// Clients that connected with a valid token but are on no roster.
    pub unknown_clients: u64,
    /// Client-ticks that sent no packet: the client's link was congested
    /// and its send share below 1 (the host's per-client adaptation).
    #[serde(default)]
    pub adapt_skipped: u64,
    /// Times a client's send share was cut.
    #[serde(default)]
    pub adapt_decreases: u64,
    /// Received datagrams dropped by the net layer, per reason (non-zero only).
    pub drops: Vec<DropCount>,
}

impl NetworkStats {
    /// All received datagrams dropped.
    pub fn dropped(&self) -> u64 {
        self.drops.iter().map(|d| d.count).sum()
    }
}

/// One second of a host's life (`/v1/timeline`), or of a lab run (every
/// instance's seconds summed, in its summary's timeline).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds since the host started (in a lab summary: since the run did).
    pub t_s: f64,
    /// Mean match-tick time in this second, microseconds.
    pub tick_mean_us: f64,
    /// p99 match-tick time in this second.
    pub tick_p99_us: f64,
    /// Mean per subsystem in this second (telemetry order).
    pub subsystem_mean_us: Vec<f64>,
    /// Server CPU seconds per wall second in this second (summaries written
    /// before this type was shared called it `server_cpu_cores`).
    #[serde(alias = "server_cpu_cores")]
    pub cpu_cores: f64,
    /// Matches hosted.
    #[serde(default)]
    pub matches: usize,
    /// Clients connected.
    pub players: usize,
}

/// `GET /v1/stats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostStats {
    /// Seconds since the host started.
    pub uptime_s: f64,
    /// CPU seconds (user + system) the host process has used.
    pub process_cpu_seconds: f64,
    /// Whether the host is draining (no new matches).
    pub draining: bool,
    /// Worker threads.
    pub workers: usize,
    /// Matches hosted.
    pub matches: usize,
    /// Clients connected.
    pub players_connected: usize,
    /// Frame statistics per mode since start or the last reset.
    pub modes: Vec<ModeStats>,
    /// Traffic since start.
    pub network: NetworkStats,
    /// The last minutes, one point per second.
    pub timeline: Vec<TimelinePoint>,
}
