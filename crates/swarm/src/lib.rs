//! hightick-swarm: the load generator's match bots.
//!
//! What it is for: a [`MatchBot`] is a real client (`hightick-client`'s
//! [`UdpClient`](hightick_client::UdpClient) over its own UDP socket) that
//! plays the arena bot behaviour ([`hightick_arena::bot::Bot`]) from what it
//! receives: its [`BotSight`](view::BotSight) is the arena bot's
//! [`BotView`](hightick_arena::bot::BotView) built from the replicated world
//! and the events. It checks that what arrives decodes and hangs together
//! ([`consistency`]) and counts what it sees ([`BotCounters`]). A [`Fleet`]
//! runs many on tokio, one task per bot, with live counters for a progress
//! line and a [`FleetReport`] at the end.
//!
//! What it is not (yet): no scenarios, pacing of logins, gateway traffic or
//! distributed agents; no server (the host process is `hightick-server`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::sync::atomic::AtomicBool;
//! use hightick_swarm::{BotTarget, FleetConfig, run_fleet};
//!
//! # async fn f(tokens: Vec<Vec<u8>>) -> Result<(), hightick_swarm::SwarmError> {
//! let server = "127.0.0.1:40000".parse().unwrap();
//! let targets: Vec<BotTarget> = tokens.into_iter().map(|token| BotTarget { server, token }).collect();
//! let report = run_fleet(&targets, &FleetConfig::default(), Arc::new(AtomicBool::new(false))).await?;
//! println!("{report}");
//! assert_eq!(report.counters.decode_errors, 0);
//! # Ok(()) }
//! ```

pub mod consistency;
mod counters;
mod error;
mod fleet;
mod match_bot;
pub mod view;

pub use counters::{BotCounters, EVENT_KINDS, LiveCounters, event_name};
pub use error::SwarmError;
pub use fleet::{BotTarget, Fleet, FleetConfig, FleetReport, run_fleet};
pub use match_bot::{MatchBot, MatchBotConfig};
