//! `hightick`: the one binary. It only wires the crates together; each
//! subcommand's work lives in its crate.
//!
//! Today it knows the subcommands' names; `serve`, `demo`, `gateway`, `swarm`
//! and `lab` are filled in by the issues that build them and until then say
//! so plainly and exit with status 2.
//!
//! ```text
//! $ hightick demo
//! hightick demo: not yet available (the end-to-end work lands it)
//! ```

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    Demo,
    /// Host matches over encrypted UDP.
    Serve,
    /// Accounts, login queue, sessions, matchmaking and the meta-game API.
    Gateway,
    /// Virtual players by the hundred thousand, speaking the real protocols.
    Swarm,
    /// Density sweeps, games per core, run history and build comparison.
    Lab,
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Demo => "demo",
            Command::Serve => "serve",
            Command::Gateway => "gateway",
            Command::Swarm => "swarm",
            Command::Lab => "lab",
        }
    }

    fn landed_by(&self) -> &'static str {
        match self {
            Command::Demo | Command::Serve => "the end-to-end work",
            Command::Gateway => "the front-door work",
            Command::Swarm => "the swarm work",
            Command::Lab => "the capacity-lab work",
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    eprintln!(
        "hightick {}: not yet available ({} lands it)",
        cli.command.name(),
        cli.command.landed_by()
    );
    ExitCode::from(2)
}
