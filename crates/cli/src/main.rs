//! `hightick`: the one binary. It only wires the crates together; each
//! subcommand's work lives in its crate.
//!
//! - `hightick serve`: the host (crate `hightick-server`);
//! - `hightick demo`: a host and bots on this machine, then a report;
//! - `hightick doctor`: what on this host helps or hurts tick servers;
//! - `hightick gateway`: the front door (crate `hightick-gateway`);
//! - `hightick lab`: density sweeps, run history, build comparison;
//! - `hightick swarm`: virtual players from scenario files (crate `hightick-swarm`).
//!
//! Errors print as one line with their cause chain and exit with status 1.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod demo;
mod gateway;
mod lab;
mod serve;
mod swarm;

/// mimalloc instead of the system allocator, for its pages more than its
/// speed (a steady tick allocates nothing). It takes its memory in large
/// aligned regions and asks for transparent huge pages on them
/// (`MADV_HUGEPAGE`), so a match's scattered per-client state is reached
/// through few TLB entries; in a VM, where a TLB miss walks two page tables,
/// that is worth 5-14% of the server's CPU per tick (docs/PERFORMANCE.md).
/// The price is resident memory: the demo's server holds about 100 MB
/// instead of 50. `MIMALLOC_ALLOW_THP=0` turns the huge pages off.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    Gateway(gateway::GatewayArgs),
    /// Virtual players by the hundred thousand, speaking the real protocols.
    Swarm(swarm::SwarmArgs),
    /// Density sweeps, games per core, run history and build comparison.
    Lab(lab::LabArgs),
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
            Command::Gateway(_) => "gateway",
            Command::Swarm(_) => "swarm",
            Command::Lab(_) => "lab",
        }
    }
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
        Command::Gateway(args) => gateway::run(args),
        Command::Swarm(args) => swarm::run_command(args),
        Command::Lab(args) => lab::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hightick {name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}
