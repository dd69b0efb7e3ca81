//! A host's registration and heartbeat (`POST /v1/hosts` on a gateway).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// What a host tells its gateway every few seconds: who it is, where its
/// admin API is, its capacity and load, and whether it is draining. The
/// gateway keeps it in the store's host registry, so any replica will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Heartbeat {
    /// The host's stable id (default: its admin address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// Its admin API address: a concrete IP and a non-zero port.
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = String, example = "127.0.0.1:7780")
    )]
    pub admin: SocketAddr,
    /// Matches it may be given at once.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub capacity: usize,
    /// Matches it runs: at most its capacity.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub active: usize,
    /// It takes no new matches (it is shutting down).
    #[serde(default)]
    pub draining: bool,
    /// Region tag matchmaking may prefer.
    #[serde(default)]
    pub region: String,
    /// The game it serves (`arena`, `tag`).
    #[serde(default)]
    pub game: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_heartbeat_takes_the_defaults() {
        let beat: Heartbeat =
            serde_json::from_str(r#"{"admin":"127.0.0.1:7780","capacity":4}"#).unwrap();
        assert_eq!(beat.host_id, None);
        assert_eq!((beat.active, beat.draining), (0, false));
        assert!(
            serde_json::from_str::<Heartbeat>(r#"{"admin":"127.0.0.1:1","capacity":1,"x":1}"#)
                .is_err()
        );
    }
}
