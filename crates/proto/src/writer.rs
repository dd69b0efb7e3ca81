//! [`BitWriter`]: packs bits into a caller-provided buffer.

use crate::bits::{BitMark, bits_required, low_mask, store_le, zigzag};
use crate::error::ProtoError;

/// Writes bit-packed values into a caller-provided byte buffer.
///
/// Never allocates. A write that does not fit returns
/// [`ProtoError::WriteOverflow`] and leaves the writer unchanged. Bits past the
/// write position in the last touched byte are always zero, so the output of
/// [`finish`](Self::finish) is deterministic whatever the buffer held before.
#[derive(Debug)]
pub struct BitWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
    /// The bits of the current partly written byte (those below `pos`), kept
    /// in a register so a write never has to load what the last one stored.
    partial: u64,
}

impl<'a> BitWriter<'a> {
    /// A writer starting at bit 0 of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            partial: 0,
        }
    }

    /// Total capacity of the buffer in bits.
    #[inline]
    pub fn capacity_bits(&self) -> usize {
        self.buf.len() * 8
    }

    /// Bits written so far.
    #[inline]
    pub fn bits_written(&self) -> usize {
        self.pos
    }

    /// Bytes written so far, counting a partly written byte as whole.
    #[inline]
    pub fn bytes_written(&self) -> usize {
        self.pos.div_ceil(8)
    }

    /// Bits still free in the buffer.
    #[inline]
    pub fn remaining_bits(&self) -> usize {
        self.capacity_bits() - self.pos
    }

    /// The bytes written so far (a partly written byte included, its unused
    /// high bits zero).
    #[inline]
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.bytes_written()]
    }

    #[inline]
    fn reserve(&self, bits: usize) -> Result<(), ProtoError> {
        let remaining_bits = self.remaining_bits();
        if bits > remaining_bits {
            return Err(ProtoError::WriteOverflow {
                needed_bits: bits,
                remaining_bits,
            });
        }
        Ok(())
    }

    /// Writes the low `bits` bits of `value` (`bits` in `0..=32`; zero bits
    /// writes nothing). `value` must fit in `bits` bits.
    #[inline]
    pub fn write_bits(&mut self, value: u32, bits: u32) -> Result<(), ProtoError> {
        if bits > 32 {
            return Err(ProtoError::InvalidBitCount { bits });
        }
        if u64::from(value) > low_mask(bits) {
            return Err(ProtoError::ValueTooWide { value, bits });
        }
        self.reserve(bits as usize)?;
        if bits == 0 {
            return Ok(());
        }
        let byte = self.pos >> 3;
        let shift = (self.pos & 7) as u32;
        // `reserve` guarantees `byte < len`, so the range below is in bounds.
        // The window past the write head is free to overwrite (with zeros).
        let word = self.partial | (u64::from(value) << shift);
        store_le(&mut self.buf[byte..], word);
        self.pos += bits as usize;
        let advanced_bytes = (self.pos >> 3) - byte;
        self.partial = (word >> (8 * advanced_bytes)) & low_mask((self.pos & 7) as u32);
        Ok(())
    }

    /// Writes one bit.
    #[inline]
    pub fn write_bool(&mut self, v: bool) -> Result<(), ProtoError> {
        self.write_bits(u32::from(v), 1)
    }

    /// Writes 8 bits.
    #[inline]
    pub fn write_u8(&mut self, v: u8) -> Result<(), ProtoError> {
        self.write_bits(u32::from(v), 8)
    }

    /// Writes 16 bits.
    #[inline]
    pub fn write_u16(&mut self, v: u16) -> Result<(), ProtoError> {
        self.write_bits(u32::from(v), 16)
    }

    /// Writes 32 bits.
    #[inline]
    pub fn write_u32(&mut self, v: u32) -> Result<(), ProtoError> {
        self.write_bits(v, 32)
    }

    /// Writes 64 bits (low half first). Either both halves are written or
    /// neither.
    #[inline]
    pub fn write_u64(&mut self, v: u64) -> Result<(), ProtoError> {
        self.write_bits_u64(v, 64)
    }

    /// Writes the low `bits` bits of `value` (`bits` in `0..=64`), low 32
    /// first. `value` must fit in `bits` bits. All or nothing.
    #[inline]
    pub fn write_bits_u64(&mut self, value: u64, bits: u32) -> Result<(), ProtoError> {
        if bits > 64 {
            return Err(ProtoError::InvalidBitCount { bits });
        }
        self.reserve(bits as usize)?;
        let low = bits.min(32);
        self.all_or_nothing(|w| {
            w.write_bits((value & low_mask(low)) as u32, low)?;
            if value >> low != 0 && low < 32 {
                return Err(ProtoError::ValueTooWide {
                    value: value as u32,
                    bits,
                });
            }
            w.write_bits((value >> low) as u32, bits - low)
        })
    }

    /// Writes a signed 32-bit integer (two's complement, 32 bits).
    #[inline]
    pub fn write_i32(&mut self, v: i32) -> Result<(), ProtoError> {
        self.write_bits(v as u32, 32)
    }

    /// Writes an `f32` bit for bit (32 bits; NaN payloads preserved).
    #[inline]
    pub fn write_f32(&mut self, v: f32) -> Result<(), ProtoError> {
        self.write_bits(v.to_bits(), 32)
    }

    /// Writes an unsigned integer in few bits when it is small: 5 bits below
    /// 16, 10 below 256, 19 below 65,536, 35 otherwise
    /// (see [`varint_bits`](crate::bits::varint_bits)).
    #[inline]
    pub fn write_varint(&mut self, v: u32) -> Result<(), ProtoError> {
        if v < 1 << 4 {
            self.write_bits(v << 1, 5)
        } else if v < 1 << 8 {
            self.write_bits((v << 2) | 0b01, 10)
        } else if v < 1 << 16 {
            self.write_bits((v << 3) | 0b011, 19)
        } else {
            self.reserve(35)?;
            self.write_bits(0b111, 3)?;
            self.write_bits(v, 32)
        }
    }

    /// Writes a signed integer as a zigzag [`write_varint`](Self::write_varint):
    /// small magnitudes of either sign take few bits.
    #[inline]
    pub fn write_signed_varint(&mut self, v: i32) -> Result<(), ProtoError> {
        self.write_varint(zigzag(v))
    }

    /// Writes `v` in `min..=max` using `bits_required(max - min)` bits.
    ///
    /// Errors with [`ProtoError::InvalidValue`] if `min > max` or `v` is out of
    /// the range.
    #[inline]
    pub fn write_ranged(&mut self, v: u32, min: u32, max: u32) -> Result<(), ProtoError> {
        if min > max {
            return Err(ProtoError::invalid("range bounds"));
        }
        if v < min || v > max {
            return Err(ProtoError::invalid("ranged value"));
        }
        self.write_bits(v - min, bits_required(max - min))
    }

    /// Writes raw bytes at the current bit position (aligned or not). Either
    /// all bytes are written or none.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), ProtoError> {
        self.reserve(bytes.len().saturating_mul(8))?;
        if self.pos & 7 == 0 {
            let start = self.pos >> 3;
            self.buf[start..start + bytes.len()].copy_from_slice(bytes);
            self.pos += bytes.len() * 8;
            self.partial = 0;
        } else {
            for &b in bytes {
                self.write_u8(b)?;
            }
        }
        Ok(())
    }

    /// Pads with zero bits up to the next byte boundary.
    #[inline]
    pub fn align(&mut self) -> Result<(), ProtoError> {
        let pad = (8 - (self.pos & 7) as u32) & 7;
        self.write_bits(0, pad)
    }

    /// The current position, to [`rewind`](Self::rewind) to later.
    #[inline]
    pub fn mark(&self) -> BitMark {
        BitMark(self.pos)
    }

    /// Returns to `mark`, discarding everything written since. A mark ahead of
    /// the current position (not taken from this writer's past) is ignored.
    #[inline]
    pub fn rewind(&mut self, mark: BitMark) {
        if mark.0 > self.pos {
            return;
        }
        self.pos = mark.0;
        let shift = (self.pos & 7) as u32;
        self.partial = 0;
        if shift != 0
            && let Some(b) = self.buf.get_mut(self.pos >> 3)
        {
            *b &= low_mask(shift) as u8;
            self.partial = u64::from(*b);
        }
    }

    /// Runs `write` and, if it fails, rewinds to where it started: a record is
    /// written whole or not at all.
    #[inline]
    pub fn all_or_nothing<T>(
        &mut self,
        write: impl FnOnce(&mut Self) -> Result<T, ProtoError>,
    ) -> Result<T, ProtoError> {
        let mark = self.mark();
        let result = write(self);
        if result.is_err() {
            self.rewind(mark);
        }
        result
    }

    /// Ends writing and returns the number of bytes used (a partly written
    /// last byte counts; its unused bits are zero).
    #[inline]
    pub fn finish(self) -> usize {
        self.bytes_written()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_lsb_first() {
        let mut buf = [0xFFu8; 4];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(1, 1).unwrap();
        w.write_bits(0, 1).unwrap();
        w.write_bits(0b11, 2).unwrap();
        w.write_bits(0xAB, 8).unwrap();
        assert_eq!(w.bits_written(), 12);
        assert_eq!(w.finish(), 2);
        assert_eq!(buf[0], 0b1011_1101);
        assert_eq!(buf[1], 0x0A);
    }

    #[test]
    fn wide_values_of_any_width_round_trip_and_too_wide_ones_change_nothing() {
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        let widths = [0u32, 1, 17, 31, 32, 33, 50, 63, 64];
        let value = |bits: u32| 0xDEAD_BEEF_F00D_CAFEu64.checked_shr(64 - bits).unwrap_or(0);
        w.write_bits(1, 3).unwrap(); // an odd start
        for bits in widths {
            w.write_bits_u64(value(bits), bits).unwrap();
        }
        let written = w.bits_written();
        for (v, bits) in [(0b100, 2), (1 << 40, 40), (1, 0)] {
            assert!(matches!(
                w.write_bits_u64(v, bits),
                Err(ProtoError::ValueTooWide { .. })
            ));
            assert_eq!(w.bits_written(), written);
        }
        assert!(w.write_bits_u64(0, 65).is_err());
        let len = w.finish();
        let mut r = crate::BitReader::new(&buf[..len]);
        assert_eq!(r.read_bits(3).unwrap(), 1);
        for bits in widths {
            assert_eq!(r.read_bits_u64(bits).unwrap(), value(bits), "{bits} bits");
        }
        assert!(r.read_bits_u64(65).is_err());
    }

    #[test]
    fn overflow_is_an_error_and_changes_nothing() {
        let mut buf = [0u8; 2];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0x1FF, 9).unwrap();
        assert_eq!(
            w.write_u8(1),
            Err(ProtoError::WriteOverflow {
                needed_bits: 8,
                remaining_bits: 7
            })
        );
        assert_eq!(w.bits_written(), 9);
        w.write_bits(0x7F, 7).unwrap();
        assert!(w.write_bool(true).is_err());
        assert!(w.write_u64(0).is_err());
        assert!(w.write_bytes(&[1]).is_err());
        assert_eq!(w.finish(), 2);
    }

    #[test]
    fn rejects_bad_bit_counts_and_wide_values() {
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        assert_eq!(
            w.write_bits(0, 33),
            Err(ProtoError::InvalidBitCount { bits: 33 })
        );
        assert_eq!(
            w.write_bits(4, 2),
            Err(ProtoError::ValueTooWide { value: 4, bits: 2 })
        );
        assert_eq!(
            w.write_bits(1, 0),
            Err(ProtoError::ValueTooWide { value: 1, bits: 0 })
        );
        w.write_bits(0, 0).unwrap();
        assert_eq!(w.bits_written(), 0);
        assert!(w.write_ranged(5, 6, 9).is_err());
        assert!(w.write_ranged(10, 6, 9).is_err());
        assert!(w.write_ranged(6, 9, 6).is_err());
        w.write_ranged(7, 7, 7).unwrap();
        assert_eq!(w.bits_written(), 0);
    }

    #[test]
    fn rewind_discards_and_clears_the_partial_byte() {
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0b101, 3).unwrap();
        let m = w.mark();
        w.write_u16(0xFFFF).unwrap();
        w.rewind(m);
        assert_eq!(w.bits_written(), 3);
        assert_eq!(w.written(), &[0b101]);
        // A mark from the future is ignored.
        w.rewind(BitMark(100));
        assert_eq!(w.bits_written(), 3);
        w.write_bits(1, 1).unwrap();
        assert_eq!(w.finish(), 1);
        assert_eq!(buf, [0b1101, 0, 0, 0]);
    }

    #[test]
    fn align_pads_with_zeros() {
        let mut buf = [0xFFu8; 2];
        let mut w = BitWriter::new(&mut buf);
        w.write_bool(true).unwrap();
        w.align().unwrap();
        assert_eq!(w.bits_written(), 8);
        w.align().unwrap();
        assert_eq!(w.bits_written(), 8);
        w.write_bytes(&[0x42]).unwrap();
        assert_eq!(w.finish(), 2);
        assert_eq!(buf, [1, 0x42]);
    }
}
