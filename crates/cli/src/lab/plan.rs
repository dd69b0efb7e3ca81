//! `hightick lab plan`: the capacity plan for a target, from the figures measured
//! in the run history (cargo feature `history`); `hightick lab record`: a
//! command's FIGURE lines into that history, so a plan can name them.

use std::io::Read as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hightick_engine::BotGame;
use hightick_lab::plan::{
    Deployment, Machine, Rehearsal, StoreBackend, Target, inputs_from_history, plan,
};
use hightick_lab::{FigureRecord, ResultsDb, parse_figures};

use crate::demo::record::HistoryDbArgs;

/// The store whose figures a plan uses.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Store {
    Sqlite,
    Postgres,
}

/// Flags of `hightick lab plan`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example: hightick lab plan --ccu 200000 --mode 5v5 --login-rate 2000 \
--requests-per-player-min 6 --purchases-per-player-min 0.5\n\n\
Figures come from the run history: games per core and match bots per core from \
`lab sweep --record`, the rest from bench output recorded with `lab record`. Each \
missing, stale (another commit) or foreign (another CPU model) figure is warned \
about with the command that measures it.\n\n\
From a rehearsal: hightick lab plan --from-rehearsal launch-run.json (the report of \
`hightick stack --json`): the plan of its players on its hosts, its matchmaking queue \
worked out and set against what the run measured."
)]
pub(super) struct PlanArgs {
    /// Concurrent players to carry (all counted as in a match).
    #[arg(long, required_unless_present = "from_rehearsal")]
    ccu: Option<u64>,
    /// The game's mode (default: its first, `5v5` for the arena).
    #[arg(long)]
    mode: Option<String>,
    /// Tick rate, Hz (default: the mode's own).
    #[arg(long, value_name = "HZ")]
    tick_rate: Option<u32>,
    /// Peak logins per second.
    #[arg(long, value_name = "PER_S", required_unless_present = "from_rehearsal")]
    login_rate: Option<f64>,
    /// Meta-game requests per player per minute.
    #[arg(long, value_name = "N", required_unless_present = "from_rehearsal")]
    requests_per_player_min: Option<f64>,
    /// Of those, purchases (ledger writes) per player per minute.
    #[arg(long, value_name = "N", default_value_t = 0.0)]
    purchases_per_player_min: f64,
    /// Match length in minutes (a design figure: results per second follow from it).
    #[arg(long, value_name = "MIN", default_value_t = 30.0)]
    match_minutes: f64,
    /// The store the service runs on; its figures are used.
    #[arg(long, value_enum, default_value = "postgres")]
    store: Store,
    /// CPU cores one GameServer pod requests (deploy/base: 2).
    #[arg(long, value_name = "N", default_value_t = Deployment::default().gameserver_cores)]
    gameserver_cores: u32,
    /// CPU cores one gateway replica requests (deploy/base: 1).
    #[arg(long, value_name = "N", default_value_t = Deployment::default().gateway_cores)]
    gateway_cores: u32,
    /// CPU cores one swarm agent requests (deploy/swarm: 2).
    #[arg(long, value_name = "N", default_value_t = Deployment::default().agent_cores)]
    agent_cores: u32,
    /// Percent of CPU kept free on gateways and agents (game servers: the sweep's own).
    #[arg(long, value_name = "PCT", default_value_t = (Deployment::default().cpu_headroom * 100.0).round())]
    headroom: f64,
    /// The FleetAutoscaler's sync interval (deploy/base: 10s).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    autoscaler_sync: Duration,
    /// CPU model the plan is for (default: this machine's); figures measured on
    /// another are warned about, and same-machine figures are preferred.
    #[arg(long, value_name = "MODEL")]
    machine: Option<String>,
    /// Build the plan from a rehearsal's own figures: the JSON report of
    /// `hightick stack --json` (players, arrivals, hosts, match length); the
    /// plan then works out its matchmaking queue with the rehearsal's hosts
    /// and sets its numbers against what the run measured. The target flags
    /// (--ccu, --login-rate, ...) come from the report.
    #[arg(
        long,
        value_name = "REPORT",
        conflicts_with_all = ["ccu", "login_rate", "requests_per_player_min", "mode"]
    )]
    from_rehearsal: Option<PathBuf>,
    /// Where the JSON plan goes.
    #[arg(long, value_name = "PATH", default_value = "lab-plan.json")]
    json: PathBuf,
    /// Where the HTML report goes.
    #[arg(long, value_name = "PATH", default_value = "lab-plan.html")]
    report: PathBuf,
    #[command(flatten)]
    db: HistoryDbArgs,
}

/// The target the flags name, for `mode_name` at `tick_rate_hz`.
fn target_from_flags(
    args: &PlanArgs,
    mode_name: String,
    players: u32,
    tick_rate_hz: u32,
) -> Result<Target> {
    let needed = |flag: &str| anyhow::anyhow!("{flag} is needed (or --from-rehearsal)");
    Ok(Target {
        ccu: args.ccu.ok_or_else(|| needed("--ccu"))?,
        mode: mode_name,
        players_per_match: players,
        tick_rate_hz,
        login_rate_per_s: args.login_rate.ok_or_else(|| needed("--login-rate"))?,
        requests_per_player_min: args
            .requests_per_player_min
            .ok_or_else(|| needed("--requests-per-player-min"))?,
        purchases_per_player_min: args.purchases_per_player_min,
        match_minutes: args.match_minutes,
        store: match args.store {
            Store::Sqlite => StoreBackend::Sqlite,
            Store::Postgres => StoreBackend::Postgres,
        },
    })
}

/// Runs `lab plan`.
pub(super) fn run<G: BotGame>(args: &PlanArgs) -> Result<()> {
    let rehearsal = args
        .from_rehearsal
        .as_deref()
        .map(Rehearsal::read)
        .transpose()?;
    let mode_name = crate::demo::mode_name::<G>(
        rehearsal
            .as_ref()
            .map(|r| r.mode.as_str())
            .or(args.mode.as_deref()),
    );
    let Some(mode) = G::mode(&mode_name) else {
        bail!(
            "--mode {mode_name}: {} has no such mode ({})",
            G::NAME,
            hightick_engine::mode::names(G::MODES)
        );
    };
    let tick_rate_hz = args.tick_rate.unwrap_or(mode.tick_rate_hz);
    let target = match &rehearsal {
        Some(r) => r.target(tick_rate_hz),
        None => target_from_flags(args, mode_name, u32::from(mode.players), tick_rate_hz)?,
    };
    let deployment = Deployment {
        gameserver_cores: args.gameserver_cores,
        gateway_cores: args.gateway_cores,
        agent_cores: args.agent_cores,
        cpu_headroom: args.headroom / 100.0,
        autoscaler_sync_s: args.autoscaler_sync.as_secs_f64(),
        ..Deployment::default()
    };
    let host = hightick_lab::load::this_host();
    let mut machine = Machine::of(&host);
    if let Some(model) = &args.machine {
        machine.cpu_model.clone_from(model);
    }
    let db = ResultsDb::open(&args.db.location())
        .with_context(|| format!("opening {}", args.db.describe()))?;
    let inputs = inputs_from_history(&db, target, deployment, machine, host.git_commit);
    db.close();
    let mut inputs = inputs?;
    inputs.rehearsal = rehearsal;
    let plan = plan(inputs);
    print!("{}", plan.render_table());
    println!();
    for line in plan.figures() {
        println!("{line}");
    }
    std::fs::write(&args.json, plan.to_json()?)
        .with_context(|| format!("writing {}", args.json.display()))?;
    println!("JSON: {}", args.json.display());
    std::fs::write(&args.report, plan.render_html()?)
        .with_context(|| format!("writing {}", args.report.display()))?;
    println!("report: {}", args.report.display());
    Ok(())
}

/// Flags of `hightick lab record`.
#[derive(Debug, Args)]
pub(super) struct RecordFiguresArgs {
    /// The command that printed the figures, as a person would rerun it.
    #[arg(long)]
    command: String,
    /// The file holding its output (default: standard input).
    #[arg(long, value_name = "PATH")]
    input: Option<PathBuf>,
    /// The commit the measured build came from (default: this checkout's HEAD).
    #[arg(long)]
    commit: Option<String>,
    #[command(flatten)]
    db: HistoryDbArgs,
}

/// Runs `lab record`.
pub(super) fn record(args: &RecordFiguresArgs) -> Result<()> {
    let (text, from) = match &args.input {
        Some(path) => (
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?,
            path.display().to_string(),
        ),
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading standard input")?;
            (text, "standard input".to_string())
        }
    };
    let figures = parse_figures(&text).with_context(|| format!("reading {from}"))?;
    let mut host = hightick_lab::load::this_host();
    if args.commit.is_some() {
        host.git_commit.clone_from(&args.commit);
    }
    let record = FigureRecord {
        command: args.command.clone(),
        figures,
    };
    let db = ResultsDb::open(&args.db.location())
        .with_context(|| format!("opening {}", args.db.describe()))?;
    let id = db.record_figures(&record, &host);
    db.close();
    let id = id?;
    for f in &record.figures {
        println!("  {} {} {}", f.name, f.value, f.unit);
    }
    println!(
        "recorded {} figure(s) as run #{id} in {}",
        record.figures.len(),
        args.db.describe()
    );
    Ok(())
}
