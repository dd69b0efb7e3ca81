//! [`HightickArenaEntity`]: an arena entity as a C caller reads it.

use hightick_arena::game::{ArenaKind, ArenaReplica};
use hightick_engine::replication::ClientEntity;

use crate::event::team_code;

/// A player's body (`HightickArenaEntity::kind`).
pub const HIGHTICK_ARENA_KIND_PLAYER: u8 = 0;
/// A player's money, known to its team only.
pub const HIGHTICK_ARENA_KIND_WALLET: u8 = 1;

/// `HightickArenaEntity::has` bit: position, yaw, pitch, crouch are set.
pub const HIGHTICK_ARENA_HAS_TRANSFORM: u8 = 1 << 0;
/// `has` bit: health, armor, weapon, alive, team are set.
pub const HIGHTICK_ARENA_HAS_VITALS: u8 = 1 << 1;
/// `has` bit: money is set.
pub const HIGHTICK_ARENA_HAS_MONEY: u8 = 1 << 2;

/// One arena entity.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HightickArenaEntity {
    /// Feet position, metres (Y up): interpolated when read with a render
    /// tick.
    pub position: [f32; 3],
    /// View yaw, radians.
    pub yaw: f32,
    /// View pitch, radians.
    pub pitch: f32,
    /// Crouch amount, 0..1.
    pub crouch: f32,
    /// A wallet's money.
    pub money: u32,
    /// The entity id.
    pub id: u16,
    /// `HIGHTICK_ARENA_KIND_*`.
    pub kind: u8,
    /// `HIGHTICK_ARENA_HAS_*` bits: which of the fields below are set.
    pub has: u8,
    /// Hit points.
    pub health: u8,
    /// Armor points.
    pub armor: u8,
    /// Weapon id in hand.
    pub weapon: u8,
    /// 1 if alive this round.
    pub alive: u8,
    /// `HIGHTICK_ARENA_TEAM_*`.
    pub team: u8,
}

impl HightickArenaEntity {
    /// The record of `e`; `position` (an interpolated one) replaces the
    /// replica's.
    pub fn new(e: ClientEntity<'_, ArenaReplica>, position: Option<[f32; 3]>) -> Self {
        let mut out = Self {
            id: e.entity.0,
            kind: match e.archetype {
                ArenaKind::Player => HIGHTICK_ARENA_KIND_PLAYER,
                ArenaKind::Wallet => HIGHTICK_ARENA_KIND_WALLET,
            },
            ..Self::default()
        };
        if let Some(t) = e.state.transform {
            out.has |= HIGHTICK_ARENA_HAS_TRANSFORM;
            out.position = position.unwrap_or(t.position);
            (out.yaw, out.pitch, out.crouch) = (t.yaw, t.pitch, t.crouch);
        }
        if let Some(v) = e.state.vitals {
            out.has |= HIGHTICK_ARENA_HAS_VITALS;
            (out.health, out.armor, out.weapon) = (v.health, v.armor, v.weapon);
            out.alive = u8::from(v.alive);
            out.team = team_code(v.team);
        }
        if let Some(m) = e.state.money {
            out.has |= HIGHTICK_ARENA_HAS_MONEY;
            out.money = m;
        }
        out
    }
}
