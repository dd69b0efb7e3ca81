//! Allocation through Agones: instead of its own host registry, the gateway
//! asks the Agones allocator service for a GameServer (`[agones]` in the
//! config). One `POST /gameserverallocation` (REST, mutual TLS, as the
//! allocator requires) per match:
//! - **selectors**: GameServers of the Fleet (`agones.dev/fleet`) carrying
//!   the configured `match_labels`, with room on the Counter `matches`
//!   (`minAvailable: 1`): first one already Allocated (matches pack onto
//!   running servers), else a Ready one; among them the fullest first
//!   (priority on the Counter, ascending available room);
//! - **counter action**: `matches` +1 (the host gives it back when the match
//!   ends);
//! - **annotations**: the match (id, mode, roster, worker, settings: the
//!   keys the host reads, `hightick_host_api::agones`).
//!
//! The answer names the GameServer's address and ports; the match's clients
//! connect to the port named `game-<worker>`. The worker is chosen here
//! from the match id (so the port is known before the host has created the
//! match): `game_ports` must equal the host's workers.
//!
//! What was run: the request and response documents follow Agones'
//! published `allocation.proto` (the REST mapping of its
//! `AllocationService`), and the tests run the whole client, mutual TLS
//! included, against a local HTTPS server. What was not: a real allocator
//! in a real cluster (none exists here).
//!
//! ```no_run
//! use hightick_gateway::agones::{AgonesAllocator, AgonesConfig};
//! use hightick_gateway::hosts::MatchRequest;
//! # async fn f(config: AgonesConfig) -> Result<(), Box<dyn std::error::Error>> {
//! let allocator = AgonesAllocator::new(&config)?;
//! let settings = serde_json::Map::new();
//! let roster = [11, 12];
//! let request = MatchRequest { match_id: "m-1", mode: "5v5", roster: &roster, settings: &settings };
//! let allocated = allocator.allocate(request).await?;
//! println!("players connect to {}", allocated.address);
//! # Ok(()) }
//! ```

mod client;
mod config;
pub mod wire;

pub use client::AgonesAllocator;
pub use config::AgonesConfig;

/// The annotations an allocation's match travels in, the matches Counter
/// and the port names: the contract's (`hightick-host-api`), which the host
/// reads with the same code.
pub use hightick_host_api::agones::{self as annotations, MATCHES_COUNTER, port_name};

/// The worker of `match_id` among `workers` (FNV-1a of the id: spread,
/// and the same answer every time).
pub fn worker_for(match_id: &str, workers: usize) -> usize {
    let hash = match_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (hash % workers.max(1) as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_spread_and_stay() {
        let mut seen = [0usize; 4];
        for i in 0..400 {
            let w = worker_for(&format!("m-{i:024x}"), 4);
            assert_eq!(w, worker_for(&format!("m-{i:024x}"), 4));
            seen[w] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
        assert_eq!(worker_for("anything", 1), 0);
        assert_eq!(port_name(3), "game-3");
    }
}
