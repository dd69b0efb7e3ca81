//! One load run, the unit every lab command is made of (`hightick demo` is one, each
//! step of `hightick lab sweep` is one): server instances as child processes with
//! `N` matches of a mode, a fleet of match bots in this process playing every seat,
//! a warm-up, a steady measured window, and a [`RunSummary`] judged against the
//! budgets.
//!
//! The caller names the `hightick` binary the servers run from (the CLI passes
//! `std::env::current_exe()`), so the lab never guesses paths.
//!
//! The bots' threads run at nice [`BOTS_NICE`]: they stand in for players on
//! other machines, so when they share the cores with the servers a server's
//! tick wakes ahead of them instead of waiting for a bot's time slice to end.
//! Every byte they send and receive still crosses the real sockets, and the
//! servers' CPU is measured as before.
//!
//! With [`LoadSpec::churn`] a match that ends is replaced by a new one with
//! bots of its own ([`churn`]), so the matches hosted stay at the spec's count.

mod admin;
mod bot_threads;
mod churn;
mod create;
mod fleets;
mod link;
mod placement;
mod server_process;
mod tokens;
mod window;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hightick_client::GameClientConfig;
use hightick_engine::mode::{self, HostedGame, Mode};
use hightick_engine::{BotGame, MatchConfig};
use hightick_host_api::TICK_RATES_HZ;
use hightick_net::Key;
use hightick_swarm::{BotTarget, FleetConfig, FleetReport, MatchBotConfig};
use serde::{Deserialize, Serialize};

use crate::budget_book::BudgetBook;
use crate::error::LabError;
use crate::soak::{Hosted, SoakCounters};
use crate::summary::SoakSample;
use crate::summary::{BotRow, HostFacts, LinkRow, QualityRow, RunSummary};
use admin::AdminClient;
use bot_threads::BotThreads;
use churn::Churn;
use create::create_matches;
use fleets::BotFleets;
use server_process::{Launch, ServerProcess};
use window::{InstanceWindow, RunShape};

pub use link::LinkSpec;
pub use placement::instance_cpu_sets;

/// Nice value of the bots' threads (see the module docs).
pub const BOTS_NICE: i32 = 10;
/// Most server instances one run starts.
pub const MAX_INSTANCES: usize = 64;
/// Longest a server instance may take to start answering.
const STARTUP_PATIENCE: Duration = Duration::from_secs(15);
/// Longest a server instance may take to drain and exit.
const STOP_PATIENCE: Duration = Duration::from_secs(10);

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSpec {
    /// The `hightick` binary the server instances run (`hightick serve`).
    pub server_exe: PathBuf,
    /// A human title for the summary.
    pub title: String,
    /// One of the game's modes (`5v5`, `plaza100`... for the arena).
    pub mode: String,
    /// The matches' tick rate, sent as `tick_rate_hz` with each match
    /// (`None`: the mode's). Budgets stay the mode's.
    #[serde(default)]
    pub tick_rate_hz: Option<u32>,
    /// Matches at once, spread round-robin over the instances.
    pub matches: u32,
    /// Warm-up before measuring (connects, first rounds), not measured.
    pub warmup: Duration,
    /// The measured window.
    pub duration: Duration,
    /// Worker threads per instance (0: one per CPU the instance may use).
    pub workers: usize,
    /// Server processes.
    pub instances: usize,
    /// Bind instance `i` to its CPU set (NUMA node `i mod nodes`, see
    /// [`instance_cpu_sets`]).
    pub bind: bool,
    /// Put some or all bots behind the impairment proxy (`None`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkSpec>,
    /// The matches' settings, the game's (JSON; `null`: the mode's own),
    /// sent with every create-match and given to the bots.
    #[serde(default)]
    pub settings: serde_json::Value,
    /// Sample the servers every interval of the measured window for a soak
    /// (memory, files, threads, CPU per tick, late ticks: [`SoakSample`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_every: Option<Duration>,
    /// The servers' per-client adaptation to congested links (`hightick
    /// serve --adapt on|off`; `None`: their config's, on by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapt: Option<bool>,
    /// Replace each match that ends with a new one (its bots straight to
    /// the server, none behind a [`link`](Self::link)), so the matches
    /// hosted stay at [`matches`](Self::matches) for the whole run.
    #[serde(default)]
    pub churn: bool,
}

impl LoadSpec {
    /// A spec for `matches` matches of `mode` with one unbound instance, one worker
    /// per CPU, 5 s of warm-up and 20 s measured.
    pub fn new(server_exe: impl Into<PathBuf>, mode: &str, matches: u32) -> Self {
        LoadSpec {
            server_exe: server_exe.into(),
            title: format!("hightick {mode} x {matches}"),
            mode: mode.to_string(),
            tick_rate_hz: None,
            matches,
            warmup: Duration::from_secs(5),
            duration: Duration::from_secs(20),
            workers: 0,
            instances: 1,
            bind: false,
            link: None,
            settings: serde_json::Value::Null,
            sample_every: None,
            adapt: None,
            churn: false,
        }
    }

    /// The spec's mode of game `G` at the spec's rate, or an error listing
    /// the known modes or naming the rates there are.
    pub fn mode<G: HostedGame>(&self) -> Result<ModeRun, LabError> {
        let mode = G::mode(&self.mode).ok_or_else(|| {
            LabError::config(
                "mode",
                format!(
                    "unknown `{}` of {} (known: {})",
                    self.mode,
                    G::NAME,
                    mode::names(G::MODES)
                ),
            )
        })?;
        let rate = self.tick_rate_hz.unwrap_or(mode.tick_rate_hz);
        if !TICK_RATES_HZ.contains(&rate) {
            return Err(LabError::config(
                "tick_rate_hz",
                format!(
                    "{rate} Hz: must be {} to {}",
                    TICK_RATES_HZ.start(),
                    TICK_RATES_HZ.end()
                ),
            ));
        }
        // The engine's sizing of one match (entities, input window), as the
        // servers will make it.
        let (config, _) = G::create(mode, &G::Settings::default(), rate, 1)
            .map_err(|e| LabError::config("mode", e))?;
        Ok(ModeRun { mode, config })
    }

    /// Checks the spec for game `G` without starting anything.
    pub fn validate<G: HostedGame>(&self) -> Result<ModeRun, LabError> {
        let run = self.mode::<G>()?;
        if self.matches == 0 || self.matches > 4096 {
            return Err(LabError::config("matches", "must be 1 to 4096"));
        }
        if self.duration < Duration::from_secs(1) {
            return Err(LabError::config("duration", "at least 1s"));
        }
        if self.instances == 0 || self.instances > MAX_INSTANCES {
            return Err(LabError::config(
                "instances",
                format!("must be 1 to {MAX_INSTANCES}"),
            ));
        }
        if let Some(link) = &self.link {
            link.profile()?;
            if self.churn {
                return Err(LabError::config(
                    "churn",
                    "replaced matches' bots play straight to the server: churn without a link",
                ));
            }
        }
        hightick_swarm::mode_and_settings::<G>(Some(run.mode.name), &self.settings)?;
        Ok(run)
    }
}

/// A spec's mode as it runs: the game's mode entry and the engine's sizing
/// of one match at the run's rate.
#[derive(Debug, Clone)]
pub struct ModeRun {
    /// The mode.
    pub mode: &'static Mode,
    /// One match's sizing and rate.
    pub config: MatchConfig,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Bots connecting, first rounds; not measured.
    WarmingUp,
    /// The measured window.
    Measuring,
}

/// A progress sample, about once a second.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Where the run is.
    pub phase: Phase,
    /// Since the bots started.
    pub elapsed: Duration,
    /// Warm-up plus measured window.
    pub total: Duration,
    /// Bots connected now.
    pub connected: u64,
    /// Bots in the fleet.
    pub bots: usize,
    /// Server CPU cores used in the last second, all instances.
    pub server_cpu_cores: f64,
    /// p99 match-tick time in the last second, worst instance, microseconds.
    pub tick_p99_us: f64,
    /// Reliable events each player received so far (kills, round ends...
    /// for the arena), summed over kinds.
    pub events: u64,
    /// The soak sample taken this second, if one was (`sample_every`): a
    /// caller that keeps each as it comes loses none if the run dies.
    pub sample: Option<SoakSample>,
}

/// The commit and host facts of this build and machine: `git rev-parse HEAD` in the
/// working directory, else in the source tree the lab was built from.
pub fn this_host() -> HostFacts {
    HostFacts::detect(Path::new("/"), crate::host_facts::git_commit())
}

/// The CPU set of each instance of `spec` (empty when the instances are not bound).
pub fn cpu_sets_for(spec: &LoadSpec) -> Vec<Vec<u32>> {
    if spec.bind {
        let nodes = placement::numa_nodes(Path::new("/"));
        instance_cpu_sets(spec.instances, &nodes, &placement::allowed_cpus())
    } else {
        Vec::new()
    }
}

/// CPUs the servers of `spec` may use: their CPU sets together when bound, else every
/// CPU this process may use.
pub fn cores_for(spec: &LoadSpec) -> u32 {
    let mut cpus: Vec<u32> = if spec.bind {
        cpu_sets_for(spec).concat()
    } else {
        placement::allowed_cpus()
    };
    cpus.sort_unstable();
    cpus.dedup();
    u32::try_from(cpus.len()).unwrap_or(u32::MAX).max(1)
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, LabError> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hightick-lab-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(LabError::io(format!("creating {}", dir.display())))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The bots' settings for a mode: its entity count and rate (the game makes
/// each bot for the mode at that rate).
fn fleet_config(run: &ModeRun, length: Duration, settings: &serde_json::Value) -> FleetConfig {
    let rate = run.config.tick_rate_hz;
    let defaults = MatchBotConfig::default();
    // Inputs about 47 ms ahead of the server (6 ticks at 128 Hz), inside its window.
    let max_lead = u32::from(run.config.input_window_ticks.max(3)) - 1;
    let lead = (6 * rate).div_ceil(128).clamp(2, max_lead);
    FleetConfig {
        duration: length,
        tick_rate_hz: rate,
        relays: Vec::new(),
        bot: MatchBotConfig {
            mode: Some(run.mode.name.to_owned()),
            settings: settings.clone(),
            input_lead_ticks: lead,
            max_input_lead_ticks: max_lead,
            client: GameClientConfig {
                entities: usize::from(run.config.max_entities),
                tick_rate_hz: rate,
                ..defaults.client.clone()
            },
            ..defaults
        },
    }
}

fn bot_row(report: &FleetReport, players: u32, cpu_cores: f64) -> BotRow {
    let c = &report.counters;
    let per_match = u64::from(players.max(1));
    BotRow {
        bots: u32::try_from(report.bots).unwrap_or(u32::MAX),
        connected: u32::try_from(c.connected).unwrap_or(u32::MAX),
        snapshots: c.snapshots,
        decode_errors: c.decode_errors,
        desyncs: c.desyncs,
        // Each event a match broadcasts reaches every player of it.
        events: report
            .event_kinds
            .iter()
            .zip(c.events)
            .filter(|(_, n)| *n > 0)
            .map(|(kind, n)| ((*kind).to_owned(), n / per_match))
            .collect(),
        snapshot_interval_p50_ms: report.interarrival_p50_us() as f64 / 1000.0,
        snapshot_interval_p99_ms: report.interarrival_p99_us() as f64 / 1000.0,
        cpu_cores,
        with_avatar: u32::try_from(c.with_avatar).unwrap_or(u32::MAX),
    }
}

/// Runs one load run of game `G` to its summary, judged against `budgets`
/// (also handed to the servers, which must serve `G`). `progress` is called
/// about once a second.
pub fn run_load<G: BotGame>(
    spec: &LoadSpec,
    budgets: &BudgetBook,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunSummary, LabError> {
    let run = spec.validate::<G>()?;
    let scratch = Scratch::new()?;
    let key = Key::generate(&mut rand::rng());
    let key_file = scratch.0.join("key.hex");
    tokens::write_secret(&key_file, &key.to_hex())?;

    let (servers, admins) = start_servers(spec, budgets, &scratch, &key_file)?;
    let players = u32::from(run.mode.players);
    let created = create_matches(spec, &admins, &key, players)?;
    let targets: Vec<BotTarget> = created.iter().flat_map(|c| c.targets.clone()).collect();

    let bot_threads = BotThreads::default();
    let runtime = bots_runtime(&bot_threads)?;
    let _guard = runtime.enter();
    let total = spec.warmup + spec.duration;
    let bots_for = total + Duration::from_secs(30);
    let config = fleet_config(&run, bots_for, &spec.settings);
    let mut fleet = BotFleets::launch::<G>(&targets, &config, spec.link.as_ref())?;
    let mut churn = spec.churn.then(|| {
        let until = Instant::now() + bots_for;
        Churn::new(&created, admins.len(), &key, players, config.clone(), until)
    });

    let mut run_start_uptime = Vec::with_capacity(admins.len());
    for admin in &admins {
        run_start_uptime.push(admin.stats()?.uptime_s);
    }
    let mut samples = Vec::new();
    let window_start = measure::<G>(
        spec,
        &servers,
        &admins,
        (&mut fleet, &bot_threads, churn.as_mut()),
        players,
        &mut samples,
        progress,
    )?;
    let end = instance_stats(&admins)?;
    let cpu_end: Vec<f64> = servers.iter().map(ServerProcess::cpu_seconds).collect();
    let proxy_cpu_end = fleet.proxy_cpu_s();
    let bots_cpu_end = bot_threads.cpu_seconds();
    let end_at = Instant::now();
    fleet.stop();
    let report = runtime.block_on(fleet.finish())?;
    for server in servers {
        server.stop(STOP_PATIENCE)?;
    }

    let Some(opening) = window_start else {
        return Err(LabError::config(
            "duration",
            "the run ended before the measured window began",
        ));
    };
    let wall_s = end_at.duration_since(opening.at).as_secs_f64();
    let proxy_cpu_cores = (proxy_cpu_end - opening.proxy_cpu_s).max(0.0) / wall_s.max(1e-9);
    let bots_cpu_cores = (bots_cpu_end - opening.bots_cpu_s).max(0.0) / wall_s.max(1e-9);
    let windows = close_windows(opening, end, cpu_end, run_start_uptime);
    let mut summary = window::build(
        &run_shape(spec, &run, players),
        &windows,
        wall_s,
        bot_row(&report.all, players, bots_cpu_cores),
        this_host(),
    );
    let rate = run.config.tick_rate_hz;
    summary.quality = report
        .direct
        .as_ref()
        .map(|r| QualityRow::from_fleet(r, rate, 0.0));
    summary.link = match (&spec.link, report.behind) {
        (Some(link), Some((behind, proxy))) => Some(LinkRow {
            link: proxy.emulator.link.clone(),
            share: link.share,
            seed: link.seed,
            behind: QualityRow::from_fleet(&behind, rate, proxy.emulator.down.delay_min_us),
            proxy_cpu_cores,
            proxy,
        }),
        _ => None,
    };
    summary.samples = samples;
    budgets.apply(&mut summary);
    Ok(summary)
}

/// The instances' stats and CPU time when the measured window opened.
struct WindowOpening {
    stats: Vec<hightick_host_api::HostStats>,
    cpu: Vec<f64>,
    /// The impairment proxy's CPU seconds (0 without one).
    proxy_cpu_s: f64,
    /// The bots' threads' CPU seconds.
    bots_cpu_s: f64,
    at: Instant,
}

/// Starts the server instances (each on its CPU set when bound) and waits until
/// every one answers, returning them with their admin clients.
fn start_servers(
    spec: &LoadSpec,
    budgets: &BudgetBook,
    scratch: &Scratch,
    key_file: &Path,
) -> Result<(Vec<ServerProcess>, Vec<AdminClient>), LabError> {
    let cpu_sets = cpu_sets_for(spec);
    let mut servers = Vec::with_capacity(spec.instances);
    for i in 0..spec.instances {
        let launch = Launch {
            exe: &spec.server_exe,
            workers: spec.workers,
            key_file,
            budgets: budgets.path(),
            cpus: cpu_sets.get(i).map(Vec::as_slice),
            log: scratch.0.join(format!("server-{i}.log")),
            adapt: spec.adapt,
        };
        servers.push(ServerProcess::start(&launch)?);
    }
    let admins: Vec<AdminClient> = servers.iter().map(|s| AdminClient::new(s.admin)).collect();
    for admin in &admins {
        admin.wait_healthy(STARTUP_PATIENCE)?;
    }
    Ok((servers, admins))
}

/// The bots' runtime: two worker threads at nice [`BOTS_NICE`], each
/// registered in `threads` so their CPU time can be read.
fn bots_runtime(threads: &BotThreads) -> Result<tokio::runtime::Runtime, LabError> {
    let threads = threads.clone();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("hightick-bots")
        .on_thread_start(move || {
            hightick_process::set_nice(BOTS_NICE);
            threads.register();
        })
        .enable_all()
        .build()
        .map_err(LabError::io("starting the bots' runtime"))
}

/// Runs the warm-up and the measured window, opening the window once the warm-up
/// is over, replacing ended matches when there is `churn` and calling `progress`
/// about once a second; returns the opening, if the window began.
fn measure<G: BotGame>(
    spec: &LoadSpec,
    servers: &[ServerProcess],
    admins: &[AdminClient],
    (fleet, bot_threads, mut churn): (&mut BotFleets, &BotThreads, Option<&mut Churn>),
    players: u32,
    samples: &mut Vec<SoakSample>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Option<WindowOpening>, LabError> {
    let total = spec.warmup + spec.duration;
    let start = Instant::now();
    let mut window_start: Option<WindowOpening> = None;
    let mut sampled = SoakCounters::default();
    while start.elapsed() < total {
        // Once a second, as the servers sample their timelines; reading one
        // asks their workers nothing.
        std::thread::sleep(Duration::from_secs(1));
        let mut fresh = None;
        if let Some(churn) = churn.as_deref_mut() {
            churn.replace_ended::<G>(spec, admins, fleet)?;
        }
        let started = churn.as_deref().map_or(0, Churn::started);
        if window_start.is_none() && start.elapsed() >= spec.warmup {
            let opening = open_window(servers, admins, fleet.proxy_cpu_s(), bot_threads)?;
            sampled.cpu_s = opening.cpu.iter().sum();
            sampled.matches_started = started;
            window_start = Some(opening);
        }
        if let (Some(every), Some(opening)) = (spec.sample_every, &window_start) {
            let since = opening.at.elapsed();
            if since >= every * (samples.len() as u32 + 1) {
                let (sample, counters) =
                    soak_sample(servers, admins, (since, every), started, &sampled)?;
                samples.push(sample);
                fresh = Some(sample);
                sampled = counters;
            }
        }
        let (cpu, p99) = last_second(admins)?;
        let live = fleet.live();
        progress(&Progress {
            phase: if window_start.is_some() {
                Phase::Measuring
            } else {
                Phase::WarmingUp
            },
            elapsed: start.elapsed(),
            total,
            connected: live.connected,
            bots: fleet.bots(),
            server_cpu_cores: cpu,
            tick_p99_us: p99,
            events: live.total_events() / u64::from(players.max(1)),
            sample: fresh,
        });
    }
    Ok(window_start)
}

/// A soak sample of every instance at `since` the window opened, over the
/// interval (`every`) since `before`, with `matches_started` in place of
/// ended ones so far; returns it with the counters now.
fn soak_sample(
    servers: &[ServerProcess],
    admins: &[AdminClient],
    (since, every): (Duration, Duration),
    matches_started: u64,
    before: &SoakCounters,
) -> Result<(SoakSample, SoakCounters), LabError> {
    let mut now = SoakCounters {
        matches_started,
        ..SoakCounters::default()
    };
    let mut facts = hightick_process::ProcessFacts::default();
    let (mut tick_sum, mut tick_points) = (0.0, 0usize);
    let mut hosted = Hosted::default();
    for (server, admin) in servers.iter().zip(admins) {
        let stats = admin.stats()?;
        for mode in &stats.modes {
            now.ticks += mode.ticks;
            now.late_starts += mode.late_starts;
            now.overruns += mode.overruns;
        }
        hosted.players += stats.players_connected;
        hosted.matches += stats.matches;
        let recent = stats.uptime_s - every.as_secs_f64();
        for point in stats.timeline.iter().filter(|p| p.t_s > recent) {
            tick_sum += point.tick_mean_us;
            tick_points += 1;
        }
        now.cpu_s += server.cpu_seconds();
        let f = hightick_process::process_facts(&server.pid().to_string()).unwrap_or_default();
        facts.rss_bytes += f.rss_bytes;
        facts.open_files += f.open_files;
        facts.threads += f.threads;
    }
    let tick_mean_us = tick_sum / tick_points.max(1) as f64;
    let sample = SoakSample::between(
        since.as_secs_f64(),
        before,
        &now,
        facts,
        tick_mean_us,
        hosted,
    );
    Ok((sample, now))
}

/// Opens the measured window: resets every instance's stats, then reads them and
/// the servers' CPU time.
fn open_window(
    servers: &[ServerProcess],
    admins: &[AdminClient],
    proxy_cpu_s: f64,
    bot_threads: &BotThreads,
) -> Result<WindowOpening, LabError> {
    for admin in admins {
        admin.reset_stats()?;
    }
    let stats = instance_stats(admins)?;
    let cpu = servers.iter().map(ServerProcess::cpu_seconds).collect();
    Ok(WindowOpening {
        stats,
        cpu,
        proxy_cpu_s,
        bots_cpu_s: bot_threads.cpu_seconds(),
        at: Instant::now(),
    })
}

/// The servers' CPU cores used in the last second (all instances) and their
/// worst p99 tick time, from each instance's latest timeline point.
fn last_second(admins: &[AdminClient]) -> Result<(f64, f64), LabError> {
    let mut cpu = 0.0;
    let mut p99: f64 = 0.0;
    for admin in admins {
        if let Some(point) = admin.timeline()?.last() {
            cpu += point.cpu_cores;
            p99 = p99.max(point.tick_p99_us);
        }
    }
    Ok((cpu, p99))
}

/// Every instance's stats now, in instance order.
fn instance_stats(admins: &[AdminClient]) -> Result<Vec<hightick_host_api::HostStats>, LabError> {
    let mut stats = Vec::with_capacity(admins.len());
    for admin in admins {
        stats.push(admin.stats()?);
    }
    Ok(stats)
}

/// Pairs each instance's window opening with its end and its uptime at the run's
/// start.
fn close_windows(
    opening: WindowOpening,
    end: Vec<hightick_host_api::HostStats>,
    cpu_end: Vec<f64>,
    run_start_uptime: Vec<f64>,
) -> Vec<InstanceWindow> {
    opening
        .stats
        .into_iter()
        .zip(end)
        .zip(opening.cpu.into_iter().zip(cpu_end))
        .zip(run_start_uptime)
        .map(
            |(((start, end), (cpu_start_s, cpu_end_s)), run_start_uptime_s)| InstanceWindow {
                start,
                end,
                cpu_start_s,
                cpu_end_s,
                run_start_uptime_s,
            },
        )
        .collect()
}

/// What the run was, for the summary.
fn run_shape(spec: &LoadSpec, run: &ModeRun, players: u32) -> RunShape {
    RunShape {
        title: spec.title.clone(),
        mode: spec.mode.clone(),
        tick_rate_hz: run.config.tick_rate_hz,
        matches: spec.matches,
        players_per_match: players,
        warmup_s: spec.warmup.as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_arena::game::Arena;

    #[test]
    fn bots_follow_their_mode() {
        let spec = LoadSpec::new("/bin/false", "5v5", 1);
        let five = fleet_config(
            &spec.mode::<Arena>().unwrap(),
            Duration::from_secs(1),
            &serde_json::Value::Null,
        );
        assert_eq!(five.tick_rate_hz, 128);
        assert_eq!(five.bot.input_lead_ticks, 6);
        assert_eq!(five.bot.mode.as_deref(), Some("5v5"));
        let spec = LoadSpec::new("/bin/false", "plaza100_30hz", 1);
        let plaza = fleet_config(
            &spec.mode::<Arena>().unwrap(),
            Duration::from_secs(1),
            &serde_json::Value::Null,
        );
        assert_eq!(plaza.tick_rate_hz, 30);
        assert_eq!(plaza.bot.client.tick_rate_hz, 30);
        assert_eq!(plaza.bot.client.entities, 256);
        assert_eq!(plaza.bot.input_lead_ticks, 2);
    }

    #[test]
    fn specs_are_checked_before_anything_starts() {
        let spec = LoadSpec::new("/bin/false", "5v5", 2);
        assert!(spec.validate::<Arena>().is_ok());
        let bad = |edit: fn(&mut LoadSpec)| {
            let mut s = spec.clone();
            edit(&mut s);
            s.validate::<Arena>().unwrap_err().to_string()
        };
        assert!(bad(|s| s.mode = "duel".into()).contains("known: 5v5"));
        assert!(bad(|s| s.matches = 0).starts_with("matches"));
        assert!(bad(|s| s.instances = 0).starts_with("instances"));
        assert!(bad(|s| s.duration = Duration::from_millis(10)).starts_with("duration"));
        assert!(bad(|s| s.tick_rate_hz = Some(0)).starts_with("tick_rate_hz"));
        assert!(bad(|s| s.tick_rate_hz = Some(257)).starts_with("tick_rate_hz"));
    }

    #[test]
    fn a_spec_rate_reaches_the_bots_in_the_same_seconds() {
        let spec = LoadSpec {
            tick_rate_hz: Some(64),
            ..LoadSpec::new("/bin/true", "plaza100", 1)
        };
        let run = spec.validate::<Arena>().unwrap();
        assert_eq!(run.mode.name, "plaza100");
        assert_eq!(run.config.tick_rate_hz, 64);
        let fleet = fleet_config(&run, Duration::from_secs(1), &serde_json::Value::Null);
        assert_eq!(fleet.tick_rate_hz, 64);
        assert_eq!(fleet.bot.client.tick_rate_hz, 64);
    }

    #[test]
    fn a_binary_that_is_no_server_is_a_clear_error() {
        let spec = LoadSpec {
            duration: Duration::from_secs(1),
            ..LoadSpec::new("/bin/true", "5v5", 1)
        };
        let err = run_load::<Arena>(&spec, &BudgetBook::shipped(), &mut |_| {}).unwrap_err();
        assert!(matches!(err, LabError::Server(_)), "{err}");
    }
}
