//! [`Fighter`]: the server-side state of one player in an arena match.

use glam::Vec3;
use hightick_engine::EntityId;

use crate::weapon::Loadout;
use crate::{MoveState, Pose, Team};

/// Items a player may buy in the buy phase (the `weapon_slot` of a command
/// sent with the BUY button).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// The pistol.
    Pistol,
    /// The rifle.
    Rifle,
    /// Body armor (100 points).
    Armor,
}

impl Item {
    /// The item bought with `slot` (1 pistol, 2 rifle, 3 armor).
    pub fn from_slot(slot: u8) -> Option<Self> {
        match slot {
            1 => Some(Self::Pistol),
            2 => Some(Self::Rifle),
            3 => Some(Self::Armor),
            _ => None,
        }
    }

    /// The slot that buys it.
    pub fn slot(self) -> u8 {
        match self {
            Self::Pistol => 1,
            Self::Rifle => 2,
            Self::Armor => 3,
        }
    }
}

/// One player of an arena match.
#[derive(Debug, Clone, Copy)]
pub struct Fighter {
    /// Its body entity.
    pub body: EntityId,
    /// Its wallet entity (replicated to its team only).
    pub wallet: EntityId,
    /// Its side.
    pub team: Team,
    /// Its index within its team (spawn slot).
    pub slot: usize,
    /// Movement state.
    pub movement: MoveState,
    /// Spawns so far (wrapping): tells its client a respawn from a move.
    pub life: u8,
    /// View yaw, radians.
    pub yaw: f32,
    /// View pitch, radians.
    pub pitch: f32,
    /// Hit points.
    pub health: u8,
    /// Armor points.
    pub armor: u8,
    /// The guns carried and the one in hand.
    pub loadout: Loadout,
    /// Money.
    pub money: u32,
    /// Alive this round.
    pub alive: bool,
    /// Shots fired this match (seeds the spread).
    pub shots: u32,
    /// Moves refused by the displacement check.
    pub refused_moves: u32,
    /// Kills this match.
    pub kills: u32,
    /// Deaths this match.
    pub deaths: u32,
}

impl Fighter {
    /// The pose this player is in now.
    pub fn pose(&self) -> Pose {
        Pose::from_move_state(&self.movement, self.yaw, self.pitch)
    }

    /// Feet position.
    pub fn position(&self) -> Vec3 {
        self.movement.position
    }
}
