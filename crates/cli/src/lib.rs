//! The command line of hightick, for any game: [`run::<G>()`](run) gives a
//! game's own binary the same subcommands the `hightick` binary (the arena's)
//! has. It only wires the crates together; each subcommand's work lives in
//! its crate.
//!
//! - `serve`: the host (crate `hightick-server`);
//! - `demo`: a host and bots on this machine, then a report;
//! - `doctor`: what on this host helps or hurts tick servers;
//! - `gateway`: the front door (crate `hightick-gateway`; cargo feature
//!   `gateway`, which a game binary leaves out to build fast);
//! - `store`: backups of the gateway's embedded SQLite database while it runs,
//!   and restoring one (crate `hightick-store`; feature `gateway`);
//! - `lab`: density sweeps, build comparison, and run history (`--record`,
//!   `lab history`; cargo feature `history`, which a game binary leaves out
//!   for the same reason);
//! - `swarm`: virtual players from scenario files (crate `hightick-swarm`);
//! - `netem`: the impairment proxy, a bad link in user space (crate
//!   `hightick-netem`).
//!
//! Errors print as one line with their cause chain and exit with status 1.
//!
//! A game's binary, whole (`examples/tag/src/main.rs`):
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: hightick_cli::Allocator = hightick_cli::Allocator;
//!
//! fn main() -> std::process::ExitCode {
//!     hightick_cli::run::<hightick_example_tag::Tag>()
//! }
//! ```

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use hightick_engine::BotGame;

mod demo;
#[cfg(feature = "gateway")]
mod gateway;
mod lab;
mod netem;
mod serve;
#[cfg(feature = "gateway")]
mod stack;
#[cfg(feature = "gateway")]
mod store;
mod swarm;

/// The allocator hightick's binaries use: mimalloc, for its pages more than
/// its speed (a steady tick allocates nothing). It takes its memory in large
/// aligned regions and asks for transparent huge pages on them
/// (`MADV_HUGEPAGE`), so a match's scattered per-client state is reached
/// through few TLB entries; in a VM, where a TLB miss walks two page tables,
/// that is worth 5-14% of the server's CPU per tick (docs/PERFORMANCE.md).
/// The price is resident memory: the demo's server holds about 100 MB
/// instead of 50. `MIMALLOC_ALLOW_THP=0` turns the huge pages off. A binary
/// opts in with `#[global_allocator] static A: Allocator = Allocator;`.
pub use mimalloc::MiMalloc as Allocator;

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
    #[cfg(feature = "gateway")]
    Gateway(gateway::GatewayArgs),
    /// Virtual players by the hundred thousand, speaking the real protocols.
    Swarm(swarm::SwarmArgs),
    /// The whole service here: a gateway, hosts registered with it, players on the full journey.
    #[cfg(feature = "gateway")]
    Stack(stack::StackArgs),
    /// Back up the gateway's SQLite database while it runs; restore a backup.
    #[cfg(feature = "gateway")]
    Store(store::StoreArgs),
    #[cfg_attr(
        feature = "history",
        doc = "Density sweeps, games per core, run history and build comparison."
    )]
    #[cfg_attr(
        not(feature = "history"),
        doc = "Density sweeps, games per core and build comparison."
    )]
    Lab(lab::LabArgs),
    /// Forward UDP through an emulated link: latency, jitter, bursty loss, outages.
    Netem(netem::NetemArgs),
    /// Print the game's wire schema (input, events, archetypes, replicated fields, encodings) as JSON, with its hash.
    Schema,
    /// Write the game's C ABI crate source (`src/lib.rs`) and C# binding (`csharp/Hightick<Game>.cs`), generated from its wire schema.
    Bindings {
        /// The C ABI crate's directory (made if missing).
        #[arg(long)]
        out: std::path::PathBuf,
    },
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
            Command::Schema => "schema",
            Command::Bindings { .. } => "bindings",
            Command::Serve(_) => "serve",
            #[cfg(feature = "gateway")]
            Command::Gateway(_) => "gateway",
            Command::Swarm(_) => "swarm",
            #[cfg(feature = "gateway")]
            Command::Stack(_) => "stack",
            #[cfg(feature = "gateway")]
            Command::Store(_) => "store",
            Command::Lab(_) => "lab",
            Command::Netem(_) => "netem",
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

/// `schema`: the game's wire schema as JSON; a note on stderr when a
/// hand-written codec leaves part of it undescribed.
fn schema<G: BotGame>() -> anyhow::Result<()> {
    let schema = hightick_engine::schema::GameSchema::of::<G>();
    println!("{}", serde_json::to_string_pretty(&schema)?);
    if !schema.complete() {
        eprintln!(
            "note: {} has hand-written codecs (the null parts): the hash does not cover them",
            G::NAME
        );
    }
    Ok(())
}

/// `bindings --out DIR`: the game's generated C ABI crate source and C#
/// binding, written under `DIR`.
fn bindings<G: BotGame>(out: &std::path::Path) -> anyhow::Result<()> {
    let bindings = hightick_bindgen::Bindings::of::<G>()?;
    for path in bindings.write(out)? {
        println!("wrote {}", path.display());
    }
    println!(
        "the crate needs a Cargo.toml: a cdylib and staticlib depending on the game, hightick-client-ffi, hightick-engine and hightick-proto (examples/tag/ffi has one)"
    );
    Ok(())
}

/// Runs the command line of game `G`: parses the arguments, runs the
/// subcommand, prints an error as one line with its cause chain. The
/// binary's own name is the program name in help and errors.
pub fn run<G: BotGame>() -> ExitCode {
    let program = std::env::args_os()
        .next()
        .and_then(|p| {
            std::path::Path::new(&p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "hightick".to_owned());
    // Once per process: clap keeps command names for the program's life.
    let program: &'static str = Box::leak(program.into_boxed_str());
    let command = Cli::command()
        .name(program)
        .bin_name(program)
        .about(format!(
            "hightick for {}: serve it, play it with bots, load-test and measure it",
            G::NAME
        ));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let name = cli.command.name();
    let outcome = match &cli.command {
        Command::Serve(args) => serve::run::<G>(args),
        Command::Demo(args) => demo::run::<G>(args),
        Command::Doctor { json } => doctor(*json),
        Command::Schema => schema::<G>(),
        Command::Bindings { out } => bindings::<G>(out),
        #[cfg(feature = "gateway")]
        Command::Gateway(args) => gateway::run::<G>(args),
        Command::Swarm(args) => swarm::run_command::<G>(args),
        #[cfg(feature = "gateway")]
        Command::Stack(args) => stack::run_command::<G>(args),
        #[cfg(feature = "gateway")]
        Command::Store(args) => store::run(args),
        Command::Lab(args) => lab::run::<G>(args),
        Command::Netem(args) => netem::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program} {name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}
