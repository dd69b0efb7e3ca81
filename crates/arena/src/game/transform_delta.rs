//! Transforms written relative to what the client holds.
//!
//! A transform record names the age of its base (the newest tick the client
//! acknowledged for the body, at most [`MAX_BASE_AGE`] ticks back) and codes
//! each field as its difference from the base's: a zero costs 1 bit, a small
//! step 7, a larger one 12, and anything else escapes to the whole code. A
//! body standing still costs a few bits; a runner's step at 128 Hz about 7
//! bits per moving axis, against 14 for the whole code.
//!
//! - [`TransformHistory`] (server): per body, its last transform changes by
//!   tick, to find the value at the client's acked tick.
//! - [`TransformBases`] (client): the transforms the replica read, by
//!   tick, to find the same value when a delta names its base.
//! - [`write`] and [`read`] the record itself.

use hightick_engine::tick::Tick;
use hightick_proto::{BitReader, BitWriter, ProtoError};

/// Bits of a quantized yaw.
pub(super) const YAW_BITS: u32 = 10;
/// Bits of a quantized pitch.
pub(super) const PITCH_BITS: u32 = 8;
/// Bits of a quantized crouch amount.
pub(super) const CROUCH_BITS: u32 = 2;

/// A player's transform as it goes on the wire: quantized codes, so the
/// setter stamps a change only when the client would see one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct WireTransform {
    /// Position codes per axis.
    pub position: [u32; 3],
    /// Yaw code (`YAW_BITS`).
    pub yaw: u16,
    /// Pitch code (`PITCH_BITS`).
    pub pitch: u16,
    /// Crouch code (`CROUCH_BITS`).
    pub crouch: u8,
}

/// Bits of a base's age (snapshot tick - base tick).
const AGE_BITS: u32 = 5;
/// The oldest base a delta may name, in ticks before the snapshot.
pub(super) const MAX_BASE_AGE: Tick = (1 << AGE_BITS) - 1;
/// Transforms remembered per body: enough for one change per tick over the
/// whole age window, plus the base itself.
const DEPTH: usize = MAX_BASE_AGE as usize + 1;

/// One remembered transform: the value from `tick` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stamped {
    tick: Tick,
    value: WireTransform,
}

/// The newest of `entries` at or before `tick`.
fn value_at(entries: &[Stamped], tick: Tick) -> Option<WireTransform> {
    entries
        .iter()
        .filter(|s| s.tick <= tick)
        .max_by_key(|s| s.tick)
        .map(|s| s.value)
}

/// The newest of a ring's entries at or before `tick`: `ring[..held]` in
/// order of recording (ascending ticks) from index `next` on, wrapping.
fn ring_value_at(ring: &[Stamped], held: usize, next: usize, tick: Tick) -> Option<WireTransform> {
    (1..=held)
        .map(|back| &ring[(next + ring.len() - back) % ring.len()])
        .find(|s| s.tick <= tick)
        .map(|s| s.value)
}

/// The server's record of each body's transform changes.
#[derive(Debug)]
pub(super) struct TransformHistory {
    /// Per entity slot, a ring of its last [`DEPTH`] changes.
    rings: Box<[[Stamped; DEPTH]]>,
    /// Per entity slot: changes recorded (the ring's next index is this
    /// modulo `DEPTH`).
    counts: Box<[u32]>,
}

impl TransformHistory {
    /// A history for `entities` entity slots.
    pub(super) fn new(entities: usize) -> Self {
        Self {
            rings: vec![[Stamped::default(); DEPTH]; entities].into_boxed_slice(),
            counts: vec![0; entities].into_boxed_slice(),
        }
    }

    /// The transform of slot `entity` changed to `value` in tick `tick`.
    pub(super) fn record(&mut self, entity: usize, tick: Tick, value: WireTransform) {
        let (Some(ring), Some(count)) = (self.rings.get_mut(entity), self.counts.get_mut(entity))
        else {
            return;
        };
        let last = (*count as usize + DEPTH - 1) % DEPTH;
        if *count > 0 && ring[last].tick == tick {
            ring[last].value = value;
            return;
        }
        ring[*count as usize % DEPTH] = Stamped { tick, value };
        *count += 1;
    }

    /// The transform slot `entity` had at the end of tick `tick`, if the
    /// history still reaches back that far.
    pub(super) fn at(&self, entity: usize, tick: Tick) -> Option<WireTransform> {
        // Changes are dropped oldest first, so the newest one held at or
        // before `tick` is the newest there was. Newest first: a base is
        // rarely more than a few changes back.
        let ring = self.rings.get(entity)?;
        let count = *self.counts.get(entity)? as usize;
        ring_value_at(ring, count.min(DEPTH), count % DEPTH, tick)
    }
}

/// The transforms a client's replica read, newest [`DEPTH`] by tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransformBases {
    entries: [Stamped; DEPTH],
    len: u8,
}

impl TransformBases {
    /// Remembers that the transform was `value` at tick `tick`.
    pub fn remember(&mut self, tick: Tick, value: WireTransform) {
        let held = &mut self.entries[..usize::from(self.len)];
        if held.iter().any(|s| s.tick == tick) {
            return;
        }
        if usize::from(self.len) < DEPTH {
            self.entries[usize::from(self.len)] = Stamped { tick, value };
            self.len += 1;
            return;
        }
        if let Some(oldest) = held.iter_mut().min_by_key(|s| s.tick)
            && oldest.tick < tick
        {
            *oldest = Stamped { tick, value };
        }
    }

    /// The newest transform read at or before `tick`.
    pub fn at(&self, tick: Tick) -> Option<WireTransform> {
        value_at(&self.entries[..usize::from(self.len)], tick)
    }

    /// Whether nothing was read yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Largest step of the short class, and bits of its magnitude.
const SHORT_MAX: u32 = 16;
const SHORT_BITS: u32 = 4;
/// Largest step of the long class, and bits of its magnitude.
const LONG_MAX: u32 = 256;
const LONG_BITS: u32 = 8;

/// Bits gathered low first, to go out in a few writes.
#[derive(Default)]
struct Gathered {
    bits: u128,
    len: u32,
}

impl Gathered {
    #[inline]
    fn push(&mut self, value: u32, bits: u32) {
        self.bits |= u128::from(value) << self.len;
        self.len += bits;
    }

    fn write(self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let low = self.len.min(64);
        w.write_bits_u64(self.bits as u64, low)?;
        w.write_bits_u64((self.bits >> 64) as u64, self.len - low)
    }
}

/// Gathers `value` as a step from `base` (`wrap`: codes modulo `1 << bits`).
#[inline]
fn push_field(out: &mut Gathered, base: u32, value: u32, bits: u32, wrap: bool) {
    let d = if wrap {
        let m = 1i64 << bits;
        let d = (i64::from(value) - i64::from(base)).rem_euclid(m);
        if d >= m / 2 { d - m } else { d }
    } else {
        i64::from(value) - i64::from(base)
    };
    let magnitude = d.unsigned_abs();
    let sign = u32::from(d < 0);
    if magnitude == 0 {
        out.push(0, 1);
    } else if magnitude <= u64::from(SHORT_MAX) {
        // "1" then "0" (first bit lowest), the sign, the magnitude.
        out.push(
            0b01 | sign << 2 | (magnitude as u32 - 1) << 3,
            3 + SHORT_BITS,
        );
    } else if magnitude <= u64::from(LONG_MAX) {
        out.push(
            0b011 | sign << 3 | (magnitude as u32 - 1) << 4,
            4 + LONG_BITS,
        );
    } else {
        out.push(0b111, 3);
        out.push(value, bits);
    }
}

/// Reads what [`push_field`] wrote: the value, unchecked (a base that is
/// missing gives garbage, which the caller drops).
fn read_field(r: &mut BitReader, base: u32, bits: u32, wrap: bool) -> Result<i64, ProtoError> {
    if !r.read_bool()? {
        return Ok(base.into());
    }
    let (negative, magnitude) = if !r.read_bool()? {
        (r.read_bool()?, r.read_bits(SHORT_BITS)? + 1)
    } else if !r.read_bool()? {
        (r.read_bool()?, r.read_bits(LONG_BITS)? + 1)
    } else {
        return r.read_bits(bits).map(i64::from);
    };
    let d = if negative {
        -i64::from(magnitude)
    } else {
        i64::from(magnitude)
    };
    let v = i64::from(base) + d;
    Ok(if wrap { v.rem_euclid(1i64 << bits) } else { v })
}

/// A field's code, checked to fit its bits.
fn code(v: i64, bits: u32) -> Result<u32, ProtoError> {
    u32::try_from(v)
        .ok()
        .filter(|v| bits >= 32 || *v < (1u32 << bits))
        .ok_or_else(|| ProtoError::invalid("transform delta"))
}

/// Writes `t`: as steps from `base` when the client holds it from `age`
/// ticks back (1..=[`MAX_BASE_AGE`]), else whole with
/// `write_whole`.
pub(super) fn write(
    w: &mut BitWriter,
    t: &WireTransform,
    position_bits: [u32; 3],
    base: Option<(Tick, WireTransform)>,
    write_whole: impl FnOnce(&mut BitWriter) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    let Some((age, b)) = base.filter(|(age, _)| (1..=MAX_BASE_AGE).contains(age)) else {
        w.write_bool(false)?;
        return write_whole(w);
    };
    let mut out = Gathered::default();
    out.push(1 | age << 1, 1 + AGE_BITS);
    for ((&base, &value), &bits) in b.position.iter().zip(&t.position).zip(&position_bits) {
        push_field(&mut out, base, value, bits, false);
    }
    push_field(&mut out, b.yaw.into(), t.yaw.into(), YAW_BITS, true);
    push_field(&mut out, b.pitch.into(), t.pitch.into(), PITCH_BITS, false);
    out.push(u32::from(t.crouch), CROUCH_BITS);
    out.write(w)
}

/// What a transform record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    /// The whole transform.
    Whole(WireTransform),
    /// A transform as steps from the one held at `tick`: `None` when the
    /// reader holds no such base (the steps were read and dropped).
    Delta {
        /// The base's tick.
        base_tick: Tick,
        /// The transform, when the base was found.
        value: Option<WireTransform>,
    },
}

/// Reads what [`write`] wrote for a record of snapshot tick `tick`, finding
/// bases in `bases`; `read_whole` reads a whole transform's codes.
pub(super) fn read(
    r: &mut BitReader,
    tick: Tick,
    position_bits: [u32; 3],
    bases: &TransformBases,
    read_whole: impl FnOnce(&mut BitReader) -> Result<WireTransform, ProtoError>,
) -> Result<Read, ProtoError> {
    if !r.read_bool()? {
        return read_whole(r).map(Read::Whole);
    }
    let age = r.read_bits(AGE_BITS)?;
    if age == 0 || age > tick {
        return Err(ProtoError::invalid("transform delta age"));
    }
    let base_tick = tick - age;
    let found = bases.at(base_tick);
    let base = found.unwrap_or_default();
    let mut position = [0i64; 3];
    for axis in 0..3 {
        position[axis] = read_field(r, base.position[axis], position_bits[axis], false)?;
    }
    let yaw = read_field(r, base.yaw.into(), YAW_BITS, true)?;
    let pitch = read_field(r, base.pitch.into(), PITCH_BITS, false)?;
    let crouch = r.read_bits(CROUCH_BITS)? as u8;
    if found.is_none() {
        return Ok(Read::Delta {
            base_tick,
            value: None,
        });
    }
    let mut t = WireTransform {
        crouch,
        yaw: code(yaw, YAW_BITS)? as u16,
        pitch: code(pitch, PITCH_BITS)? as u16,
        ..WireTransform::default()
    };
    for axis in 0..3 {
        t.position[axis] = code(position[axis], position_bits[axis])?;
    }
    Ok(Read::Delta {
        base_tick,
        value: Some(t),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BITS: [u32; 3] = [14, 11, 14];

    fn t(x: u32, y: u32, z: u32, yaw: u16) -> WireTransform {
        WireTransform {
            position: [x, y, z],
            yaw,
            pitch: 128,
            crouch: 1,
        }
    }

    fn whole(w: &mut BitWriter, t: &WireTransform) -> Result<(), ProtoError> {
        for (axis, &b) in BITS.iter().enumerate() {
            w.write_bits(t.position[axis], b)?;
        }
        w.write_bits(t.yaw.into(), YAW_BITS)?;
        w.write_bits(t.pitch.into(), PITCH_BITS)?;
        w.write_bits(t.crouch.into(), CROUCH_BITS)
    }

    fn read_whole(r: &mut BitReader) -> Result<WireTransform, ProtoError> {
        let mut t = WireTransform::default();
        for (axis, &b) in BITS.iter().enumerate() {
            t.position[axis] = r.read_bits(b)?;
        }
        t.yaw = r.read_bits(YAW_BITS)? as u16;
        t.pitch = r.read_bits(PITCH_BITS)? as u16;
        t.crouch = r.read_bits(CROUCH_BITS)? as u8;
        Ok(t)
    }

    fn round_trip(
        value: WireTransform,
        base: Option<(Tick, WireTransform)>,
        bases: &TransformBases,
        tick: Tick,
    ) -> (Read, usize) {
        let mut buf = [0u8; 32];
        let mut w = BitWriter::new(&mut buf);
        write(&mut w, &value, BITS, base, |w| whole(w, &value)).unwrap();
        let bits = w.bits_written();
        let len = w.finish();
        let mut r = BitReader::new(&buf[..len]);
        (read(&mut r, tick, BITS, bases, read_whole).unwrap(), bits)
    }

    #[test]
    fn steps_of_every_size_and_the_yaw_wrap_round_trip() {
        let base = t(8000, 300, 100, 1020);
        let mut bases = TransformBases::default();
        bases.remember(95, base);
        for value in [
            base,
            t(8003, 300, 98, 1023),
            t(8016, 299, 84, 3),
            t(7900, 300, 356, 500),
            t(12000, 0, 16383, 0),
            t(0, 2047, 0, 1020),
        ] {
            let (read, _) = round_trip(value, Some((5, base)), &bases, 100);
            assert_eq!(
                read,
                Read::Delta {
                    base_tick: 95,
                    value: Some(value)
                }
            );
        }
    }

    #[test]
    fn a_standing_body_costs_a_few_bits_and_a_runner_about_half() {
        let base = t(8000, 300, 100, 10);
        let mut bases = TransformBases::default();
        bases.remember(99, base);
        let (_, still) = round_trip(base, Some((1, base)), &bases, 100);
        let (_, whole) = round_trip(base, None, &bases, 100);
        let step = t(8003, 300, 97, 12);
        let (_, running) = round_trip(step, Some((1, base)), &bases, 100);
        assert_eq!(whole, 1 + 14 + 11 + 14 + 10 + 8 + 2);
        assert_eq!(still, 1 + 5 + 5 + 2);
        assert!(running * 2 <= whole + 10, "{running} vs {whole}");
    }

    #[test]
    fn ages_outside_the_window_write_whole() {
        let base = t(1, 2, 3, 4);
        let bases = TransformBases::default();
        let value = t(5, 6, 7, 8);
        for age in [0, MAX_BASE_AGE + 1] {
            let (read, _) = round_trip(value, Some((age, base)), &bases, 100);
            assert_eq!(read, Read::Whole(value));
        }
    }

    #[test]
    fn a_delta_without_its_base_is_read_and_reported_missing() {
        let base = t(8000, 300, 100, 10);
        let bases = TransformBases::default();
        let (read, _) = round_trip(t(8001, 300, 100, 10), Some((3, base)), &bases, 100);
        assert_eq!(
            read,
            Read::Delta {
                base_tick: 97,
                value: None
            }
        );
    }

    proptest::proptest! {
        /// Any transform round-trips from any base at any age in the window,
        /// and any bytes after a delta flag read without a panic.
        #[test]
        fn any_transform_round_trips_from_any_base(
            from in proptest::array::uniform5(0u32..2048),
            to in proptest::array::uniform5(0u32..2048),
            age in 1u32..=MAX_BASE_AGE,
            noise in proptest::collection::vec(proptest::num::u8::ANY, 0..24),
        ) {
            let code = |v: [u32; 5]| WireTransform {
                position: [v[0] * 8, v[1], v[2] * 8],
                yaw: (v[3] % 1024) as u16,
                pitch: (v[4] % 256) as u16,
                crouch: (v[4] % 4) as u8,
            };
            let (base, value) = (code(from), code(to));
            let mut bases = TransformBases::default();
            bases.remember(100 - age, base);
            let (read, _) = round_trip(value, Some((age, base)), &bases, 100);
            proptest::prop_assert_eq!(read, Read::Delta { base_tick: 100 - age, value: Some(value) });
            let mut bytes = vec![0xffu8];
            bytes.extend(noise);
            let _ = read_delta(&bytes, &bases);
        }
    }

    fn read_delta(bytes: &[u8], bases: &TransformBases) -> Result<Read, ProtoError> {
        read(&mut BitReader::new(bytes), 100, BITS, bases, read_whole)
    }

    #[test]
    fn the_history_finds_the_value_at_a_tick_while_it_reaches_back() {
        let mut h = TransformHistory::new(2);
        h.record(1, 10, t(1, 0, 0, 0));
        h.record(1, 12, t(2, 0, 0, 0));
        h.record(1, 12, t(3, 0, 0, 0)); // twice in one tick: the last counts
        assert_eq!(h.at(1, 9), None);
        assert_eq!(h.at(1, 10), Some(t(1, 0, 0, 0)));
        assert_eq!(h.at(1, 11), Some(t(1, 0, 0, 0)));
        assert_eq!(h.at(1, 40), Some(t(3, 0, 0, 0)));
        assert_eq!(h.at(0, 40), None);
        for tick in 13..13 + DEPTH as Tick {
            h.record(1, tick, t(tick, 0, 0, 0));
        }
        // The changes at 10 and 12 were dropped: 12 is no longer known.
        assert_eq!(h.at(1, 12), None);
        let newest = 12 + DEPTH as Tick;
        assert_eq!(h.at(1, newest), Some(t(newest, 0, 0, 0)));
        assert_eq!(h.at(1, 14), Some(t(14, 0, 0, 0)));
    }

    #[test]
    fn the_bases_keep_the_newest_reads_by_tick() {
        let mut b = TransformBases::default();
        assert!(b.is_empty());
        for tick in (1..=40).rev() {
            b.remember(tick, t(tick, 0, 0, 0));
        }
        // Read newest first: the oldest ones never displace newer ones.
        assert_eq!(b.at(40), Some(t(40, 0, 0, 0)));
        assert_eq!(b.at(9), Some(t(9, 0, 0, 0)));
        assert_eq!(b.at(8), None);
        b.remember(41, t(41, 0, 0, 0));
        assert_eq!(b.at(9), None);
        assert_eq!(b.at(10), Some(t(10, 0, 0, 0)));
    }
}
