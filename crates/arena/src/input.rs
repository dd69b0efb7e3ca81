//! [`ArenaInput`]: what an arena player does in one tick (sticks, view
//! angles, buttons, weapon slot), the payload of the engine's input envelope.
//!
//! Written in full it is 63 bits; against the input written before it in a
//! batch, one bit per unchanged field group (moves, yaw, pitch, buttons,
//! slot), so an unchanged redundant input costs 5 bits (7 with the
//! envelope's tick and aim bits).

use std::ops::{BitOr, BitOrAssign};

use hightick_proto::quantize::{dequantize_angle, quantize_angle};
use hightick_proto::{BitReader, BitWriter, InputPayload, ProtoError};

/// Weapon slots a command may select (`0..WEAPON_SLOTS`, written in 4 bits).
pub const WEAPON_SLOTS: u8 = 16;

/// Bits used on the wire for [`Buttons`].
pub const BUTTON_BITS: u32 = 11;

/// The buttons held during a command, as bit flags (only the named flags
/// exist; the type cannot hold others).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Buttons(u16);

impl Buttons {
    /// Primary fire.
    pub const FIRE: Self = Self(1 << 0);
    /// Secondary fire / zoom.
    pub const ALT_FIRE: Self = Self(1 << 1);
    /// Jump.
    pub const JUMP: Self = Self(1 << 2);
    /// Crouch.
    pub const CROUCH: Self = Self(1 << 3);
    /// Walk (quiet movement).
    pub const WALK: Self = Self(1 << 4);
    /// Reload.
    pub const RELOAD: Self = Self(1 << 5);
    /// Use / interact (plant, defuse, doors).
    pub const USE: Self = Self(1 << 6);
    /// Open the buy menu / buy.
    pub const BUY: Self = Self(1 << 7);
    /// Drop the held weapon.
    pub const DROP: Self = Self(1 << 8);
    /// Inspect the held weapon.
    pub const INSPECT: Self = Self(1 << 9);
    /// Show the scoreboard.
    pub const SCOREBOARD: Self = Self(1 << 10);
    /// Every flag.
    pub const ALL: Self = Self((1 << BUTTON_BITS) - 1);

    /// No button held.
    #[inline]
    pub const fn empty() -> Self {
        Self(0)
    }

    /// The raw bits.
    #[inline]
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// The flags of `bits`, or `None` if it has bits no flag names.
    #[inline]
    pub const fn from_bits(bits: u16) -> Option<Self> {
        if bits & !Self::ALL.0 == 0 {
            Some(Self(bits))
        } else {
            None
        }
    }

    /// The flags of `bits`, dropping bits no flag names.
    #[inline]
    pub const fn from_bits_truncate(bits: u16) -> Self {
        Self(bits & Self::ALL.0)
    }

    /// Whether every flag of `other` is held.
    #[inline]
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no button is held.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Holds or releases the flags of `other`.
    #[inline]
    pub fn set(&mut self, other: Self, held: bool) {
        if held {
            self.0 |= other.0;
        } else {
            self.0 &= !other.0;
        }
    }
}

impl BitOr for Buttons {
    type Output = Self;
    #[inline]
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl BitOrAssign for Buttons {
    #[inline]
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

/// One tick of an arena player's input.
///
/// On the wire `yaw` and `pitch` are 16-bit angles (error at most
/// [`ANGLE_MAX_ERROR`](hightick_proto::quantize::ANGLE_MAX_ERROR); decoded
/// into `-π..π`), the moves are `-127..=127` and the weapon slot is below
/// [`WEAPON_SLOTS`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArenaInput {
    /// Strafe, `-127..=127` (`-128` is invalid).
    pub move_x: i8,
    /// Forward/back, `-127..=127` (`-128` is invalid).
    pub move_y: i8,
    /// View yaw in radians (any finite value; wraps).
    pub yaw: f32,
    /// View pitch in radians (any finite value; wraps).
    pub pitch: f32,
    /// Buttons held.
    pub buttons: Buttons,
    /// Selected weapon slot, below [`WEAPON_SLOTS`].
    pub weapon_slot: u8,
}

impl InputPayload for ArenaInput {
    #[inline]
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let wire = Wire::from_input(self)?;
        w.all_or_nothing(|w| wire.write_full(w))
    }

    #[inline]
    fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(Wire::read_full(r)?.to_input())
    }

    #[inline]
    fn encode_delta(&self, newer: &Self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let (wire, newer) = (Wire::from_input(self)?, Wire::from_input(newer)?);
        w.all_or_nothing(|w| wire.write_delta(&newer, w))
    }

    #[inline]
    fn decode_delta(newer: &Self, r: &mut BitReader) -> Result<Self, ProtoError> {
        let newer = Wire::from_input(newer)?;
        Ok(Wire::read_delta(&newer, r)?.to_input())
    }

    #[inline]
    fn quantized(&self) -> Result<Self, ProtoError> {
        Ok(Wire::from_input(self)?.to_input())
    }
}

/// An [`ArenaInput`] in its wire form: integers only, so "unchanged" is
/// exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wire {
    move_x: u32,
    move_y: u32,
    yaw: u16,
    pitch: u16,
    buttons: u16,
    weapon_slot: u32,
}

const MOVE_MAX: u32 = 254;

#[inline]
fn move_code(v: i8, field: &'static str) -> Result<u32, ProtoError> {
    if v == i8::MIN {
        return Err(ProtoError::invalid(field));
    }
    Ok((i32::from(v) + 127) as u32)
}

#[inline]
fn move_value(code: u32) -> i8 {
    (code as i32 - 127) as i8
}

impl Wire {
    #[inline]
    fn from_input(c: &ArenaInput) -> Result<Self, ProtoError> {
        if c.weapon_slot >= WEAPON_SLOTS {
            return Err(ProtoError::invalid("weapon_slot"));
        }
        Ok(Self {
            move_x: move_code(c.move_x, "move_x")?,
            move_y: move_code(c.move_y, "move_y")?,
            yaw: quantize_angle(c.yaw).map_err(|e| e.in_field("yaw"))?,
            pitch: quantize_angle(c.pitch).map_err(|e| e.in_field("pitch"))?,
            buttons: c.buttons.bits(),
            weapon_slot: u32::from(c.weapon_slot),
        })
    }

    #[inline]
    fn to_input(self) -> ArenaInput {
        ArenaInput {
            move_x: move_value(self.move_x),
            move_y: move_value(self.move_y),
            yaw: dequantize_angle(self.yaw),
            pitch: dequantize_angle(self.pitch),
            buttons: Buttons::from_bits_truncate(self.buttons),
            weapon_slot: self.weapon_slot as u8,
        }
    }

    #[inline]
    fn write_moves(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.write_bits(self.move_x | (self.move_y << 8), 16)
    }

    #[inline]
    fn read_moves(r: &mut BitReader) -> Result<(u32, u32), ProtoError> {
        let moves = r.read_bits(16)?;
        let (x, y) = (moves & 0xFF, moves >> 8);
        if x > MOVE_MAX {
            return Err(ProtoError::invalid("move_x"));
        }
        if y > MOVE_MAX {
            return Err(ProtoError::invalid("move_y"));
        }
        Ok((x, y))
    }

    #[inline]
    fn write_full(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        self.write_moves(w)?;
        w.write_bits(u32::from(self.yaw) | (u32::from(self.pitch) << 16), 32)?;
        w.write_bits(u32::from(self.buttons), BUTTON_BITS)?;
        w.write_bits(self.weapon_slot, 4)
    }

    #[inline]
    fn read_full(r: &mut BitReader) -> Result<Self, ProtoError> {
        let (move_x, move_y) = Self::read_moves(r)?;
        let angles = r.read_u32()?;
        Ok(Self {
            move_x,
            move_y,
            yaw: angles as u16,
            pitch: (angles >> 16) as u16,
            buttons: r.read_bits(BUTTON_BITS)? as u16,
            weapon_slot: r.read_bits(4)?,
        })
    }

    #[inline]
    fn write_delta(&self, newer: &Self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let moves_changed = (self.move_x, self.move_y) != (newer.move_x, newer.move_y);
        w.write_bool(moves_changed)?;
        if moves_changed {
            self.write_moves(w)?;
        }
        write_changed(w, self.yaw.into(), newer.yaw.into(), 16)?;
        write_changed(w, self.pitch.into(), newer.pitch.into(), 16)?;
        write_changed(w, self.buttons.into(), newer.buttons.into(), BUTTON_BITS)?;
        write_changed(w, self.weapon_slot, newer.weapon_slot, 4)
    }

    #[inline]
    fn read_delta(newer: &Self, r: &mut BitReader) -> Result<Self, ProtoError> {
        let (move_x, move_y) = if r.read_bool()? {
            Self::read_moves(r)?
        } else {
            (newer.move_x, newer.move_y)
        };
        Ok(Self {
            move_x,
            move_y,
            yaw: read_changed(r, newer.yaw.into(), 16)? as u16,
            pitch: read_changed(r, newer.pitch.into(), 16)? as u16,
            buttons: read_changed(r, newer.buttons.into(), BUTTON_BITS)? as u16,
            weapon_slot: read_changed(r, newer.weapon_slot, 4)?,
        })
    }
}

#[inline]
fn write_changed(w: &mut BitWriter, v: u32, previous: u32, bits: u32) -> Result<(), ProtoError> {
    w.write_bool(v != previous)?;
    if v != previous {
        w.write_bits(v, bits)?;
    }
    Ok(())
}

#[inline]
fn read_changed(r: &mut BitReader, previous: u32, bits: u32) -> Result<u32, ProtoError> {
    if r.read_bool()? {
        r.read_bits(bits)
    } else {
        Ok(previous)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_proto::{InputBatch, InputCommand};

    fn input() -> ArenaInput {
        ArenaInput {
            move_x: 127,
            move_y: -127,
            yaw: 1.0,
            pitch: -0.5,
            buttons: Buttons::FIRE | Buttons::CROUCH,
            weapon_slot: 2,
        }
    }

    fn command(tick: u32) -> InputCommand<ArenaInput> {
        InputCommand::new(tick, tick - 6, input())
    }

    fn encode(batch: &InputBatch<ArenaInput>) -> Result<usize, ProtoError> {
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w)?;
        Ok(w.bits_written())
    }

    #[test]
    fn buttons_hold_only_named_flags() {
        let mut b = Buttons::empty();
        b.set(Buttons::JUMP, true);
        b |= Buttons::USE;
        assert!(b.contains(Buttons::JUMP | Buttons::USE));
        b.set(Buttons::JUMP, false);
        assert!(!b.contains(Buttons::JUMP));
        assert_eq!(Buttons::from_bits(1 << 11), None);
        assert_eq!(Buttons::from_bits_truncate(0xFFFF), Buttons::ALL);
        assert!(Buttons::default().is_empty());
    }

    #[test]
    fn invalid_inputs_are_refused_by_name() {
        let field = |payload: ArenaInput| {
            let c = InputCommand::new(9, 3, payload);
            match InputBatch::from_commands(&[c]).map(|b| encode(&b)) {
                Ok(Err(ProtoError::InvalidValue { field })) => field,
                other => panic!("expected an invalid value, got {other:?}"),
            }
        };
        let base = input();
        assert_eq!(
            field(ArenaInput {
                move_x: -128,
                ..base
            }),
            "move_x"
        );
        assert_eq!(
            field(ArenaInput {
                move_y: -128,
                ..base
            }),
            "move_y"
        );
        assert_eq!(
            field(ArenaInput {
                weapon_slot: 16,
                ..base
            }),
            "weapon_slot"
        );
        assert_eq!(
            field(ArenaInput {
                yaw: f32::NAN,
                ..base
            }),
            "yaw"
        );
        assert_eq!(
            field(ArenaInput {
                pitch: f32::INFINITY,
                ..base
            }),
            "pitch"
        );
    }

    #[test]
    fn decoding_rejects_bad_moves() {
        // len code 0 (one command), tick 0, aim lag 0, move_x 255.
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0, 2).unwrap();
        w.write_u32(0).unwrap();
        w.write_varint(0).unwrap();
        w.write_bits(255, 8).unwrap();
        assert_eq!(
            InputBatch::<ArenaInput>::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("move_x"))
        );
    }

    #[test]
    fn full_command_size_is_as_documented() {
        // 2 (len) + 32 tick + 5 (aim lag 6, a varint) + 16 moves + 32 angles + 11 buttons + 4 slot.
        let batch = InputBatch::from_commands(&[command(100)]).unwrap();
        assert_eq!(encode(&batch).unwrap(), 2 + 32 + 5 + 16 + 32 + 11 + 4);
    }

    #[test]
    fn an_unchanged_redundant_command_costs_seven_bits() {
        let one = encode(&InputBatch::from_commands(&[command(100)]).unwrap()).unwrap();
        let batch =
            InputBatch::from_commands(&[command(100), command(99), command(98), command(97)])
                .unwrap();
        assert_eq!(encode(&batch).unwrap(), one + 3 * 7);
    }

    #[test]
    fn changed_fields_round_trip_within_angle_precision() {
        let mut older = command(99);
        older.payload.yaw = -2.0;
        older.payload.buttons = Buttons::JUMP;
        older.aim_tick = 90;
        let batch = InputBatch::from_commands(&[command(100), older]).unwrap();
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w).unwrap();
        let len = w.finish();
        let back = InputBatch::<ArenaInput>::decode(&mut BitReader::new(&buf[..len])).unwrap();
        for (sent, got) in batch.as_slice().iter().zip(back.as_slice()) {
            assert_eq!(*got, sent.quantized().unwrap());
        }
        assert_eq!(back.as_slice()[1].aim_tick, 90);
    }
}
