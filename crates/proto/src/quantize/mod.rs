//! Quantization: floats written in few bits at a stated precision.
//!
//! | what | type | precision |
//! |---|---|---|
//! | a float over a range | [`FloatQuantizer`] | [`FloatQuantizer::max_error`] (half a step) |
//! | a position in a world bound | [`PositionQuantizer`] | [`PositionQuantizer::max_error`] per axis, at most the configured precision |
//! | an angle in 16 bits | [`write_angle`] / [`read_angle`] | [`ANGLE_MAX_ERROR`] radians |
//! | a unit vector (octahedral) | [`UnitVectorQuantizer`] | [`UnitVectorQuantizer::max_error`] radians |
//!
//! Out-of-range inputs clamp (positions, floats) or wrap (angles); a quantized
//! value read back is always finite and inside its range.

mod angle;
mod float;
mod position;
mod unit_vector;

pub use angle::{
    ANGLE_BITS, ANGLE_MAX_ERROR, angle_distance, dequantize_angle, quantize_angle, read_angle,
    write_angle,
};
pub use float::{FloatQuantizer, MAX_FLOAT_BITS};
pub use position::PositionQuantizer;
pub use unit_vector::UnitVectorQuantizer;
