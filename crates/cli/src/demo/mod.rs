//! `hightick demo`: a server (a child process running `hightick serve`) and
//! match bots (this process) on one machine. It warms up, measures a steady
//! window, then prints the per-subsystem frame-time table, traffic per
//! client and the CPU-normalized games per core, and writes `report.html`
//! (and JSON with `--json`).

mod admin_client;
mod server_process;
mod summary;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use clap::Args;
use hightick_lab::summary::BotRow;
use hightick_net::{ConnectToken, Key, TokenParams};
use hightick_server::{CreateMatch, format_key};
use hightick_swarm::{BotTarget, Fleet, FleetConfig, FleetReport};

use admin_client::AdminClient;
use server_process::ServerProcess;
use summary::{RunShape, Window};

/// Players per 5v5 match.
const PLAYERS: u32 = 10;
/// The demo's match rate.
const TICK_RATE_HZ: u32 = 128;

/// Flags of `hightick demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// 10-player 5v5 matches to run at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=512))]
    matches: u32,
    /// Length of the measured window (e.g. 20s, 2m).
    #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Warm-up before measuring (connects, first rounds).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Server worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Also write the summary as JSON here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Where the HTML report goes.
    #[arg(long, value_name = "PATH", default_value = "report.html")]
    report: PathBuf,
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<()> {
    if args.duration < Duration::from_secs(1) {
        bail!("--duration: at least 1s");
    }
    let dir = std::env::temp_dir().join(format!("hightick-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let result = run_in(args, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(args: &DemoArgs, dir: &std::path::Path) -> Result<()> {
    let key = Key::generate(&mut rand::rng());
    let key_file = dir.join("key.hex");
    write_secret(&key_file, &format_key(&key))?;
    let workers = if args.workers == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.workers
    };
    eprintln!(
        "hightick demo: {} x 5v5 at {TICK_RATE_HZ} Hz, {} bots, {workers} server workers; warm-up {:?}, measuring {:?}",
        args.matches,
        args.matches * PLAYERS,
        args.warmup,
        args.duration
    );
    let server = ServerProcess::start(workers, &key_file)?;
    let admin = AdminClient::new(server.admin);
    admin.wait_healthy(Duration::from_secs(10))?;

    let mut targets = Vec::with_capacity((args.matches * PLAYERS) as usize);
    for m in 0..u64::from(args.matches) {
        let roster: Vec<u64> = (1..=u64::from(PLAYERS))
            .map(|p| 100 * (m + 1) + p)
            .collect();
        let mut request = CreateMatch::new("5v5", roster.clone());
        request.seed = Some(m + 1);
        let info = admin.create_match(&request)?;
        for id in roster {
            targets.push(BotTarget {
                server: info.address,
                token: mint_token(&key, id, info.address)?,
            });
        }
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("hightick-bots")
        .enable_all()
        .build()?;
    let _guard = runtime.enter();
    let config = FleetConfig {
        duration: args.warmup + args.duration + Duration::from_secs(30),
        tick_rate_hz: TICK_RATE_HZ,
        ..FleetConfig::default()
    };
    let fleet = Fleet::launch(&targets, &config, Arc::new(AtomicBool::new(false)))?;

    let run_start_uptime_s = admin.stats()?.uptime_s;
    let start = Instant::now();
    let progress = indicatif::ProgressBar::new((args.warmup + args.duration).as_secs());
    progress.set_style(
        indicatif::ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut window_start = None;
    while start.elapsed() < args.warmup + args.duration {
        std::thread::sleep(Duration::from_millis(500));
        let stats = admin.stats()?;
        if window_start.is_none() && start.elapsed() >= args.warmup {
            admin.reset_stats()?;
            let at = admin.stats()?;
            let cpu =
                hightick_server::report::cpu_seconds_of(&server.pid().to_string()).unwrap_or(0.0);
            window_start = Some((at, cpu, Instant::now()));
        }
        let live = fleet.live();
        let point = stats.timeline.last();
        progress.set_position(start.elapsed().as_secs());
        progress.set_message(format!(
            "{} {}/{} bots, server {:.2} cores, tick p99 {:.0} us, kills {}",
            if window_start.is_some() {
                "measuring"
            } else {
                "warming up"
            },
            live.connected,
            fleet.bots(),
            point.map_or(0.0, |p| p.cpu_cores),
            point.map_or(0.0, |p| p.tick_p99_us),
            live.kills() / u64::from(PLAYERS),
        ));
    }
    let end = admin.stats()?;
    let cpu_end_s =
        hightick_server::report::cpu_seconds_of(&server.pid().to_string()).unwrap_or(0.0);
    let end_at = Instant::now();
    progress.finish_and_clear();
    fleet.stop();
    let report = runtime.block_on(fleet.finish());
    server.stop(Duration::from_secs(10))?;

    let Some((start_stats, cpu_start_s, start_at)) = window_start else {
        bail!("the run ended before the measured window began");
    };
    let window = Window {
        start: start_stats,
        end,
        cpu_start_s,
        cpu_end_s,
        wall_s: end_at.duration_since(start_at).as_secs_f64(),
        run_start_uptime_s,
    };
    let shape = RunShape {
        mode: "5v5".to_owned(),
        tick_rate_hz: TICK_RATE_HZ,
        matches: args.matches,
        players_per_match: PLAYERS,
        warmup_s: args.warmup.as_secs_f64(),
    };
    let summary = summary::build(&shape, &window, bot_row(&report));
    println!("{}", summary.render_table());
    for line in summary.figures() {
        println!("{line}");
    }
    if let Some(path) = &args.json {
        std::fs::write(path, summary.to_json()?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("JSON: {}", path.display());
    }
    std::fs::write(&args.report, hightick_lab::render_html(&summary)?)
        .with_context(|| format!("writing {}", args.report.display()))?;
    println!("report: {}", args.report.display());
    Ok(())
}

fn bot_row(report: &FleetReport) -> BotRow {
    let c = &report.counters;
    BotRow {
        bots: report.bots as u32,
        connected: c.connected as u32,
        snapshots: c.snapshots,
        decode_errors: c.decode_errors,
        desyncs: c.desyncs,
        // Each kill and round end reaches all ten players of its match.
        kills: c.kills() / u64::from(PLAYERS),
        rounds: c.round_ends() / u64::from(PLAYERS),
        snapshot_interval_p50_ms: report.interarrival_p50_us() as f64 / 1000.0,
        snapshot_interval_p99_ms: report.interarrival_p99_us() as f64 / 1000.0,
    }
}

fn mint_token(key: &Key, client_id: u64, server: std::net::SocketAddr) -> Result<Vec<u8>> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let token = ConnectToken::generate(
        &TokenParams {
            protocol_id: hightick_proto::PROTOCOL_ID,
            client_id,
            create_unix: now,
            expire_unix: now + 300,
            timeout_seconds: 5,
            server_addresses: &[server],
            user_data: &[],
        },
        key,
        &mut rand::rng(),
    )?;
    Ok(token.encode().to_vec())
}

fn write_secret(path: &std::path::Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(text.as_bytes())?;
    Ok(())
}
