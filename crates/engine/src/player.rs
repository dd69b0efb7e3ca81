//! [`PlayerId`]: a player's slot in a match.

/// A player slot in a match (`0..max_players`); also names the player's
/// client for replication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PlayerId(pub u16);
