//! [`FloatQuantizer`]: one float over a closed range in a fixed number of bits.

use crate::bits::bits_required;
use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// The largest number of bits a [`FloatQuantizer`] axis may use: an `f32`
/// carries 24 significant bits, so finer steps would be rounded away.
pub const MAX_FLOAT_BITS: u32 = 24;

/// Rounds a non-negative float to the nearest integer (negative and NaN give
/// 0, too large saturates); cheaper than `f64::round`, which is a library call
/// on baseline x86-64.
#[inline]
pub(crate) fn round_to_code(x: f64) -> u32 {
    (x + 0.5) as u32
}

/// Writes an `f32` in `min..=max` as an integer code of [`bits`](Self::bits)
/// bits, spaced evenly so that both ends are exact.
///
/// Precision: a value inside the range reads back within
/// [`max_error`](Self::max_error) (half a step, plus `f32` rounding). Values
/// outside the range clamp to it; NaN writes as `min`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloatQuantizer {
    min: f32,
    max: f32,
    bits: u32,
    max_code: u32,
    step: f64,
    codes_per_unit: f64,
}

impl FloatQuantizer {
    /// A quantizer with `bits` bits (1..=[`MAX_FLOAT_BITS`]) over `min..=max`.
    /// A `const fn`, so a quantizer can be a constant (derived codecs make
    /// theirs at compile time).
    #[inline]
    pub const fn with_bits(min: f32, max: f32, bits: u32) -> Result<Self, ProtoError> {
        if !min.is_finite() || !max.is_finite() {
            return Err(ProtoError::InvalidConfig {
                what: "bounds must be finite",
            });
        }
        if min >= max {
            return Err(ProtoError::InvalidConfig {
                what: "min must be below max",
            });
        }
        if bits == 0 || bits > MAX_FLOAT_BITS {
            return Err(ProtoError::InvalidConfig {
                what: "bits must be in 1..=24",
            });
        }
        let max_code = (1u32 << bits) - 1;
        let extent = max as f64 - min as f64;
        Ok(Self {
            min,
            max,
            bits,
            max_code,
            step: extent / max_code as f64,
            codes_per_unit: max_code as f64 / extent,
        })
    }

    /// A quantizer over `min..=max` with the fewest bits whose error stays
    /// within `precision` (a positive absolute error bound). A `const fn`,
    /// like [`with_bits`](Self::with_bits).
    #[inline]
    pub const fn with_precision(min: f32, max: f32, precision: f32) -> Result<Self, ProtoError> {
        if !precision.is_finite() || precision <= 0.0 {
            return Err(ProtoError::InvalidConfig {
                what: "precision must be positive and finite",
            });
        }
        if !(min.is_finite() && max.is_finite() && min < max) {
            // Let `with_bits` name the fault.
            return Self::with_bits(min, max, 1);
        }
        let extent = max as f64 - min as f64;
        let steps = (extent / (2.0 * precision as f64)).ceil();
        if steps > (1u32 << MAX_FLOAT_BITS) as f64 - 1.0 {
            return Err(ProtoError::InvalidConfig {
                what: "precision too fine for the bounds (more than 24 bits)",
            });
        }
        let bits = bits_required(steps as u32);
        Self::with_bits(min, max, if bits == 0 { 1 } else { bits })
    }

    /// Bits per written value.
    #[inline]
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// The lower bound.
    #[inline]
    pub const fn min(&self) -> f32 {
        self.min
    }

    /// The upper bound.
    #[inline]
    pub const fn max(&self) -> f32 {
        self.max
    }

    /// The distance between neighbouring codes.
    #[inline]
    pub fn step(&self) -> f32 {
        self.step as f32
    }

    /// The largest absolute error of a value inside the range after a
    /// round trip: half a step, plus the rounding of an `f32` result.
    #[inline]
    pub fn max_error(&self) -> f32 {
        let magnitude = self.min.abs().max(self.max.abs());
        (self.step / 2.0 + f64::from(magnitude) * f64::from(f32::EPSILON)) as f32
    }

    /// The integer code of `v` (clamped to the range; NaN gives 0).
    #[inline]
    pub fn quantize(&self, v: f32) -> u32 {
        // Below `min` and NaN give 0 (`round_to_code`), above `max` clamps.
        let codes = (f64::from(v) - f64::from(self.min)) * self.codes_per_unit;
        round_to_code(codes).min(self.max_code)
    }

    /// The value of a code (codes above the largest clamp to `max`).
    #[inline]
    pub fn dequantize(&self, code: u32) -> f32 {
        let v = f64::from(self.min) + f64::from(code.min(self.max_code)) * self.step;
        (v as f32).max(self.min).min(self.max)
    }

    /// Writes `v` in [`bits`](Self::bits) bits.
    #[inline]
    pub fn write(&self, w: &mut BitWriter, v: f32) -> Result<(), ProtoError> {
        w.write_bits(self.quantize(v), self.bits)
    }

    /// Reads a value written by [`write`](Self::write).
    #[inline]
    pub fn read(&self, r: &mut BitReader) -> Result<f32, ProtoError> {
        Ok(self.dequantize(r.read_bits(self.bits)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn degenerate_configs_are_errors() {
        assert!(FloatQuantizer::with_bits(1.0, 1.0, 8).is_err());
        assert!(FloatQuantizer::with_bits(2.0, 1.0, 8).is_err());
        assert!(FloatQuantizer::with_bits(f32::NAN, 1.0, 8).is_err());
        assert!(FloatQuantizer::with_bits(0.0, f32::INFINITY, 8).is_err());
        assert!(FloatQuantizer::with_bits(0.0, 1.0, 0).is_err());
        assert!(FloatQuantizer::with_bits(0.0, 1.0, 25).is_err());
        assert!(FloatQuantizer::with_precision(0.0, 1.0, 0.0).is_err());
        assert!(FloatQuantizer::with_precision(0.0, 1.0, -1.0).is_err());
        assert!(FloatQuantizer::with_precision(0.0, 1.0, f32::NAN).is_err());
        assert!(FloatQuantizer::with_precision(-1e6, 1e6, 1e-6).is_err());
        assert!(FloatQuantizer::with_precision(5.0, 5.0, 0.1).is_err());
    }

    #[test]
    fn precision_picks_the_fewest_bits() {
        // 100 units at 0.5 error: 100 steps of 1.0 -> 7 bits.
        let q = FloatQuantizer::with_precision(0.0, 100.0, 0.5).unwrap();
        assert_eq!(q.bits(), 7);
        assert!(q.max_error() <= 0.5);
        let coarse = FloatQuantizer::with_precision(0.0, 1.0, 10.0).unwrap();
        assert_eq!(coarse.bits(), 1);
    }

    #[test]
    fn ends_are_exact_and_outside_clamps() {
        let q = FloatQuantizer::with_bits(-3.5, 7.25, 10).unwrap();
        assert_eq!(q.dequantize(q.quantize(-3.5)), -3.5);
        assert_eq!(q.dequantize(q.quantize(7.25)), 7.25);
        assert_eq!(q.dequantize(q.quantize(1e30)), 7.25);
        assert_eq!(q.dequantize(q.quantize(f32::NEG_INFINITY)), -3.5);
        assert_eq!(q.dequantize(q.quantize(f32::NAN)), -3.5);
        assert_eq!(q.dequantize(u32::MAX), 7.25);
    }

    proptest! {
        #[test]
        fn round_trip_is_within_max_error(
            min in -1e5f32..1e5,
            extent in 1e-3f32..1e5,
            precision_frac in 1e-5f32..1.0,
            t in 0f32..=1.0,
        ) {
            let max = min + extent;
            prop_assume!(max > min);
            let precision = extent * precision_frac;
            let q = match FloatQuantizer::with_precision(min, max, precision) {
                Ok(q) => q,
                Err(_) => return Ok(()),
            };
            prop_assert!(q.max_error() <= precision + max.abs().max(min.abs()) * f32::EPSILON);
            let v = (min + t * extent).clamp(min, max);
            let mut buf = [0u8; 4];
            let mut w = BitWriter::new(&mut buf);
            q.write(&mut w, v).unwrap();
            prop_assert_eq!(w.bits_written(), q.bits() as usize);
            let back = q.read(&mut BitReader::new(&buf)).unwrap();
            prop_assert!((back - v).abs() <= q.max_error(), "{v} -> {back}, max error {}", q.max_error());
        }
    }
}
