//! Integers in fewer bits than their type: a bit count, a range, a varint.
//!
//! Each writer refuses a value its reader would not give back
//! ([`ProtoError::InvalidValue`]; a derived codec renames it after the
//! field), and each reader checks that what it read fits the type.

use crate::bits::zigzag;
use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// An integer type the helpers here can write: every value fits an `i128`.
pub trait WireInt: Copy {
    /// Whether the type has negative values (written two's complement or
    /// zigzag).
    const SIGNED: bool;
    /// The value, widened.
    fn to_i128(self) -> i128;
    /// The value of `v` in this type, if it fits.
    fn from_i128(v: i128) -> Option<Self>;
}

macro_rules! wire_int {
    ($($t:ty: $signed:literal),+) => {$(
        impl WireInt for $t {
            const SIGNED: bool = $signed;
            #[inline]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline]
            fn from_i128(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
        }
    )+};
}

wire_int!(u8: false, u16: false, u32: false, u64: false, i8: true, i16: true, i32: true, i64: true);

/// Writes the low `bits` (`0..=64`) of `v`: one `write_bits` when they fit
/// 32 (the common case, and the cheap one).
#[inline]
fn put(w: &mut BitWriter, v: u64, bits: u32) -> Result<(), ProtoError> {
    if bits <= 32 {
        w.write_bits(v as u32, bits)
    } else {
        w.write_bits_u64(v, bits)
    }
}

/// Reads `bits` (`0..=64`) bits as [`put`] wrote them.
#[inline]
fn take(r: &mut BitReader, bits: u32) -> Result<u64, ProtoError> {
    if bits <= 32 {
        r.read_bits(bits).map(u64::from)
    } else {
        r.read_bits_u64(bits)
    }
}

/// The values `bits` bits hold for a type of this signedness (`bits` in
/// `0..=64`): `0..2^bits`, or `-2^(bits-1)..2^(bits-1)` two's complement.
#[inline]
fn span(signed: bool, bits: u32) -> (i128, i128) {
    match (signed, bits) {
        (_, 0) => (0, 0),
        (true, _) => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        (false, _) => (0, (1i128 << bits) - 1),
    }
}

/// Writes `v` in `bits` bits (`0..=64`), two's complement when signed; a
/// value that does not fit is [`ProtoError::InvalidValue`].
#[inline]
pub fn write_bits<T: WireInt>(w: &mut BitWriter, v: T, bits: u32) -> Result<(), ProtoError> {
    if bits > 64 {
        return Err(ProtoError::InvalidBitCount { bits });
    }
    let (lo, hi) = span(T::SIGNED, bits);
    let v = v.to_i128();
    if v < lo || v > hi {
        return Err(ProtoError::invalid("value too wide for its bits"));
    }
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    put(w, v as u64 & mask, bits)
}

/// Reads a value written by [`write_bits`]; one that does not fit `T` is
/// [`ProtoError::InvalidValue`].
#[inline]
pub fn read_bits<T: WireInt>(r: &mut BitReader, bits: u32) -> Result<T, ProtoError> {
    let raw = i128::from(take(r, bits)?);
    let v = if T::SIGNED && bits > 0 && raw >> (bits - 1) == 1 {
        raw - (1i128 << bits)
    } else {
        raw
    };
    T::from_i128(v).ok_or(ProtoError::invalid("value too wide for its type"))
}

/// Bits for an offset in `0..=hi - lo`, or an error for bounds that are
/// reversed or more than 64 bits apart.
#[inline]
fn range_bits(lo: i128, hi: i128) -> Result<u32, ProtoError> {
    if lo > hi {
        return Err(ProtoError::invalid("range bounds"));
    }
    let bits = 128 - (hi - lo).leading_zeros();
    if bits > 64 {
        return Err(ProtoError::InvalidBitCount { bits });
    }
    Ok(bits)
}

/// Writes `v` in `lo..=hi` as its offset from `lo`, in the fewest bits that
/// hold `hi - lo`; a value outside is [`ProtoError::InvalidValue`].
#[inline]
pub fn write_range<T: WireInt>(
    w: &mut BitWriter,
    v: T,
    lo: i128,
    hi: i128,
) -> Result<(), ProtoError> {
    let bits = range_bits(lo, hi)?;
    let v = v.to_i128();
    if v < lo || v > hi {
        return Err(ProtoError::invalid("value out of range"));
    }
    put(w, (v - lo) as u64, bits)
}

/// Reads a value written by [`write_range`]; an offset past `hi` is
/// [`ProtoError::InvalidValue`].
#[inline]
pub fn read_range<T: WireInt>(r: &mut BitReader, lo: i128, hi: i128) -> Result<T, ProtoError> {
    let bits = range_bits(lo, hi)?;
    let v = lo + i128::from(take(r, bits)?);
    if v > hi {
        return Err(ProtoError::invalid("value out of range"));
    }
    T::from_i128(v).ok_or(ProtoError::invalid("value out of range"))
}

/// Writes `v` as a varint ([`BitWriter::write_varint`]; zigzag
/// [`BitWriter::write_signed_varint`] when signed): 5 bits for small
/// magnitudes, up to 35. A value past 32 bits is [`ProtoError::InvalidValue`].
#[inline]
pub fn write_varint<T: WireInt>(w: &mut BitWriter, v: T) -> Result<(), ProtoError> {
    let v = v.to_i128();
    let code = if T::SIGNED {
        i32::try_from(v).map(zigzag)
    } else {
        u32::try_from(v)
    };
    w.write_varint(code.map_err(|_| ProtoError::invalid("varint past 32 bits"))?)
}

/// Reads a value written by [`write_varint`]; one that does not fit `T` is
/// [`ProtoError::InvalidValue`].
#[inline]
pub fn read_varint<T: WireInt>(r: &mut BitReader) -> Result<T, ProtoError> {
    let v = if T::SIGNED {
        i128::from(r.read_signed_varint()?)
    } else {
        i128::from(r.read_varint()?)
    };
    T::from_i128(v).ok_or(ProtoError::invalid("varint too wide for its type"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written(write: impl FnOnce(&mut BitWriter) -> Result<(), ProtoError>) -> (Vec<u8>, usize) {
        let mut buf = [0u8; 32];
        let mut w = BitWriter::new(&mut buf);
        write(&mut w).unwrap();
        let bits = w.bits_written();
        let len = w.finish();
        (buf[..len].to_vec(), bits)
    }

    #[test]
    fn bits_hold_what_fits_and_refuse_the_rest() {
        let (buf, bits) = written(|w| write_bits(w, -4i8, 3));
        assert_eq!(bits, 3);
        assert_eq!(read_bits::<i8>(&mut BitReader::new(&buf), 3), Ok(-4));
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        assert!(write_bits(&mut w, 4i8, 3).is_err());
        assert!(write_bits(&mut w, 8u8, 3).is_err());
        assert!(write_bits(&mut w, 1u8, 65).is_err());
        assert_eq!(w.bits_written(), 0);
        // 12 bits of all ones is 4095: no u8.
        assert!(read_bits::<u8>(&mut BitReader::new(&[0xFF, 0x0F]), 12).is_err());
        let (buf, _) = written(|w| write_bits(w, i64::MIN, 64));
        assert_eq!(
            read_bits::<i64>(&mut BitReader::new(&buf), 64),
            Ok(i64::MIN)
        );
    }

    #[test]
    fn ranges_refuse_outsiders_both_ways() {
        let (buf, bits) = written(|w| write_range(w, -100i16, -100, 100));
        assert_eq!((bits, buf[0]), (8, 0));
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        assert!(write_range(&mut w, 101i16, -100, 100).is_err());
        assert!(write_range(&mut w, 0i16, 1, 0).is_err());
        assert_eq!(
            read_range::<i16>(&mut BitReader::new(&[0xFF]), -100, 100),
            Err(ProtoError::invalid("value out of range"))
        );
        // u8 can not hold 300 even when the range says so.
        let (buf, _) = written(|w| write_range(w, 300u16, 0, 300));
        assert!(read_range::<u8>(&mut BitReader::new(&buf), 0, 300).is_err());
    }

    #[test]
    fn varints_match_the_writer_and_refuse_wide_values() {
        let (buf, bits) = written(|w| write_varint(w, -3i32));
        assert_eq!(bits, 5);
        assert_eq!(read_varint::<i32>(&mut BitReader::new(&buf)), Ok(-3));
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        assert!(write_varint(&mut w, u64::MAX).is_err());
        assert!(write_varint(&mut w, i64::MIN).is_err());
        let (buf, _) = written(|w| write_varint(w, 300u32));
        assert!(read_varint::<u8>(&mut BitReader::new(&buf)).is_err());
    }

    proptest! {
        #[test]
        fn any_fitting_value_round_trips(v in any::<i32>(), extra in 0u32..8) {
            let bits = 33 - v.unsigned_abs().leading_zeros() + extra;
            let (buf, n) = written(|w| write_bits(w, v, bits));
            prop_assert_eq!(n as u32, bits);
            prop_assert_eq!(read_bits::<i32>(&mut BitReader::new(&buf), bits), Ok(v));
            let (buf, _) = written(|w| write_range(w, v, i128::from(v) - 5, i128::from(v) + i128::from(extra)));
            prop_assert_eq!(read_range::<i32>(&mut BitReader::new(&buf), i128::from(v) - 5, i128::from(v) + i128::from(extra)), Ok(v));
            let (buf, _) = written(|w| write_varint(w, v));
            prop_assert_eq!(read_varint::<i32>(&mut BitReader::new(&buf)), Ok(v));
        }
    }
}
