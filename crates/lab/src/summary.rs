//! The result of one run (`hightick demo`, one step of a sweep): what was run, on which
//! host, how long ticks took per subsystem, what crossed the network, what the bots saw,
//! and the CPU-normalized games per core. Printed as a table, written as JSON, drawn as HTML.

pub use hightick_host_api::{TargetStats, TimelinePoint};
use serde::{Deserialize, Serialize};

use crate::error::LabError;
use crate::link_row::quality_lines;
pub use crate::link_row::{LinkRow, QualityRow};
use hightick_report::{Align, TextTable};

/// Share of a core left to the operating system when games per core are computed.
pub const GPC_HEADROOM: f64 = 0.9;

/// CPU-normalized games per core: `matches x 0.9 / server CPU cores used`.
///
/// Returns 0 when no CPU use was measured (nothing ran, or the window was empty).
pub fn games_per_core(matches: u32, server_cpu_cores: f64) -> f64 {
    if server_cpu_cores > 0.0 && server_cpu_cores.is_finite() {
        f64::from(matches) * GPC_HEADROOM / server_cpu_cores
    } else {
        0.0
    }
}

/// The result of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// A human title, e.g. `hightick demo`.
    pub title: String,
    /// The game mode, e.g. `5v5`.
    pub mode: String,
    /// Ticks per second of every match.
    pub tick_rate_hz: u32,
    /// Matches run at the same time.
    pub matches: u32,
    /// Players in each match.
    pub players_per_match: u32,
    /// Length of the steady (measured) window, seconds.
    pub duration_s: f64,
    /// Warm-up before the steady window, seconds (not measured).
    pub warmup_s: f64,
    /// The machine the server ran on.
    pub host: HostFacts,
    /// Whole match ticks.
    pub tick: TickRow,
    /// Per-subsystem frame time, in the order the server reports them (the
    /// same rows `GET /v1/stats` shows).
    pub subsystems: Vec<TargetStats>,
    /// What crossed the server's sockets.
    pub network: NetworkRow,
    /// Server process CPU seconds per wall second over the steady window.
    pub server_cpu_cores: f64,
    /// CPU-normalized games per core (see [`games_per_core`]).
    pub gpc: f64,
    /// True when every match's p99 tick time stayed within its budget.
    pub within_budget: bool,
    /// What the bots saw.
    pub bots: BotRow,
    /// Samples over the run, oldest first.
    pub timeline: Vec<TimelinePoint>,
    /// p99 match-tick time of each match, microseconds (what `within_budget` judges).
    #[serde(default)]
    pub match_tick_p99_us: Vec<f64>,
    /// What the bots that played straight to the server saw (`None` in
    /// runs stored before it was measured, or when every bot was behind
    /// the impairment proxy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<QualityRow>,
    /// The bots behind the impairment proxy, when some were (`--link`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkRow>,
    /// A soak's samples, one per interval (empty unless the run was
    /// sampled: [`LoadSpec::sample_every`](crate::LoadSpec::sample_every)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<SoakSample>,
}

/// Facts about the host a run happened on, so runs can be compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    /// Logical CPUs available to the server.
    pub cores: u32,
    /// CPU model name, e.g. from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Operating system and kernel, e.g. `Linux 6.8.0 (Ubuntu 24.04 LTS)`.
    pub os: String,
    /// The git commit the server was built from, when known.
    pub git_commit: Option<String>,
}

/// Whole match-tick timings over the steady window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TickRow {
    /// Match ticks run.
    pub ticks: u64,
    /// Ticks that started after their deadline.
    pub late_ticks: u64,
    /// Mean match-tick time, microseconds.
    pub mean_us: f64,
    /// Median match-tick time, microseconds.
    pub p50_us: f64,
    /// 99th percentile match-tick time, microseconds.
    pub p99_us: f64,
    /// Longest match tick, microseconds.
    pub max_us: f64,
    /// The budget for the p99 match-tick time, microseconds, when one is set.
    pub budget_p99_us: Option<f64>,
}

/// What crossed the server's sockets over the steady window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetworkRow {
    /// Clients connected.
    pub clients: u32,
    /// Datagrams received.
    pub packets_in: u64,
    /// Datagrams sent.
    pub packets_out: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Bytes the server sends to one client per second (downstream).
    pub client_bytes_out_per_s: f64,
    /// Datagrams the server sends to one client per second.
    pub client_packets_out_per_s: f64,
    /// Bytes the server receives from one client per second (upstream).
    pub client_bytes_in_per_s: f64,
    /// Datagrams dropped, by reason.
    pub drops: Vec<DropRow>,
    /// Client-ticks without a packet: the server's adaptation to a
    /// congested link held them back (`hightick_server::adapt`).
    #[serde(default)]
    pub adapt_skipped: u64,
    /// Times a client's send share was cut.
    #[serde(default)]
    pub adapt_decreases: u64,
}

/// Datagrams dropped for one reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DropRow {
    /// Why they were dropped, e.g. `bad_token`.
    pub reason: String,
    /// How many.
    pub count: u64,
}

/// What the match bots saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredBotRow")]
pub struct BotRow {
    /// Bots started.
    pub bots: u32,
    /// Bots that connected.
    pub connected: u32,
    /// Snapshots received, all bots together.
    pub snapshots: u64,
    /// Packets that failed to decode.
    pub decode_errors: u64,
    /// Inconsistencies between what a bot received and what it knew.
    pub desyncs: u64,
    /// Reliable events of each kind the game names (`kill`, `round_end`...
    /// for the arena), over every match: an event a match sends all its
    /// players counts once.
    pub events: Vec<(String, u64)>,
    /// Median gap between snapshots at a bot, milliseconds.
    pub snapshot_interval_p50_ms: f64,
    /// 99th percentile gap between snapshots at a bot, milliseconds.
    pub snapshot_interval_p99_ms: f64,
    /// CPU cores the bots' own threads used over the measured window (0:
    /// not measured, a run from before it was).
    pub cpu_cores: f64,
    /// Bots the server told which entity they steer, at the end (0 for a
    /// game without avatars, or a run from before they were counted).
    pub with_avatar: u32,
}

impl BotRow {
    /// Bots one core carries at the run's rate, from their own CPU time
    /// (`None` when it was not measured).
    pub fn bots_per_core(&self) -> Option<f64> {
        (self.cpu_cores > 0.0).then(|| f64::from(self.bots) / self.cpu_cores)
    }
}

/// A [`BotRow`] as stored, by this build or by one from before games had
/// their own events (the arena's `kills` and `rounds` then had fields).
#[derive(Deserialize)]
struct StoredBotRow {
    bots: u32,
    connected: u32,
    snapshots: u64,
    decode_errors: u64,
    desyncs: u64,
    #[serde(default)]
    events: Vec<(String, u64)>,
    #[serde(default)]
    kills: Option<u64>,
    #[serde(default)]
    rounds: Option<u64>,
    snapshot_interval_p50_ms: f64,
    snapshot_interval_p99_ms: f64,
    #[serde(default)]
    cpu_cores: f64,
    #[serde(default)]
    with_avatar: u32,
}

impl From<StoredBotRow> for BotRow {
    fn from(s: StoredBotRow) -> Self {
        let mut events = s.events;
        let legacy = [("kill", s.kills), ("round_end", s.rounds)];
        for (kind, n) in legacy {
            if let Some(n) = n
                && !events.iter().any(|(k, _)| k == kind)
            {
                events.push((kind.to_owned(), n));
            }
        }
        Self {
            bots: s.bots,
            connected: s.connected,
            snapshots: s.snapshots,
            decode_errors: s.decode_errors,
            desyncs: s.desyncs,
            events,
            snapshot_interval_p50_ms: s.snapshot_interval_p50_ms,
            snapshot_interval_p99_ms: s.snapshot_interval_p99_ms,
            cpu_cores: s.cpu_cores,
            with_avatar: s.with_avatar,
        }
    }
}

impl RunSummary {
    /// The headline `FIGURE <name> <value> <unit>` lines of this run.
    pub fn figures(&self) -> Vec<String> {
        use hightick_telemetry::bench::figure_line;
        let gpc_name = format!("gpc_{}_{}hz", figure_token(&self.mode), self.tick_rate_hz);
        let mut lines = vec![
            figure_line(&gpc_name, self.gpc, "games/core"),
            figure_line("demo_server_cpu_cores", self.server_cpu_cores, "cores"),
            figure_line("demo_tick_p99_us", self.tick.p99_us, "us"),
            figure_line("demo_tick_mean_us", self.tick.mean_us, "us"),
            figure_line(
                "demo_client_bytes_per_s",
                self.network.client_bytes_out_per_s,
                "B/s",
            ),
        ];
        let n = &self.network;
        let ticks = n.adapt_skipped + n.packets_out;
        lines.push(figure_line(
            "demo_adapt_skipped_share",
            n.adapt_skipped as f64 / ticks.max(1) as f64,
            "share",
        ));
        lines.push(figure_line(
            "demo_adapt_decreases",
            n.adapt_decreases as f64,
            "cuts",
        ));
        if let Some(per_core) = self.bots.bots_per_core() {
            lines.push(figure_line(
                "swarm_match_bots_per_core",
                per_core,
                "bots/core",
            ));
        }
        if let Some(link) = &self.link {
            lines.extend(link_figures(link));
        }
        lines
    }

    /// The summary as pretty-printed JSON. Fails, naming the field, when a number is
    /// NaN or infinite (JSON would turn it into `null` and it could not be read back).
    pub fn to_json(&self) -> Result<String, LabError> {
        if let Some((field, value)) = self.first_non_finite() {
            return Err(LabError::NonFinite { field, value });
        }
        serde_json::to_string_pretty(self).map_err(LabError::EncodeJson)
    }

    /// The dotted path and value of the first NaN or infinite number, if any.
    pub fn first_non_finite(&self) -> Option<(String, f64)> {
        let mut found: Option<(String, f64)> = None;
        let mut check = |path: &dyn Fn() -> String, v: Option<f64>| {
            if found.is_none()
                && let Some(v) = v.filter(|v| !v.is_finite())
            {
                found = Some((path(), v));
            }
        };
        let t = &self.tick;
        for (name, v) in [
            ("duration_s", Some(self.duration_s)),
            ("warmup_s", Some(self.warmup_s)),
            ("tick.mean_us", Some(t.mean_us)),
            ("tick.p50_us", Some(t.p50_us)),
            ("tick.p99_us", Some(t.p99_us)),
            ("tick.max_us", Some(t.max_us)),
            ("tick.budget_p99_us", t.budget_p99_us),
            (
                "network.client_bytes_out_per_s",
                Some(self.network.client_bytes_out_per_s),
            ),
            (
                "network.client_packets_out_per_s",
                Some(self.network.client_packets_out_per_s),
            ),
            (
                "network.client_bytes_in_per_s",
                Some(self.network.client_bytes_in_per_s),
            ),
            ("server_cpu_cores", Some(self.server_cpu_cores)),
            ("gpc", Some(self.gpc)),
            (
                "bots.snapshot_interval_p50_ms",
                Some(self.bots.snapshot_interval_p50_ms),
            ),
            (
                "bots.snapshot_interval_p99_ms",
                Some(self.bots.snapshot_interval_p99_ms),
            ),
        ] {
            check(&|| name.to_string(), v);
        }
        for (i, s) in self.subsystems.iter().enumerate() {
            for (name, v) in [
                ("mean_us", Some(s.mean_us)),
                ("p50_us", Some(s.p50_us)),
                ("p99_us", Some(s.p99_us)),
                ("max_us", Some(s.max_us)),
                ("budget_mean_us", s.budget_mean_us),
                ("budget_p99_us", s.budget_p99_us),
            ] {
                check(&|| format!("subsystems[{i}].{name}"), v);
            }
        }
        for (i, v) in self.match_tick_p99_us.iter().enumerate() {
            check(&|| format!("match_tick_p99_us[{i}]"), Some(*v));
        }
        for (i, p) in self.timeline.iter().enumerate() {
            for (name, v) in [
                ("t_s", p.t_s),
                ("tick_mean_us", p.tick_mean_us),
                ("tick_p99_us", p.tick_p99_us),
                ("cpu_cores", p.cpu_cores),
            ] {
                check(&|| format!("timeline[{i}].{name}"), Some(v));
            }
            for (k, v) in p.subsystem_mean_us.iter().enumerate() {
                check(
                    &|| format!("timeline[{i}].subsystem_mean_us[{k}]"),
                    Some(*v),
                );
            }
        }
        found
    }

    /// Reads a summary written by [`RunSummary::to_json`].
    pub fn from_json(text: &str) -> Result<Self, LabError> {
        serde_json::from_str(text).map_err(|e| LabError::decode(&e))
    }

    /// One line saying what was run: mode, rate, matches, players and window.
    pub fn headline(&self) -> String {
        format!(
            "{}: {} at {} Hz, {} matches x {} players, {:.1} s measured after {:.1} s warm-up",
            self.title,
            self.mode,
            self.tick_rate_hz,
            self.matches,
            self.players_per_match,
            self.duration_s,
            self.warmup_s
        )
    }

    /// One line describing the host.
    pub fn host_line(&self) -> String {
        host_line(&self.host)
    }

    /// A human table of the run: per-subsystem frame time against budget (violations
    /// marked with `*`), the match tick, late ticks, per-client traffic, drops, bots,
    /// server CPU and games per core.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.headline());
        out.push('\n');
        out.push_str(&self.host_line());
        out.push_str("\n\n");
        out.push_str(&self.frame_table().render());
        let late_pct = percent(self.tick.late_ticks, self.tick.ticks);
        out.push_str(&format!(
            "late ticks: {} of {} ({late_pct:.2}%)\n",
            self.tick.late_ticks, self.tick.ticks
        ));
        out.push_str("(* = over budget)\n");
        out.push_str(&self.render_violations());
        out.push('\n');
        out.push_str(&self.network_table().render());
        out.push('\n');
        out.push_str(&self.bot_table().render());
        out.push('\n');
        match (&self.link, &self.quality) {
            (Some(link), direct) => {
                out.push_str(&link.table(direct.as_ref()).render());
                out.push_str(&link.proxy_line());
                out.push('\n');
            }
            (None, Some(direct)) => {
                let mut t = TextTable::new(&[("quality", Align::Left), ("value", Align::Right)]);
                for (name, value) in quality_lines(direct) {
                    t.row([name.to_string(), value]);
                }
                out.push_str(&t.render());
                out.push('\n');
            }
            (None, None) => {}
        }
        out.push_str(&format!(
            "server CPU: {:.3} cores   games per core: {:.1}   within budget: {}\n",
            self.server_cpu_cores,
            self.gpc,
            if self.within_budget { "yes" } else { "NO" }
        ));
        out
    }

    fn frame_table(&self) -> TextTable {
        let mut t = TextTable::new(&[
            ("subsystem", Align::Left),
            ("mean us", Align::Right),
            ("p50 us", Align::Right),
            ("p99 us", Align::Right),
            ("max us", Align::Right),
            ("budget mean", Align::Right),
            ("budget p99", Align::Right),
            ("violations", Align::Right),
        ]);
        for s in &self.subsystems {
            t.row([
                s.name.clone(),
                marked(s.mean_us, s.mean_over_budget()),
                us(s.p50_us),
                marked(s.p99_us, s.p99_over_budget()),
                us(s.max_us),
                budget(s.budget_mean_us),
                budget(s.budget_p99_us),
                marked_count(s.violations),
            ]);
        }
        let tick_over = self
            .tick
            .budget_p99_us
            .is_some_and(|b| self.tick.p99_us > b);
        t.row([
            "tick (match)".to_string(),
            us(self.tick.mean_us),
            us(self.tick.p50_us),
            marked(self.tick.p99_us, tick_over),
            us(self.tick.max_us),
            "-".to_string(),
            budget(self.tick.budget_p99_us),
            String::new(),
        ]);
        t
    }

    fn network_table(&self) -> TextTable {
        let n = &self.network;
        let mut t = TextTable::new(&[("network", Align::Left), ("value", Align::Right)]);
        t.row(["clients".to_string(), n.clients.to_string()]);
        t.row([
            "bytes/s to each client".to_string(),
            format!("{:.0}", n.client_bytes_out_per_s),
        ]);
        t.row([
            "packets/s to each client".to_string(),
            format!("{:.1}", n.client_packets_out_per_s),
        ]);
        t.row([
            "bytes/s from each client".to_string(),
            format!("{:.0}", n.client_bytes_in_per_s),
        ]);
        t.row([
            "packets in / out".to_string(),
            format!("{} / {}", n.packets_in, n.packets_out),
        ]);
        t.row([
            "bytes in / out".to_string(),
            format!("{} / {}", n.bytes_in, n.bytes_out),
        ]);
        if n.drops.is_empty() {
            t.row(["drops".to_string(), "none".to_string()]);
        }
        for d in &n.drops {
            t.row([format!("drops: {}", d.reason), d.count.to_string()]);
        }
        t
    }

    fn bot_table(&self) -> TextTable {
        let b = &self.bots;
        let mut t = TextTable::new(&[("bots", Align::Left), ("value", Align::Right)]);
        t.row([
            "connected".to_string(),
            format!("{} of {}", b.connected, b.bots),
        ]);
        t.row(["snapshots".to_string(), b.snapshots.to_string()]);
        t.row(["decode errors".to_string(), marked_count(b.decode_errors)]);
        t.row(["desyncs".to_string(), marked_count(b.desyncs)]);
        for (kind, n) in &b.events {
            t.row([format!("events: {kind}"), n.to_string()]);
        }
        t.row([
            "snapshot interval p50 / p99 ms".to_string(),
            format!(
                "{:.2} / {:.2}",
                b.snapshot_interval_p50_ms, b.snapshot_interval_p99_ms
            ),
        ]);
        t
    }
}

/// The `FIGURE` lines of the bots behind a link, named after it
/// (`link_mobile_snapshot_age_p99_ticks`...), and of the proxy's cost.
fn link_figures(link: &LinkRow) -> Vec<String> {
    use hightick_telemetry::bench::figure_line;
    let name = |what: &str| format!("link_{}_{what}", figure_token(&link.link));
    let q = &link.behind;
    vec![
        figure_line(
            &name("snapshot_age_p50_ticks"),
            q.snapshot_age_p50_ticks,
            "ticks",
        ),
        figure_line(
            &name("snapshot_age_p99_ticks"),
            q.snapshot_age_p99_ticks,
            "ticks",
        ),
        figure_line(
            &name("position_error_p99_mm"),
            q.position_error_p99_mm,
            "mm",
        ),
        figure_line(&name("desyncs"), q.desyncs as f64, "desyncs"),
        figure_line(
            &name("client_events_dropped"),
            q.client_events_dropped as f64,
            "events",
        ),
        figure_line(
            &name("client_bytes_in_per_s"),
            q.client_bytes_in_per_s,
            "B/s",
        ),
        figure_line("netem_proxy_cpu_cores", link.proxy_cpu_cores, "cores"),
        figure_line(
            "netem_demo_ns_per_datagram",
            link.proxy.ns_per_datagram,
            "ns",
        ),
    ]
}

/// One line describing a host: cores, CPU, OS and the commit built.
pub(crate) fn host_line(host: &HostFacts) -> String {
    let commit = host.git_commit.as_deref().unwrap_or("unknown commit");
    format!(
        "host: {} cores, {}, {}, {}",
        host.cores, host.cpu_model, host.os, commit
    )
}

/// Lower-case letters, digits and `_` only, so a mode name fits in a figure name.
pub(crate) fn figure_token(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn us(v: f64) -> String {
    format!("{v:.1}")
}

fn marked(v: f64, over: bool) -> String {
    if over {
        format!("{v:.1}*")
    } else {
        format!("{v:.1} ")
    }
}

fn marked_count(n: u64) -> String {
    if n > 0 {
        format!("{n}*")
    } else {
        format!("{n} ")
    }
}

fn budget(b: Option<f64>) -> String {
    b.map_or_else(|| "-".to_string(), us)
}

/// One interval of a soak, all server instances together.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SoakSample {
    /// Seconds since the measured window opened, at the interval's end.
    pub t_s: f64,
    /// Resident memory of the servers, bytes.
    pub rss_bytes: u64,
    /// Their open file descriptors.
    pub open_files: u64,
    /// Their threads.
    pub threads: u64,
    /// Match ticks run in the interval.
    pub ticks: u64,
    /// Server CPU per match tick over the interval, microseconds.
    pub cpu_per_tick_us: f64,
    /// Mean match-tick time over the interval, microseconds.
    pub tick_mean_us: f64,
    /// Ticks that started more than a period late, in the interval.
    pub late_starts: u64,
    /// Ticks whose work overran the period, in the interval.
    pub overruns: u64,
    /// Players connected at the interval's end.
    pub players: usize,
    /// Matches hosted at the interval's end (0 in runs recorded before it
    /// was sampled).
    #[serde(default)]
    pub matches: usize,
    /// Matches started in the interval in place of ended ones (a soak with
    /// churn; 0 without).
    #[serde(default)]
    pub matches_started: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunSummary {
        RunSummary {
            title: "hightick demo".into(),
            mode: "5v5".into(),
            tick_rate_hz: 128,
            matches: 8,
            players_per_match: 10,
            duration_s: 30.0,
            warmup_s: 5.0,
            tick: TickRow {
                ticks: 30_720,
                late_ticks: 3,
                mean_us: 21.5,
                p50_us: 20.0,
                p99_us: 48.25,
                max_us: 130.0,
                budget_p99_us: Some(200.0),
            },
            subsystems: vec![
                TargetStats {
                    name: "replication".into(),
                    mean_us: 9.0,
                    p50_us: 8.0,
                    p99_us: 31.0,
                    max_us: 60.0,
                    budget_mean_us: Some(10.0),
                    budget_p99_us: Some(30.0),
                    violations: 4,
                },
                TargetStats {
                    name: "movement".into(),
                    mean_us: 2.0,
                    p50_us: 2.0,
                    p99_us: 3.0,
                    max_us: 5.0,
                    ..Default::default()
                },
            ],
            network: NetworkRow {
                clients: 80,
                client_bytes_out_per_s: 12_345.6,
                drops: vec![DropRow {
                    reason: "bad_token".into(),
                    count: 7,
                }],
                ..Default::default()
            },
            server_cpu_cores: 0.06,
            gpc: games_per_core(8, 0.06),
            within_budget: true,
            ..Default::default()
        }
    }

    #[test]
    fn games_per_core_keeps_headroom_and_survives_zero_cpu() {
        assert!((games_per_core(8, 0.06) - 120.0).abs() < 1e-9);
        assert_eq!(games_per_core(8, 0.0), 0.0);
        assert_eq!(games_per_core(8, f64::NAN), 0.0);
    }

    #[test]
    fn figures_name_mode_and_rate() {
        let f = run().figures();
        assert_eq!(f[0], "FIGURE gpc_5v5_128hz 120.0 games/core");
        assert_eq!(f[1], "FIGURE demo_server_cpu_cores 0.060 cores");
        assert_eq!(f[2], "FIGURE demo_tick_p99_us 48.250 us");
        assert_eq!(f[3], "FIGURE demo_tick_mean_us 21.500 us");
        assert_eq!(f[4], "FIGURE demo_client_bytes_per_s 12345.6 B/s");
        let mut plaza = run();
        plaza.mode = "Plaza 100".into();
        plaza.tick_rate_hz = 64;
        assert!(plaza.figures()[0].starts_with("FIGURE gpc_plaza_100_64hz "));
    }

    #[test]
    fn a_link_shows_both_groups_and_its_figures_and_round_trips() {
        let mut r = run();
        let behind = QualityRow {
            bots: 5,
            connected: 5,
            snapshot_age_p50_ticks: 11.25,
            snapshot_age_p99_ticks: 130.5,
            position_error_p99_mm: 55.0,
            ..QualityRow::default()
        };
        r.quality = Some(QualityRow {
            snapshot_age_p50_ticks: 1.5,
            ..behind.clone()
        });
        r.link = Some(LinkRow {
            link: "bad".into(),
            share: 0.5,
            seed: 3,
            behind,
            proxy_cpu_cores: 0.02,
            ..LinkRow::default()
        });
        let text = r.render_table();
        assert!(text.contains("behind bad"), "{text}");
        assert!(text.contains("11.2 / 130.5"), "{text}");
        assert!(text.contains("1.5 / 130.5"), "{text}");
        assert!(
            text.contains("netem proxy (bad link, seed 3, share 0.50)"),
            "{text}"
        );
        let f = r.figures();
        assert!(f.contains(&"FIGURE link_bad_snapshot_age_p99_ticks 130.5 ticks".to_owned()));
        assert!(f.contains(&"FIGURE netem_proxy_cpu_cores 0.020 cores".to_owned()));
        assert_eq!(RunSummary::from_json(&r.to_json().unwrap()).unwrap(), r);
        // Without a link, no link figures.
        assert!(!run().figures().iter().any(|f| f.contains("link_")));
    }

    #[test]
    fn table_marks_violations_and_lists_everything() {
        let text = run().render_table();
        assert!(text.contains("9.0"), "{text}");
        assert!(text.contains("31.0*"), "p99 over budget is marked:\n{text}");
        assert!(
            !text.contains("9.0*"),
            "mean within budget is not marked:\n{text}"
        );
        assert!(text.contains("4*"));
        assert!(text.contains("movement"));
        assert!(text.contains("tick (match)"));
        assert!(text.contains("late ticks: 3 of 30720 (0.01%)"));
        assert!(text.contains("drops: bad_token"));
        assert!(text.contains("12346"));
        assert!(text.contains("games per core: 120.0"));
        // Every subsystem line has the same width as the header: columns are aligned.
        let lines: Vec<&str> = text.lines().collect();
        let header = lines
            .iter()
            .position(|l| l.starts_with("subsystem"))
            .unwrap();
        let rule_width = lines[header + 1].len();
        assert!(lines[header].len() <= rule_width);
    }

    #[test]
    fn json_round_trips_and_rejects_garbage() {
        let r = run();
        let text = r.to_json().unwrap();
        assert_eq!(RunSummary::from_json(&text).unwrap(), r);
        let mut bad = run();
        bad.subsystems[1].p99_us = f64::NAN;
        match bad.to_json().unwrap_err() {
            LabError::NonFinite { field, .. } => assert_eq!(field, "subsystems[1].p99_us"),
            other => panic!("{other}"),
        }
        bad.subsystems[1].p99_us = 1.0;
        bad.gpc = f64::INFINITY;
        assert_eq!(
            bad.first_non_finite(),
            Some(("gpc".to_string(), f64::INFINITY))
        );
        let err = RunSummary::from_json("{\"title\": 3}").unwrap_err();
        assert!(matches!(err, LabError::DecodeJson { line: 1, .. }), "{err}");
    }
}
