//! Bit-level building blocks shared by [`BitWriter`](crate::writer::BitWriter) and
//! [`BitReader`](crate::reader::BitReader): the packing order, bit counts and the
//! prefix code used for variable-length integers.
//!
//! Bits are packed LSB-first: the first bit written lands in bit 0 of byte 0,
//! and a multi-bit value is stored least significant bit first.

/// The number of bits needed to write any value in `0..=range`.
///
/// `bits_required(0) == 0` (a single possible value needs no bits),
/// `bits_required(1) == 1`, `bits_required(255) == 8`, `bits_required(u32::MAX) == 32`.
#[inline]
pub const fn bits_required(range: u32) -> u32 {
    u32::BITS - range.leading_zeros()
}

/// A position in a [`BitWriter`](crate::writer::BitWriter), taken with `mark` and
/// returned to with `rewind` to undo a partly written record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitMark(pub(crate) usize);

impl BitMark {
    /// The number of bits written when the mark was taken.
    #[inline]
    pub const fn bits(self) -> usize {
        self.0
    }
}

/// Size in bits of the variable-length integer code for `v`
/// (`0`+4 bits, `10`+8 bits, `110`+16 bits, `111`+32 bits).
#[inline]
pub const fn varint_bits(v: u32) -> u32 {
    if v < 1 << 4 {
        5
    } else if v < 1 << 8 {
        10
    } else if v < 1 << 16 {
        19
    } else {
        35
    }
}

/// Maps a signed integer to an unsigned one so that small magnitudes stay
/// small (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...).
#[inline]
pub const fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// Inverse of [`zigzag`].
#[inline]
pub const fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// A mask of the low `bits` bits (`bits <= 32`), as a `u64`.
#[inline]
pub(crate) const fn low_mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

/// Loads the `needed` (at most 8) bytes at the start of `bytes`
/// little-endian into the low end of a word; missing bytes read as zero.
#[inline]
pub(crate) fn load_le(bytes: &[u8], needed: usize) -> u64 {
    match bytes.first_chunk::<8>() {
        Some(chunk) => u64::from_le_bytes(*chunk),
        None => bytes
            .iter()
            .take(needed.min(8))
            .enumerate()
            .fold(0, |word, (i, b)| word | (u64::from(*b) << (8 * i))),
    }
}

/// Stores `word` little-endian into as many of `bytes` as exist (up to 8).
#[inline]
pub(crate) fn store_le(bytes: &mut [u8], word: u64) {
    match bytes.first_chunk_mut::<8>() {
        Some(chunk) => *chunk = word.to_le_bytes(),
        None => store_le_short(bytes, word),
    }
}

/// [`store_le`] for the last few bytes of a buffer: rare, kept out of line.
#[cold]
#[inline(never)]
fn store_le_short(bytes: &mut [u8], word: u64) {
    for (b, w) in bytes.iter_mut().zip(word.to_le_bytes()) {
        *b = w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_required_counts_the_range() {
        assert_eq!(bits_required(0), 0);
        assert_eq!(bits_required(1), 1);
        assert_eq!(bits_required(2), 2);
        assert_eq!(bits_required(255), 8);
        assert_eq!(bits_required(256), 9);
        assert_eq!(bits_required(u32::MAX), 32);
    }

    #[test]
    fn zigzag_round_trips_extremes() {
        for v in [0, 1, -1, 2, -2, i32::MAX, i32::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn short_loads_and_stores_touch_only_existing_bytes() {
        let mut three = [0u8; 3];
        store_le(&mut three, 0x0403_0201);
        assert_eq!(three, [1, 2, 3]);
        assert_eq!(load_le(&three, 3), 0x03_0201);
        assert_eq!(load_le(&three, 2), 0x0201);
        assert_eq!(
            load_le(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1),
            0x0807_0605_0403_0201
        );
    }
}
