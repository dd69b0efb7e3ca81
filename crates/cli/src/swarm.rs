//! `hightick swarm`: scenario-driven virtual players (crate `hightick-swarm`).
//!
//! - `run SCENARIO [--agents a,b]`: run locally or on agents; live progress,
//!   summary table, JSON result, HTML report, a raw per-request log only with
//!   `--request-log`; exit status 1 if a threshold fails;
//!   `--metrics ADDR` serves the live figures as Prometheus text;
//! - `check SCENARIO`: read and validate a scenario, say what it will do;
//! - `agent [--listen ADDR] [--secret-file PATH] [--allow-target NET|HOST:PORT]`:
//!   run shards of the runs of coordinators that hold the shared secret,
//!   against allowed targets only;
//! - `compare A.json B.json`: per-step differences;
//! - `target --listen ADDR`: a minimal local HTTP target;
//! - `selftest`: hold many players against a target in a separate process and
//!   print FIGURE lines (players held, errors, memory per player, req/s per core).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use hightick_engine::BotGame;
use hightick_process as process;
use hightick_swarm::aggregate::Progress;
use hightick_swarm::distributed::{Agent, AgentConfig, AllowList, SharedSecret, run_distributed};
use hightick_swarm::metrics::MetricsEndpoint;
use hightick_swarm::report::{render_comparison, render_html, render_table};
use hightick_swarm::request_log::RequestLogConfig;
use hightick_swarm::result::RunResult;
use hightick_swarm::scenario::duration::format_duration;
use hightick_swarm::scenario::{Model, Overrides, StepKind};
use hightick_swarm::selftest::{HoldFigures, SelftestPlan};
use hightick_swarm::target::{Target, TargetConfig};
use hightick_swarm::{MatchPlayer, Scenario, run::run};

/// Flags of `hightick swarm`.
#[derive(Debug, Args)]
pub(crate) struct SwarmArgs {
    #[command(subcommand)]
    command: SwarmCommand,
}

#[derive(Debug, Subcommand)]
enum SwarmCommand {
    /// Run a scenario here, or on agents with --agents.
    Run(RunArgs),
    /// Read and check a scenario file; say what it will do.
    Check {
        /// The scenario file.
        scenario: PathBuf,
    },
    /// Run shards of coordinators' runs, streaming interval histograms back.
    Agent {
        /// Where to listen for a coordinator (loopback unless told otherwise).
        #[arg(long, default_value = "127.0.0.1:7700")]
        listen: SocketAddr,
        /// The secret coordinators must prove they hold (at least 32 bytes);
        /// else the file $HIGHTICK_SWARM_SECRET_FILE names, else $HIGHTICK_SWARM_SECRET.
        #[arg(long, value_name = "PATH")]
        secret_file: Option<PathBuf>,
        /// Where runs may send load: a network (10.0.0.0/8), an address, or
        /// host:port (repeatable, or comma-separated); default loopback only.
        #[arg(
            long = "allow-target",
            value_name = "NET|HOST:PORT",
            value_delimiter = ','
        )]
        allow_targets: Vec<String>,
        /// Serve one run, then exit (for a Kubernetes Job).
        #[arg(long)]
        once: bool,
        /// Worker threads (0: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
    /// Per-step differences between two result files (B against A).
    Compare {
        /// The baseline result (JSON from `swarm run --json`).
        a: PathBuf,
        /// The result to compare with it.
        b: PathBuf,
    },
    /// A minimal local HTTP target (POST /login, GET anything) for trying scenarios.
    Target {
        /// Where to listen (port 0: any; the address is printed).
        #[arg(long, default_value = "127.0.0.1:8089")]
        listen: SocketAddr,
        /// Serve every request through one FIFO server taking this long (a known capacity).
        #[arg(long, value_parser = humantime::parse_duration)]
        service_time: Option<Duration>,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// Hold many logged-in players against a target in a separate process; print FIGURE lines.
    Selftest(SelftestArgs),
}

/// Flags of `hightick swarm run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The scenario file.
    scenario: PathBuf,
    /// Agents to run the players on (`host:port,host:port`); none: run here.
    #[arg(long, value_delimiter = ',')]
    agents: Vec<String>,
    /// How long to keep trying agents that do not accept yet.
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    agent_wait: Duration,
    /// With --agents: the secret they share (at least 32 bytes); else the
    /// file $HIGHTICK_SWARM_SECRET_FILE names, else $HIGHTICK_SWARM_SECRET.
    #[arg(long, value_name = "PATH")]
    secret_file: Option<PathBuf>,
    /// Players (closed model) or the most alive at once (open model).
    #[arg(long)]
    users: Option<u64>,
    /// Hold duration after the ramp-up (e.g. 2m).
    #[arg(long, value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// Ramp-up (e.g. 30s).
    #[arg(long, value_parser = humantime::parse_duration)]
    ramp_up: Option<Duration>,
    /// Open model: arrivals per second.
    #[arg(long)]
    arrival_rate: Option<f64>,
    /// Point a target elsewhere: `name=http://host:port` (repeatable).
    #[arg(long = "target", value_name = "NAME=URL")]
    targets: Vec<String>,
    /// Write the result as JSON here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Where the HTML report goes.
    #[arg(long, value_name = "PATH", default_value = "swarm-report.html")]
    report: PathBuf,
    /// Also stream every request to this tab-separated file, rotated at 64 MiB
    /// (or as the scenario's `[request_log]` says); off unless asked for.
    #[arg(long, value_name = "PATH")]
    request_log: Option<PathBuf>,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress line.
    #[arg(long)]
    quiet: bool,
    /// Serve the run's figures as Prometheus text at `http://ADDR/metrics`
    /// (players, requests, errors by kind, response-time histogram).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
}

/// Flags of `hightick swarm selftest`.
#[derive(Debug, Args)]
pub(crate) struct SelftestArgs {
    /// Players to hold.
    #[arg(long, default_value_t = 100_000)]
    users: u64,
    /// Each player's request period (0s: closed loop without think time).
    #[arg(long, default_value = "7.5s", value_parser = humantime::parse_duration)]
    every: Duration,
    /// Ramp-up.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    ramp_up: Duration,
    /// Hold after the ramp-up.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Keep-alive connections to the target.
    #[arg(long, default_value_t = 256)]
    connections: usize,
    /// The target process's worker threads.
    #[arg(long, default_value_t = 1)]
    target_threads: usize,
    /// The swarm's worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Also write the result as JSON here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
}

/// Runs `swarm`; `play_match` steps play bots of game `G`.
pub(crate) fn run_command<G: BotGame>(args: &SwarmArgs) -> Result<()> {
    let player = MatchPlayer::of::<G>();
    match &args.command {
        SwarmCommand::Run(a) => run_scenario(a, player),
        SwarmCommand::Check { scenario } => check(scenario),
        SwarmCommand::Agent {
            listen,
            secret_file,
            allow_targets,
            once,
            threads,
        } => {
            let config = AgentConfig {
                listen: *listen,
                secret: SharedSecret::load(secret_file.as_deref())?,
                allow: if allow_targets.is_empty() {
                    AllowList::loopback()
                } else {
                    AllowList::parse(allow_targets)?
                },
            };
            agent(config, *once, *threads, player)
        }
        SwarmCommand::Compare { a, b } => {
            let a = RunResult::load(a)?;
            let b = RunResult::load(b)?;
            print!("{}", render_comparison(&a, &b));
            Ok(())
        }
        SwarmCommand::Target {
            listen,
            service_time,
            threads,
        } => target(*listen, *service_time, *threads),
        SwarmCommand::Selftest(a) => selftest(a, player),
    }
}

fn runtime(threads: usize) -> Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if threads > 0 {
        b.worker_threads(threads);
    }
    b.thread_name("hightick-swarm")
        .enable_all()
        .build()
        .context("starting the runtime")
}

fn overrides(a: &RunArgs) -> Result<Overrides> {
    let mut targets = Vec::new();
    for t in &a.targets {
        let (name, url) = t
            .split_once('=')
            .ok_or_else(|| anyhow!("--target {t}: expected NAME=URL"))?;
        targets.push((name.to_owned(), url.to_owned()));
    }
    Ok(Overrides {
        users: a.users,
        duration_ms: a.duration.map(|d| d.as_millis() as u64),
        ramp_up_ms: a.ramp_up.map(|d| d.as_millis() as u64),
        arrival_rate: a.arrival_rate,
        targets,
    })
}

/// A progress line on stderr, redrawn each interval.
pub(crate) struct ProgressLine {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressLine {
    pub(crate) fn new(total: Duration, quiet: bool) -> Self {
        let bar = (!quiet).then(|| {
            let bar = indicatif::ProgressBar::new(total.as_secs().max(1));
            bar.set_style(
                indicatif::ProgressStyle::with_template("{elapsed:>4} [{bar:24}] {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        Self { bar }
    }

    pub(crate) fn show(&self, p: &Progress) {
        if let Some(bar) = &self.bar {
            bar.set_position(p.elapsed.as_secs());
            bar.set_message(p.to_string());
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn stop_on_ctrl_c(runtime: &tokio::runtime::Runtime) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("hightick swarm: stopping (Ctrl-C again to abort)");
            flag.store(true, Ordering::Relaxed);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
    stop
}

fn run_scenario(a: &RunArgs, player: MatchPlayer) -> Result<()> {
    let mut scenario = Scenario::load(&a.scenario)?;
    let o = overrides(a)?;
    scenario.apply(&o)?;
    if let Some(path) = &a.request_log {
        if !a.agents.is_empty() {
            bail!(
                "--request-log: with --agents, put a [request_log] table in the scenario (each agent writes its own file)"
            );
        }
        match &mut scenario.request_log {
            Some(log) => log.path.clone_from(path),
            None => scenario.request_log = Some(RequestLogConfig::at(path)),
        }
    }
    let secret = if a.agents.is_empty() {
        None
    } else {
        Some(SharedSecret::load(a.secret_file.as_deref())?)
    };
    let scenario = Arc::new(scenario);
    let rt = runtime(a.threads)?;
    let stop = stop_on_ctrl_c(&rt);
    let line = ProgressLine::new(scenario.total_duration(), a.quiet);
    eprintln!("{}", describe(&scenario, &a.agents));
    let endpoint = match a.metrics {
        Some(listen) => {
            let endpoint = rt.block_on(MetricsEndpoint::start(listen))?;
            eprintln!(
                "hightick swarm: metrics at http://{}/metrics",
                endpoint.addr
            );
            Some(endpoint)
        }
        None => None,
    };
    let observe = |p: &Progress| {
        line.show(p);
        if let Some(endpoint) = &endpoint {
            endpoint.publish(&p.figures);
        }
    };
    let result = match &secret {
        None => rt.block_on(run(scenario, player, stop, observe))?,
        Some(secret) => rt.block_on(run_distributed(
            scenario,
            &o,
            &a.agents,
            secret,
            a.agent_wait,
            stop,
            observe,
        ))?,
    };
    line.finish();
    write_outputs(&result, a.json.as_deref(), Some(&a.report))?;
    let failed: Vec<&str> = result.failures().map(|t| t.threshold.as_str()).collect();
    if !failed.is_empty() {
        bail!(
            "{} threshold(s) failed: {}",
            failed.len(),
            failed.join("; ")
        );
    }
    Ok(())
}

fn write_outputs(result: &RunResult, json: Option<&Path>, report: Option<&Path>) -> Result<()> {
    print!("{}", render_table(result));
    if let Some(log) = &result.request_log {
        println!(
            "request log: {} lines, {} rotations, {} dropped (the writer fell behind)",
            log.lines, log.rotations, log.dropped
        );
    }
    if let Some(path) = json {
        std::fs::write(path, result.to_json())
            .with_context(|| format!("writing {}", path.display()))?;
        println!("JSON: {}", path.display());
    }
    if let Some(path) = report {
        std::fs::write(path, render_html(result)?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("report: {}", path.display());
    }
    Ok(())
}

fn describe(s: &Scenario, agents: &[String]) -> String {
    let load = match s.model {
        Model::Closed => format!("{} players", s.users),
        Model::Open => format!(
            "{:.1} arrivals/s (at most {} alive)",
            s.arrival_rate, s.users
        ),
    };
    let place = if agents.is_empty() {
        "here".to_owned()
    } else {
        format!("on {} agents", agents.len())
    };
    let pacing = s.pacing.as_ref().map_or(String::new(), |p| {
        format!(", pacing p{} to {:?}", p.quantile * 100.0, p.target)
    });
    format!(
        "hightick swarm: {} — {load}, ramp-up {}, hold {}, {} behaviours, {} steps, {} thresholds{pacing}, {place}",
        s.name,
        format_duration(s.ramp_up),
        format_duration(s.duration),
        s.behaviours.len(),
        s.step_names.len(),
        s.thresholds.len()
    )
}

fn check(path: &Path) -> Result<()> {
    let s = Scenario::load(path)?;
    println!("{}", describe(&s, &[]));
    for t in &s.targets {
        println!("target {} = {}", t.name, t.url);
    }
    let show = |prefix: &str, steps: &[hightick_swarm::scenario::Step]| {
        for step in steps {
            let what = match &step.kind {
                StepKind::Http(h) => {
                    format!("{} (HTTP {})", s.step_names[step.id as usize], h.method)
                }
                StepKind::PlayMatch(_) => {
                    format!("{} (plays a match)", s.step_names[step.id as usize])
                }
            };
            println!("{prefix}{what}, think {:?} on average", step.think.mean());
        }
    };
    show("setup: ", &s.setup);
    for b in &s.behaviours {
        println!("behaviour {} (weight {}):", b.name, b.weight);
        show("  ", &b.steps);
    }
    for t in &s.thresholds {
        println!("threshold {t}");
    }
    Ok(())
}

fn agent(config: AgentConfig, once: bool, threads: usize, player: MatchPlayer) -> Result<()> {
    let rt = runtime(threads)?;
    rt.block_on(async {
        let allowed = config.allow.to_string();
        let agent = Agent::bind(config, player).await?;
        println!(
            "hightick swarm agent: listening on {}; load only to {allowed}",
            agent.local_addr()?
        );
        loop {
            let refused = |r| eprintln!("hightick swarm agent: {r}");
            match agent.serve_one(refused).await {
                Ok(run) => eprintln!(
                    "hightick swarm agent: shard {} done, {} intervals, {} requests",
                    run.shard,
                    run.intervals,
                    run.total.requests()
                ),
                Err(e) if once => return Err(e.into()),
                Err(e) => eprintln!("hightick swarm agent: {e}"),
            }
            if once {
                return Ok(());
            }
        }
    })
}

fn target(listen: SocketAddr, service_time: Option<Duration>, threads: usize) -> Result<()> {
    let rt = runtime(threads.max(1))?;
    rt.block_on(async {
        let t = Target::start(listen, TargetConfig { service_time }).await?;
        println!("hightick swarm target: listening on {}", t.addr);
        // Serve until stdin closes (the parent went away) or the process is killed.
        tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
        })
        .await
        .ok();
        t.stop();
        Ok(())
    })
}

/// `hightick swarm target` as a child process, killed on drop.
struct TargetProcess {
    child: Child,
    addr: SocketAddr,
}

impl TargetProcess {
    fn start(threads: usize) -> Result<Self> {
        let exe = std::env::current_exe().context("locating the hightick binary")?;
        let mut child = Command::new(exe)
            .args(["swarm", "target", "--listen", "127.0.0.1:0", "--threads"])
            .arg(threads.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting hightick swarm target")?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
        let mut banner = String::new();
        BufReader::new(stdout)
            .read_line(&mut banner)
            .context("reading the target's banner")?;
        let addr = banner
            .trim()
            .rsplit(' ')
            .next()
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| anyhow!("unexpected target banner: {banner:?}"))?;
        Ok(Self { child, addr })
    }
}

impl Drop for TargetProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn selftest(a: &SelftestArgs, player: MatchPlayer) -> Result<()> {
    let target = TargetProcess::start(a.target_threads)?;
    let rt = runtime(a.threads)?;
    let drivers = if a.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        a.threads
    };
    let plan = SelftestPlan {
        users: a.users,
        every: a.every,
        ramp_up: a.ramp_up,
        hold: a.duration,
        connections: a.connections,
        target: target.addr,
        drivers,
    };
    let scenario = Arc::new(Scenario::parse(&plan.scenario(), "selftest")?);
    eprintln!(
        "hightick swarm selftest: {} players, one request every {:?} each, against a target process on {}",
        a.users, a.every, target.addr
    );
    let baseline = process::rss_bytes();
    let stop = stop_on_ctrl_c(&rt);
    let line = ProgressLine::new(scenario.total_duration(), false);
    let hold_start = scenario.ramp_up + Duration::from_secs(2);
    let mut peak_rss = baseline;
    let mut cpu_at_hold: Option<(f64, Instant)> = None;
    let started = Instant::now();
    let result = rt.block_on(run(scenario.clone(), player, stop, |p| {
        line.show(p);
        peak_rss = peak_rss.max(process::rss_bytes());
        if cpu_at_hold.is_none() && p.elapsed >= hold_start {
            cpu_at_hold = Some((process::process_cpu_seconds(), Instant::now()));
        }
    }))?;
    let cpu_end = (process::process_cpu_seconds(), Instant::now());
    line.finish();
    drop(target);
    write_outputs(&result, a.json.as_deref(), None)?;

    let HoldFigures {
        held,
        failed: hold_failed,
        rps,
        error_pct,
        ..
    } = HoldFigures::of(&result, hold_start);
    let cores = cpu_at_hold.map_or(0.0, |(cpu, at)| {
        (cpu_end.0 - cpu) / cpu_end.1.duration_since(at).as_secs_f64().max(1e-9)
    });
    let per_user = peak_rss.saturating_sub(baseline) as f64 / a.users.max(1) as f64;
    println!(
        "held {held} players; {} requests ({} failed, {error_pct:.3} %) in {:.0} s; hold {rps:.0} req/s ({hold_failed} failed) on {cores:.2} cores; RSS {:.1} MiB at peak ({:.1} MiB before), {per_user:.0} B per player",
        result.total.requests,
        result.total.failed,
        started.elapsed().as_secs_f64(),
        peak_rss as f64 / 1048576.0,
        baseline as f64 / 1048576.0,
    );
    println!("FIGURE swarm_concurrent_users {held} users");
    println!("FIGURE swarm_error_rate {error_pct:.3} %");
    println!("FIGURE swarm_rss_per_user {per_user:.0} B");
    println!("FIGURE swarm_hold_rps {rps:.0} req/s");
    if cores > 0.0 {
        println!("FIGURE swarm_rps_per_core {:.0} req/s", rps / cores);
    }
    if error_pct >= 1.0 {
        bail!("{error_pct:.2} % of requests failed (the bar is under 1 %)");
    }
    Ok(())
}
