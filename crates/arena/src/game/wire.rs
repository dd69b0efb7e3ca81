//! What the arena replicates: the [`ArenaKind`] archetypes, their field
//! groups, how each group is written, and [`ArenaReplica`], the client's copy.
//!
//! - `Player`: group [`TRANSFORM`] (quantized feet position, yaw, pitch,
//!   crouch) and group [`VITALS`] (health, armor, weapon, alive, team), so a
//!   client tells friend from foe from replicated state alone; and group
//!   [`MOTION`], the exact [`ArenaMotion`] its own client predicts from,
//!   sent to the owner only.
//! - `Wallet`: group [`MONEY`]; a separate entity so that relevance can keep
//!   a player's money to its own team.

use hightick_engine::replication::{Replica, read_whole_group};
use hightick_engine::tick::Tick;
use hightick_engine::world::{Archetype, GroupMask};
use hightick_proto::quantize::PositionQuantizer;
use hightick_proto::{BitReader, BitWriter, ProtoError};

use super::transform_delta::{
    self, CROUCH_BITS, PITCH_BITS, TransformBases, WireTransform, YAW_BITS,
};
use crate::Team;
use crate::world::motion::{ArenaMotion, MoveRule};

/// Player group 0: where it is and where it looks.
pub const TRANSFORM: u8 = 0;
/// Player group 1: health, armor, weapon, alive, team.
pub const VITALS: u8 = 1;
/// Player group 2, owner only: the exact motion (position, velocity,
/// crouch, ground contact, view yaw, the round's rule, the life count) after
/// the server tick it carries.
pub const MOTION: u8 = 2;
/// Wallet group 0: money.
pub const MONEY: u8 = 0;

/// Position precision on the wire, metres.
pub(super) const POSITION_PRECISION: f32 = 1.0 / 64.0;
/// The lowest corner of the replicated world (maps must fit inside).
pub const WORLD_MIN: [f32; 3] = [-64.0, -4.0, -64.0];
/// The highest corner of the replicated world.
pub const WORLD_MAX: [f32; 3] = [192.0, 28.0, 192.0];
/// Bits of money on the wire.
pub(super) const MONEY_BITS: u32 = 20;

/// The kinds of replicated arena entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArenaKind {
    /// A player's body.
    Player,
    /// A player's money, known to its team only.
    Wallet,
}

impl Archetype for ArenaKind {
    fn wire_id(self) -> u8 {
        match self {
            Self::Player => 0,
            Self::Wallet => 1,
        }
    }

    fn from_wire_id(id: u8) -> Option<Self> {
        match id {
            0 => Some(Self::Player),
            1 => Some(Self::Wallet),
            _ => None,
        }
    }

    fn groups(self) -> GroupMask {
        match self {
            Self::Player => GroupMask::first(3),
            Self::Wallet => GroupMask::first(1),
        }
    }

    fn owner_groups(self) -> GroupMask {
        match self {
            Self::Player => GroupMask::only(MOTION),
            Self::Wallet => GroupMask::EMPTY,
        }
    }
}

/// A player's vitals as they go on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WireVitals {
    /// Hit points.
    pub health: u8,
    /// Armor points.
    pub armor: u8,
    /// Weapon id in hand.
    pub weapon: u8,
    /// Alive this round.
    pub alive: bool,
    /// The player's team.
    pub team: Team,
}

impl Default for WireVitals {
    fn default() -> Self {
        Self {
            health: 0,
            armor: 0,
            weapon: 0,
            alive: false,
            team: Team::Attackers,
        }
    }
}

fn code(value: f32, lo: f32, hi: f32, bits: u32) -> u32 {
    let max = (1u32 << bits) - 1;
    let t = ((value - lo) / (hi - lo)).clamp(0.0, 1.0);
    (t * max as f32).round() as u32
}

fn uncode(code: u32, lo: f32, hi: f32, bits: u32) -> f32 {
    let max = (1u32 << bits) - 1;
    lo + (hi - lo) * code.min(max) as f32 / max as f32
}

/// Quantizes and codes transforms for one map's bounds.
#[derive(Debug, Clone, Copy)]
pub struct TransformCodec {
    positions: PositionQuantizer,
}

impl TransformCodec {
    /// The codec of every arena map: positions inside [`WORLD_MIN`]..[`WORLD_MAX`].
    pub fn world() -> Result<Self, ProtoError> {
        Ok(Self {
            positions: PositionQuantizer::new(WORLD_MIN, WORLD_MAX, POSITION_PRECISION)?,
        })
    }

    /// Codes a feet position, view angles and crouch amount.
    pub fn encode(&self, position: [f32; 3], yaw: f32, pitch: f32, crouch: f32) -> WireTransform {
        use std::f32::consts::{FRAC_PI_2, PI};
        WireTransform {
            position: self.positions.quantize(position),
            yaw: code(crate::wrap_angle(yaw), -PI, PI, YAW_BITS) as u16,
            pitch: code(pitch, -FRAC_PI_2, FRAC_PI_2, PITCH_BITS) as u16,
            crouch: code(crouch, 0.0, 1.0, CROUCH_BITS) as u8,
        }
    }

    /// Writes a coded transform.
    pub fn write(&self, w: &mut BitWriter, t: &WireTransform) -> Result<(), ProtoError> {
        let bits = self.positions.bits_per_axis();
        for (axis, &b) in bits.iter().enumerate() {
            w.write_bits(t.position[axis], b)?;
        }
        w.write_bits(u32::from(t.yaw), YAW_BITS)?;
        w.write_bits(u32::from(t.pitch), PITCH_BITS)?;
        w.write_bits(u32::from(t.crouch), CROUCH_BITS)
    }

    /// Bits of each position axis's code.
    pub fn position_bits(&self) -> [u32; 3] {
        self.positions.bits_per_axis()
    }

    /// Reads what [`write`](Self::write) wrote, decoded to a position and angles.
    pub fn read(&self, r: &mut BitReader) -> Result<ReplicaTransform, ProtoError> {
        self.read_codes(r).map(|t| self.decode(&t))
    }

    /// Reads what [`write`](Self::write) wrote, as codes.
    pub fn read_codes(&self, r: &mut BitReader) -> Result<WireTransform, ProtoError> {
        let bits = self.positions.bits_per_axis();
        let mut position = [0u32; 3];
        for (axis, &b) in bits.iter().enumerate() {
            position[axis] = r.read_bits(b)?;
        }
        Ok(WireTransform {
            position,
            yaw: r.read_bits(YAW_BITS)? as u16,
            pitch: r.read_bits(PITCH_BITS)? as u16,
            crouch: r.read_bits(CROUCH_BITS)? as u8,
        })
    }

    /// Decodes codes to a position and angles.
    pub fn decode(&self, t: &WireTransform) -> ReplicaTransform {
        use std::f32::consts::{FRAC_PI_2, PI};
        ReplicaTransform {
            position: self.positions.dequantize(t.position),
            yaw: uncode(t.yaw.into(), -PI, PI, YAW_BITS),
            pitch: uncode(t.pitch.into(), -FRAC_PI_2, FRAC_PI_2, PITCH_BITS),
            crouch: uncode(t.crouch.into(), 0.0, 1.0, CROUCH_BITS),
        }
    }
}

/// Writes vitals.
pub(super) fn write_vitals(w: &mut BitWriter, v: &WireVitals) -> Result<(), ProtoError> {
    w.write_u8(v.health)?;
    w.write_u8(v.armor)?;
    w.write_bits(u32::from(v.weapon), 3)?;
    w.write_bool(v.alive)?;
    w.write_bool(v.team == Team::Defenders)
}

/// Reads vitals.
pub(super) fn read_vitals(r: &mut BitReader) -> Result<WireVitals, ProtoError> {
    Ok(WireVitals {
        health: r.read_u8()?,
        armor: r.read_u8()?,
        weapon: r.read_bits(3)? as u8,
        alive: r.read_bool()?,
        team: if r.read_bool()? {
            Team::Defenders
        } else {
            Team::Attackers
        },
    })
}

/// Writes money.
pub(super) fn write_money(w: &mut BitWriter, money: u32) -> Result<(), ProtoError> {
    w.write_bits(money, MONEY_BITS)
}

/// Writes a motion exactly: every float as its bits (no quantization, so a
/// client replays from the server's very state).
pub(super) fn write_motion(
    w: &mut BitWriter,
    tick: u32,
    m: &ArenaMotion,
) -> Result<(), ProtoError> {
    w.write_u32(tick)?;
    for v in m.floats() {
        w.write_f32(v)?;
    }
    w.write_bool(m.state.on_ground)?;
    let rule = match m.rule {
        MoveRule::Still => 0,
        MoveRule::Free => 1,
        MoveRule::Fenced(Team::Attackers) => 2,
        MoveRule::Fenced(Team::Defenders) => 3,
    };
    w.write_bits(rule, 2)?;
    w.write_u8(m.life)
}

/// Reads what [`write_motion`] wrote.
pub(super) fn read_motion(r: &mut BitReader) -> Result<(u32, ArenaMotion), ProtoError> {
    let tick = r.read_u32()?;
    let mut v = [0f32; 8];
    for x in v.iter_mut() {
        *x = r.read_f32()?;
    }
    let on_ground = r.read_bool()?;
    let rule = match r.read_bits(2)? {
        0 => MoveRule::Still,
        1 => MoveRule::Free,
        2 => MoveRule::Fenced(Team::Attackers),
        _ => MoveRule::Fenced(Team::Defenders),
    };
    let mut m = ArenaMotion {
        yaw: v[7],
        rule,
        life: r.read_u8()?,
        ..ArenaMotion::default()
    };
    m.state.position = glam::Vec3::new(v[0], v[1], v[2]);
    m.state.velocity = glam::Vec3::new(v[3], v[4], v[5]);
    m.state.crouch = v[6];
    m.state.on_ground = on_ground;
    Ok((tick, m))
}

/// A decoded transform on the client.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ReplicaTransform {
    /// Feet position.
    pub position: [f32; 3],
    /// View yaw, radians.
    pub yaw: f32,
    /// View pitch, radians.
    pub pitch: f32,
    /// Crouch amount.
    pub crouch: f32,
}

/// The client's copy of an arena entity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArenaReplica {
    /// A player's transform.
    pub transform: Option<ReplicaTransform>,
    /// A player's vitals.
    pub vitals: Option<WireVitals>,
    /// A wallet's money.
    pub money: Option<u32>,
    /// The exact motion of the client's own player after a server tick
    /// (sent to its owner only, when its prediction may need it).
    pub motion: Option<(u32, ArenaMotion)>,
    /// The transforms read, by tick: the bases of transform deltas.
    pub bases: TransformBases,
}

impl Replica for ArenaReplica {
    type Archetype = ArenaKind;

    fn read_group(
        &mut self,
        archetype: ArenaKind,
        group: u8,
        r: &mut BitReader,
    ) -> Result<(), ProtoError> {
        match (archetype, group) {
            (ArenaKind::Player, TRANSFORM) => {
                self.transform = Some(TransformCodec::world()?.read(r)?);
                Ok(())
            }
            (ArenaKind::Player, VITALS) => {
                self.vitals = Some(read_vitals(r)?);
                Ok(())
            }
            (ArenaKind::Player, MOTION) => {
                self.motion = Some(read_motion(r)?);
                Ok(())
            }
            (ArenaKind::Wallet, MONEY) => {
                self.money = Some(r.read_bits(MONEY_BITS)?);
                Ok(())
            }
            _ => Err(ProtoError::invalid("arena field group")),
        }
    }

    fn read_group_at(
        &mut self,
        archetype: ArenaKind,
        group: u8,
        tick: Tick,
        newest: bool,
        r: &mut BitReader,
    ) -> Result<(), ProtoError> {
        if (archetype, group) != (ArenaKind::Player, TRANSFORM) {
            return read_whole_group(self, archetype, group, newest, r);
        }
        let codec = TransformCodec::world()?;
        let read = transform_delta::read(r, tick, codec.position_bits(), &self.bases, |r| {
            codec.read_codes(r)
        })?;
        let value = match read {
            transform_delta::Read::Whole(t) => t,
            transform_delta::Read::Delta { value: Some(t), .. } => t,
            // A late record whose base is gone (or of an entity not
            // held): nothing to keep.
            transform_delta::Read::Delta { value: None, .. } if !newest => return Ok(()),
            transform_delta::Read::Delta { value: None, .. } => {
                return Err(ProtoError::invalid("transform delta base"));
            }
        };
        self.bases.remember(tick, value);
        if newest {
            self.transform = Some(codec.decode(&value));
        }
        Ok(())
    }

    fn renew(&mut self) {
        *self = Self {
            bases: self.bases,
            ..Self::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vitals_round_trip_with_the_team() {
        for team in Team::ALL {
            let v = WireVitals {
                health: 73,
                armor: 100,
                weapon: 5,
                alive: true,
                team,
            };
            let mut buf = [0u8; 8];
            let mut w = BitWriter::new(&mut buf);
            write_vitals(&mut w, &v).unwrap();
            let len = w.finish();
            assert_eq!(read_vitals(&mut BitReader::new(&buf[..len])).unwrap(), v);
        }
    }

    #[test]
    fn transform_round_trips_within_precision() {
        let codec = TransformCodec::world().unwrap();
        let t = codec.encode([3.25, 0.0, -17.5], 1.0, -0.3, 1.0);
        let mut buf = [0u8; 32];
        let mut w = BitWriter::new(&mut buf);
        codec.write(&mut w, &t).unwrap();
        let len = w.finish();
        let back = codec.read(&mut BitReader::new(&buf[..len])).unwrap();
        assert!((back.position[0] - 3.25).abs() <= POSITION_PRECISION);
        assert!((back.position[2] + 17.5).abs() <= POSITION_PRECISION);
        assert!((back.yaw - 1.0).abs() < 0.01);
        assert!((back.pitch + 0.3).abs() < 0.01);
        assert_eq!(back.crouch, 1.0);
    }
}
