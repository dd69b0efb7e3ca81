//! The JSON shapes of the admin API (`/v1/matches`, `/v1/stats`), shared by
//! the host that writes them and the tools that read them (demo, lab).

use std::net::SocketAddr;

use hightick_telemetry::{BudgetStat, BudgetTarget, FrameStats};
use serde::{Deserialize, Serialize};

/// `POST /v1/matches` body: the host's fields, and the game's own settings
/// beside them (`map`, `rounds_to_win`... for the arena), which the game
/// reads and checks (an unknown field is refused by name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMatch {
    /// One of the game's modes (`5v5`, `plaza100`... for the arena).
    pub mode: String,
    /// The client ids (from their connect tokens) of the players, in seat order.
    pub roster: Vec<u64>,
    /// The match's id everywhere (its results, its listing): the gateway's
    /// allocation id. 1 to 64 of `A-Z a-z 0-9 . _ -`; default: one the host
    /// mints, unique across hosts and restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
    /// Seed of the match's randomness (default: drawn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Simulation rate in Hz (default: the mode's), 1 to 256. The match's
    /// tick period, phase stagger, late-tick accounting and its tick-counted
    /// rules follow it; its per-tick budgets stay the mode's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_rate_hz: Option<u32>,
    /// The game's settings for this match (every other field of the body).
    #[serde(flatten)]
    pub settings: serde_json::Map<String, serde_json::Value>,
}

impl CreateMatch {
    /// A request for `mode` with `roster` and every option at its default.
    pub fn new(mode: &str, roster: Vec<u64>) -> Self {
        Self {
            mode: mode.to_owned(),
            roster,
            match_id: None,
            seed: None,
            tick_rate_hz: None,
            settings: serde_json::Map::new(),
        }
    }

    /// Sets one of the game's settings (`map`, `rounds_to_win`...).
    pub fn with(mut self, setting: &str, value: impl Into<serde_json::Value>) -> Self {
        self.settings.insert(setting.to_owned(), value.into());
        self
    }
}

/// One hosted match, as `GET /v1/matches` lists it and `POST` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchInfo {
    /// The match id (the gateway's allocation id, or one the host minted).
    pub id: String,
    /// The game (`arena`, `tag`).
    #[serde(default)]
    pub game: String,
    /// The game's mode.
    pub mode: String,
    /// The map or preset it plays on.
    pub map: String,
    /// The address clients connect to (goes in their tokens).
    pub address: SocketAddr,
    /// The worker hosting it.
    pub worker: usize,
    /// Simulation rate.
    pub tick_rate_hz: u32,
    /// Current tick.
    pub tick: u32,
    /// Seats.
    pub players: usize,
    /// Seats whose client is connected now.
    pub connected: usize,
    /// The game's phase (`waiting`, `buy`, `combat`... for the arena).
    pub phase: String,
    /// Round, lap or wave number (0 when the game has none).
    pub round: u32,
    /// Scores per team or per player, as the game counts them.
    pub score: Vec<i64>,
    /// Whether a result is in.
    pub finished: bool,
    /// Input commands stored for simulation, all seats.
    pub inputs_accepted: u64,
    /// Input commands that arrived after their tick was simulated.
    pub inputs_late: u64,
    /// Input commands too far ahead of the match.
    pub inputs_too_early: u64,
    /// Seat-ticks simulated without a fresh input (the last one repeated).
    pub inputs_missing: u64,
    /// How long after its deadline a tick started, on average, microseconds
    /// (waking late, and waiting for the matches ahead of it in its phase
    /// group).
    #[serde(default)]
    pub start_lag_mean_us: f64,
}

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
    /// The statistics of `target` in `stats`, with its budgets and the
    /// budget windows in which it broke its mean or p99 limit.
    pub fn from_stats(stats: &FrameStats, target: BudgetTarget) -> Self {
        let us = |ns: f64| ns / 1000.0;
        let budget = stats.budget().get(target);
        Self {
            name: target.as_str().to_owned(),
            mean_us: us(stats.mean_ns(target)),
            p50_us: us(stats.quantile_ns(target, 0.5) as f64),
            p99_us: us(stats.quantile_ns(target, 0.99) as f64),
            max_us: us(stats.max_ns(target) as f64),
            budget_mean_us: budget.mean_ns.map(|ns| us(ns as f64)),
            budget_p99_us: budget.p99_ns.map(|ns| us(ns as f64)),
            violations: stats.violations(target, BudgetStat::Mean)
                + stats.violations(target, BudgetStat::P99),
        }
    }

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
    /// and its send share below 1 ([`crate::adapt`]).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_games_settings_ride_beside_the_hosts_fields() {
        let request: CreateMatch =
            serde_json::from_str(r#"{"mode":"5v5","roster":[1],"seed":3,"map":"plaza"}"#).unwrap();
        assert_eq!(request.seed, Some(3));
        assert_eq!(
            request.settings.get("map"),
            Some(&serde_json::json!("plaza"))
        );
        let again = CreateMatch::new("5v5", vec![1]).with("map", "plaza");
        let text = serde_json::to_string(&again).unwrap();
        assert_eq!(text, r#"{"mode":"5v5","roster":[1],"map":"plaza"}"#);
    }
}
