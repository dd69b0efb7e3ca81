//! Client input: [`InputCommand`] and the redundant [`InputBatch`].
//!
//! A client sends its newest command together with the few before it, so a
//! lost packet costs nothing as long as one of the next few arrives. The
//! newest command is written in full; each older one is delta-coded against
//! the command written before it (one bit per unchanged field, one bit for
//! "the tick before"), so an unchanged redundant command costs 7 bits.

use std::ops::{BitOr, BitOrAssign};

use crate::quantize::{dequantize_angle, quantize_angle};
use crate::{BitReader, BitWriter, ProtoError};

/// Commands per [`InputBatch`]: the newest and the three before it.
pub const MAX_REDUNDANCY: usize = 4;

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

/// One tick of client input.
///
/// On the wire `yaw` and `pitch` are 16-bit angles (error at most
/// [`ANGLE_MAX_ERROR`](crate::quantize::ANGLE_MAX_ERROR); decoded into
/// `-π..π`), the moves are `-127..=127`, the weapon slot is below
/// [`WEAPON_SLOTS`], and `aim_tick` is written as its distance back from
/// `tick`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InputCommand {
    /// The server tick this input is for.
    pub tick: u32,
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
    /// The server tick whose snapshot the client was viewing when it aimed:
    /// lag compensation rewinds targets to it.
    pub aim_tick: u32,
}

impl InputCommand {
    /// The command as it reads back after a round trip (angles quantized).
    #[inline]
    pub fn quantized(&self) -> Result<Self, ProtoError> {
        Ok(Wire::from_command(self)?.to_command())
    }

    /// Writes the command on its own (in full).
    #[inline]
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let wire = Wire::from_command(self)?;
        w.all_or_nothing(|w| wire.write_full(w))
    }

    /// Reads a command written by [`encode`](Self::encode).
    #[inline]
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(Wire::read_full(r)?.to_command())
    }
}

/// An [`InputCommand`] in its wire form: integers only, so "unchanged" is
/// exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wire {
    tick: u32,
    move_x: u32,
    move_y: u32,
    yaw: u16,
    pitch: u16,
    buttons: u16,
    weapon_slot: u32,
    aim_lag: u32,
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
    const UNUSED: Self = Self {
        tick: 0,
        move_x: 0,
        move_y: 0,
        yaw: 0,
        pitch: 0,
        buttons: 0,
        weapon_slot: 0,
        aim_lag: 0,
    };

    #[inline]
    fn from_command(c: &InputCommand) -> Result<Self, ProtoError> {
        if c.weapon_slot >= WEAPON_SLOTS {
            return Err(ProtoError::invalid("weapon_slot"));
        }
        Ok(Self {
            tick: c.tick,
            move_x: move_code(c.move_x, "move_x")?,
            move_y: move_code(c.move_y, "move_y")?,
            yaw: quantize_angle(c.yaw).map_err(|e| e.in_field("yaw"))?,
            pitch: quantize_angle(c.pitch).map_err(|e| e.in_field("pitch"))?,
            buttons: c.buttons.bits(),
            weapon_slot: u32::from(c.weapon_slot),
            aim_lag: c.tick.wrapping_sub(c.aim_tick),
        })
    }

    #[inline]
    fn to_command(self) -> InputCommand {
        InputCommand {
            tick: self.tick,
            move_x: move_value(self.move_x),
            move_y: move_value(self.move_y),
            yaw: dequantize_angle(self.yaw),
            pitch: dequantize_angle(self.pitch),
            buttons: Buttons::from_bits_truncate(self.buttons),
            weapon_slot: self.weapon_slot as u8,
            aim_tick: self.tick.wrapping_sub(self.aim_lag),
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
        w.write_u32(self.tick)?;
        self.write_moves(w)?;
        w.write_bits(u32::from(self.yaw) | (u32::from(self.pitch) << 16), 32)?;
        w.write_bits(u32::from(self.buttons), BUTTON_BITS)?;
        w.write_bits(self.weapon_slot, 4)?;
        w.write_varint(self.aim_lag)
    }

    #[inline]
    fn read_full(r: &mut BitReader) -> Result<Self, ProtoError> {
        let tick = r.read_u32()?;
        let (move_x, move_y) = Self::read_moves(r)?;
        let angles = r.read_u32()?;
        Ok(Self {
            tick,
            move_x,
            move_y,
            yaw: angles as u16,
            pitch: (angles >> 16) as u16,
            buttons: r.read_bits(BUTTON_BITS)? as u16,
            weapon_slot: r.read_bits(4)?,
            aim_lag: r.read_varint()?,
        })
    }

    /// Writes `self` relative to `newer`, the command written just before.
    #[inline]
    fn write_delta(&self, newer: &Self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let back = newer.tick.wrapping_sub(self.tick);
        if back == 0 {
            return Err(ProtoError::invalid("input batch ticks"));
        }
        w.write_bool(back == 1)?;
        if back != 1 {
            w.write_varint(back)?;
        }
        let moves_changed = (self.move_x, self.move_y) != (newer.move_x, newer.move_y);
        w.write_bool(moves_changed)?;
        if moves_changed {
            self.write_moves(w)?;
        }
        write_changed(w, self.yaw.into(), newer.yaw.into(), 16)?;
        write_changed(w, self.pitch.into(), newer.pitch.into(), 16)?;
        write_changed(w, self.buttons.into(), newer.buttons.into(), BUTTON_BITS)?;
        write_changed(w, self.weapon_slot, newer.weapon_slot, 4)?;
        let aim_changed = self.aim_lag != newer.aim_lag;
        w.write_bool(aim_changed)?;
        if aim_changed {
            w.write_varint(self.aim_lag)?;
        }
        Ok(())
    }

    #[inline]
    fn read_delta(newer: &Self, r: &mut BitReader) -> Result<Self, ProtoError> {
        let back = if r.read_bool()? { 1 } else { r.read_varint()? };
        if back == 0 {
            return Err(ProtoError::invalid("input batch ticks"));
        }
        let (move_x, move_y) = if r.read_bool()? {
            Self::read_moves(r)?
        } else {
            (newer.move_x, newer.move_y)
        };
        Ok(Self {
            tick: newer.tick.wrapping_sub(back),
            move_x,
            move_y,
            yaw: read_changed(r, newer.yaw.into(), 16)? as u16,
            pitch: read_changed(r, newer.pitch.into(), 16)? as u16,
            buttons: read_changed(r, newer.buttons.into(), BUTTON_BITS)? as u16,
            weapon_slot: read_changed(r, newer.weapon_slot, 4)?,
            aim_lag: if r.read_bool()? {
                r.read_varint()?
            } else {
                newer.aim_lag
            },
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

/// The newest input command and up to [`MAX_REDUNDANCY`]` - 1` before it,
/// newest first. Holds at least one command on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InputBatch {
    /// The commands, newest first; only the first `len` count.
    pub commands: [InputCommand; MAX_REDUNDANCY],
    /// How many of `commands` are in use (`1..=MAX_REDUNDANCY` to encode).
    pub len: usize,
}

impl InputBatch {
    /// An empty batch.
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// A batch of `commands`, newest first; more than [`MAX_REDUNDANCY`] is
    /// [`ProtoError::InvalidValue`].
    #[inline]
    pub fn from_commands(commands: &[InputCommand]) -> Result<Self, ProtoError> {
        let mut batch = Self::new();
        for c in commands {
            batch.push(*c)?;
        }
        Ok(batch)
    }

    /// Appends an older command; a full batch is [`ProtoError::InvalidValue`].
    #[inline]
    pub fn push(&mut self, command: InputCommand) -> Result<(), ProtoError> {
        let slot = self
            .commands
            .get_mut(self.len)
            .ok_or(ProtoError::invalid("input batch len"))?;
        *slot = command;
        self.len += 1;
        Ok(())
    }

    /// The commands in use, newest first.
    #[inline]
    pub fn as_slice(&self) -> &[InputCommand] {
        &self.commands[..self.len.min(MAX_REDUNDANCY)]
    }

    /// The newest command.
    #[inline]
    pub fn newest(&self) -> Option<&InputCommand> {
        self.as_slice().first()
    }

    /// Number of commands in use.
    #[inline]
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether the batch holds no command.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the batch: the count (2 bits), the newest command in full,
    /// each older one delta-coded against the one before it. An empty or
    /// over-long batch, an invalid command or two commands with the same tick
    /// are [`ProtoError::InvalidValue`].
    #[inline]
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        if self.len == 0 || self.len > MAX_REDUNDANCY {
            return Err(ProtoError::invalid("input batch len"));
        }
        let mut wires = [Wire::UNUSED; MAX_REDUNDANCY];
        for (wire, command) in wires.iter_mut().zip(self.as_slice()) {
            *wire = Wire::from_command(command)?;
        }
        let wires = &wires[..self.len];
        w.all_or_nothing(|w| {
            w.write_ranged(self.len as u32, 1, MAX_REDUNDANCY as u32)?;
            wires[0].write_full(w)?;
            for pair in wires.windows(2) {
                pair[1].write_delta(&pair[0], w)?;
            }
            Ok(())
        })
    }

    /// Reads a batch written by [`encode`](Self::encode).
    #[inline]
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        let len = r
            .read_ranged(1, MAX_REDUNDANCY as u32)
            .map_err(|e| e.in_field("input batch len"))? as usize;
        let mut batch = Self {
            len,
            ..Self::default()
        };
        let mut newer = Wire::read_full(r)?;
        batch.commands[0] = newer.to_command();
        for slot in batch.commands.iter_mut().take(len).skip(1) {
            newer = Wire::read_delta(&newer, r)?;
            *slot = newer.to_command();
        }
        Ok(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(tick: u32) -> InputCommand {
        InputCommand {
            tick,
            move_x: 127,
            move_y: -127,
            yaw: 1.0,
            pitch: -0.5,
            buttons: Buttons::FIRE | Buttons::CROUCH,
            weapon_slot: 2,
            aim_tick: tick - 6,
        }
    }

    fn encode(batch: &InputBatch) -> Result<usize, ProtoError> {
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
    fn invalid_commands_are_refused_by_name() {
        let field = |c: InputCommand| match InputBatch::from_commands(&[c]).map(|b| encode(&b)) {
            Ok(Err(ProtoError::InvalidValue { field })) => field,
            other => panic!("expected an invalid value, got {other:?}"),
        };
        assert_eq!(
            field(InputCommand {
                move_x: -128,
                ..command(9)
            }),
            "move_x"
        );
        assert_eq!(
            field(InputCommand {
                move_y: -128,
                ..command(9)
            }),
            "move_y"
        );
        assert_eq!(
            field(InputCommand {
                weapon_slot: 16,
                ..command(9)
            }),
            "weapon_slot"
        );
        assert_eq!(
            field(InputCommand {
                yaw: f32::NAN,
                ..command(9)
            }),
            "yaw"
        );
        assert_eq!(
            field(InputCommand {
                pitch: f32::INFINITY,
                ..command(9)
            }),
            "pitch"
        );
    }

    #[test]
    fn batch_len_and_tick_order_are_checked() {
        assert_eq!(
            encode(&InputBatch::new()),
            Err(ProtoError::invalid("input batch len"))
        );
        let mut full =
            InputBatch::from_commands(&[command(10), command(9), command(8), command(7)]).unwrap();
        assert!(full.push(command(6)).is_err());
        full.len = MAX_REDUNDANCY + 1;
        assert_eq!(encode(&full), Err(ProtoError::invalid("input batch len")));
        assert_eq!(full.as_slice().len(), MAX_REDUNDANCY);
        let same_tick = InputBatch::from_commands(&[command(10), command(10)]).unwrap();
        assert_eq!(
            encode(&same_tick),
            Err(ProtoError::invalid("input batch ticks"))
        );
    }

    #[test]
    fn decoding_rejects_bad_moves_and_zero_tick_steps() {
        // len code 0 (one command), tick 0, move_x 255.
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0, 2).unwrap();
        w.write_u32(0).unwrap();
        w.write_bits(255, 8).unwrap();
        assert_eq!(
            InputBatch::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("move_x"))
        );

        // Two commands where the older one is 0 ticks back (a non-canonical varint 0).
        let batch = InputBatch::from_commands(&[command(10)]).unwrap();
        let mut buf = [0u8; 32];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(1, 2).unwrap();
        let single = Wire::from_command(&batch.commands[0]).unwrap();
        single.write_full(&mut w).unwrap();
        w.write_bool(false).unwrap();
        w.write_varint(0).unwrap();
        assert_eq!(
            InputBatch::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("input batch ticks"))
        );
    }

    #[test]
    fn full_command_size_is_as_documented() {
        // 2 (len) + 32 tick + 16 moves + 32 angles + 11 buttons + 4 slot + 5 (aim lag 6, a varint).
        let batch = InputBatch::from_commands(&[command(100)]).unwrap();
        assert_eq!(encode(&batch).unwrap(), 2 + 32 + 16 + 32 + 11 + 4 + 5);
    }
}
