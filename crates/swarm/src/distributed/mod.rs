//! Distributed runs: agents (`hightick swarm agent`) each run a shard of
//! the players and stream their interval histograms every interval to a
//! coordinator (`hightick swarm run --agents a,b`), which merges them, runs
//! pacing on the merged measurements and sends the rate back. On
//! Kubernetes the agents are an Indexed Job (deploy/swarm/agents.yaml).
//!
//! An agent is a relay for a great deal of traffic, so it trusts nobody by
//! default: it listens on loopback unless told otherwise, talks only to a
//! coordinator that proves it holds the shared secret ([`auth`]: a mutual
//! HMAC-SHA256 challenge-response; the secret never crosses), takes from it
//! only frames that carry their sequence number and a MAC under a key
//! derived in that exchange ([`frame`]: one altered or replayed on the
//! wire ends the session), and sends load
//! only to targets on the [`AllowList`] it was started with (loopback unless
//! told otherwise), refusing any other before a byte goes there.
//!
//! ```no_run
//! use hightick_swarm::MatchPlayer;
//! use hightick_swarm::distributed::{Agent, AgentConfig, AllowList, SharedSecret};
//! # async fn f(player: MatchPlayer) -> Result<(), hightick_swarm::SwarmError> {
//! let secret = SharedSecret::load(Some("/run/secrets/swarm/secret".as_ref()))?;
//! let allow = AllowList::parse(&["10.0.0.0/8", "gateway.hightick.svc:8080"])?;
//! let config = AgentConfig { listen: "0.0.0.0:7700".parse().unwrap(), secret, allow };
//! let agent = Agent::bind(config, player).await?;
//! let run = agent.serve_one(|refusal| eprintln!("{refusal}")).await?;
//! println!("shard {} done", run.shard);
//! # Ok(()) }
//! ```

mod agent;
pub(crate) mod allow;
pub mod auth;
mod coordinator;
pub mod frame;
pub mod wire;

pub use agent::{AUTH_TIMEOUT, Agent, AgentConfig, AgentRun, Refusal};
pub use allow::AllowList;
pub use auth::{RefusalReason, SharedSecret};
pub use coordinator::run_distributed;
pub use frame::FrameFault;
