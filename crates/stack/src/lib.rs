//! hightick-stack: the whole service on one machine, for one game. A
//! gateway (SQLite by default, PostgreSQL with a URL) and N server hosts
//! registered with it run as child processes; swarm players walk the full
//! journey against them: log in through the login queue, matchmake, play
//! over UDP with the game's bot, buy with what the match paid, queue again.
//! At the end the players stop, the hosts drain (running matches end and
//! post their results through their outboxes), and the store is audited.
//! The [`JourneyReport`] says what players saw (login and match-found
//! times, match quality) and checks what must hold: matches finished equal
//! results recorded, no result left behind, the ledger balanced, no desync.
//!
//! With `gateways` above one (PostgreSQL only) the gateways share the
//! store; host i registers with gateway i mod n (a host links to one
//! gateway) and the players spread over them. A [`Drill`] inflicts a
//! failure while the players play (SIGKILL a host or a gateway, restart
//! PostgreSQL) and the report's drill section says what was done when and
//! whether the service took it.
//!
//! With a `scenario` (e.g. `scenarios/launch.toml`, the launch rehearsal)
//! the players run that swarm scenario instead of the stack's journey,
//! and with `agents` they run on `swarm agent` children that this process
//! coordinates and merges. Every run reads the service's figures every
//! second ([`Launch`]: login and matchmaking queues, matches running, late
//! ticks, errors) and the HTML report draws them over time.
//!
//! What it is not: a fleet manager or a benchmark of one piece (the lab
//! measures a host, the swarm a gateway); it wires the pieces as production
//! would, on loopback.
//!
//! ```no_run
//! use std::time::Duration;
//! use hightick_stack::{StackOptions, run};
//! # fn demo<G: hightick_engine::bot::BotGame>() -> Result<(), hightick_stack::StackError> {
//! let options = StackOptions {
//!     exe: std::env::current_exe().unwrap(), // a binary with `gateway` and `serve`
//!     dir: "stack-run".into(),
//!     players: 40,
//!     hosts: 2,
//!     workers: 1,
//!     ramp_up: Duration::from_secs(10),
//!     duration: Duration::from_secs(180),
//!     mode: None,
//!     full_rules: false,
//!     database_url: None,
//!     drain_timeout_s: 10,
//!     database_schema: None,
//!     gateways: 1,
//!     drill: None,
//!     port_mapping: false,
//!     scenario: None, // or Some("scenarios/launch.toml".into())
//!     agents: 0,      // or players on `swarm agent` children
//!     matches_per_worker: None,
//! };
//! let report = run::<G>(&options, |_progress| {})?;
//! print!("{}", report.render_text());
//! assert!(report.passed());
//! # Ok(()) }
//! ```

mod agents;
mod children;
mod cluster;
mod drill;
mod error;
mod exposition;
mod journey;
mod kill_gateway;
mod kill_host;
mod launch;
mod mapping;
mod probe;
mod report;
mod restart_postgres;
mod run;
mod sampler;

pub use drill::{Drill, DrillCheck, DrillEvent, DrillReport};
pub use error::StackError;
pub use launch::{Arrival, Capacity, Launch, PlayerPoint};
pub use report::{JourneyReport, Quantiles};
pub use run::{StackOptions, run};
pub use sampler::ServicePoint;
