//! [`PositionQuantizer`]: world positions at a fixed precision.

use super::float::FloatQuantizer;
use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// Writes a 3D position inside a configured world bound, each axis with the
/// fewest bits that keep the error within the configured precision.
///
/// Precision: every axis of a position inside the bound reads back within
/// [`max_error`](Self::max_error), which is at most the configured precision
/// (plus `f32` rounding). Positions outside the bound clamp to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionQuantizer {
    axes: [FloatQuantizer; 3],
}

impl PositionQuantizer {
    /// A quantizer for positions in the box `min..=max` with absolute error at
    /// most `precision` per axis. A degenerate box (an axis with `min >= max`,
    /// a non-finite bound), a non-positive precision or one needing more than
    /// 24 bits per axis is [`ProtoError::InvalidConfig`].
    #[inline]
    pub fn new(min: [f32; 3], max: [f32; 3], precision: f32) -> Result<Self, ProtoError> {
        Ok(Self {
            axes: [
                FloatQuantizer::with_precision(min[0], max[0], precision)?,
                FloatQuantizer::with_precision(min[1], max[1], precision)?,
                FloatQuantizer::with_precision(min[2], max[2], precision)?,
            ],
        })
    }

    /// Bits used per axis.
    #[inline]
    pub fn bits_per_axis(&self) -> [u32; 3] {
        self.axes.map(|a| a.bits())
    }

    /// Bits per written position.
    #[inline]
    pub fn bits(&self) -> u32 {
        self.axes.iter().map(FloatQuantizer::bits).sum()
    }

    /// The largest per-axis absolute error after a round trip.
    #[inline]
    pub fn max_error(&self) -> f32 {
        self.axes
            .iter()
            .map(FloatQuantizer::max_error)
            .fold(0.0, f32::max)
    }

    /// Integer codes of a position (clamped into the bound).
    #[inline]
    pub fn quantize(&self, pos: [f32; 3]) -> [u32; 3] {
        [
            self.axes[0].quantize(pos[0]),
            self.axes[1].quantize(pos[1]),
            self.axes[2].quantize(pos[2]),
        ]
    }

    /// The position of integer codes.
    #[inline]
    pub fn dequantize(&self, codes: [u32; 3]) -> [f32; 3] {
        [
            self.axes[0].dequantize(codes[0]),
            self.axes[1].dequantize(codes[1]),
            self.axes[2].dequantize(codes[2]),
        ]
    }

    /// Writes a position in [`bits`](Self::bits) bits (all or nothing).
    #[inline]
    pub fn write(&self, w: &mut BitWriter, pos: [f32; 3]) -> Result<(), ProtoError> {
        w.all_or_nothing(|w| {
            self.axes
                .iter()
                .zip(pos)
                .try_for_each(|(axis, v)| axis.write(w, v))
        })
    }

    /// Reads a position written by [`write`](Self::write).
    #[inline]
    pub fn read(&self, r: &mut BitReader) -> Result<[f32; 3], ProtoError> {
        Ok([
            self.axes[0].read(r)?,
            self.axes[1].read(r)?,
            self.axes[2].read(r)?,
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIN: [f32; 3] = [-4096.0, -4096.0, -512.0];
    const MAX: [f32; 3] = [4096.0, 4096.0, 1536.0];

    #[test]
    fn arena_bounds_at_a_sixty_fourth_unit() {
        let q = PositionQuantizer::new(MIN, MAX, 1.0 / 64.0).unwrap();
        // 8192 / (2/64) = 262144 steps -> 19 bits; 2048 -> 17 bits.
        assert_eq!(q.bits_per_axis(), [19, 19, 17]);
        assert!(q.max_error() <= 1.0 / 64.0);
    }

    #[test]
    fn degenerate_configs_are_errors() {
        assert!(PositionQuantizer::new([0.0; 3], [1.0, 1.0, 0.0], 0.01).is_err());
        assert!(PositionQuantizer::new([0.0; 3], [1.0; 3], 0.0).is_err());
        assert!(PositionQuantizer::new([f32::NAN, 0.0, 0.0], [1.0; 3], 0.01).is_err());
        assert!(PositionQuantizer::new([-1e7; 3], [1e7; 3], 1e-3).is_err());
    }

    #[test]
    fn outside_positions_clamp_and_partial_writes_undo() {
        let q = PositionQuantizer::new(MIN, MAX, 0.05).unwrap();
        let back = q.dequantize(q.quantize([1e9, -1e9, f32::NAN]));
        assert_eq!(back, [4096.0, -4096.0, -512.0]);
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        assert!(q.write(&mut w, [0.0; 3]).is_err());
        assert_eq!(w.bits_written(), 0);
    }

    proptest! {
        #[test]
        fn round_trip_is_within_precision(
            t in proptest::array::uniform3(0f32..=1.0),
            precision in 1e-3f32..2.0,
        ) {
            let q = PositionQuantizer::new(MIN, MAX, precision).unwrap();
            let pos = [0, 1, 2].map(|i| MIN[i] + t[i] * (MAX[i] - MIN[i]));
            let mut buf = [0u8; 16];
            let mut w = BitWriter::new(&mut buf);
            q.write(&mut w, pos).unwrap();
            prop_assert_eq!(w.bits_written(), q.bits() as usize);
            let back = q.read(&mut BitReader::new(&buf)).unwrap();
            prop_assert_eq!(back, q.dequantize(q.quantize(pos)));
            for i in 0..3 {
                prop_assert!((back[i] - pos[i]).abs() <= q.max_error());
            }
            prop_assert!(q.max_error() <= precision + 4096.0 * f32::EPSILON);
        }
    }
}
