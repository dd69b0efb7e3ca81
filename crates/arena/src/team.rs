//! The two sides of a match.

use hightick_engine::Wire;
use serde::Deserialize;

/// A side. Maps give each side its own spawn zones and buy zone.
/// On the wire one bit: 0 attackers, 1 defenders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Wire)]
#[serde(rename_all = "snake_case")]
pub enum Team {
    /// The side that opens the round by pushing in.
    Attackers,
    /// The side that holds.
    Defenders,
}

impl Team {
    /// Both teams, in index order.
    pub const ALL: [Self; 2] = [Self::Attackers, Self::Defenders];

    /// 0 for attackers, 1 for defenders: an index into per-team arrays.
    pub const fn index(self) -> usize {
        match self {
            Self::Attackers => 0,
            Self::Defenders => 1,
        }
    }

    /// The opposing team.
    pub const fn other(self) -> Self {
        match self {
            Self::Attackers => Self::Defenders,
            Self::Defenders => Self::Attackers,
        }
    }

    /// The name used in map files.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Attackers => "attackers",
            Self::Defenders => "defenders",
        }
    }
}
