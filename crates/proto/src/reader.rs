//! [`BitReader`]: unpacks bits from a received payload.

use crate::bits::{bits_required, load_le, low_mask, unzigzag};
use crate::error::ProtoError;

/// Reads bit-packed values from a byte slice, in the order
/// [`BitWriter`](crate::writer::BitWriter) wrote them.
///
/// Never allocates and never panics: a read past the end returns
/// [`ProtoError::ReadPastEnd`] and leaves the reader unchanged.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader starting at bit 0 of `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bits read so far.
    #[inline]
    pub fn bits_read(&self) -> usize {
        self.pos
    }

    /// Bytes read so far, counting a partly read byte as whole.
    #[inline]
    pub fn bytes_read(&self) -> usize {
        self.pos.div_ceil(8)
    }

    /// Bits left to read.
    #[inline]
    pub fn remaining_bits(&self) -> usize {
        self.buf.len() * 8 - self.pos
    }

    /// Whether every bit has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining_bits() == 0
    }

    #[inline]
    fn require(&self, bits: usize) -> Result<(), ProtoError> {
        let remaining_bits = self.remaining_bits();
        if bits > remaining_bits {
            return Err(ProtoError::ReadPastEnd {
                needed_bits: bits,
                remaining_bits,
            });
        }
        Ok(())
    }

    /// Reads `bits` bits (`0..=32`; zero bits reads 0 and consumes nothing).
    #[inline]
    pub fn read_bits(&mut self, bits: u32) -> Result<u32, ProtoError> {
        if bits > 32 {
            return Err(ProtoError::InvalidBitCount { bits });
        }
        self.require(bits as usize)?;
        if bits == 0 {
            return Ok(0);
        }
        let shift = (self.pos & 7) as u32;
        // `require` guarantees the first byte exists.
        let word = load_le(
            &self.buf[self.pos >> 3..],
            (shift + bits).div_ceil(8) as usize,
        );
        self.pos += bits as usize;
        Ok(((word >> shift) & low_mask(bits)) as u32)
    }

    /// Reads one bit.
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, ProtoError> {
        Ok(self.read_bits(1)? == 1)
    }

    /// Reads 8 bits.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, ProtoError> {
        Ok(self.read_bits(8)? as u8)
    }

    /// Reads 16 bits.
    #[inline]
    pub fn read_u16(&mut self) -> Result<u16, ProtoError> {
        Ok(self.read_bits(16)? as u16)
    }

    /// Reads 32 bits.
    #[inline]
    pub fn read_u32(&mut self) -> Result<u32, ProtoError> {
        self.read_bits(32)
    }

    /// Reads 64 bits (low half first). Either both halves are read or neither.
    #[inline]
    pub fn read_u64(&mut self) -> Result<u64, ProtoError> {
        self.read_bits_u64(64)
    }

    /// Reads `bits` bits (`0..=64`) as [`BitWriter::write_bits_u64`](crate::BitWriter::write_bits_u64)
    /// wrote them (low 32 first). Either all are read or none.
    #[inline]
    pub fn read_bits_u64(&mut self, bits: u32) -> Result<u64, ProtoError> {
        if bits > 64 {
            return Err(ProtoError::InvalidBitCount { bits });
        }
        self.require(bits as usize)?;
        let low = bits.min(32);
        let lo = self.read_bits(low)?;
        let hi = self.read_bits(bits - low)?;
        Ok(u64::from(lo) | (u64::from(hi) << low))
    }

    /// Reads a signed 32-bit integer.
    #[inline]
    pub fn read_i32(&mut self) -> Result<i32, ProtoError> {
        Ok(self.read_bits(32)? as i32)
    }

    /// Reads an `f32` bit for bit. The value may be NaN or infinite: callers
    /// that need a finite number check it.
    #[inline]
    pub fn read_f32(&mut self) -> Result<f32, ProtoError> {
        Ok(f32::from_bits(self.read_bits(32)?))
    }

    /// Reads an unsigned integer written by
    /// [`BitWriter::write_varint`](crate::BitWriter::write_varint). On error the
    /// reader may have consumed the prefix.
    #[inline]
    pub fn read_varint(&mut self) -> Result<u32, ProtoError> {
        if !self.read_bool()? {
            self.read_bits(4)
        } else if !self.read_bool()? {
            self.read_bits(8)
        } else if !self.read_bool()? {
            self.read_bits(16)
        } else {
            self.read_bits(32)
        }
    }

    /// Reads a signed integer written by
    /// [`BitWriter::write_signed_varint`](crate::BitWriter::write_signed_varint).
    #[inline]
    pub fn read_signed_varint(&mut self) -> Result<i32, ProtoError> {
        Ok(unzigzag(self.read_varint()?))
    }

    /// Reads a value in `min..=max` written by
    /// [`BitWriter::write_ranged`](crate::BitWriter::write_ranged); a value above
    /// `max` is [`ProtoError::InvalidValue`].
    #[inline]
    pub fn read_ranged(&mut self, min: u32, max: u32) -> Result<u32, ProtoError> {
        if min > max {
            return Err(ProtoError::invalid("range bounds"));
        }
        let offset = self.read_bits(bits_required(max - min))?;
        if offset > max - min {
            return Err(ProtoError::invalid("ranged value"));
        }
        Ok(min + offset)
    }

    /// Fills `out` with bytes read at the current bit position (aligned or
    /// not). Either all bytes are read or none.
    #[inline]
    pub fn read_bytes(&mut self, out: &mut [u8]) -> Result<(), ProtoError> {
        self.require(out.len().saturating_mul(8))?;
        if self.pos & 7 == 0 {
            let start = self.pos >> 3;
            out.copy_from_slice(&self.buf[start..start + out.len()]);
            self.pos += out.len() * 8;
        } else {
            for b in out {
                *b = self.read_u8()?;
            }
        }
        Ok(())
    }

    /// Borrows the next `len` bytes of the payload without copying. The
    /// reader must be byte-aligned ([`ProtoError::Misaligned`] otherwise):
    /// write them after [`BitWriter::align`](crate::BitWriter::align) and call
    /// [`align`](Self::align) before this.
    #[inline]
    pub fn read_slice(&mut self, len: usize) -> Result<&'a [u8], ProtoError> {
        if self.pos & 7 != 0 {
            return Err(ProtoError::Misaligned { bit: self.pos });
        }
        self.require(len.saturating_mul(8))?;
        let start = self.pos >> 3;
        self.pos += len * 8;
        Ok(&self.buf[start..start + len])
    }

    /// Skips to the next byte boundary (the padding bits are not checked).
    #[inline]
    pub fn align(&mut self) -> Result<(), ProtoError> {
        let pad = (8 - (self.pos & 7) as u32) & 7;
        self.read_bits(pad).map(drop)
    }

    /// Skips `bits` bits.
    #[inline]
    pub fn skip_bits(&mut self, bits: usize) -> Result<(), ProtoError> {
        self.require(bits)?;
        self.pos += bits;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::BitWriter;
    use proptest::prelude::*;

    #[test]
    fn underflow_is_an_error_and_changes_nothing() {
        let buf = [0xABu8, 0x01];
        let mut r = BitReader::new(&buf);
        assert_eq!(r.read_bits(12).unwrap(), 0x1AB);
        assert_eq!(
            r.read_u8(),
            Err(ProtoError::ReadPastEnd {
                needed_bits: 8,
                remaining_bits: 4
            })
        );
        assert_eq!(r.bits_read(), 12);
        assert!(r.read_u64().is_err());
        assert!(r.read_bytes(&mut [0u8; 1]).is_err());
        assert!(r.skip_bits(5).is_err());
        assert_eq!(r.read_bits(4).unwrap(), 0);
        assert!(r.is_empty());
        assert!(r.read_bool().is_err());
        assert!(r.read_varint().is_err());
        assert_eq!(r.read_bits(0).unwrap(), 0);
        assert_eq!(
            r.read_bits(40),
            Err(ProtoError::InvalidBitCount { bits: 40 })
        );
    }

    #[test]
    fn empty_buffer_reads_nothing() {
        let mut r = BitReader::new(&[]);
        assert!(r.read_bool().is_err());
        assert!(r.read_slice(1).is_err());
        assert_eq!(r.read_slice(0).unwrap(), &[] as &[u8]);
        r.align().unwrap();
    }

    #[test]
    fn ranged_above_max_is_invalid() {
        let buf = [0b111u8];
        let mut r = BitReader::new(&buf);
        assert_eq!(
            r.read_ranged(10, 15),
            Err(ProtoError::invalid("ranged value"))
        );
        let mut r = BitReader::new(&buf);
        assert_eq!(r.read_ranged(10, 17).unwrap(), 17);
        assert!(BitReader::new(&buf).read_ranged(3, 2).is_err());
    }

    #[test]
    fn read_slice_needs_alignment() {
        let buf = [1u8, 2, 3];
        let mut r = BitReader::new(&buf);
        r.read_bool().unwrap();
        assert_eq!(r.read_slice(1), Err(ProtoError::Misaligned { bit: 1 }));
        r.align().unwrap();
        assert_eq!(r.read_slice(2).unwrap(), &[2, 3]);
    }

    #[derive(Debug, Clone)]
    enum Item {
        Bits(u32, u32),
        Bool(bool),
        U8(u8),
        U16(u16),
        U32(u32),
        U64(u64),
        I32(i32),
        F32(u32),
        Varint(u32),
        SignedVarint(i32),
        Ranged(u32, u32, u32),
        Bytes(Vec<u8>),
        Align,
        Slice(Vec<u8>),
    }

    fn item() -> impl Strategy<Value = Item> {
        prop_oneof![
            (0u32..=32).prop_flat_map(|bits| {
                let max = if bits == 32 {
                    u32::MAX
                } else {
                    (1u32 << bits) - 1
                };
                (0..=max).prop_map(move |v| Item::Bits(v, bits))
            }),
            any::<bool>().prop_map(Item::Bool),
            any::<u8>().prop_map(Item::U8),
            any::<u16>().prop_map(Item::U16),
            any::<u32>().prop_map(Item::U32),
            any::<u64>().prop_map(Item::U64),
            any::<i32>().prop_map(Item::I32),
            any::<u32>().prop_map(Item::F32),
            prop_oneof![0u32..20, 0u32..300, 0u32..70_000, any::<u32>()].prop_map(Item::Varint),
            any::<i32>().prop_map(Item::SignedVarint),
            (any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(a, b, c)| {
                let mut s = [a, b, c];
                s.sort_unstable();
                Item::Ranged(s[1], s[0], s[2])
            }),
            proptest::collection::vec(any::<u8>(), 0..6).prop_map(Item::Bytes),
            Just(Item::Align),
            proptest::collection::vec(any::<u8>(), 0..6).prop_map(Item::Slice),
        ]
    }

    fn write_item(w: &mut BitWriter, item: &Item) -> Result<(), ProtoError> {
        match item {
            Item::Bits(v, bits) => w.write_bits(*v, *bits),
            Item::Bool(v) => w.write_bool(*v),
            Item::U8(v) => w.write_u8(*v),
            Item::U16(v) => w.write_u16(*v),
            Item::U32(v) => w.write_u32(*v),
            Item::U64(v) => w.write_u64(*v),
            Item::I32(v) => w.write_i32(*v),
            Item::F32(v) => w.write_f32(f32::from_bits(*v)),
            Item::Varint(v) => w.write_varint(*v),
            Item::SignedVarint(v) => w.write_signed_varint(*v),
            Item::Ranged(v, min, max) => w.write_ranged(*v, *min, *max),
            Item::Bytes(b) => w.write_bytes(b),
            Item::Align => w.align(),
            Item::Slice(b) => {
                w.align()?;
                w.write_bytes(b)
            }
        }
    }

    fn check_item(r: &mut BitReader, item: &Item) -> Result<(), ProtoError> {
        match item {
            Item::Bits(v, bits) => assert_eq!(r.read_bits(*bits)?, *v),
            Item::Bool(v) => assert_eq!(r.read_bool()?, *v),
            Item::U8(v) => assert_eq!(r.read_u8()?, *v),
            Item::U16(v) => assert_eq!(r.read_u16()?, *v),
            Item::U32(v) => assert_eq!(r.read_u32()?, *v),
            Item::U64(v) => assert_eq!(r.read_u64()?, *v),
            Item::I32(v) => assert_eq!(r.read_i32()?, *v),
            Item::F32(v) => assert_eq!(r.read_f32()?.to_bits(), *v),
            Item::Varint(v) => assert_eq!(r.read_varint()?, *v),
            Item::SignedVarint(v) => assert_eq!(r.read_signed_varint()?, *v),
            Item::Ranged(v, min, max) => assert_eq!(r.read_ranged(*min, *max)?, *v),
            Item::Bytes(b) => {
                let mut out = [0u8; 8];
                r.read_bytes(&mut out[..b.len()])?;
                assert_eq!(&out[..b.len()], &b[..]);
            }
            Item::Align => r.align()?,
            Item::Slice(b) => {
                r.align()?;
                assert_eq!(r.read_slice(b.len())?, &b[..]);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_sequence_round_trips(items in proptest::collection::vec(item(), 0..40), junk in any::<u8>()) {
            let mut buf = [junk; 512];
            let mut w = BitWriter::new(&mut buf);
            for item in &items {
                write_item(&mut w, item).unwrap();
            }
            let bits = w.bits_written();
            let len = w.finish();
            prop_assert_eq!(len, bits.div_ceil(8));
            let mut r = BitReader::new(&buf[..len]);
            for item in &items {
                check_item(&mut r, item).unwrap();
            }
            prop_assert_eq!(r.bits_read(), bits);
            prop_assert!(r.remaining_bits() < 8);
        }

        #[test]
        fn small_buffers_overflow_cleanly(items in proptest::collection::vec(item(), 0..20), cap in 0usize..12) {
            // Whatever fits round-trips; the first write that does not fit errors
            // without moving the writer.
            let mut buf = [0u8; 12];
            let mut w = BitWriter::new(&mut buf[..cap]);
            let mut written = 0;
            for item in &items {
                let mark = w.mark();
                match write_item(&mut w, item) {
                    Ok(()) => written += 1,
                    Err(_) => {
                        w.rewind(mark);
                        break;
                    }
                }
            }
            let len = w.finish();
            let mut r = BitReader::new(&buf[..len]);
            for item in &items[..written] {
                check_item(&mut r, item).unwrap();
            }
        }

        #[test]
        fn rewind_then_rewrite_matches_a_clean_write(
            prefix in proptest::collection::vec(item(), 0..10),
            discarded in proptest::collection::vec(item(), 0..10),
            suffix in proptest::collection::vec(item(), 0..10),
        ) {
            let mut a = [0u8; 256];
            let mut w = BitWriter::new(&mut a);
            for item in &prefix { write_item(&mut w, item).unwrap(); }
            let mark = w.mark();
            for item in &discarded { write_item(&mut w, item).unwrap(); }
            w.rewind(mark);
            for item in &suffix { write_item(&mut w, item).unwrap(); }
            let len_a = w.finish();

            let mut b = [0u8; 256];
            let mut w = BitWriter::new(&mut b);
            for item in prefix.iter().chain(&suffix) { write_item(&mut w, item).unwrap(); }
            let len_b = w.finish();
            prop_assert_eq!(&a[..len_a], &b[..len_b]);
        }
    }
}
