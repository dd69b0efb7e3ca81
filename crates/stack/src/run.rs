//! [`run`]: one stack run, start to report. The gateways and the hosts are
//! child processes of the binary named in the options (so a host's CPU,
//! crash or drain is its own); the players run in this process, and a
//! drill, if any, on a thread beside them, and a sampler reads the
//! service's figures every second. With agents, the players run in `swarm
//! agent` children and this process coordinates them. At the end the players stop,
//! the hosts drain (running matches end and post their results), the
//! gateways stop, and the store is audited.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hightick_engine::bot::BotGame;
use hightick_gateway::GatewayConfig;
use hightick_gateway::config::ModeConfig;
use hightick_store::{LiveMatch, Store, StoreOptions};
use hightick_swarm::aggregate::Progress;
use hightick_swarm::distributed::run_distributed;
use hightick_swarm::result::RunResult;
use hightick_swarm::scenario::Overrides;
use hightick_swarm::{MatchPlayer, Scenario, mode_and_settings};

use crate::agents::Agents;
use crate::children::{Host, Process, banner_url};
use crate::cluster::PrivateCluster;
use crate::drill::{Drill, DrillCheck, DrillReport, Scene, Timeline};
use crate::error::StackError;
use crate::journey::Journey;
use crate::kill_gateway::GatewayStart;
use crate::launch::{Arrival, Capacity, Launch, between_matches_s, player_points};
use crate::mapping::PortMapping;
use crate::probe::Probe;
use crate::report::{JourneyReport, Quantiles};
use crate::sampler::{Sampler, ServicePoint};
use crate::{kill_gateway, kill_host, restart_postgres};

/// Longest a child may take to print its banner.
const START_PATIENCE: Duration = Duration::from_secs(30);
/// Longest the hosts may take to register.
const REGISTER_PATIENCE: Duration = Duration::from_secs(20);
/// What a drain may take beyond the drain timeout (posting the outbox).
const DRAIN_SLACK: Duration = Duration::from_secs(20);
/// How long the coordinator keeps trying an agent that does not accept yet.
const AGENT_WAIT: Duration = Duration::from_secs(10);

/// What a stack run is made of.
#[derive(Debug, Clone)]
pub struct StackOptions {
    /// The binary whose `gateway` and `serve` subcommands run the children
    /// (the caller's own, usually).
    pub exe: PathBuf,
    /// Working directory: the database, the hosts' state, logs, the report.
    pub dir: PathBuf,
    /// Virtual players.
    pub players: u64,
    /// Server hosts.
    pub hosts: usize,
    /// Worker threads per host.
    pub workers: usize,
    /// Players' ramp-up.
    pub ramp_up: Duration,
    /// How long the players keep playing after the ramp-up.
    pub duration: Duration,
    /// The mode (default: the game's first).
    pub mode: Option<String>,
    /// The game's full rules instead of its short ones.
    pub full_rules: bool,
    /// A PostgreSQL URL (default: SQLite in the working directory).
    pub database_url: Option<String>,
    /// Seconds the hosts' running matches may go on once the players stop.
    pub drain_timeout_s: u64,
    /// PostgreSQL only: a schema of the run's own (created if missing), so
    /// its books are apart from anything else in the database.
    pub database_schema: Option<String>,
    /// Gateways on the one store (more than one needs PostgreSQL).
    pub gateways: usize,
    /// A failure to inflict while the players play.
    pub drill: Option<Drill>,
    /// Each host's workers reached only through a UDP port mapping on
    /// another loopback address, which the host advertises ([`crate::mapping`]).
    pub port_mapping: bool,
    /// A swarm scenario the players run instead of the stack's own journey
    /// (e.g. `scenarios/launch.toml`): its `gateway` target is pointed at
    /// the stack's gateways, its users, ramp-up and hold become `players`,
    /// `ramp_up` and `duration`, and its `[matches]` mode and settings are
    /// the gateways' mode (`full_rules` does not apply).
    pub scenario: Option<PathBuf>,
    /// Run the players on this many `swarm agent` children, coordinated
    /// from here (0: in this process).
    pub agents: usize,
    /// Matches one host worker takes at most (`None`: the host's default).
    pub matches_per_worker: Option<usize>,
}

/// Runs the whole service with `options` for game `G`, calling `observe`
/// every second of the players' run; the report comes back whether or not
/// its checks held (see [`JourneyReport::passed`]).
pub fn run<G: BotGame>(
    options: &StackOptions,
    observe: impl FnMut(&Progress),
) -> Result<JourneyReport, StackError> {
    let file = options
        .scenario
        .as_deref()
        .map(Scenario::load)
        .transpose()?;
    let mode_name = scenario_mode(options, file.as_ref())?;
    let (mode, _) = mode_and_settings::<G>(mode_name.as_deref(), &serde_json::Value::Null)?;
    check_options(options, u64::from(mode.players), mode.name)?;
    let dir = &options.dir;
    std::fs::create_dir_all(dir).map_err(StackError::io(dir))?;
    let secrets = write_secrets(dir)?;
    let settings = match &file {
        Some(s) => settings_map(s.matches.settings.clone()),
        None => match_settings::<G>(options, mode),
    };
    // The restart-postgres drill restarts a cluster of its own, never one
    // other programs use.
    let cluster = match options.drill {
        Some(Drill::RestartPostgres) => Some(PrivateCluster::start()?),
        _ => None,
    };
    let database_url = database_url(options, cluster.as_ref())?;
    let gateway_config = gateway_config(options, &secrets, database_url.clone(), mode, &settings);
    let config_path = dir.join("gateway.toml");
    let text = toml::to_string(&gateway_config)
        .map_err(|e| StackError::Options(format!("gateway config: {e}")))?;
    std::fs::write(&config_path, text).map_err(StackError::io(&config_path))?;
    let (mut gateways, gateway_urls) = start_gateways(options, &config_path)?;
    let (mut hosts, mappings) = start_hosts(options, &secrets, &gateway_urls)?;
    let capacity = host_capacity(options, &gateway_urls, &secrets.server_secret, mode.players);

    let journey = Journey {
        gateways: &gateway_urls,
        users: options.players,
        ramp_up: options.ramp_up,
        hold: options.duration,
        mode: mode.name,
        settings_toml: &inline_toml(&settings),
        item: gateway_config
            .catalog
            .iter()
            .min_by_key(|i| i.price)
            .map_or("xp.boost", |i| i.item_id.as_str()),
        connections: (options.players as usize).clamp(4, 512),
    };
    let overrides = Overrides {
        users: Some(options.players),
        duration_ms: Some(options.duration.as_millis() as u64),
        ramp_up_ms: Some(options.ramp_up.as_millis() as u64),
        arrival_rate: None,
        targets: vec![("gateway".to_owned(), gateway_urls.join(","))],
    };
    let mut scenario = match file {
        Some(s) => s,
        None => Scenario::parse(&journey.scenario(), "stack journey")?,
    };
    scenario.apply(&overrides)?;
    let arrival = Arrival {
        players: options.players,
        ramp_up_s: scenario.ramp_up.as_secs_f64(),
        stampede_share: scenario.stampede.map_or(0.0, |s| s.share),
        stampede_within_s: scenario
            .stampede
            .map_or(0.0, |s| s.window(scenario.ramp_up).as_secs_f64()),
        hold_s: scenario.duration.as_secs_f64(),
        between_matches_s: between_matches_s(&scenario),
    };
    let mut agents = match options.agents {
        0 => None,
        n => Some(Agents::start(&options.exe, dir, n)?),
    };
    let players = Players {
        scenario: Arc::new(scenario),
        overrides,
        agents: agents.as_ref(),
        sampler: Sampler::new(
            &gateway_urls,
            &hosts.iter().map(|h| h.admin.clone()).collect::<Vec<_>>(),
        ),
    };
    let started = Instant::now();
    let stopped = AtomicBool::new(false);
    let scene = Scene {
        exe: &options.exe,
        gateways: &gateway_urls,
        secret: &secrets.server_secret,
        host_timeout: Duration::from_secs(gateway_config.host_timeout_s),
        until: started + options.ramp_up + options.duration,
        stopped: &stopped,
    };
    let restart_from = GatewayStart {
        config: &config_path,
        dir,
    };
    let stage = Stage {
        scene: &scene,
        started,
        gateways: &mut gateways,
        hosts: &mut hosts,
        cluster: cluster.as_ref(),
        restart_from: &restart_from,
    };
    let (result, drilled, service) = play::<G>(options.drill, stage, players, observe)?;
    let elapsed_s = started.elapsed().as_secs_f64();
    if let Some(a) = agents.as_mut() {
        a.stop();
    }

    let finished = wind_down(options, &mut hosts, &mut gateways);
    let mapped_datagrams = options
        .port_mapping
        .then(|| mappings.iter().map(PortMapping::delivered_up).sum());
    drop(mappings);
    let (audit, matches) = audit_store(&gateway_config)?;
    drop(cluster);
    let drill = drilled.map(|(drill, facts, events)| DrillReport {
        drill,
        events,
        checks: facts.checks(
            &matches,
            result.matches.as_ref().map_or(0, |b| b.disconnects),
            options.players,
        ),
    });

    let mut launch = Launch {
        scenario: options.scenario.as_ref().map(|p| p.display().to_string()),
        agents: options.agents,
        arrival,
        capacity,
        players: player_points(&result),
        service,
        ..Launch::default()
    };
    launch.summarize(&result, finished.finished);
    Ok(JourneyReport {
        game: G::NAME.to_owned(),
        mode: mode.name.to_owned(),
        rules: if options.full_rules { "full" } else { "short" }.to_owned(),
        backend: if database_url.is_some() {
            "postgres"
        } else {
            "sqlite"
        }
        .to_owned(),
        players: options.players,
        hosts: options.hosts,
        gateways: options.gateways,
        elapsed_s,
        login: step_time(&result, "login"),
        match_found: step_time(&result, "matchmake"),
        requests: result.total.requests,
        failed_requests: result.total.failed,
        bots: result.matches.clone(),
        matches_finished: finished.finished,
        matches_abandoned: finished.abandoned,
        outbox_left: finished.left,
        outbox_rejected: finished.rejected,
        audit,
        drill,
        mapped_datagrams,
        launch,
    })
}

/// The mode the run queues for: `--mode`, else the scenario's
/// `[matches] mode`; the two must agree when both are given.
fn scenario_mode(
    options: &StackOptions,
    file: Option<&Scenario>,
) -> Result<Option<String>, StackError> {
    let from_file = file.and_then(|s| s.matches.mode.clone());
    match (&options.mode, from_file) {
        (Some(flag), Some(file)) if *flag != file => Err(StackError::Options(format!(
            "mode: --mode {flag} but the scenario's [matches] mode is {file:?}"
        ))),
        (Some(flag), _) => Ok(Some(flag.clone())),
        (None, file) => Ok(file),
    }
}

/// What the hosts may carry, as the gateways list them once registered
/// (each host once: gateways on one store list the same hosts).
fn host_capacity(
    options: &StackOptions,
    gateways: &[String],
    secret: &str,
    players_per_match: u16,
) -> Capacity {
    let probe = Probe::new();
    let listed: std::collections::BTreeMap<String, u64> = gateways
        .iter()
        .filter_map(|g| probe.hosts(g, secret))
        .flatten()
        .map(|h| (h.host_id, h.capacity))
        .collect();
    let matches_at_once: u64 = listed.values().sum();
    Capacity {
        hosts: options.hosts,
        workers_per_host: options.workers,
        matches_per_worker: (matches_at_once as usize / (options.hosts * options.workers).max(1)),
        matches_at_once: matches_at_once as usize,
        players_per_match: u32::from(players_per_match),
        machine_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        ..Capacity::default()
    }
}

/// The mode's match settings: none for the full rules, else the game's
/// short ones.
fn match_settings<G: BotGame>(
    options: &StackOptions,
    mode: &hightick_engine::mode::Mode,
) -> serde_json::Map<String, serde_json::Value> {
    if options.full_rules {
        return serde_json::Map::new();
    }
    serde_json::to_value(G::short_settings(mode))
        .map_or_else(|_| serde_json::Map::new(), settings_map)
}

/// A game's settings as the gateway's config holds them: an object's
/// fields without its nulls (a `None` is the game's default, and TOML has
/// no null); anything else is no settings.
fn settings_map(settings: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match settings {
        serde_json::Value::Object(mut map) => {
            map.retain(|_, v| !v.is_null());
            map
        }
        _ => serde_json::Map::new(),
    }
}

/// The database the gateways share: the drill's private cluster, else the
/// options' URL (in the run's own schema when one is named); `None`: SQLite.
fn database_url(
    options: &StackOptions,
    cluster: Option<&PrivateCluster>,
) -> Result<Option<String>, StackError> {
    let url = cluster
        .map(PrivateCluster::url)
        .or_else(|| options.database_url.clone());
    match (url, &options.database_schema) {
        (Some(url), Some(schema)) => Ok(Some(in_schema(&url, schema)?)),
        (url, _) => Ok(url),
    }
}

/// Every gateway's config: the run's secrets and store, the one mode, and
/// under a drill, timeouts short enough for its failures to be noticed.
fn gateway_config(
    options: &StackOptions,
    secrets: &SecretFiles,
    database_url: Option<String>,
    mode: &hightick_engine::mode::Mode,
    settings: &serde_json::Map<String, serde_json::Value>,
) -> GatewayConfig {
    let mut config = GatewayConfig {
        listen: "127.0.0.1:0".parse().expect("literal address"),
        database_url,
        data_dir: options.dir.join("gateway-data"),
        rate_limit_per_s: 0.0,
        token_key_file: Some(secrets.key.clone()),
        session_key_file: Some(secrets.session.clone()),
        server_secret_file: Some(secrets.server.clone()),
        modes: vec![ModeConfig {
            name: mode.name.to_owned(),
            players: usize::from(mode.players),
            settings: settings.clone(),
        }],
        ..GatewayConfig::default()
    };
    if options.drill.is_some() {
        // A drill wants its failures noticed within its run, and the
        // matched tickets kept until the analysis at the end.
        config.host_timeout_s = DRILL_HOST_TIMEOUT_S;
        config.connect_timeout_s = DRILL_CONNECT_TIMEOUT_S;
        let run_s = (options.ramp_up + options.duration).as_secs();
        config.ticket_ttl_s = (run_s + 600).clamp(120, 86_400);
    }
    config
}

/// Starts the gateways on `config_path`: their processes and base URLs.
fn start_gateways(
    options: &StackOptions,
    config_path: &Path,
) -> Result<(Vec<Process>, Vec<String>), StackError> {
    let mut gateways = Vec::with_capacity(options.gateways);
    let mut urls = Vec::with_capacity(options.gateways);
    for g in 0..options.gateways {
        let name = format!("gateway {g}");
        let (gateway, banner) = Process::start(
            &name,
            &options.exe,
            &[
                "gateway".to_owned(),
                "--config".to_owned(),
                path(config_path),
            ],
            &options.dir.join(format!("gateway-{g}.log")),
            "listening on",
            START_PATIENCE,
        )?;
        let url = banner_url(&banner).ok_or_else(|| StackError::Child {
            name,
            reason: format!("unexpected banner {banner:?}"),
        })?;
        gateways.push(gateway);
        urls.push(url);
    }
    Ok((gateways, urls))
}

/// Starts the hosts, each registered with one gateway (host i with
/// gateway i mod n, as a host links to one), and waits until every
/// gateway lists its hosts. With the port mapping, each host's workers sit
/// behind a mapping of their own.
fn start_hosts(
    options: &StackOptions,
    secrets: &SecretFiles,
    gateway_urls: &[String],
) -> Result<(Vec<Host>, Vec<PortMapping>), StackError> {
    let mut hosts = Vec::with_capacity(options.hosts);
    let mut mappings = Vec::new();
    let config = host_config(options)?;
    for i in 0..options.hosts {
        let state = options.dir.join(format!("host-{i}"));
        std::fs::create_dir_all(&state).map_err(StackError::io(&state))?;
        let reached_at = if options.port_mapping {
            let mapping = PortMapping::start(i, options.workers)?;
            let args = mapping.serve_args();
            mappings.push(mapping);
            args
        } else {
            vec!["--bind".to_owned(), "127.0.0.1:0".to_owned()]
        };
        let args: Vec<String> = [
            "serve",
            "--admin",
            "127.0.0.1:0",
            "--workers",
            &options.workers.to_string(),
            "--key-file",
            &path(&secrets.key),
            "--gateway",
            &gateway_urls[i % options.gateways],
            "--server-secret-file",
            &path(&secrets.server),
            "--state-dir",
            &path(&state),
            "--results",
            &path(&state.join("results.jsonl")),
            "--drain-timeout",
            &options.drain_timeout_s.to_string(),
        ]
        .iter()
        .map(ToString::to_string)
        .chain(reached_at)
        .chain(config.iter().flat_map(|c| ["--config".to_owned(), path(c)]))
        .collect();
        hosts.push(Host::start(
            &format!("host {i}"),
            &options.exe,
            args,
            state,
            START_PATIENCE,
        )?);
    }
    for (g, url) in gateway_urls.iter().enumerate() {
        let registering = (0..options.hosts)
            .filter(|i| i % options.gateways == g)
            .count();
        wait_for_hosts(url, &secrets.server_secret, registering)?;
    }
    Ok((hosts, mappings))
}

/// The hosts' config file, when the options set what it holds (the most
/// matches a worker takes).
fn host_config(options: &StackOptions) -> Result<Option<PathBuf>, StackError> {
    let Some(n) = options.matches_per_worker else {
        return Ok(None);
    };
    let file = options.dir.join("host.toml");
    std::fs::write(&file, format!("max_matches_per_worker = {n}\n"))
        .map_err(StackError::io(&file))?;
    Ok(Some(file))
}

/// The players: their scenario (with the options applied), where they
/// run, and what reads the service while they do.
struct Players<'a> {
    scenario: Arc<Scenario>,
    overrides: Overrides,
    agents: Option<&'a Agents>,
    sampler: Sampler,
}

/// What a drill may act on while the players play.
struct Stage<'a> {
    scene: &'a Scene<'a>,
    started: Instant,
    gateways: &'a mut Vec<Process>,
    hosts: &'a mut Vec<Host>,
    cluster: Option<&'a PrivateCluster>,
    restart_from: &'a GatewayStart<'a>,
}

/// A drill's outcome: which, its facts, and its timeline.
type Drilled = (Drill, Facts, Vec<crate::drill::DrillEvent>);

/// The players' run, with `drill` (if any) and the sampler on threads
/// beside it; the run, the drill's outcome and the service's readings.
fn play<G: BotGame>(
    drill: Option<Drill>,
    stage: Stage<'_>,
    players: Players<'_>,
    observe: impl FnMut(&Progress),
) -> Result<(RunResult, Option<Drilled>, Vec<ServicePoint>), StackError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(StackError::io(Path::new("tokio runtime")))?;
    let Stage {
        scene,
        started,
        gateways,
        hosts,
        cluster,
        restart_from,
    } = stage;
    let Players {
        scenario,
        overrides,
        agents,
        sampler,
    } = players;
    let (result, drilled, service) = std::thread::scope(|s| {
        let sampling = s.spawn(|| sampler.run(started, scene.stopped));
        let drill = drill.map(|drill| {
            s.spawn(move || {
                let mut timeline = Timeline::new(started);
                let facts = match (drill, cluster) {
                    (Drill::KillHost, _) => {
                        Facts::KillHost(kill_host::run(scene, hosts, &mut timeline))
                    }
                    (Drill::RestartPostgres, Some(cluster)) => Facts::Restart(
                        restart_postgres::run(scene, cluster, gateways, hosts, &mut timeline),
                    ),
                    (Drill::RestartPostgres, None) | (Drill::KillGateway, _) => Facts::KillGateway(
                        kill_gateway::run(scene, gateways, restart_from, &mut timeline),
                    ),
                };
                (drill, facts, timeline.into_events())
            })
        });
        let stop = Arc::new(AtomicBool::new(false));
        let result = match agents {
            Some(a) => runtime.block_on(run_distributed(
                scenario, &overrides, &a.addrs, &a.secret, AGENT_WAIT, stop, observe,
            )),
            None => runtime.block_on(hightick_swarm::run::run(
                scenario,
                MatchPlayer::of::<G>(),
                stop,
                observe,
            )),
        };
        scene.stopped.store(true, Ordering::Relaxed);
        let drilled = drill.and_then(|d| d.join().ok());
        let service = sampling.join().unwrap_or_default();
        (result, drilled, service)
    });
    Ok((result?, drilled, service))
}

/// The players have stopped: the hosts drain and post what they owe, then
/// the gateways stop. What the hosts finished, from their results files
/// and outboxes.
fn wind_down(options: &StackOptions, hosts: &mut [Host], gateways: &mut [Process]) -> Finished {
    let patience = Duration::from_secs(options.drain_timeout_s) + DRAIN_SLACK;
    let mut finished = Finished::default();
    for host in hosts.iter_mut() {
        if let Some(process) = host.process.as_mut()
            && !process.stop(patience)
        {
            eprintln!(
                "hightick stack: {} did not drain in time; killed",
                host.name()
            );
        }
        finished.add(&host.state);
    }
    for gateway in gateways.iter_mut() {
        gateway.stop(Duration::from_secs(15));
    }
    finished
}

/// A drill's heartbeat timeout at the gateways, seconds (hosts beat every 2).
const DRILL_HOST_TIMEOUT_S: u64 = 5;
/// A drill's game connection silence timeout, seconds.
const DRILL_CONNECT_TIMEOUT_S: u32 = 5;

/// What a drill did, by drill.
enum Facts {
    KillHost(kill_host::KillHostFacts),
    Restart(restart_postgres::RestartFacts),
    KillGateway(kill_gateway::KillGatewayFacts),
}

impl Facts {
    /// Its checks, from the matches the store formed and how many bots'
    /// connections ended before their match, of `players`.
    fn checks(&self, matches: &[LiveMatch], cut_short: u64, players: u64) -> Vec<DrillCheck> {
        match self {
            Facts::KillHost(f) => kill_host::checks(f, matches, cut_short),
            Facts::Restart(f) => restart_postgres::checks(f, matches),
            Facts::KillGateway(f) => kill_gateway::checks(f, matches, players),
        }
    }
}

/// `url` with its tables in `schema`: the schema is made (and migrated) now,
/// and the URL sets it as the connections' `search_path`.
fn in_schema(url: &str, schema: &str) -> Result<String, StackError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(StackError::io(Path::new("tokio runtime")))?;
    runtime.block_on(async {
        let mut options = StoreOptions::new(url.to_owned());
        options.postgres_schema = Some(schema.to_owned());
        Store::open_with(&options).await?.close().await;
        Ok::<_, StackError>(())
    })?;
    let joint = if url.contains('?') { '&' } else { '?' };
    Ok(format!("{url}{joint}options[search_path]={schema}"))
}

/// Whether `options` make a run; the one at fault named first.
fn check_options(options: &StackOptions, per_match: u64, mode: &str) -> Result<(), StackError> {
    let bad = |s: String| Err(StackError::Options(s));
    if options.players < per_match {
        return bad(format!(
            "players: a {mode} match needs {per_match}; got {}",
            options.players
        ));
    }
    if !(1..=16).contains(&options.hosts) {
        return bad("hosts: must be 1 to 16".to_owned());
    }
    if !(1..=4).contains(&options.gateways) {
        return bad("gateways: must be 1 to 4".to_owned());
    }
    let postgres = options
        .database_url
        .as_deref()
        .is_some_and(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
    if options.database_schema.is_some() && !postgres {
        return bad("database-schema: needs --database-url postgres://...".to_owned());
    }
    if options.gateways > 1 && !postgres {
        return bad(format!(
            "gateways: {} gateways share one store, which needs --database-url postgres://... (SQLite is one process's file)",
            options.gateways
        ));
    }
    match options.drill {
        Some(Drill::KillHost) if options.hosts < 2 => bad(
            "drill kill-host: needs --hosts 2 or more (the killed host's players play on another)"
                .to_owned(),
        ),
        Some(Drill::KillGateway) if options.gateways < 2 => bad(
            "drill kill-gateway: needs --gateways 2 or more (and --database-url postgres://...)"
                .to_owned(),
        ),
        Some(Drill::RestartPostgres) if options.database_url.is_some() => bad(
            "drill restart-postgres: runs a PostgreSQL cluster of its own; leave out --database-url (a shared database is never restarted)"
                .to_owned(),
        ),
        Some(Drill::RestartPostgres) if options.gateways > 1 => bad(
            "drill restart-postgres: runs with one gateway (--gateways 1)".to_owned(),
        ),
        _ => Ok(()),
    }
}

/// The key, session and server secret files, and the server secret.
struct SecretFiles {
    key: PathBuf,
    session: PathBuf,
    server: PathBuf,
    server_secret: String,
}

fn write_secrets(dir: &Path) -> Result<SecretFiles, StackError> {
    let hex32 = || hex::encode(rand::random::<[u8; 32]>());
    let files = SecretFiles {
        key: dir.join("key.hex"),
        session: dir.join("session.hex"),
        server: dir.join("server.secret"),
        server_secret: hex32(),
    };
    for (path, text) in [
        (&files.key, hex32()),
        (&files.session, hex32()),
        (&files.server, files.server_secret.clone()),
    ] {
        std::fs::write(path, text).map_err(StackError::io(path))?;
    }
    Ok(files)
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Waits until `gateway` lists `count` registered hosts.
fn wait_for_hosts(gateway: &str, secret: &str, count: usize) -> Result<(), StackError> {
    let probe = Probe::new();
    let deadline = Instant::now() + REGISTER_PATIENCE;
    let mut seen = 0;
    while Instant::now() < deadline {
        seen = probe.hosts(gateway, secret).map_or(0, |l| l.len());
        if seen >= count {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(StackError::Child {
        name: "hosts".to_owned(),
        reason: format!(
            "{seen} of {count} registered with the gateway {gateway} within {REGISTER_PATIENCE:?}"
        ),
    })
}

/// A TOML inline table of `map` (`{ a = 1, b = "x" }`); nulls are left out.
fn inline_toml(map: &serde_json::Map<String, serde_json::Value>) -> String {
    let fields: Vec<String> = map
        .iter()
        .filter_map(|(k, v)| {
            let value = toml::Value::try_from(v).ok()?;
            Some(format!("{k} = {value}"))
        })
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

fn step_time(result: &RunResult, step: &str) -> Quantiles {
    result
        .steps
        .iter()
        .find(|s| s.name == step)
        .map_or_else(Quantiles::default, |s| Quantiles {
            p50_ms: s.step_time_p50_us as f64 / 1000.0,
            p99_ms: s.step_time_p99_us as f64 / 1000.0,
            mean_ms: s.step_time_mean_us / 1000.0,
        })
}

/// What the hosts' state directories say after their drain.
#[derive(Debug, Default)]
struct Finished {
    finished: u64,
    abandoned: u64,
    left: u64,
    rejected: u64,
}

impl Finished {
    fn add(&mut self, state: &Path) {
        let results = std::fs::read_to_string(state.join("results.jsonl")).unwrap_or_default();
        for line in results.lines().filter(|l| !l.trim().is_empty()) {
            self.finished += 1;
            let result = serde_json::from_str::<hightick_host_api::MatchResult>(line);
            if result.is_ok_and(|r| r.abandoned) {
                self.abandoned += 1;
            }
        }
        let count = |sub: &str| {
            std::fs::read_dir(state.join("outbox").join(sub)).map_or(0, |d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .count() as u64
            })
        };
        self.left += count("pending");
        self.rejected += count("rejected");
    }
}

/// Reads the gateway's store for the audit (after the gateway stopped): the
/// books, and every match the queue formed that its tickets still name.
fn audit_store(
    config: &GatewayConfig,
) -> Result<(hightick_store::Audit, Vec<LiveMatch>), StackError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(StackError::io(Path::new("tokio runtime")))?;
    runtime.block_on(async {
        let store = match &config.database_url {
            Some(url) => Store::open_with(&StoreOptions::new(url.clone())).await?,
            None => Store::open_in_data_dir(&config.data_dir).await?,
        };
        let audit = store.audit().await?;
        let ids: BTreeSet<String> = store
            .queue_matched_since(0)
            .await?
            .into_iter()
            .filter_map(|t| t.match_id)
            .collect();
        let mut matches = Vec::with_capacity(ids.len());
        for id in &ids {
            if let Some(m) = store.live_match(id).await? {
                matches.push(m);
            }
        }
        store.close().await;
        Ok((audit, matches))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_left_at_their_default_are_left_out_of_the_gateway_config() {
        // A game's short rules of `{ seconds: None }`: TOML has no null.
        let map = settings_map(serde_json::json!({ "seconds": null, "rounds": 3 }));
        assert_eq!(inline_toml(&map), "{ rounds = 3 }");
        assert_eq!(toml::to_string(&map).unwrap(), "rounds = 3\n");
        let raw = serde_json::json!({ "seconds": null });
        assert!(
            toml::to_string(&raw).is_err(),
            "what broke `stack` for such a game"
        );
        assert!(settings_map(serde_json::Value::Null).is_empty());
    }

    fn options() -> StackOptions {
        StackOptions {
            exe: PathBuf::from("hightick"),
            dir: PathBuf::from("run"),
            players: 20,
            hosts: 2,
            workers: 1,
            ramp_up: Duration::from_secs(1),
            duration: Duration::from_secs(1),
            mode: None,
            full_rules: false,
            database_url: None,
            database_schema: None,
            drain_timeout_s: 1,
            gateways: 1,
            drill: None,
            port_mapping: false,
            scenario: None,
            agents: 0,
            matches_per_worker: None,
        }
    }

    fn refused(o: &StackOptions) -> String {
        match check_options(o, 10, "5v5") {
            Err(StackError::Options(why)) => why,
            other => panic!("{o:?} passed: {other:?}"),
        }
    }

    #[test]
    fn options_that_make_no_run_are_refused_naming_the_flag() {
        assert!(check_options(&options(), 10, "5v5").is_ok());
        let mut o = options();
        o.gateways = 2;
        assert!(refused(&o).contains("--database-url postgres://"));
        o.database_url = Some("sqlite://x.db".to_owned());
        assert!(refused(&o).contains("--database-url postgres://"));
        o.database_url = Some("postgres://u@h/db".to_owned());
        assert!(check_options(&o, 10, "5v5").is_ok());
        o.gateways = 5;
        assert!(refused(&o).starts_with("gateways:"));

        let mut o = options();
        o.hosts = 1;
        o.drill = Some(Drill::KillHost);
        assert!(refused(&o).contains("--hosts 2"));
        let mut o = options();
        o.drill = Some(Drill::KillGateway);
        assert!(refused(&o).contains("--gateways 2"));
        let mut o = options();
        o.drill = Some(Drill::RestartPostgres);
        assert!(check_options(&o, 10, "5v5").is_ok());
        o.database_url = Some("postgres://u@h/db".to_owned());
        assert!(refused(&o).contains("leave out --database-url"));
        let mut o = options();
        o.database_schema = Some("s".to_owned());
        assert!(refused(&o).starts_with("database-schema:"));
        o.players = 9;
        assert!(refused(&o).starts_with("players:"));
    }
}
