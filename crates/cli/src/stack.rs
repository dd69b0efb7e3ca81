//! `hightick stack`: the whole service on this machine (gateways, hosts
//! registered with them, players walking the full journey), an optional
//! failure drill, and the journey report. The work is `hightick_stack::run`; this wires flags and output.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hightick_engine::bot::BotGame;
use hightick_stack::{Drill, StackOptions, run};

use crate::swarm::ProgressLine;

/// Which match rules the gateway's mode carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Rules {
    /// The game's short rules (a match of a minute or two).
    Short,
    /// The mode's own rules.
    Full,
}

/// Flags of `hightick stack`.
#[derive(Debug, Args)]
pub(crate) struct StackArgs {
    /// Virtual players walking the journey [default: 40, or the scenario's users].
    #[arg(long)]
    players: Option<u64>,
    /// Server hosts registered with the gateway.
    #[arg(long, default_value_t = 2)]
    hosts: usize,
    /// Worker threads per host.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Players' ramp-up [default: 10s, or the scenario's].
    #[arg(long, value_parser = humantime::parse_duration)]
    ramp_up: Option<Duration>,
    /// How long players keep playing after the ramp-up [default: 3m, or the scenario's].
    #[arg(long, value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// Players run this swarm scenario instead of the stack's journey (e.g.
    /// scenarios/launch.toml): its gateway target becomes the stack's
    /// gateways, its [matches] mode and settings the gateways' mode.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Run the players on this many `swarm agent` processes, coordinated and
    /// merged here (0: in this process).
    #[arg(long, default_value_t = 0)]
    agents: usize,
    /// Matches one host worker takes at most (default: the host's own).
    #[arg(long, value_name = "N")]
    matches_per_worker: Option<usize>,
    /// The mode (default: the game's first).
    #[arg(long)]
    mode: Option<String>,
    /// Match rules: the game's short ones, or the mode's full ones.
    #[arg(long, value_enum, default_value_t = Rules::Short)]
    rules: Rules,
    /// PostgreSQL URL for the gateway (default: SQLite in --dir).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// PostgreSQL schema for this run's tables (made if missing), so its books are its own.
    #[arg(long, value_name = "NAME", requires = "database_url")]
    database_schema: Option<String>,
    /// Gateways on the one store, 1 to 4 (more than one needs --database-url postgres://...).
    #[arg(long, default_value_t = 1)]
    gateways: usize,
    /// A failure to inflict while the players play: kill-host, kill-gateway or restart-postgres.
    #[arg(long, value_name = "NAME")]
    drill: Option<Drill>,
    /// Working directory: database, hosts' state and outboxes, logs.
    #[arg(long, value_name = "DIR", default_value = "hightick-stack")]
    dir: PathBuf,
    /// Seconds running matches may go on once the players stop.
    #[arg(long, default_value_t = 10)]
    drain_timeout: u64,
    /// Write the journey report as JSON here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The journey report as HTML (default: journey.html in --dir).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// No progress line.
    #[arg(long)]
    quiet: bool,
    /// Reach each host's workers only through a UDP port mapping on another
    /// loopback address (127.0.0.2 for host 0...), which the host advertises
    /// with --public-address: as behind a NAT, a NodePort or a published port.
    #[arg(long)]
    port_mapping: bool,
}

/// Runs the stack for game `G`; fails when a check of the report failed.
pub(crate) fn run_command<G: BotGame>(a: &StackArgs) -> Result<()> {
    if a.dir.join("gateway-data").exists() && a.database_url.is_none() {
        bail!(
            "--dir {}: holds an earlier run's database; remove it or name another --dir",
            a.dir.display()
        );
    }
    let scenario = a
        .scenario
        .as_deref()
        .map(hightick_swarm::Scenario::load)
        .transpose()?;
    let players = a
        .players
        .or(scenario.as_ref().map(|s| s.users))
        .unwrap_or(40);
    let ramp_up = a
        .ramp_up
        .or(scenario.as_ref().map(|s| s.ramp_up))
        .unwrap_or(Duration::from_secs(10));
    let duration = a
        .duration
        .or(scenario.as_ref().map(|s| s.duration))
        .unwrap_or(Duration::from_secs(180));
    let options = StackOptions {
        exe: std::env::current_exe().context("finding this binary")?,
        dir: a.dir.clone(),
        players,
        hosts: a.hosts,
        workers: a.workers,
        ramp_up,
        duration,
        mode: a.mode.clone(),
        full_rules: a.rules == Rules::Full,
        database_url: a.database_url.clone(),
        drain_timeout_s: a.drain_timeout,
        database_schema: a.database_schema.clone(),
        gateways: a.gateways,
        drill: a.drill,
        port_mapping: a.port_mapping,
        scenario: a.scenario.clone(),
        agents: a.agents,
        matches_per_worker: a.matches_per_worker,
    };
    eprintln!(
        "hightick stack: {} players, {} host(s), {} gateway(s){}{}; logs and state in {}",
        players,
        a.hosts,
        a.gateways,
        a.drill.map(|d| format!(", drill {d}")).unwrap_or_default(),
        a.scenario
            .as_ref()
            .map(|s| format!(", scenario {} on {} agent(s)", s.display(), a.agents))
            .unwrap_or_default(),
        a.dir.display()
    );
    let line = ProgressLine::new(ramp_up + duration, a.quiet);
    let report = run::<G>(&options, |p| line.show(p))?;
    line.finish();
    print!("{}", report.render_text());
    let html = a
        .report
        .clone()
        .unwrap_or_else(|| a.dir.join("journey.html"));
    std::fs::write(&html, report.render_html())
        .with_context(|| format!("writing {}", html.display()))?;
    println!("report: {}", html.display());
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        println!("JSON: {}", path.display());
    }
    if !report.passed() {
        bail!("a check of the journey report failed (see above)");
    }
    Ok(())
}
