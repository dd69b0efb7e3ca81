//! `demo`: one load run of the capacity lab on this machine — a server (a
//! child process running this binary's `serve`) with N matches of the game's
//! first mode (or `--mode`) and match bots (this process) playing every seat. It warms up, measures a steady window, prints the
//! per-subsystem frame-time table with budget violations, traffic per client and the
//! CPU-normalized games per core, writes `report.html` (and JSON with `--json`), and
//! with `--record` (cargo feature `history`) stores the run in the results database.

pub(crate) mod link;
pub(crate) mod progress;
#[cfg(feature = "history")]
pub(crate) mod record;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use hightick_engine::BotGame;
#[cfg(feature = "history")]
use hightick_lab::ResultsDb;
use hightick_lab::{BudgetBook, LoadSpec, render_html, run_load};

use progress::RunBar;
#[cfg(feature = "history")]
use record::RecordArgs;

/// Flags of `hightick demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Matches to run at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=512))]
    matches: u32,
    /// The game's mode (default: its first, `5v5` for the arena).
    #[arg(long)]
    mode: Option<String>,
    /// Length of the measured window (e.g. 20s, 2m).
    #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Warm-up before measuring (connects, first rounds).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Server worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Frame-time budgets file (default: the shipped budgets).
    #[arg(long, value_name = "FILE")]
    budgets: Option<PathBuf>,
    /// Also write the summary as JSON here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Where the HTML report goes.
    #[arg(long, value_name = "PATH", default_value = "report.html")]
    report: PathBuf,
    #[command(flatten)]
    link: link::LinkArgs,
    /// The server's per-client adaptation to congested links: on or off
    /// (default: the server's, on).
    #[arg(long, value_name = "on|off", value_parser = crate::serve::on_off)]
    adapt: Option<bool>,
    #[cfg(feature = "history")]
    #[command(flatten)]
    record: RecordArgs,
}

/// The budgets file named, or the shipped one.
pub(crate) fn budget_book(path: Option<&std::path::Path>) -> Result<BudgetBook> {
    Ok(match path {
        Some(p) => BudgetBook::load(p)?,
        None => BudgetBook::shipped(),
    })
}

/// The game's mode called `name`, or its first.
pub(crate) fn mode_name<G: BotGame>(name: Option<&str>) -> String {
    name.map(str::to_owned)
        .or_else(|| G::MODES.first().map(|m| m.name.to_owned()))
        .unwrap_or_default()
}

/// Runs the demo of game `G`.
pub(crate) fn run<G: BotGame>(args: &DemoArgs) -> Result<()> {
    let budgets = budget_book(args.budgets.as_deref())?;
    let exe = std::env::current_exe().context("locating this binary")?;
    let mode = mode_name::<G>(args.mode.as_deref());
    let spec = LoadSpec {
        title: format!("{} demo", G::NAME),
        warmup: args.warmup,
        duration: args.duration,
        workers: args.workers,
        link: args.link.spec(),
        adapt: args.adapt,
        ..LoadSpec::new(exe, &mode, args.matches)
    };
    let run = spec.validate::<G>()?;
    eprintln!(
        "{} demo: {} x {} at {} Hz, {} bots; warm-up {:?}, measuring {:?}",
        G::NAME,
        args.matches,
        mode,
        run.config.tick_rate_hz,
        args.matches * u32::from(run.mode.players),
        args.warmup,
        args.duration
    );
    if let Some(link) = &spec.link {
        eprintln!(
            "{:.0}% of the bots behind the {} link (impairment proxy in this process, seed {})",
            100.0 * link.share,
            link.link,
            link.seed
        );
    }
    let bar = RunBar::new("");
    let summary = run_load::<G>(&spec, &budgets, &mut |p| bar.update(p));
    bar.finish();
    let summary = summary?;

    println!("{}", summary.render_table());
    for line in summary.figures() {
        println!("{line}");
    }
    if let Some(path) = &args.json {
        std::fs::write(path, summary.to_json()?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("JSON: {}", path.display());
    }
    std::fs::write(&args.report, render_html(&summary)?)
        .with_context(|| format!("writing {}", args.report.display()))?;
    println!("report: {}", args.report.display());
    #[cfg(feature = "history")]
    if args.record.record {
        let db = ResultsDb::open(&args.record.db.location())
            .with_context(|| format!("opening {}", args.record.db.describe()))?;
        let config = serde_json::json!({
            "command": "demo",
            "mode": spec.mode,
            "matches": spec.matches,
            "duration_s": spec.duration.as_secs_f64(),
            "warmup_s": spec.warmup.as_secs_f64(),
            "workers": spec.workers,
            "link": spec.link,
            "adapt": spec.adapt,
            "budgets": budgets.file(),
        });
        let id = db.record_demo(&summary, &config)?;
        db.close();
        println!("recorded as run #{id} in {}", args.record.db.describe());
    }
    Ok(())
}
