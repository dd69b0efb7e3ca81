//! [`RecordValue`]: how one field of a game's derived type crosses the C
//! ABI, for records generated from the game's wire schema
//! (`hightick-bindgen`): an integer or a float as itself, a `bool` as a
//! `u8` (0 or 1), an entity id as its `u16`, an array element by element.
//!
//! A value the caller fills is checked against the field's wire encoding
//! ([`Encoding`]): what the encoding cannot carry is refused with the
//! field's name, never clamped or sent wrong.

use hightick_proto::EntityId;
use hightick_proto::ProtoError;
use hightick_proto::wire::schema::Encoding;

/// A field type of a derived game type, and its form in a C record.
pub trait RecordValue: Sized {
    /// The field as a C record holds it (`#[repr(C)]`-safe, no `bool`).
    type Record: Copy + Default;

    /// The record's form of the value.
    fn to_record(&self) -> Self::Record;

    /// The value of a caller's record; [`ProtoError::InvalidValue`] naming
    /// `field` when `encoding` cannot carry it.
    fn from_record(
        record: Self::Record,
        encoding: &Encoding,
        field: &'static str,
    ) -> Result<Self, ProtoError>;
}

/// Whether integer `v` fits `encoding` (`signed`: the Rust type's sign).
fn int_fits(v: i128, signed: bool, encoding: &Encoding) -> bool {
    match *encoding {
        Encoding::Range { lo, hi } => (i128::from(lo)..=i128::from(hi)).contains(&v),
        Encoding::Bits { bits } if bits < 64 => {
            if signed {
                let half = 1i128 << (bits - 1);
                (-half..half).contains(&v)
            } else {
                v < (1i128 << bits)
            }
        }
        _ => true,
    }
}

/// Whether float `v` fits `encoding`: finite, and within a quantized
/// float's range.
fn float_fits(v: f64, encoding: &Encoding) -> bool {
    match *encoding {
        Encoding::Float { lo, hi, .. } => {
            v.is_finite() && (f64::from(lo)..=f64::from(hi)).contains(&v)
        }
        _ => v.is_finite(),
    }
}

macro_rules! integers {
    ($($t:ty => $signed:expr),* $(,)?) => {$(
        impl RecordValue for $t {
            type Record = $t;
            fn to_record(&self) -> $t {
                *self
            }
            fn from_record(r: $t, encoding: &Encoding, field: &'static str) -> Result<$t, ProtoError> {
                if int_fits(i128::from(r), $signed, encoding) {
                    Ok(r)
                } else {
                    Err(ProtoError::invalid(field))
                }
            }
        }
    )*};
}

integers!(i8 => true, i16 => true, i32 => true, i64 => true, u8 => false, u16 => false, u32 => false, u64 => false);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl RecordValue for $t {
            type Record = $t;
            fn to_record(&self) -> $t {
                *self
            }
            fn from_record(r: $t, encoding: &Encoding, field: &'static str) -> Result<$t, ProtoError> {
                if float_fits(f64::from(r), encoding) {
                    Ok(r)
                } else {
                    Err(ProtoError::invalid(field))
                }
            }
        }
    )*};
}

floats!(f32, f64);

impl RecordValue for bool {
    type Record = u8;
    fn to_record(&self) -> u8 {
        u8::from(*self)
    }
    fn from_record(r: u8, _: &Encoding, field: &'static str) -> Result<bool, ProtoError> {
        match r {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(ProtoError::invalid(field)),
        }
    }
}

impl RecordValue for EntityId {
    type Record = u16;
    fn to_record(&self) -> u16 {
        self.0
    }
    fn from_record(r: u16, _: &Encoding, _: &'static str) -> Result<EntityId, ProtoError> {
        Ok(EntityId(r))
    }
}

impl<T: RecordValue, const N: usize> RecordValue for [T; N]
where
    [T::Record; N]: Default,
{
    type Record = [T::Record; N];
    fn to_record(&self) -> Self::Record {
        std::array::from_fn(|i| self[i].to_record())
    }
    fn from_record(
        r: Self::Record,
        encoding: &Encoding,
        field: &'static str,
    ) -> Result<Self, ProtoError> {
        let mut out = Vec::with_capacity(N);
        for v in r {
            out.push(T::from_record(v, encoding, field)?);
        }
        Ok(out
            .try_into()
            .unwrap_or_else(|_| unreachable!("N values in, N out")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_encoding_cannot_carry_is_refused_by_name() {
        let range = Encoding::Range {
            lo: -2000,
            hi: 2000,
        };
        assert_eq!(i32::from_record(2000, &range, "x"), Ok(2000));
        assert_eq!(
            i32::from_record(2001, &range, "x"),
            Err(ProtoError::invalid("x"))
        );
        let bits = Encoding::Bits { bits: 4 };
        assert_eq!(i8::from_record(-8, &bits, "s"), Ok(-8));
        assert!(i8::from_record(8, &bits, "s").is_err());
        assert_eq!(u8::from_record(15, &bits, "u"), Ok(15));
        assert!(u8::from_record(16, &bits, "u").is_err());
        assert_eq!(i8::from_record(i8::MIN, &Encoding::Plain, "p"), Ok(i8::MIN));
        let float = Encoding::Float {
            lo: 0.0,
            hi: 45.0,
            bits: 8,
        };
        assert_eq!(f32::from_record(45.0, &float, "f"), Ok(45.0));
        assert!(f32::from_record(45.5, &float, "f").is_err());
        assert!(f32::from_record(f32::NAN, &Encoding::Angle, "a").is_err());
        assert!(bool::from_record(2, &Encoding::Plain, "b").is_err());
        assert_eq!(bool::from_record(1, &Encoding::Plain, "b"), Ok(true));
        let pair = <[i32; 2]>::from_record([5, 3000], &range, "position");
        assert_eq!(pair, Err(ProtoError::invalid("position")));
        assert_eq!([EntityId(7), EntityId(9)].to_record(), [7u16, 9]);
        assert_eq!(true.to_record(), 1);
    }
}
