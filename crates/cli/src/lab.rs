//! `hightick lab`: the capacity lab's commands, wired to the `hightick-lab` crate.
//!
//! - `lab sweep`: density sweep (matches 1, 2, 4, 8, ... until budgets break), games
//!   per core, optional plaza rate probe; table, FIGURE lines, JSON and HTML.
//! - `lab history`: per-subsystem mean and p99 across recorded commits (HTML).
//! - `lab compare A B`: per-subsystem differences against run-to-run noise; fails
//!   on a regression beyond `--threshold` so CI can gate on it.

use hightick_engine::BotGame;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use hightick_lab::compare::{DEFAULT_FLOOR_US, DEFAULT_NOISE, DEFAULT_THRESHOLD};
use hightick_lab::sweep::PLAZA_RATES_HZ;
use hightick_lab::{
    CompareOptions, LoadSpec, Noise, RecordedRun, ResultsDb, RunSummary, StepPlan, SweepEvent,
    SweepPlan, SweepReport, commit_points, compare, render_history_html, render_history_table,
    render_sweep_html, run_sweep,
};

use crate::demo::budget_book;
use crate::demo::progress::RunBar;
use crate::demo::record::{HistoryDbArgs, RecordArgs};

/// `hightick lab ...`.
#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Debug, Subcommand)]
enum LabCommand {
    /// Step the number of matches until budgets break; report games per core.
    Sweep(Box<SweepArgs>),
    /// Chart per-subsystem mean and p99 across recorded commits (HTML).
    History(HistoryArgs),
    /// Compare two runs (ids or JSON files); exit non-zero on a regression.
    Compare(CompareArgs),
}

/// Flags of `hightick lab sweep`.
#[derive(Debug, Args)]
struct SweepArgs {
    /// The game's mode swept (default: its first, `5v5` for the arena).
    #[arg(long)]
    mode: Option<String>,
    /// Match counts to run, e.g. 1,2,4,8 (every step runs) [default: 1,2,4,8].
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        conflicts_with = "max"
    )]
    matches: Vec<u32>,
    /// Double the matches from 1 up to N, stopping at the first step that breaks.
    #[arg(long, value_name = "N")]
    max: Option<u32>,
    /// Measured window of each step (e.g. 20s).
    #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
    step_duration: Duration,
    /// Warm-up of each step, not measured.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Worker threads per server instance (0: one per CPU it may use).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Server processes; matches are spread over them round-robin.
    #[arg(long, default_value_t = 1)]
    instances: usize,
    /// Bind instance i to CPUs of NUMA node i mod nodes (instances sharing a node
    /// split its CPUs).
    #[arg(long)]
    bind: bool,
    /// Frame-time budgets file (default: the shipped budgets).
    #[arg(long, value_name = "FILE")]
    budgets: Option<PathBuf>,
    /// Also probe one 100-player plaza match at 128, 96, 64, 48, 30 and 20 Hz,
    /// highest first, stopping at the first rate within plaza100's budget.
    #[arg(long)]
    plaza: bool,
    /// Plaza tick rates to probe, 1 to 256 Hz (implies --plaza); run highest
    /// first, stopping at the first within budget.
    #[arg(long, value_delimiter = ',', value_name = "HZ")]
    plaza_rates: Vec<u32>,
    /// Times a step that breaks is run again before the sweep believes it (a
    /// shared host's noise can break one run); broken runs stay in the report.
    #[arg(long, value_name = "N", default_value_t = 1)]
    retries: u32,
    /// Where the JSON result goes.
    #[arg(long, value_name = "PATH", default_value = "lab-sweep.json")]
    json: PathBuf,
    /// Where the HTML report goes.
    #[arg(long, value_name = "PATH", default_value = "lab-sweep.html")]
    report: PathBuf,
    #[command(flatten)]
    record: RecordArgs,
}

/// Flags of `hightick lab history`.
#[derive(Debug, Args)]
struct HistoryArgs {
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

/// Flags of `hightick lab compare`.
#[derive(Debug, Args)]
struct CompareArgs {
    /// Baseline: a recorded run id (e.g. 12 or #12) or a JSON file (demo or sweep).
    a: String,
    /// Candidate, the same way.
    b: String,
    /// Percent slower (beyond noise) that counts as a regression.
    #[arg(long, default_value_t = DEFAULT_THRESHOLD * 100.0, value_name = "PCT")]
    threshold: f64,
    /// Noise band in percent where no repeated runs measured it.
    #[arg(long, default_value_t = DEFAULT_NOISE * 100.0, value_name = "PCT")]
    noise: f64,
    /// Changes smaller than this many microseconds never count.
    #[arg(long, default_value_t = DEFAULT_FLOOR_US, value_name = "US")]
    floor_us: f64,
    #[command(flatten)]
    db: HistoryDbArgs,
}

/// Runs a lab command.
pub fn run<G: BotGame>(args: &LabArgs) -> Result<()> {
    match &args.command {
        LabCommand::Sweep(a) => sweep::<G>(a),
        LabCommand::History(a) => history(a),
        LabCommand::Compare(a) => compare_runs(a),
    }
}

fn sweep<G: BotGame>(args: &SweepArgs) -> Result<()> {
    let budgets = budget_book(args.budgets.as_deref())?;
    let exe = std::env::current_exe().context("locating this binary")?;
    let mode = crate::demo::mode_name::<G>(args.mode.as_deref());
    let steps = match (args.max, args.matches.is_empty()) {
        (Some(max), _) => StepPlan::Doubling { max },
        (None, true) => StepPlan::matches(vec![1, 2, 4, 8])?,
        (None, false) => StepPlan::matches(args.matches.clone())?,
    };
    let plaza_rates = if !args.plaza_rates.is_empty() {
        args.plaza_rates.clone()
    } else if args.plaza {
        PLAZA_RATES_HZ.to_vec()
    } else {
        Vec::new()
    };
    let plan = SweepPlan {
        base: LoadSpec {
            warmup: args.warmup,
            duration: args.step_duration,
            workers: args.workers,
            instances: args.instances,
            bind: args.bind,
            ..LoadSpec::new(exe, &mode, 1)
        },
        steps,
        plaza_rates,
        retries: args.retries,
    };
    let counts = plan.steps.counts();
    eprintln!(
        "{} lab sweep: {} at matches {:?}{}, {:?} warm-up + {:?} per step, {} instance(s){}",
        G::NAME,
        mode,
        counts,
        if plan.plaza_rates.is_empty() {
            String::new()
        } else {
            format!(
                ", plaza100 at {:?} Hz (highest first, until one passes)",
                hightick_lab::sweep::plaza_rates(&plan.plaza_rates)?
            )
        },
        args.warmup,
        args.step_duration,
        args.instances,
        if args.bind { ", bound" } else { "" }
    );
    let mut bar: Option<RunBar> = None;
    let report = run_sweep::<G>(&plan, &budgets, &mut |event| match event {
        SweepEvent::Started { label, step, of } => {
            bar = Some(RunBar::new(format!("[{step}/{of}] {label}")));
        }
        SweepEvent::Progress(p) => {
            if let Some(b) = &bar {
                b.update(p);
            }
        }
        SweepEvent::Finished {
            label,
            summary,
            passed,
        } => {
            if let Some(b) = bar.take() {
                b.finish();
            }
            eprintln!(
                "  {label}: tick p99 {:.1} us, server {:.3} cores, {:.1} games/core: {}",
                summary.tick.p99_us,
                summary.server_cpu_cores,
                summary.gpc,
                if passed {
                    "passed"
                } else {
                    "FAILED budget or CPU headroom"
                }
            );
        }
    });
    if let Some(b) = bar.take() {
        b.finish();
    }
    let report = report?;

    print!("{}", report.render_table());
    println!();
    for line in report.figures() {
        println!("{line}");
    }
    std::fs::write(&args.json, report.to_json()?)
        .with_context(|| format!("writing {}", args.json.display()))?;
    println!("JSON: {}", args.json.display());
    std::fs::write(&args.report, render_sweep_html(&report)?)
        .with_context(|| format!("writing {}", args.report.display()))?;
    println!("report: {}", args.report.display());
    if args.record.record {
        let db = ResultsDb::open(&args.record.db.location())
            .with_context(|| format!("opening {}", args.record.db.describe()))?;
        let id = db.record_sweep(&report, &plan)?;
        db.close();
        println!("recorded as run #{id} in {}", args.record.db.describe());
    }
    Ok(())
}

fn history(args: &HistoryArgs) -> Result<()> {
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

/// A side of a comparison: a recorded run or a JSON file.
enum Side {
    Recorded(RecordedRun),
    File {
        label: String,
        summary: RunSummary,
        sweep: Option<SweepReport>,
    },
}

impl Side {
    fn label(&self) -> String {
        match self {
            Side::Recorded(r) => r.label(),
            Side::File { label, .. } => label.clone(),
        }
    }

    fn summary(&self) -> &RunSummary {
        match self {
            Side::Recorded(r) => &r.summary,
            Side::File { summary, .. } => summary,
        }
    }

    fn sweep(&self) -> Option<&SweepReport> {
        match self {
            Side::Recorded(r) => r.sweep.as_ref(),
            Side::File { sweep, .. } => sweep.as_ref(),
        }
    }
}

fn run_id(text: &str) -> Option<i64> {
    text.strip_prefix('#').unwrap_or(text).parse().ok()
}

fn read_side(text: &str, db: &mut Option<ResultsDb>, args: &CompareArgs) -> Result<Side> {
    if let Some(id) = run_id(text)
        && !Path::new(text).exists()
    {
        if db.is_none() {
            *db = Some(
                ResultsDb::open(&args.db.location())
                    .with_context(|| format!("opening {}", args.db.describe()))?,
            );
        }
        let run = db.as_ref().map(|d| d.get(id)).transpose()?;
        return run.map(Side::Recorded).context("no results database");
    }
    let json = std::fs::read_to_string(text).with_context(|| format!("reading {text}"))?;
    if let Ok(sweep) = SweepReport::from_json(&json) {
        let summary = sweep
            .representative()
            .cloned()
            .with_context(|| format!("{text}: a sweep with no step"))?;
        return Ok(Side::File {
            label: text.to_owned(),
            summary,
            sweep: Some(sweep),
        });
    }
    let summary =
        RunSummary::from_json(&json).with_context(|| format!("{text}: not a run or sweep JSON"))?;
    Ok(Side::File {
        label: text.to_owned(),
        summary,
        sweep: None,
    })
}

fn compare_runs(args: &CompareArgs) -> Result<()> {
    for (name, v) in [("--threshold", args.threshold), ("--noise", args.noise)] {
        if !(0.0..=10_000.0).contains(&v) {
            bail!("{name}: a percentage from 0 to 10000");
        }
    }
    if !(args.floor_us >= 0.0 && args.floor_us.is_finite()) {
        bail!("--floor-us: zero or more microseconds");
    }
    let mut db = None;
    let a = read_side(&args.a, &mut db, args)?;
    let b = read_side(&args.b, &mut db, args)?;
    let noise = match &db {
        Some(d) => Noise::measured(&d.list(None, None)?, args.noise / 100.0, args.floor_us),
        None => Noise::fixed(args.noise / 100.0),
    };
    if let Some(d) = db {
        d.close();
    }
    // Two sweeps compare like for like: at the largest match count both ran.
    let (mut a_summary, mut b_summary) = (a.summary(), b.summary());
    let mut note = None;
    if let (Some(sa), Some(sb)) = (a.sweep(), b.sweep()) {
        let common = sa
            .steps
            .iter()
            .map(|s| s.matches)
            .filter(|m| sb.step(*m).is_some())
            .max();
        if let Some(m) = common
            && let (Some(x), Some(y)) = (sa.step(m), sb.step(m))
        {
            (a_summary, b_summary) = (x, y);
            note = Some(format!(
                "sweeps compared at {m} matches, the largest step both ran"
            ));
        }
    }
    let options = CompareOptions {
        threshold: args.threshold / 100.0,
        floor_us: args.floor_us,
    };
    let (a_label, b_label) = (a.label(), b.label());
    let mut result = compare(
        (&a_label, a_summary),
        (&b_label, b_summary),
        &noise,
        options,
    );
    result.notes.extend(note);
    print!("{}", result.render_table());
    let regressions = result.regressions();
    if !regressions.is_empty() {
        bail!(
            "{} regression{} beyond {}%",
            regressions.len(),
            if regressions.len() == 1 { "" } else { "s" },
            args.threshold
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_may_carry_a_hash() {
        assert_eq!(run_id("12"), Some(12));
        assert_eq!(run_id("#12"), Some(12));
        assert_eq!(run_id("a.json"), None);
    }
}
