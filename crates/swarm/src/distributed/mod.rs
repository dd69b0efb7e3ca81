//! Distributed runs: agents (`hightick swarm agent`) each run a shard of
//! the players and stream their interval histograms every interval to a
//! coordinator (`hightick swarm run --agents a,b`), which merges them, runs
//! pacing on the merged measurements and sends the rate back. On
//! Kubernetes the agents are an Indexed Job (deploy/swarm-agents.yaml).

mod agent;
mod coordinator;
pub mod wire;

pub use agent::{Agent, AgentRun};
pub use coordinator::run_distributed;
