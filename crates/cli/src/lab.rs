//! `hightick lab`: the capacity lab's commands, wired to the `hightick-lab` crate.
//!
//! - `lab sweep`: density sweep (matches 1, 2, 4, 8, ... until budgets break), games
//!   per core, optional plaza rate probe; table, FIGURE lines, JSON and HTML.
//! - `lab breakdown`: the live tick's terms in one sitting (UDP floor plain and
//!   woken, the game's sans-IO tick warm and cold, a wake-up, a live run's server
//!   CPU per match tick) and what the live tick spends beyond their sum.
//! - `lab growth`: the tick's cost against the crowd (one sans-IO match per
//!   mode of a family of crowd sizes), the fitted exponent, a peer beside.
//! - `lab history`: per-subsystem mean and p99 across recorded commits (HTML;
//!   cargo feature `history`).
//! - `lab plan`: the capacity plan for a target (players, mode, logins, the
//!   meta-game mix) from the history's figures: game servers, gateway replicas,
//!   the store's load, the rehearsing swarm, the autoscalers' settings; each
//!   number names the measurement it came from (cargo feature `history`).
//! - `lab record`: a command's FIGURE lines into the history, with the command,
//!   commit, machine and date (cargo feature `history`).
//! - `lab compare A B`: per-subsystem differences against run-to-run noise; fails
//!   on a regression beyond `--threshold` so CI can gate on it. Runs are JSON files,
//!   or with the feature `history` also recorded run ids.

use hightick_engine::BotGame;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use hightick_lab::compare::{DEFAULT_FLOOR_US, DEFAULT_NOISE, DEFAULT_THRESHOLD};
use hightick_lab::sweep::PLAZA_RATES_HZ;
use hightick_lab::{
    CompareOptions, LoadSpec, Noise, RunSummary, StepPlan, SweepEvent, SweepPlan, SweepReport,
    compare, render_sweep_html, run_sweep,
};
#[cfg(feature = "history")]
use hightick_lab::{RecordedRun, ResultsDb};

use crate::demo::budget_book;
use crate::demo::progress::RunBar;
#[cfg(feature = "history")]
use crate::demo::record::{HistoryDbArgs, RecordArgs};

mod breakdown;
mod growth;
#[cfg(feature = "history")]
mod history;
#[cfg(feature = "history")]
mod plan;
mod soak;

/// `hightick lab ...`.
#[derive(Debug, Args)]
pub(crate) struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Debug, Subcommand)]
enum LabCommand {
    /// Step the number of matches until budgets break; report games per core.
    Sweep(Box<SweepArgs>),
    /// Run matches for a long time, sampling memory, files, threads, CPU per
    /// tick and late ticks every interval; judge them for growth.
    Soak(Box<soak::SoakArgs>),
    /// Measure the live tick's terms in one sitting (UDP floor, sans-IO tick
    /// warm and cold, wake-up, live run) and what the live tick spends beyond
    /// their sum.
    Breakdown(Box<breakdown::BreakdownArgs>),
    /// How the tick's cost grows with the crowd: one sans-IO match per mode
    /// of a family of crowd sizes, tick time and bytes per client against
    /// players, the fitted exponent, a peer's rooms charted beside (HTML).
    Growth(Box<growth::GrowthArgs>),
    /// Chart per-subsystem mean and p99 across recorded commits (HTML).
    #[cfg(feature = "history")]
    History(history::HistoryArgs),
    /// Plan capacity for a target (CCU, mode, logins, request mix) from the
    /// figures in the run history: hosts, GameServers, gateway replicas, store
    /// load, swarm agents, autoscaler settings; each number names its source.
    #[cfg(feature = "history")]
    Plan(Box<plan::PlanArgs>),
    /// Record the FIGURE lines of a command's output (standard input or
    /// --input) in the run history, with the command, commit, machine and date.
    #[cfg(feature = "history")]
    Record(plan::RecordFiguresArgs),
    #[cfg_attr(
        feature = "history",
        doc = "Compare two runs (ids or JSON files); exit non-zero on a regression."
    )]
    #[cfg_attr(
        not(feature = "history"),
        doc = "Compare two runs (JSON files); exit non-zero on a regression."
    )]
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
    #[cfg(feature = "history")]
    #[command(flatten)]
    record: RecordArgs,
}

/// Flags of `hightick lab compare`.
#[derive(Debug, Args)]
struct CompareArgs {
    #[cfg_attr(
        feature = "history",
        doc = "Baseline: a recorded run id (e.g. 12 or #12) or a JSON file (demo or sweep)."
    )]
    #[cfg_attr(
        not(feature = "history"),
        doc = "Baseline: a JSON file (demo or sweep)."
    )]
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
    #[cfg(feature = "history")]
    #[command(flatten)]
    db: HistoryDbArgs,
}

/// Runs a lab command.
pub(crate) fn run<G: BotGame>(args: &LabArgs) -> Result<()> {
    match &args.command {
        LabCommand::Sweep(a) => sweep::<G>(a),
        LabCommand::Soak(a) => soak::soak::<G>(a),
        LabCommand::Breakdown(a) => breakdown::breakdown::<G>(a),
        LabCommand::Growth(a) => growth::growth::<G>(a),
        #[cfg(feature = "history")]
        LabCommand::History(a) => history::run(a),
        #[cfg(feature = "history")]
        LabCommand::Plan(a) => plan::run::<G>(a),
        #[cfg(feature = "history")]
        LabCommand::Record(a) => plan::record(a),
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
    print_and_write(
        &report.render_table(),
        &report.figures(),
        &args.json,
        &report.to_json()?,
    )?;
    std::fs::write(&args.report, render_sweep_html(&report)?)
        .with_context(|| format!("writing {}", args.report.display()))?;
    println!("report: {}", args.report.display());
    #[cfg(feature = "history")]
    if args.record.record {
        let db = ResultsDb::open(&args.record.db.location())
            .with_context(|| format!("opening {}", args.record.db.describe()))?;
        let id = db.record_sweep(&report, &plan)?;
        db.close();
        println!("recorded as run #{id} in {}", args.record.db.describe());
    }
    Ok(())
}

/// Prints a lab result's table and FIGURE lines, writes its JSON to `path`
/// and says where.
fn print_and_write(table: &str, figures: &[String], path: &Path, json: &str) -> Result<()> {
    print!("{table}");
    println!();
    for line in figures {
        println!("{line}");
    }
    std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    println!("JSON: {}", path.display());
    Ok(())
}

/// A side of a comparison: its label, its run (for a sweep, the step it is compared
/// by) and, for a sweep, the whole sweep.
struct Side {
    label: String,
    summary: RunSummary,
    sweep: Option<SweepReport>,
}

#[cfg(feature = "history")]
impl From<RecordedRun> for Side {
    fn from(run: RecordedRun) -> Self {
        Side {
            label: run.label(),
            summary: run.summary,
            sweep: run.sweep,
        }
    }
}

fn run_id(text: &str) -> Option<i64> {
    text.strip_prefix('#').unwrap_or(text).parse().ok()
}

/// A side from a JSON file of a demo or a sweep.
fn read_file(text: &str) -> Result<Side> {
    let json = std::fs::read_to_string(text).with_context(|| format!("reading {text}"))?;
    if let Ok(sweep) = SweepReport::from_json(&json) {
        let summary = sweep
            .representative()
            .cloned()
            .with_context(|| format!("{text}: a sweep with no step"))?;
        return Ok(Side {
            label: text.to_owned(),
            summary,
            sweep: Some(sweep),
        });
    }
    let summary =
        RunSummary::from_json(&json).with_context(|| format!("{text}: not a run or sweep JSON"))?;
    Ok(Side {
        label: text.to_owned(),
        summary,
        sweep: None,
    })
}

/// A side from a recorded run id (the database opened on first use) or a JSON file.
#[cfg(feature = "history")]
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
        return run.map(Side::from).context("no results database");
    }
    read_file(text)
}

/// Both sides, and the noise they are judged by: measured from the history's
/// repeated runs when a side is a recorded run, else the `--noise` band.
#[cfg(feature = "history")]
fn read_sides(args: &CompareArgs) -> Result<(Side, Side, Noise)> {
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
    Ok((a, b, noise))
}

/// Both sides, from JSON files, and the `--noise` band they are judged by.
#[cfg(not(feature = "history"))]
fn read_sides(args: &CompareArgs) -> Result<(Side, Side, Noise)> {
    let read = |text: &str| {
        if run_id(text).is_some() && !Path::new(text).exists() {
            bail!(
                "{text}: no such file; run ids need the run history (cargo feature `history`), which this binary is built without"
            );
        }
        read_file(text)
    };
    Ok((
        read(&args.a)?,
        read(&args.b)?,
        Noise::fixed(args.noise / 100.0),
    ))
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
    let (a, b, noise) = read_sides(args)?;
    // Two sweeps compare like for like: at the largest match count both ran.
    let (mut a_summary, mut b_summary) = (&a.summary, &b.summary);
    let mut note = None;
    if let (Some(sa), Some(sb)) = (&a.sweep, &b.sweep) {
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
    let mut result = compare(
        (&a.label, a_summary),
        (&b.label, b_summary),
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
