//! The subsystems a tick's time is split into.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One part of a server tick. Names are stable: they are metric label values,
/// budget file keys and JSON keys, so renaming one is a breaking change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Subsystem {
    /// Per-client packet build: dirty field groups, acks, budgets, priorities.
    Replication,
    /// Fog of war: line-of-sight and relevance per player.
    Fow,
    /// Datagram receive, decrypt, ack processing and send.
    Network,
    /// Pose evaluation and the lag-compensation history.
    Animation,
    /// Round and economy rules.
    Gameplay,
    /// Input application, player movement and its validation.
    Movement,
    /// Weapons: fire rate, spread, shots resolved by rewinding targets.
    Equippable,
    /// Health, armor, damage and death.
    Character,
    /// Collision queries against the map.
    Physics,
    /// Anything that belongs to none of the above.
    Other,
}

impl Subsystem {
    /// How many subsystems there are.
    pub const COUNT: usize = 10;

    /// Every subsystem, in the order of [`Subsystem::index`].
    pub const ALL: [Subsystem; Self::COUNT] = [
        Subsystem::Replication,
        Subsystem::Fow,
        Subsystem::Network,
        Subsystem::Animation,
        Subsystem::Gameplay,
        Subsystem::Movement,
        Subsystem::Equippable,
        Subsystem::Character,
        Subsystem::Physics,
        Subsystem::Other,
    ];

    /// The stable lowercase name (`"replication"`, `"fow"`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Subsystem::Replication => "replication",
            Subsystem::Fow => "fow",
            Subsystem::Network => "network",
            Subsystem::Animation => "animation",
            Subsystem::Gameplay => "gameplay",
            Subsystem::Movement => "movement",
            Subsystem::Equippable => "equippable",
            Subsystem::Character => "character",
            Subsystem::Physics => "physics",
            Subsystem::Other => "other",
        }
    }

    /// The position of this subsystem in [`Subsystem::ALL`], `0..COUNT`.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The subsystem at `index` in [`Subsystem::ALL`], if any.
    pub fn from_index(index: usize) -> Option<Self> {
        Self::ALL.get(index).copied()
    }
}

impl fmt::Display for Subsystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of [`Subsystem::ALL`]'s names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown subsystem `{0}`")]
pub struct UnknownSubsystem(pub String);

impl FromStr for Subsystem {
    type Err = UnknownSubsystem;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| UnknownSubsystem(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_index_order_and_complete() {
        assert_eq!(Subsystem::ALL.len(), Subsystem::COUNT);
        for (i, s) in Subsystem::ALL.into_iter().enumerate() {
            assert_eq!(s.index(), i);
            assert_eq!(Subsystem::from_index(i), Some(s));
        }
        assert_eq!(Subsystem::from_index(Subsystem::COUNT), None);
    }

    #[test]
    fn names_round_trip_and_are_metric_safe() {
        for s in Subsystem::ALL {
            let name = s.as_str();
            assert!(name.bytes().all(|b| b.is_ascii_lowercase()), "{name}");
            assert_eq!(name.parse::<Subsystem>(), Ok(s));
            assert_eq!(s.to_string(), name);
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<Subsystem>(&json).unwrap(), s);
        }
        assert_eq!(
            "Movement".parse::<Subsystem>(),
            Err(UnknownSubsystem("Movement".into()))
        );
    }
}
