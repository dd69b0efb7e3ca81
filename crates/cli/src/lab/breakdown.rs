//! `hightick lab breakdown`: the live tick's terms in one sitting (the
//! game's sans-IO tick warm and cold, the UDP floor plain and woken, a
//! wake-up, then a live run's server CPU per match tick) and what the live
//! tick spends beyond their sum; a table, FIGURE lines and JSON.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use hightick_engine::BotGame;
use hightick_lab::{BreakdownEvent, BreakdownPlan, LoadSpec, run_breakdown};

use crate::demo::budget_book;
use crate::demo::progress::RunBar;

/// Flags of `hightick lab breakdown`.
#[derive(Debug, Args)]
pub(super) struct BreakdownArgs {
    /// The game's mode (default: its first, `5v5` for the arena).
    #[arg(long)]
    mode: Option<String>,
    /// Matches of the live run.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=4096))]
    matches: u32,
    /// Measured window of the live run.
    #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Warm-up of the live run, not measured.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Worker threads of the live server (0: one per CPU it may use).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Simulated time measured of the sans-IO match, warm and again cold.
    #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
    sans_io: Duration,
    /// Simulated time of the sans-IO match before it is measured.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    sans_io_warmup: Duration,
    /// Rounds the sans-IO runs and the wake-ups are split into (each term
    /// is the median of its rounds).
    #[arg(long, default_value_t = 10)]
    rounds: u32,
    /// Samples of the UDP floor per variant.
    #[arg(long, default_value_t = 200)]
    floor_samples: usize,
    /// Ticks per floor sample.
    #[arg(long, default_value_t = 100)]
    floor_ticks: usize,
    /// Wall time of the wake-up measurement.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    wake: Duration,
    /// Frame-time budgets file (default: the shipped budgets).
    #[arg(long, value_name = "FILE")]
    budgets: Option<PathBuf>,
    /// Where the JSON result goes.
    #[arg(long, value_name = "PATH", default_value = "lab-breakdown.json")]
    json: PathBuf,
}

pub(super) fn breakdown<G: BotGame>(args: &BreakdownArgs) -> Result<()> {
    let budgets = budget_book(args.budgets.as_deref())?;
    let exe = std::env::current_exe().context("locating this binary")?;
    let mode = crate::demo::mode_name::<G>(args.mode.as_deref());
    let plan = BreakdownPlan {
        sans_io_warmup: args.sans_io_warmup,
        sans_io: args.sans_io,
        rounds: args.rounds,
        floor_samples: args.floor_samples,
        floor_ticks_per_sample: args.floor_ticks,
        wake: args.wake,
        ..BreakdownPlan::new(LoadSpec {
            title: format!("hightick lab breakdown: {mode} x {}", args.matches),
            warmup: args.warmup,
            duration: args.duration,
            workers: args.workers,
            ..LoadSpec::new(exe, &mode, args.matches)
        })
    };
    eprintln!(
        "{} lab breakdown: {mode}; sans-IO {:?} + {:?} warm-up, warm and cold; UDP floor; \
         wake-ups {:?}; live {} matches, {:?} warm-up + {:?}",
        G::NAME,
        args.sans_io,
        args.sans_io_warmup,
        args.wake,
        args.matches,
        args.warmup,
        args.duration
    );
    let mut bar: Option<RunBar> = None;
    let report = run_breakdown::<G>(&plan, &budgets, &mut |event| match event {
        BreakdownEvent::Started(term) => {
            if term == "live" {
                bar = Some(RunBar::new(format!("live, {} matches", args.matches)));
            } else {
                eprintln!("  {term} ...");
            }
        }
        BreakdownEvent::Measured(term, us) => {
            if let Some(b) = bar.take() {
                b.finish();
            }
            eprintln!("  {term}: {us:.2} us per match tick");
        }
        BreakdownEvent::Progress(p) => {
            if let Some(b) = &bar {
                b.update(p);
            }
        }
    });
    if let Some(b) = bar.take() {
        b.finish();
    }
    let report = report?;
    super::print_and_write(
        &report.render_table(),
        &report.figures(),
        &args.json,
        &report.to_json()?,
    )
}
