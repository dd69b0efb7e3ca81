//! hightick-server: the host process. It runs many matches of a game per
//! process over encrypted UDP and shows what they cost. It is generic over
//! the game (`G: hightick_engine::HostedGame`): the game registers its
//! modes, reads its own match settings and reports its results through its
//! result hook; the host knows none of its rules.
//!
//! What it is for:
//! - **Workers** ([`worker`](crate::worker) module docs): one thread per core
//!   by default (optionally pinned), each with its own UDP socket read and
//!   written in batches (`recvmmsg` / `sendmmsg`, `hightick_udp`) and its own
//!   secure layer (`hightick_net::Server`). Matches are placed on the least
//!   loaded worker and ticked in phase groups staggered across the tick
//!   period (a group's matches tick back to back on one wake-up: [`phase`]
//!   module docs); a worker
//!   sleeps until the next deadline (reduced timer slack, no busy spin) and
//!   counts ticks that start late or overrun the period. Each match ticks
//!   at its own rate (its mode's, or the request's `tick_rate_hz`).
//! - **Telemetry**: every match-tick is one frame of a
//!   `hightick_telemetry::FrameRecorder` (receive, game subsystems, packet
//!   build and send), judged against the budgets file.
//! - **Admin HTTP** on its own single-threaded runtime: `/healthz`,
//!   `/metrics` (Prometheus), `GET`/`POST /v1/matches`, `/v1/stats`,
//!   `/v1/timeline`.
//! - **Gateway link** (with `gateway` and `state_dir` set): registers with
//!   the gateway and heartbeats (stable host id, capacity, active matches,
//!   draining, region); each finished match's result goes through the
//!   game's result hook into the [`outbox`] (fsynced before the match counts
//!   as closed) and is posted, the match id as its idempotency key, with
//!   backoff until acknowledged. A create-match request may carry the
//!   gateway's `match_id`; it is the match's id everywhere.
//! - **Agones** (with `agones`, cargo feature `agones`): the host is a
//!   GameServer: Ready once warm, health pings from the workers' own
//!   progress, matches created from allocations' annotations, the
//!   `matches` Counter given back as they end, Shutdown after a drain
//!   ([`agones`] module docs).
//! - **Drain**: on SIGTERM ([`serve`]) or [`Host::drain`] no match is
//!   created any more; running ones finish (or are ended at the drain
//!   timeout), their clients are told, their results (the game's report,
//!   one JSON line each) are written whole.
//!
//! What it is not: it does not mint connect tokens (the gateway, or
//! whoever holds the shared key, does), keep accounts, or run bots.
//!
//! ```
//! use std::time::Duration;
//! use hightick_arena::game::Arena;
//! use hightick_net::Key;
//! use hightick_server::{Host, HostConfig};
//!
//! let config = HostConfig {
//!     bind: "127.0.0.1:0".parse().unwrap(),
//!     admin: "127.0.0.1:0".parse().unwrap(),
//!     workers: 1,
//!     ..HostConfig::default()
//! };
//! let host = Host::start::<Arena>(&config, &Key::generate(&mut rand::rng()))?;
//! assert_eq!(host.game_addresses().len(), 1);
//! println!("admin API on http://{}", host.admin_address());
//! host.drain(Duration::ZERO);
//! host.wait();
//! # Ok::<(), hightick_server::ServerError>(())
//! ```

#![warn(missing_docs)]

pub mod adapt;
mod admin;
pub mod agones;
pub mod config;
mod delivery;
mod doorbell;
mod error;
mod gateway_link;
mod host;
mod host_stats;
mod hosted;
mod identity;
pub mod outbox;
mod phase;
pub mod placement;
mod results;
mod retired;
mod tick_rate;
mod tick_totals;
mod worker;

pub use adapt::AdaptConfig;
pub use config::{HostConfig, KEY_ENV, SERVER_SECRET_ENV};
pub use error::ServerError;
/// The contract's shapes the admin API serves (one definition, in
/// `hightick-host-api`).
pub use hightick_host_api::{
    CreateMatch, HostStats, MatchInfo, ModeStats, NetworkStats, TICK_RATES_HZ, TargetStats,
    TimelinePoint,
};
pub use host::{Host, serve};
pub use placement::Placement;
