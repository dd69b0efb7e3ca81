//! `hightick lab history`: per-subsystem mean and p99 across recorded commits, as a
//! table and an HTML report (cargo feature `history`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use hightick_lab::{ResultsDb, commit_points, render_history_html, render_history_table};

use crate::demo::record::HistoryDbArgs;

/// Flags of `hightick lab history`.
#[derive(Debug, Args)]
pub(super) struct HistoryArgs {
    /// Only runs of this kind: demo or sweep.
    #[arg(long)]
    kind: Option<String>,
    /// Only runs of this mode.
    #[arg(long)]
    mode: Option<String>,
    /// Where the HTML report goes.
    #[arg(long, value_name = "PATH", default_value = "lab-history.html")]
    report: PathBuf,
    #[command(flatten)]
    db: HistoryDbArgs,
}

/// Runs `lab history`.
pub(super) fn run(args: &HistoryArgs) -> Result<()> {
    let db = ResultsDb::open(&args.db.location())
        .with_context(|| format!("opening {}", args.db.describe()))?;
    let runs = db.list(args.kind.as_deref(), args.mode.as_deref())?;
    db.close();
    if runs.is_empty() {
        bail!(
            "no recorded runs{} in {} (record some with --record)",
            filter_text(args),
            args.db.describe()
        );
    }
    let points = commit_points(&runs);
    let mut loads: Vec<(String, String, u32, String)> = runs
        .iter()
        .map(|r| {
            (
                r.kind.clone(),
                r.summary.mode.clone(),
                r.summary.matches,
                r.build_profile.clone(),
            )
        })
        .collect();
    loads.sort();
    loads.dedup();
    print!("{}", render_history_table(&points));
    if loads.len() > 1 {
        println!(
            "note: {} different kinds, loads or build profiles are mixed; narrow with --kind and --mode",
            loads.len()
        );
    }
    let title = format!("hightick lab history{}", filter_text(args));
    std::fs::write(&args.report, render_history_html(&title, &points)?)
        .with_context(|| format!("writing {}", args.report.display()))?;
    println!("report: {}", args.report.display());
    Ok(())
}

fn filter_text(args: &HistoryArgs) -> String {
    let mut parts = Vec::new();
    if let Some(k) = &args.kind {
        parts.push(format!("kind {k}"));
    }
    if let Some(m) = &args.mode {
        parts.push(format!("mode {m}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}
