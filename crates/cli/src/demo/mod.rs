//! `hightick demo`: one load run of the capacity lab on this machine — a server (a
//! child process running `hightick serve`) with N 5v5 matches and match bots (this
//! process) playing every seat. It warms up, measures a steady window, prints the
//! per-subsystem frame-time table with budget violations, traffic per client and the
//! CPU-normalized games per core, writes `report.html` (and JSON with `--json`), and
//! with `--record` stores the run in the results database.

pub mod progress;
pub mod record;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use hightick_lab::{BudgetBook, LoadSpec, ResultsDb, render_html, run_load};

use progress::RunBar;
use record::RecordArgs;

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
    record: RecordArgs,
}

/// The budgets file named, or the shipped one.
pub fn budget_book(path: Option<&std::path::Path>) -> Result<BudgetBook> {
    Ok(match path {
        Some(p) => BudgetBook::load(p)?,
        None => BudgetBook::shipped(),
    })
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<()> {
    let budgets = budget_book(args.budgets.as_deref())?;
    let exe = std::env::current_exe().context("locating the hightick binary")?;
    let spec = LoadSpec {
        title: "hightick demo".to_owned(),
        warmup: args.warmup,
        duration: args.duration,
        workers: args.workers,
        ..LoadSpec::new(exe, "5v5", args.matches)
    };
    spec.validate()?;
    eprintln!(
        "hightick demo: {} x 5v5 at 128 Hz, {} bots; warm-up {:?}, measuring {:?}",
        args.matches,
        args.matches * 10,
        args.warmup,
        args.duration
    );
    let bar = RunBar::new("");
    let summary = run_load(&spec, &budgets, &mut |p| bar.update(p));
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
            "budgets": budgets.file(),
        });
        let id = db.record_demo(&summary, &config)?;
        db.close();
        println!("recorded as run #{id} in {}", args.record.db.describe());
    }
    Ok(())
}
