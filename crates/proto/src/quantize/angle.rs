//! Angles in 16 bits.

use std::f64::consts::TAU;

use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// Bits per written angle.
pub const ANGLE_BITS: u32 = 16;

/// The largest error, in radians, of an angle after a round trip: half of one
/// 1/65536 turn (plus `f32` rounding), about 4.8e-5 rad or 0.0028 degrees.
pub const ANGLE_MAX_ERROR: f32 = (std::f64::consts::PI / 65_536.0 + 1e-6) as f32;

/// The 16-bit code of an angle in radians; any finite angle wraps to a turn.
/// A non-finite angle is [`ProtoError::InvalidValue`].
#[inline]
pub fn quantize_angle(radians: f32) -> Result<u16, ProtoError> {
    if !radians.is_finite() {
        return Err(ProtoError::invalid("angle"));
    }
    // Round to the nearest 1/65536 turn, then keep the low 16 bits: that
    // wraps any number of turns, of either sign. (Done with a truncating
    // conversion because `f64::round` and `floor` are library calls on
    // baseline x86-64.)
    let nearest = f64::from(radians) * (65_536.0 / TAU) + 0.5;
    let mut code = nearest as i64;
    if code as f64 > nearest {
        code = code.wrapping_sub(1); // truncation rounded a negative value up
    }
    Ok(code as u16)
}

/// The angle of a 16-bit code, in radians in `-π..π`.
#[inline]
pub fn dequantize_angle(code: u16) -> f32 {
    (f64::from(code as i16) * (TAU / 65_536.0)) as f32
}

/// Writes an angle in radians in [`ANGLE_BITS`] bits (wrapping to a turn).
#[inline]
pub fn write_angle(w: &mut BitWriter, radians: f32) -> Result<(), ProtoError> {
    w.write_u16(quantize_angle(radians)?)
}

/// Reads an angle written by [`write_angle`], in radians in `-π..π`.
#[inline]
pub fn read_angle(r: &mut BitReader) -> Result<f32, ProtoError> {
    Ok(dequantize_angle(r.read_u16()?))
}

/// The absolute difference of two angles, wrapped into `0..=π`.
#[inline]
pub fn angle_distance(a: f32, b: f32) -> f32 {
    let d = (f64::from(a) - f64::from(b)).rem_euclid(TAU);
    d.min(TAU - d) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::f32::consts::{FRAC_PI_2, PI};

    #[test]
    fn wraps_and_lands_in_minus_pi_to_pi() {
        assert_eq!(quantize_angle(0.0).unwrap(), 0);
        assert_eq!(quantize_angle(2.0 * PI).unwrap(), 0);
        assert_eq!(
            dequantize_angle(quantize_angle(FRAC_PI_2).unwrap()),
            FRAC_PI_2
        );
        assert_eq!(
            dequantize_angle(quantize_angle(-FRAC_PI_2).unwrap()),
            -FRAC_PI_2
        );
        assert_eq!(dequantize_angle(quantize_angle(PI).unwrap()), -PI);
        assert!(quantize_angle(f32::NAN).is_err());
        // Absurdly large angles keep no precision, but never panic.
        for huge in [f32::MAX, f32::MIN, 1e20, -1e20] {
            quantize_angle(huge).unwrap();
        }
        assert!(quantize_angle(f32::INFINITY).is_err());
        for code in [0u16, 1, 0x7FFF, 0x8000, 0xFFFF] {
            let a = dequantize_angle(code);
            assert!((-PI..PI).contains(&a), "{code} -> {a}");
            assert_eq!(quantize_angle(a).unwrap(), code);
        }
    }

    #[test]
    fn every_code_reads_back_to_itself() {
        for code in 0..=u16::MAX {
            assert_eq!(quantize_angle(dequantize_angle(code)).unwrap(), code);
        }
    }

    proptest! {
        #[test]
        fn round_trip_is_within_max_error(a in -40f32..40.0) {
            let mut buf = [0u8; 2];
            let mut w = BitWriter::new(&mut buf);
            write_angle(&mut w, a).unwrap();
            prop_assert_eq!(w.finish(), 2);
            let back = read_angle(&mut BitReader::new(&buf)).unwrap();
            prop_assert!(angle_distance(a, back) <= ANGLE_MAX_ERROR, "{a} -> {back}");
        }
    }
}
