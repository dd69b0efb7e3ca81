//! `hightick`: the one binary. It only wires the crates together; each
//! subcommand's work lives in its crate.
//!
//! - `hightick serve`: the host (crate `hightick-server`);
//! - `hightick demo`: a host and bots on this machine, then a report;
//! - `hightick doctor`: what on this host helps or hurts tick servers;
//! - `gateway`, `swarm` and `lab` are filled in by the issues that build
//!   them and until then say so plainly and exit with status 2.
//!
//! Errors print as one line with their cause chain and exit with status 1.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod demo;
mod serve;

/// An authoritative dedicated game server for high-tick-rate multiplayer games,
/// with the capacity lab that proves what it carries.
#[derive(Debug, Parser)]
#[command(name = "hightick", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a server and bots on this machine; print frame times and games per core.
    Demo(demo::DemoArgs),
    /// Host matches over encrypted UDP.
    Serve(Box<serve::ServeArgs>),
    /// Accounts, login queue, sessions, matchmaking and the meta-game API.
    Gateway,
    /// Virtual players by the hundred thousand, speaking the real protocols.
    Swarm,
    /// Density sweeps, games per core, run history and build comparison.
    Lab,
    /// Inspect this host for what helps or hurts tick servers (reads only).
    Doctor {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Demo(_) => "demo",
            Command::Doctor { .. } => "doctor",
            Command::Serve(_) => "serve",
            Command::Gateway => "gateway",
            Command::Swarm => "swarm",
            Command::Lab => "lab",
        }
    }
}

fn not_yet(name: &str, landed_by: &str) -> ExitCode {
    eprintln!("hightick {name}: not yet available ({landed_by} lands it)");
    ExitCode::from(2)
}

fn doctor(json: bool) -> anyhow::Result<()> {
    let report = hightick_lab::examine(&hightick_lab::DoctorOptions::default())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", report.render_table());
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = cli.command.name();
    let outcome = match &cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Doctor { json } => doctor(*json),
        Command::Gateway => return not_yet(name, "the front-door work"),
        Command::Swarm => return not_yet(name, "the swarm work"),
        Command::Lab => return not_yet(name, "the capacity-lab work"),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hightick {name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}
