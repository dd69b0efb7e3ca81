//! The contract between hightick's processes: every shape and constant that
//! crosses between a host (`hightick serve`), its gateway, the lab and
//! Agones, defined once.
//!
//! | module | what crosses | from → to |
//! |---|---|---|
//! | [`admin`] | `POST /v1/matches` ([`CreateMatch`]), its answer and `GET /v1/matches` ([`MatchInfo`]) | gateway, lab, Agones → host |
//! | [`stats`] | `GET /v1/stats`, `/v1/timeline` ([`HostStats`]) | host → lab, demo |
//! | [`heartbeat`] | `POST /v1/hosts` ([`Heartbeat`]) | host → gateway |
//! | [`result`] | `POST /v1/results` and the host's results file ([`MatchResult`]) | host → gateway, operators |
//! | [`agones`] | a GameServer's allocation annotations ([`agones::Allocation`]) | gateway → Agones → host |
//!
//! It depends on serde alone (and utoipa with the `openapi` feature, for
//! the gateway's OpenAPI document), so every side links it cheaply. Each
//! side keeps its own rules on top (the gateway checks lengths and ranges
//! before it stores anything), and converts to its own types in one place.

pub mod admin;
pub mod agones;
pub mod heartbeat;
pub mod result;
pub mod stats;

pub use admin::{CreateMatch, MatchInfo, TICK_RATES_HZ};
pub use heartbeat::Heartbeat;
pub use result::{MatchResult, Outcome, PlayerResult};
pub use stats::{DropCount, HostStats, ModeStats, NetworkStats, TargetStats, TimelinePoint};
