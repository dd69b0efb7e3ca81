//! The one error type of the wire format.

use thiserror::Error;

/// Everything that can go wrong while writing or reading a payload.
///
/// Reading never panics: a truncated buffer is [`ProtoError::ReadPastEnd`] and a
/// field holding a value the protocol forbids is [`ProtoError::InvalidValue`],
/// naming the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ProtoError {
    /// A write needed more bits than the caller's buffer has left.
    #[error("buffer overflow on write: needed {needed_bits} bits, {remaining_bits} left")]
    WriteOverflow {
        /// Bits the write needed.
        needed_bits: usize,
        /// Bits that were left in the buffer.
        remaining_bits: usize,
    },
    /// A read went past the end of the payload.
    #[error("read past end: needed {needed_bits} bits, {remaining_bits} left")]
    ReadPastEnd {
        /// Bits the read needed.
        needed_bits: usize,
        /// Bits that were left in the payload.
        remaining_bits: usize,
    },
    /// A field holds a value the protocol forbids (unknown tag, count out of
    /// bounds, out-of-range number, non-finite float...).
    #[error("invalid value for {field}")]
    InvalidValue {
        /// The field at fault.
        field: &'static str,
    },
    /// A bit count outside `0..=32` was asked of `write_bits`/`read_bits`.
    #[error("invalid bit count {bits} (must be 0..=32)")]
    InvalidBitCount {
        /// The bit count asked for.
        bits: u32,
    },
    /// A value does not fit in the number of bits it is written with.
    #[error("value {value} does not fit in {bits} bits")]
    ValueTooWide {
        /// The value.
        value: u32,
        /// The bit count it was written with.
        bits: u32,
    },
    /// A byte-slice read was asked while the reader sat inside a byte; call
    /// `align` on both sides first.
    #[error("reader is not byte-aligned (at bit {bit})")]
    Misaligned {
        /// The reader's bit position.
        bit: usize,
    },
    /// A quantizer was configured with bounds or a precision it cannot honour.
    #[error("invalid quantizer configuration: {what}")]
    InvalidConfig {
        /// What is wrong with the configuration.
        what: &'static str,
    },
}

impl ProtoError {
    /// Shorthand for [`ProtoError::InvalidValue`].
    pub const fn invalid(field: &'static str) -> Self {
        Self::InvalidValue { field }
    }

    /// Renames the field of an [`ProtoError::InvalidValue`] (other errors pass
    /// through), so a generic read can report the message field at fault.
    pub const fn in_field(self, field: &'static str) -> Self {
        match self {
            Self::InvalidValue { .. } => Self::InvalidValue { field },
            other => other,
        }
    }
}
