//! `hightick lab growth`: the tick's cost against the crowd, one sans-IO
//! match per mode of a family of crowd sizes, with a peer's rooms beside;
//! a table, FIGURE lines, JSON and an HTML report with the growth charts.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use hightick_engine::BotGame;
use hightick_lab::growth::{GrowthPlan, read_peer_csv, run_growth};

/// Flags of `hightick lab growth`.
#[derive(Debug, Args)]
pub(super) struct GrowthArgs {
    /// The game's modes, one crowd size each (the arena's: plaza25,plaza50,plaza100,plaza200,plaza400).
    #[arg(long, value_delimiter = ',', value_name = "LIST", required = true)]
    modes: Vec<String>,
    /// Simulated time of each match before it is measured (past a buy phase).
    #[arg(long, default_value = "4s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Simulated time measured of each match.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    measured: Duration,
    /// Rounds the measured time is split into (the tick time is their median).
    #[arg(long, default_value_t = 8)]
    rounds: u32,
    /// Fit the exponent over modes with at least this many players.
    #[arg(long, default_value_t = 50)]
    fit_from: u16,
    /// A peer's rooms of the same shapes, charted beside: a CSV of
    /// `players,us_per_tick,bytes_per_client_s` (e.g. Colyseus' from ../shared/peers).
    #[arg(long, value_name = "CSV")]
    peer: Option<PathBuf>,
    /// The peer's name in the table and charts.
    #[arg(long, default_value = "peer", requires = "peer")]
    peer_name: String,
    /// Where the JSON result goes.
    #[arg(long, value_name = "PATH", default_value = "lab-growth.json")]
    json: PathBuf,
    /// Where the HTML report goes.
    #[arg(long, value_name = "PATH", default_value = "lab-growth.html")]
    report: PathBuf,
}

pub(super) fn growth<G: BotGame>(args: &GrowthArgs) -> Result<()> {
    let peer = match &args.peer {
        Some(path) => Some((args.peer_name.clone(), read_peer_csv(path)?)),
        None => None,
    };
    let plan = GrowthPlan {
        modes: args.modes.clone(),
        warmup: args.warmup,
        measured: args.measured,
        rounds: args.rounds,
        fit_from: args.fit_from,
        peer,
    };
    eprintln!(
        "{} lab growth: {}; each sans-IO, {:?} warm-up + {:?} measured",
        G::NAME,
        args.modes.join(", "),
        args.warmup,
        args.measured
    );
    let report = run_growth::<G>(&plan, &mut |row| {
        eprintln!(
            "  {}: {} players, {:.1} us a tick, {:.0} B/s per client",
            row.mode, row.players, row.tick_us, row.bytes_per_client_s
        );
    })?;
    let html = report.render_html()?;
    std::fs::write(&args.report, html)
        .with_context(|| format!("writing {}", args.report.display()))?;
    super::print_and_write(
        &report.render_table(),
        &report.figures(),
        &args.json,
        &report.to_json()?,
    )?;
    println!("report: {}", args.report.display());
    Ok(())
}
