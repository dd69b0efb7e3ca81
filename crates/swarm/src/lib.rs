//! hightick-swarm: the load generator. Virtual players by the hundred
//! thousand, driven by scenario files, speaking the game's own protocols.
//!
//! What it is for:
//! - [`Scenario`]s (TOML): targets, players, ramp-up, duration, a closed
//!   model (think times) or an open one (arrival rate), weighted behaviours
//!   of HTTP steps (templated bodies, values captured from responses, queue
//!   tickets polled until admission, retries with backoff and jitter) and
//!   `play_match` steps, thresholds that decide pass or fail;
//! - virtual players as small state machines stepped by a few
//!   [driver] tasks from a [timer wheel](wheel), sharing bounded
//!   [keep-alive](keepalive) pools, so 100,000 of them fit in one process;
//! - measurement per [interval] (HDR histograms per step and per
//!   error kind, corrected for coordinated omission in the open model),
//!   [aggregated](aggregate) into a [result] with a table, JSON and
//!   a self-contained HTML [report]; a raw per-request log only
//!   when asked for, streamed to a [rotating file](request_log);
//! - [pacing] that holds a target response time on a measured percentile;
//! - [distributed] runs: agents stream interval histograms to a coordinator;
//! - [`MatchBot`]s: real clients ([`UdpClient`](hightick_client::UdpClient))
//!   of any game, each playing the game's own bot (`hightick_engine::BotGame`),
//!   which also checks that what arrives hangs together, and counting it; a
//!   [`Fleet`] runs many of them, in groups that share a socket when their
//!   servers are on loopback (one `recvmmsg` and one `sendmmsg` a tick for
//!   the group, each bot at its own address). `play_match` steps play the game a
//!   [`MatchPlayer`] names.
//!
//! What it is not: a server or a gateway (those are `hightick-server` and
//! `hightick-gateway`), nor a general web load tester (HTTP/1.1 only, over
//! TCP or [TLS](tls)).
//!
//! ```
//! use hightick_swarm::Scenario;
//!
//! let scenario = Scenario::parse(r#"
//!     users = 1000
//!     ramp_up = "30s"
//!     duration = "2m"
//!     think = { exponential = "7.5s" }
//!     [targets]
//!     gateway = "http://127.0.0.1:8080"
//!     [[setup]]
//!     name = "login"
//!     method = "POST"
//!     url = "/v1/auth/guest"
//!     json = { device_id = "swarm-{{user}}" }
//!     capture = { token = "/session_token" }
//!     [[behaviour]]
//!     name = "profile"
//!     [[behaviour.step]]
//!     url = "/v1/me/profile"
//!     headers = { authorization = "Bearer {{token}}" }
//!     [[threshold]]
//!     metric = "p99"
//!     step = "login"
//!     max = "200ms"
//! "#, "example.toml")?;
//! assert_eq!(scenario.step_names, ["login", "GET /v1/me/profile"]);
//!
//! // A typo is an error naming the file, line, column and field.
//! let typo = Scenario::parse("users = 1\nduration = \"1s\"\nthinks = \"1s\"\n", "t.toml");
//! assert!(typo.unwrap_err().to_string().starts_with("t.toml:3:1: thinks: unknown field"));
//! # Ok::<(), hightick_swarm::SwarmError>(())
//! ```
//!
//! Running it: [`run::run`] in this process, or
//! [`distributed::run_distributed`] on agents; `hightick swarm run` wires
//! either to a progress line and the reports, and with `--metrics ADDR` to
//! [`metrics::MetricsEndpoint`] (Prometheus text at `/metrics`).
//!
//! A fleet of match bots without a scenario:
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::sync::atomic::AtomicBool;
//! use hightick_arena::game::Arena;
//! use hightick_swarm::{BotTarget, FleetConfig, run_fleet};
//!
//! # async fn f(tokens: Vec<Vec<u8>>) -> Result<(), hightick_swarm::SwarmError> {
//! let server = "127.0.0.1:40000".parse().unwrap();
//! let targets: Vec<BotTarget> = tokens.into_iter().map(|token| BotTarget { server, token }).collect();
//! let stop = Arc::new(AtomicBool::new(false));
//! let report = run_fleet::<Arena>(&targets, &FleetConfig::default(), stop).await?;
//! println!("{report}");
//! assert_eq!(report.counters.decode_errors, 0);
//! # Ok(()) }
//! ```

pub mod aggregate;
pub mod bots;
mod counters;
pub mod distributed;
pub mod driver;
mod error;
pub mod http1;
pub mod interval;
pub mod keepalive;
pub mod metrics;
pub mod pacing;
mod player;
mod push;
pub mod report;
pub mod request_log;
pub mod result;
pub mod retry;
pub mod run;
pub mod scenario;
pub mod selftest;
pub mod target;
pub mod threshold;
pub mod tls;
pub mod wheel;

pub use bots::link;
pub use bots::{
    BotTarget, Fleet, FleetConfig, FleetReport, MatchBot, MatchBotConfig, MatchPlayer, MatchTicket,
    Relay, mode_and_settings, play_match, run_fleet,
};
pub use counters::{BotCounters, EVENT_KINDS, LiveCounters};
pub use error::SwarmError;
pub use scenario::Scenario;
