//! Client input: the engine's envelope [`InputCommand`] around a game's
//! [`InputPayload`], and the redundant [`InputBatch`].
//!
//! The engine owns the envelope: the tick an input is for, the tick whose
//! snapshot the client was viewing when it made it (lag compensation rewinds
//! to it), and the redundancy. A client sends its newest command together
//! with the few before it, so a lost packet costs nothing as long as one of
//! the next few arrives. The game owns the payload (buttons, sticks, a
//! steering angle...) and its encoding.
//!
//! The newest command is written in full; each older one is delta-coded
//! against the command written before it: one bit for "the tick before",
//! one for "same aim lag", then the payload's own
//! [`encode_delta`](InputPayload::encode_delta) (by default one bit for
//! "unchanged", else the payload in full).

use std::fmt::Debug;

use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// Commands per [`InputBatch`]: the newest and the three before it.
pub const MAX_REDUNDANCY: usize = 4;

/// A game's input for one tick, without the engine's envelope. `Default` is
/// "no input" (what a player who never sent one gets).
///
/// Encoders are all-or-nothing and refuse values the decoder would reject
/// (naming the field); decoders check every field and never panic.
pub trait InputPayload: Copy + Default + PartialEq + Debug + Send + Sync + 'static {
    /// Writes the payload in full.
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError>;

    /// Reads a payload written by [`encode`](Self::encode).
    fn decode(r: &mut BitReader) -> Result<Self, ProtoError>;

    /// Writes `self` against `newer`, the payload written just before it in
    /// the batch. Default: one bit "unchanged", else the payload in full; a
    /// game with many fields can do better field by field.
    fn encode_delta(&self, newer: &Self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let unchanged = self.quantized()? == newer.quantized()?;
        w.write_bool(unchanged)?;
        if unchanged { Ok(()) } else { self.encode(w) }
    }

    /// Reads a payload written by [`encode_delta`](Self::encode_delta)
    /// against `newer`.
    fn decode_delta(newer: &Self, r: &mut BitReader) -> Result<Self, ProtoError> {
        if r.read_bool()? {
            Ok(*newer)
        } else {
            Self::decode(r)
        }
    }

    /// What the codec writes, as data: `Some` when derived, `None` (the
    /// default) when hand-written.
    const SCHEMA: Option<&'static crate::wire::TypeSchema> = None;

    /// The payload as it reads back after a round trip (what the server
    /// simulates; a client predicting its own moves uses this).
    fn quantized(&self) -> Result<Self, ProtoError> {
        let mut buf = [0u8; 256];
        let mut w = BitWriter::new(&mut buf);
        self.encode(&mut w)?;
        let len = w.finish();
        Self::decode(&mut BitReader::new(&buf[..len]))
    }
}

/// A game with no input at all (a spectator feed, a test).
impl InputPayload for () {
    fn encode(&self, _: &mut BitWriter) -> Result<(), ProtoError> {
        Ok(())
    }
    fn decode(_: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(())
    }
    fn encode_delta(&self, _: &Self, _: &mut BitWriter) -> Result<(), ProtoError> {
        Ok(())
    }
    fn decode_delta(_: &Self, _: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(())
    }
}

/// Payloads of one number: a single axis or a button byte, in full width.
macro_rules! number_payload {
    ($($t:ty => $write:ident, $read:ident;)+) => {$(
        impl InputPayload for $t {
            #[inline]
            fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
                w.$write(*self as _)
            }
            #[inline]
            fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
                Ok(r.$read()? as $t)
            }
        }
    )+};
}

number_payload! {
    u8 => write_u8, read_u8;
    i8 => write_u8, read_u8;
    u16 => write_u16, read_u16;
    i16 => write_u16, read_u16;
    u32 => write_u32, read_u32;
    i32 => write_u32, read_u32;
}

/// One tick of client input: the engine's envelope around the game's
/// payload `P`. On the wire `aim_tick` is written as its distance back from
/// `tick`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InputCommand<P> {
    /// The server tick this input is for.
    pub tick: u32,
    /// The server tick whose snapshot the client was viewing when it made
    /// this input: lag compensation rewinds targets to it.
    pub aim_tick: u32,
    /// The game's input.
    pub payload: P,
}

impl<P: InputPayload> InputCommand<P> {
    /// A command for `tick`, made while viewing `aim_tick`.
    #[inline]
    pub fn new(tick: u32, aim_tick: u32, payload: P) -> Self {
        Self {
            tick,
            aim_tick,
            payload,
        }
    }

    /// The command as it reads back after a round trip.
    #[inline]
    pub fn quantized(&self) -> Result<Self, ProtoError> {
        Ok(Self {
            payload: self.payload.quantized()?,
            ..*self
        })
    }

    /// Writes the command on its own (in full).
    #[inline]
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.all_or_nothing(|w| self.write_full(w))
    }

    /// Reads a command written by [`encode`](Self::encode).
    #[inline]
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Self::read_full(r)
    }

    #[inline]
    fn aim_lag(&self) -> u32 {
        self.tick.wrapping_sub(self.aim_tick)
    }

    #[inline]
    fn write_full(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.write_u32(self.tick)?;
        w.write_varint(self.aim_lag())?;
        self.payload.encode(w)
    }

    #[inline]
    fn read_full(r: &mut BitReader) -> Result<Self, ProtoError> {
        let tick = r.read_u32()?;
        let aim_lag = r.read_varint()?;
        Ok(Self {
            tick,
            aim_tick: tick.wrapping_sub(aim_lag),
            payload: P::decode(r)?,
        })
    }

    /// Writes `self` against `newer`, the command written just before it.
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
        let aim_changed = self.aim_lag() != newer.aim_lag();
        w.write_bool(aim_changed)?;
        if aim_changed {
            w.write_varint(self.aim_lag())?;
        }
        self.payload.encode_delta(&newer.payload, w)
    }

    #[inline]
    fn read_delta(newer: &Self, r: &mut BitReader) -> Result<Self, ProtoError> {
        let back = if r.read_bool()? { 1 } else { r.read_varint()? };
        if back == 0 {
            return Err(ProtoError::invalid("input batch ticks"));
        }
        let tick = newer.tick.wrapping_sub(back);
        let aim_lag = if r.read_bool()? {
            r.read_varint()?
        } else {
            newer.aim_lag()
        };
        Ok(Self {
            tick,
            aim_tick: tick.wrapping_sub(aim_lag),
            payload: P::decode_delta(&newer.payload, r)?,
        })
    }
}

/// The newest command and up to [`MAX_REDUNDANCY`]` - 1` older ones, newest
/// first, each older one for an earlier tick. Fixed size: building one
/// allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputBatch<P> {
    /// The commands, newest first; only the first `len` are meaningful.
    pub commands: [InputCommand<P>; MAX_REDUNDANCY],
    /// How many commands the batch holds.
    pub len: usize,
}

impl<P: InputPayload> Default for InputBatch<P> {
    fn default() -> Self {
        Self {
            commands: [InputCommand::default(); MAX_REDUNDANCY],
            len: 0,
        }
    }
}

impl<P: InputPayload> InputBatch<P> {
    /// An empty batch.
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// A batch of `commands`, newest first (at most [`MAX_REDUNDANCY`]).
    #[inline]
    pub fn from_commands(commands: &[InputCommand<P>]) -> Result<Self, ProtoError> {
        let mut batch = Self::new();
        for c in commands {
            batch.push(*c)?;
        }
        Ok(batch)
    }

    /// Appends an older command; an error once the batch is full.
    #[inline]
    pub fn push(&mut self, command: InputCommand<P>) -> Result<(), ProtoError> {
        let slot = self
            .commands
            .get_mut(self.len)
            .ok_or(ProtoError::invalid("input batch len"))?;
        *slot = command;
        self.len += 1;
        Ok(())
    }

    /// The commands held, newest first.
    #[inline]
    pub fn as_slice(&self) -> &[InputCommand<P>] {
        &self.commands[..self.len.min(MAX_REDUNDANCY)]
    }

    /// The newest command.
    #[inline]
    pub fn newest(&self) -> Option<&InputCommand<P>> {
        self.as_slice().first()
    }

    /// How many commands the batch holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether the batch holds none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the batch: the count (2 bits), the newest command in full,
    /// each older one delta-coded against the one before it. An empty or
    /// over-long batch, an invalid payload or two commands with the same
    /// tick are [`ProtoError::InvalidValue`].
    #[inline]
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        if self.len == 0 || self.len > MAX_REDUNDANCY {
            return Err(ProtoError::invalid("input batch len"));
        }
        let commands = self.as_slice();
        w.all_or_nothing(|w| {
            w.write_ranged(self.len as u32, 1, MAX_REDUNDANCY as u32)?;
            commands[0].write_full(w)?;
            for pair in commands.windows(2) {
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
        let mut newer = InputCommand::read_full(r)?;
        batch.commands[0] = newer;
        for slot in batch.commands.iter_mut().take(len).skip(1) {
            newer = InputCommand::read_delta(&newer, r)?;
            *slot = newer;
        }
        Ok(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-field payload: a stick axis and a button byte.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    struct Pad {
        axis: i8,
        held: u8,
    }

    impl InputPayload for Pad {
        fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
            if self.axis == i8::MIN {
                return Err(ProtoError::invalid("axis"));
            }
            w.write_u8(self.axis as u8)?;
            w.write_u8(self.held)
        }
        fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
            let axis = r.read_u8()? as i8;
            if axis == i8::MIN {
                return Err(ProtoError::invalid("axis"));
            }
            Ok(Self {
                axis,
                held: r.read_u8()?,
            })
        }
    }

    fn command(tick: u32) -> InputCommand<Pad> {
        InputCommand::new(tick, tick - 6, Pad { axis: 5, held: 3 })
    }

    fn encode(batch: &InputBatch<Pad>) -> Result<usize, ProtoError> {
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w)?;
        Ok(w.bits_written())
    }

    fn round_trip(batch: &InputBatch<Pad>) -> InputBatch<Pad> {
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w).unwrap();
        let len = w.finish();
        InputBatch::decode(&mut BitReader::new(&buf[..len])).unwrap()
    }

    #[test]
    fn a_batch_round_trips_with_changed_and_repeated_payloads() {
        let mut older = command(8);
        older.payload.held = 9;
        older.aim_tick = 1;
        let batch =
            InputBatch::from_commands(&[command(10), command(9), older, command(7)]).unwrap();
        assert_eq!(round_trip(&batch), batch);
    }

    #[test]
    fn invalid_payloads_are_refused_by_name() {
        let mut bad = command(9);
        bad.payload.axis = i8::MIN;
        let batch = InputBatch::from_commands(&[command(10), bad]).unwrap();
        assert_eq!(encode(&batch), Err(ProtoError::invalid("axis")));
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
    fn decoding_rejects_zero_tick_steps() {
        // Two commands where the older one is 0 ticks back (a non-canonical varint 0).
        let mut buf = [0u8; 32];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(1, 2).unwrap();
        command(10).write_full(&mut w).unwrap();
        w.write_bool(false).unwrap();
        w.write_varint(0).unwrap();
        assert_eq!(
            InputBatch::<Pad>::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("input batch ticks"))
        );
    }

    #[test]
    fn envelope_sizes_are_as_documented() {
        // 2 (len) + 32 tick + 5 (aim lag 6, a varint) + 16 payload.
        let batch = InputBatch::from_commands(&[command(100)]).unwrap();
        assert_eq!(encode(&batch).unwrap(), 2 + 32 + 5 + 16);
        // An unchanged older command a tick back: 1 + 1 + 1 bits.
        let batch = InputBatch::from_commands(&[command(100), command(99)]).unwrap();
        assert_eq!(encode(&batch).unwrap(), 2 + 32 + 5 + 16 + 3);
    }

    #[test]
    fn the_empty_payload_costs_nothing() {
        let batch =
            InputBatch::from_commands(&[InputCommand::new(7, 7, ()), InputCommand::new(6, 6, ())])
                .unwrap();
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w).unwrap();
        // 2 (len) + 32 tick + 5 (aim lag 0, a varint) + 2 (older: a tick back, same lag).
        assert_eq!(w.bits_written(), 2 + 32 + 5 + 2);
    }
}
