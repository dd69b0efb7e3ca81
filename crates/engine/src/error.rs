//! The one error type of the engine's boundary.

use hightick_proto::ProtoError;
use thiserror::Error;

/// Everything a match can refuse or fail at.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EngineError {
    /// A configuration value is out of range; names the field.
    #[error("invalid match config: {field}: {reason}")]
    Config {
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A configuration document could not be parsed (the message names the
    /// line and field).
    #[error("match config: {0}")]
    ConfigParse(String),
    /// Every entity slot is taken (or still in its reuse quarantine).
    #[error("no free entity slot (capacity {capacity})")]
    EntityCapacity {
        /// The configured number of entity slots.
        capacity: usize,
    },
    /// Every player slot is taken.
    #[error("match is full ({capacity} players)")]
    MatchFull {
        /// The configured number of players.
        capacity: usize,
    },
    /// A player id that names no connected player.
    #[error("unknown player {0}")]
    UnknownPlayer(u16),
    /// The game refused a join.
    #[error("join refused: {0}")]
    JoinRefused(&'static str),
    /// A payload could not be written or read.
    #[error("wire format: {0}")]
    Wire(#[from] ProtoError),
    /// The packet layer refused a message (too large for its budget...).
    #[error("packet layer: {0}")]
    Packet(#[from] hightick_net::PacketError),
    /// A snapshot names an archetype the game does not know.
    #[error("unknown archetype {0} in snapshot")]
    UnknownArchetype(u8),
    /// A snapshot updates an entity the client has never seen.
    #[error("update for unknown entity {0}")]
    UnknownEntity(u16),
}
