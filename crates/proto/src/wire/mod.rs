//! [`Wire`]: a type's one bit codec, the same on the server and the client.
//!
//! A game declares how each of its messages travels once, usually with
//! `#[derive(Wire)]` (from `hightick-derive`, re-exported by the engine),
//! and both sides call the same [`Wire::write`] / [`Wire::read`] pair. The
//! plain types below travel in full: integers at their width, `bool` in one
//! bit, `f32` bit for bit (finite only), an [`EntityId`] in its compact
//! code, `[T; N]` element by element, `Option<T>` as a bit and the value.
//! Field attributes of the derive choose narrower forms, written by the
//! helpers in [`int`] and [`array`] and by [`crate::quantize`].
//!
//! ```
//! use hightick_proto::{BitReader, BitWriter, EntityId, ProtoError, Wire};
//!
//! # fn main() -> Result<(), ProtoError> {
//! let mut buf = [0u8; 8];
//! let mut w = BitWriter::new(&mut buf);
//! [Some(EntityId(3)), None].write(&mut w)?; // 1 + 7 bits, then 1 bit
//! assert_eq!(w.bits_written(), 9);
//! let len = w.finish();
//! let back = <[Option<EntityId>; 2]>::read(&mut BitReader::new(&buf[..len]))?;
//! assert_eq!(back, [Some(EntityId(3)), None]);
//! # Ok(())
//! # }
//! ```

pub mod array;
pub mod int;
pub mod schema;

pub use schema::TypeSchema;

use crate::error::ProtoError;
use crate::message::{EntityId, read_entity_id, write_entity_id};
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// A value with one bit codec, read exactly as it was written.
///
/// `write` refuses (with [`ProtoError::InvalidValue`] naming the field) what
/// `read` would reject; `read` validates everything and never panics.
/// Derived implementations are all-or-nothing: on error the writer is back
/// where it started.
pub trait Wire: Sized {
    /// Writes the value.
    fn write(&self, w: &mut BitWriter) -> Result<(), ProtoError>;

    /// Reads a value written by [`write`](Self::write).
    fn read(r: &mut BitReader) -> Result<Self, ProtoError>;

    /// What the codec writes, as data: `Some` for derived codecs, `None`
    /// (the default) for hand-written ones and the plain types.
    const SCHEMA: Option<&'static TypeSchema> = None;
}

impl Wire for () {
    #[inline]
    fn write(&self, _: &mut BitWriter) -> Result<(), ProtoError> {
        Ok(())
    }
    #[inline]
    fn read(_: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(())
    }
}

impl Wire for bool {
    #[inline]
    fn write(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.write_bool(*self)
    }
    #[inline]
    fn read(r: &mut BitReader) -> Result<Self, ProtoError> {
        r.read_bool()
    }
}

/// Integers at their full width (two's complement for signed ones).
macro_rules! full_width {
    ($($t:ty),+) => {$(
        impl Wire for $t {
            #[inline]
            fn write(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
                int::write_bits(w, *self, <$t>::BITS)
            }
            #[inline]
            fn read(r: &mut BitReader) -> Result<Self, ProtoError> {
                int::read_bits(r, <$t>::BITS)
            }
        }
    )+};
}

full_width!(u8, u16, u32, u64, i8, i16, i32, i64);

/// 32 bits, bit for bit; NaN and the infinities are refused both ways.
impl Wire for f32 {
    #[inline]
    fn write(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        if !self.is_finite() {
            return Err(ProtoError::invalid("f32"));
        }
        w.write_f32(*self)
    }
    #[inline]
    fn read(r: &mut BitReader) -> Result<Self, ProtoError> {
        let v = r.read_f32()?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(ProtoError::invalid("f32"))
        }
    }
}

/// 7 bits below 64, 12 below 1024, 18 otherwise ([`write_entity_id`]).
impl Wire for EntityId {
    #[inline]
    fn write(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        write_entity_id(w, *self)
    }
    #[inline]
    fn read(r: &mut BitReader) -> Result<Self, ProtoError> {
        read_entity_id(r)
    }
}

/// One bit (present or not), then the value.
impl<T: Wire> Wire for Option<T> {
    #[inline]
    fn write(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.all_or_nothing(|w| {
            w.write_bool(self.is_some())?;
            match self {
                Some(v) => v.write(w),
                None => Ok(()),
            }
        })
    }
    #[inline]
    fn read(r: &mut BitReader) -> Result<Self, ProtoError> {
        if r.read_bool()? {
            T::read(r).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// Element by element.
impl<T: Wire + Default, const N: usize> Wire for [T; N] {
    #[inline]
    fn write(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        array::write(w, self, T::write)
    }
    #[inline]
    fn read(r: &mut BitReader) -> Result<Self, ProtoError> {
        array::read(r, T::read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip<T: Wire + PartialEq + std::fmt::Debug>(v: T) -> usize {
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        v.write(&mut w).unwrap();
        let bits = w.bits_written();
        let len = w.finish();
        let mut r = BitReader::new(&buf[..len]);
        assert_eq!(T::read(&mut r).unwrap(), v);
        assert_eq!(r.bits_read(), bits);
        bits
    }

    #[test]
    fn plain_types_travel_at_their_width() {
        assert_eq!(round_trip(()), 0);
        assert_eq!(round_trip(true), 1);
        assert_eq!(round_trip(-3i8), 8);
        assert_eq!(round_trip(u64::MAX), 64);
        assert_eq!(round_trip(i64::MIN), 64);
        assert_eq!(round_trip(-1.5f32), 32);
        assert_eq!(round_trip(EntityId(5)), 7);
        assert_eq!(round_trip(None::<u8>), 1);
        assert_eq!(round_trip(Some(7u16)), 17);
        assert_eq!(round_trip([1u8, 2, 3]), 24);
    }

    #[test]
    fn non_finite_floats_are_refused_both_ways() {
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        assert_eq!(f32::NAN.write(&mut w), Err(ProtoError::invalid("f32")));
        assert_eq!(w.bits_written(), 0);
        let inf = f32::INFINITY.to_bits().to_le_bytes();
        assert!(f32::read(&mut BitReader::new(&inf)).is_err());
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            let _ = <[Option<EntityId>; 3]>::read(&mut BitReader::new(&bytes));
            let _ = f32::read(&mut BitReader::new(&bytes));
            let _ = <[i64; 2]>::read(&mut BitReader::new(&bytes));
        }
    }
}
