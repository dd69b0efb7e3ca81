//! The host as an Agones GameServer (`hightick serve --agones`, config
//! `agones = true`), talking to the SDK server (the sidecar) over its REST
//! port. docs/AGONES.md is the operator's page; this is the code's.
//!
//! The lifecycle, each step on the `hightick-agones` thread:
//! - **Connect** to the SDK server (the sidecar) on `agones_sdk_port`, else
//!   `$AGONES_SDK_HTTP_PORT`, else 9358 (its REST port); up to 30 s while
//!   it starts. If it never answers, the host stops and `serve` fails.
//! - **Labels** `agones.dev/sdk-hightick-version`, `-hightick-build` and
//!   `-hightick-game` ([`VERSION_LABEL`], [`BUILD_LABEL`], [`GAME_LABEL`]).
//! - **Ready** once warm: every worker's loop has started (its first beat).
//! - **Health**: a ping each second in which every running worker's loop has
//!   beaten ([`progress`]): a hung worker stops the pings, and Agones marks
//!   the GameServer Unhealthy. No timer pings on its own.
//! - **Allocations**: the GameServer is watched; an update in state
//!   `Allocated` whose `hightick.dev/match-id` annotation is new is an
//!   allocation. Its match (mode, roster, id, optional worker, tick rate and
//!   settings: [`annotations`]) is created through the admin API's own
//!   create-match path. The allocation's counter action has already added
//!   one to the Counter [`MATCHES_COUNTER`]; an allocation the host refuses
//!   (bad annotations, draining, full) takes its one back at once.
//! - **A match ends** (its result written): the counter goes down by one.
//!   When no allocation's match is left, the GameServer is not draining and
//!   the counter reads 0, the host calls Ready again: it rejoins the Ready
//!   pool, where the Fleet may scale it down or allocate it afresh. While
//!   matches run it stays Allocated, and allocations with room on the
//!   counter (`counters.matches.minAvailable: 1` in the selector) can add
//!   more matches to it.
//! - **Shutdown**: only after a drain. SIGTERM (the pod is being deleted)
//!   starts the host's drain: no new matches, running ones go on for up to
//!   `drain_timeout_s`, their results are written; then the ended matches'
//!   counter slots are given back and Shutdown is called. The Fleet's
//!   `terminationGracePeriodSeconds` must exceed `drain_timeout_s` plus
//!   `match_linger_s`, or Kubernetes kills the pod mid-drain.
//!
//! What it is not: an allocator. The gateway (or any matchmaker) asks the
//! Agones allocator for a GameServer and writes the annotations.
//!
//! ```no_run
//! # async fn driver() -> Result<(), hightick_server::ServerError> {
//! use hightick_server::agones::Adapter;
//!
//! let sdk = Adapter::connect(Some(9358)).await?;
//! sdk.label_build("arena").await?;
//! sdk.ready().await?;
//! println!("{} matches allocated here", sdk.matches_allocated().await?);
//! # Ok(()) }
//! ```

/// The allocation annotations (the contract's, in `hightick-host-api`).
pub use hightick_host_api::agones as annotations;
pub mod local;

mod adapter;
mod lifecycle;
pub(crate) mod link;
pub(crate) mod progress;

pub use adapter::{
    Adapter, BUILD, BUILD_LABEL, CounterChange, DEFAULT_HTTP_PORT, GAME_LABEL, GameServerView,
    HTTP_PORT_ENV, MATCHES_COUNTER, VERSION_LABEL, Watch,
};
