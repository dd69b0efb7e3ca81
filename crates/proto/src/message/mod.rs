//! The messages a match exchanges, each with `encode` into a
//! [`BitWriter`](crate::writer::BitWriter) and a validating `decode` from a
//! [`BitReader`](crate::reader::BitReader).
//!
//! A payload starts with a [`MessageKind`] (8 bits) that says what follows:
//!
//! | kind | direction | body |
//! |---|---|---|
//! | [`MessageKind::InputBatch`] | client -> server, unreliable | [`InputBatch`]: the newest input and the last few, for redundancy |
//! | [`MessageKind::Snapshot`] | server -> client, unreliable | [`SnapshotHeader`], then entity records (an [`EntityRecordHeader`] followed by game-written group payloads), then the end-of-records marker |
//! | [`MessageKind::Event`] | server -> client, reliable ordered | one event of the game's (its own encoding) |
//! | [`MessageKind::ResyncRequest`] | client -> server, reliable | [`ResyncRequest`], answered by a [`SnapshotKind::FullResync`] snapshot |
//!
//! Every encoder is all-or-nothing (on error the writer is rewound) and
//! refuses values its decoder would reject; every decoder checks every field
//! (counts bounded, tags known, numbers in range) and never panics.

/// Declares a field-less enum written as a fixed number of bits, with a
/// validating read (an unknown code is `InvalidValue` naming `$field`),
/// and its [`Wire`](crate::Wire) codec, the same.
/// Games use it for the enums of their own messages.
///
/// ```
/// hightick_proto::wire_enum! {
///     /// A lane.
///     pub enum Lane: 2 bits, "lane" {
///         /// Left.
///         Left = 0,
///         /// Right.
///         Right = 1,
///     }
/// }
/// assert_eq!(Lane::ALL.len(), 2);
/// ```
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $bits:literal bits, $field:literal {
            $($(#[$vmeta:meta])* $variant:ident = $code:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant = $code,)+
        }

        impl $name {
            /// Every variant, in code order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            #[allow(dead_code)]
            #[inline]
            pub(crate) fn write(self, w: &mut $crate::BitWriter) -> Result<(), $crate::ProtoError> {
                w.write_bits(self as u32, $bits)
            }

            #[allow(dead_code)]
            #[inline]
            pub(crate) fn read(r: &mut $crate::BitReader) -> Result<Self, $crate::ProtoError> {
                match r.read_bits($bits)? {
                    $($code => Ok(Self::$variant),)+
                    _ => Err($crate::ProtoError::invalid($field)),
                }
            }
        }

        /// The same codec, for derived ones (`#[derive(Wire)]`).
        impl $crate::Wire for $name {
            #[inline]
            fn write(&self, w: &mut $crate::BitWriter) -> Result<(), $crate::ProtoError> {
                w.write_bits(*self as u32, $bits)
            }
            #[inline]
            fn read(r: &mut $crate::BitReader) -> Result<Self, $crate::ProtoError> {
                Self::read(r)
            }
        }
    };
}

mod avatar;
mod entity;
mod input;
mod resync;
mod schema_hash;
mod snapshot;

pub use avatar::Avatar;
pub use entity::{EntityId, read_entity_id, write_entity_id};
pub use input::{InputBatch, InputCommand, InputPayload, MAX_REDUNDANCY};
pub use resync::{ResyncReason, ResyncRequest};
pub use schema_hash::SchemaHash;
pub use snapshot::{
    EntityOp, EntityRecordHeader, GROUP_COUNT, SnapshotHeader, SnapshotKind,
    read_entity_record_header, write_end_of_records, write_entity_record_header,
};

use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// The top-level tag of a payload: what its body holds. Written as 8 bits;
/// 0 and unknown values are rejected, so a zeroed buffer never decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageKind {
    /// An [`InputBatch`].
    InputBatch = 1,
    /// A snapshot: [`SnapshotHeader`], entity records, end marker.
    Snapshot = 2,
    /// One of the game's reliable events.
    Event = 3,
    /// A [`ResyncRequest`].
    ResyncRequest = 4,
    /// A [`SchemaHash`]: the server's first reliable message.
    SchemaHash = 5,
    /// An [`Avatar`]: the entity the client's player steers.
    Avatar = 6,
}

impl MessageKind {
    /// Every kind, in tag order.
    pub const ALL: [Self; 6] = [
        Self::InputBatch,
        Self::Snapshot,
        Self::Event,
        Self::ResyncRequest,
        Self::SchemaHash,
        Self::Avatar,
    ];

    /// The tag byte.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// The kind of a tag byte, if it is one.
    pub const fn from_u8(tag: u8) -> Option<Self> {
        match tag {
            1 => Some(Self::InputBatch),
            2 => Some(Self::Snapshot),
            3 => Some(Self::Event),
            4 => Some(Self::ResyncRequest),
            5 => Some(Self::SchemaHash),
            6 => Some(Self::Avatar),
            _ => None,
        }
    }

    /// Writes the tag (8 bits).
    pub fn encode(self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.write_u8(self.as_u8())
    }

    /// Reads a tag; an unknown one is [`ProtoError::InvalidValue`].
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Self::from_u8(r.read_u8()?).ok_or(ProtoError::invalid("message kind"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_unknown_tags_fail() {
        for kind in MessageKind::ALL {
            let mut buf = [0u8; 1];
            let mut w = BitWriter::new(&mut buf);
            kind.encode(&mut w).unwrap();
            assert_eq!(
                MessageKind::decode(&mut BitReader::new(&buf)).unwrap(),
                kind
            );
        }
        for tag in [0u8, 7, 255] {
            assert_eq!(
                MessageKind::decode(&mut BitReader::new(&[tag])),
                Err(ProtoError::invalid("message kind"))
            );
        }
    }
}
