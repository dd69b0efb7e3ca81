//! Unit vectors by octahedral encoding.

use super::float::round_to_code;
use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// Writes a direction as two integer coordinates on the octahedron unfolded
/// onto a square, [`bits_per_component`](Self::bits_per_component) bits each
/// (e.g. 2x11 bits for aim directions).
///
/// Each coordinate uses the codes `0..=2^bits - 2` so that 0 (and hence the
/// axes) is exact; the all-ones code is invalid on read.
///
/// Precision: the angle between a direction and its round trip is at most
/// [`max_error`](Self::max_error) radians, about `4.25 / (2^bits - 2)`
/// (0.0021 rad for 11 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitVectorQuantizer {
    bits: u32,
    max_code: u32,
}

impl UnitVectorQuantizer {
    /// A quantizer with `bits` bits per component, in `2..=16` (a `const
    /// fn`: derived codecs make theirs at compile time).
    #[inline]
    pub const fn new(bits: u32) -> Result<Self, ProtoError> {
        if bits < 2 || bits > 16 {
            return Err(ProtoError::InvalidConfig {
                what: "unit vector bits per component must be in 2..=16",
            });
        }
        Ok(Self {
            bits,
            max_code: (1 << bits) - 2,
        })
    }

    /// Bits per component.
    #[inline]
    pub const fn bits_per_component(&self) -> u32 {
        self.bits
    }

    /// Bits per written vector.
    #[inline]
    pub const fn bits(&self) -> u32 {
        2 * self.bits
    }

    /// The largest angle, in radians, between a direction and its round trip.
    ///
    /// Each octahedral coordinate is off by at most half a step `h`; the
    /// octahedron point then moves by at most `sqrt(6) h` and, being at least
    /// `1/sqrt(3)` from the origin, turns by at most `sqrt(18) h`.
    #[inline]
    pub fn max_error(&self) -> f32 {
        let half_step = 1.0 / f64::from(self.max_code);
        (18f64.sqrt() * half_step * 1.001 + 1e-5) as f32
    }

    /// The two codes of a direction (need not be normalized). A zero or
    /// non-finite vector is [`ProtoError::InvalidValue`].
    #[inline]
    pub fn quantize(&self, v: [f32; 3]) -> Result<[u32; 2], ProtoError> {
        let [x, y, z] = v.map(f64::from);
        let l1 = x.abs() + y.abs() + z.abs();
        if !l1.is_finite() || l1 == 0.0 {
            return Err(ProtoError::invalid("unit vector"));
        }
        let (x, y, z) = (x / l1, y / l1, z / l1);
        let (u, w) = if z >= 0.0 {
            (x, y)
        } else {
            ((1.0 - y.abs()) * sign(x), (1.0 - x.abs()) * sign(y))
        };
        let to_code =
            |c: f64| round_to_code((c + 1.0) * 0.5 * f64::from(self.max_code)).min(self.max_code);
        Ok([to_code(u), to_code(w)])
    }

    /// The unit vector of two codes; a code above `2^bits - 2` is
    /// [`ProtoError::InvalidValue`].
    #[inline]
    pub fn dequantize(&self, codes: [u32; 2]) -> Result<[f32; 3], ProtoError> {
        if codes[0] > self.max_code || codes[1] > self.max_code {
            return Err(ProtoError::invalid("unit vector code"));
        }
        let from_code = |c: u32| f64::from(c) / f64::from(self.max_code) * 2.0 - 1.0;
        let (u, w) = (from_code(codes[0]), from_code(codes[1]));
        let z = 1.0 - u.abs() - w.abs();
        let (x, y) = if z >= 0.0 {
            (u, w)
        } else {
            ((1.0 - w.abs()) * sign(u), (1.0 - u.abs()) * sign(w))
        };
        // |x| + |y| + |z| == 1, so the length is at least 1/sqrt(3).
        let len = (x * x + y * y + z * z).sqrt();
        Ok([(x / len) as f32, (y / len) as f32, (z / len) as f32])
    }

    /// Writes a direction in [`bits`](Self::bits) bits.
    #[inline]
    pub fn write(&self, w: &mut BitWriter, v: [f32; 3]) -> Result<(), ProtoError> {
        let [a, b] = self.quantize(v)?;
        w.write_bits(a | (b << self.bits), self.bits())
    }

    /// Reads a direction written by [`write`](Self::write), unit length.
    #[inline]
    pub fn read(&self, r: &mut BitReader) -> Result<[f32; 3], ProtoError> {
        let packed = r.read_bits(self.bits())?;
        let mask = (1u32 << self.bits) - 1;
        self.dequantize([packed & mask, packed >> self.bits])
    }
}

#[inline]
fn sign(v: f64) -> f64 {
    if v >= 0.0 { 1.0 } else { -1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn angle_between(a: [f32; 3], b: [f32; 3]) -> f32 {
        let [a, b] = [a, b].map(|v| v.map(f64::from));
        let la = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        let lb = (b[0] * b[0] + b[1] * b[1] + b[2] * b[2]).sqrt();
        let dot = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (la * lb);
        // atan2 of |cross| and dot is accurate for tiny angles too.
        let c = [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ];
        let cross = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt() / (la * lb);
        cross.atan2(dot) as f32
    }

    #[test]
    fn axes_are_exact() {
        let q = UnitVectorQuantizer::new(11).unwrap();
        for axis in [
            [1.0, 0.0, 0.0],
            [-1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
        ] {
            let back = q.dequantize(q.quantize(axis).unwrap()).unwrap();
            assert_eq!(back.map(|c| c + 0.0), axis.map(|c: f32| c + 0.0));
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(UnitVectorQuantizer::new(1).is_err());
        assert!(UnitVectorQuantizer::new(17).is_err());
        let q = UnitVectorQuantizer::new(8).unwrap();
        assert!(q.quantize([0.0; 3]).is_err());
        assert!(q.quantize([f32::NAN, 1.0, 0.0]).is_err());
        assert!(q.quantize([f32::INFINITY, 1.0, 0.0]).is_err());
        assert!(q.dequantize([255, 0]).is_err());
        let all_ones = [0xFFu8, 0xFF];
        assert!(q.read(&mut BitReader::new(&all_ones)).is_err());
        assert!(q.max_error() < 0.02);
    }

    proptest! {
        #[test]
        fn round_trip_is_within_max_error(
            v in proptest::array::uniform3(-1f32..1.0),
            bits in 4u32..=16,
        ) {
            prop_assume!(v.iter().map(|c| c.abs()).sum::<f32>() > 1e-3);
            let q = UnitVectorQuantizer::new(bits).unwrap();
            let mut buf = [0u8; 4];
            let mut w = BitWriter::new(&mut buf);
            q.write(&mut w, v).unwrap();
            prop_assert_eq!(w.bits_written(), q.bits() as usize);
            let back = q.read(&mut BitReader::new(&buf)).unwrap();
            let len = back.iter().map(|c| c * c).sum::<f32>().sqrt();
            prop_assert!((len - 1.0).abs() < 1e-5);
            let err = angle_between(v, back);
            prop_assert!(err <= q.max_error(), "{v:?} -> {back:?}: {err} > {}", q.max_error());
        }
    }
}
