//! The wire format of hightick: every byte a match sends or receives is
//! written and read here.
//!
//! What it is for:
//! - [`BitWriter`] / [`BitReader`]: bit-packing over caller-provided buffers.
//!   They never allocate and never panic; a write that does not fit is
//!   [`ProtoError::WriteOverflow`], a read past the end is
//!   [`ProtoError::ReadPastEnd`], a forbidden value is
//!   [`ProtoError::InvalidValue`] naming the field. [`BitWriter::mark`] and
//!   [`BitWriter::rewind`] undo a partly written record, so a packet builder
//!   can stay inside a byte budget.
//! - [`quantize`]: positions at a fixed precision over a world bound, angles in
//!   16 bits, octahedral unit vectors and ranged floats, each with a stated
//!   maximum error.
//! - [`message`]: the engine's own messages: the client's [`InputBatch`] (the
//!   envelope of the newest input plus the last few, delta-coded, around the
//!   game's [`InputPayload`]), snapshot framing ([`SnapshotHeader`],
//!   [`EntityRecordHeader`], the end marker) and [`ResyncRequest`], behind a
//!   [`MessageKind`] tag. Every decoder validates every field.
//! - [`wire`]: the [`Wire`] trait, one codec per type for both sides, that
//!   `#[derive(Wire)]` (crate `hightick-derive`) implements from field
//!   attributes, with the integer and array helpers it calls.
//!
//! What it is not: it knows no sockets, sequence numbers, acks or encryption
//! (that is `hightick-net`), and no game's vocabulary: a snapshot's group
//! payloads, an input's payload and the reliable events are written by the
//! game (teams, rounds and weapons are the arena's).
//!
//! Bits are packed LSB-first. Encoders are all-or-nothing: on error the writer
//! is back where it started.
//!
//! ```
//! use hightick_proto::message::{EntityId, EntityRecordHeader, SnapshotHeader, SnapshotKind};
//! use hightick_proto::message::{read_entity_record_header, write_end_of_records, write_entity_record_header};
//! use hightick_proto::quantize::PositionQuantizer;
//! use hightick_proto::{BitReader, BitWriter, MessageKind, ProtoError};
//!
//! # fn main() -> Result<(), ProtoError> {
//! let positions = PositionQuantizer::new([-4096.0; 3], [4096.0; 3], 1.0 / 64.0)?;
//! let mut buf = [0u8; 1200];
//!
//! // Server: a snapshot with one entity whose group 0 is its position.
//! let mut w = BitWriter::new(&mut buf);
//! MessageKind::Snapshot.encode(&mut w)?;
//! SnapshotHeader { server_tick: 1000, input_ack_tick: 998, kind: SnapshotKind::Delta }.encode(&mut w)?;
//! write_entity_record_header(&mut w, &EntityRecordHeader::update(EntityId(7), 0b1))?;
//! positions.write(&mut w, [12.5, -3.0, 64.0])?;
//! write_end_of_records(&mut w)?;
//! let len = w.finish();
//!
//! // Client: the same, read back.
//! let mut r = BitReader::new(&buf[..len]);
//! assert_eq!(MessageKind::decode(&mut r)?, MessageKind::Snapshot);
//! let header = SnapshotHeader::decode(&mut r)?;
//! assert_eq!(header.input_ack_tick, 998);
//! while let Some(record) = read_entity_record_header(&mut r)? {
//!     assert_eq!(record.entity, EntityId(7));
//!     let pos = positions.read(&mut r)?;
//!     assert!((pos[0] - 12.5).abs() <= positions.max_error());
//! }
//! assert!(BitReader::new(&buf[..2]).read_u32().is_err()); // truncated: an error, not a panic
//! # Ok(())
//! # }
//! ```

mod bits;
mod error;
pub mod message;
pub mod quantize;
mod reader;
pub mod wire;
mod writer;

pub use bits::{BitMark, bits_required, unzigzag, varint_bits, zigzag};
pub use error::ProtoError;
pub use message::{
    Avatar, EntityId, EntityOp, EntityRecordHeader, InputBatch, InputCommand, InputPayload,
    MessageKind, ResyncRequest, SchemaHash, SnapshotHeader, SnapshotKind,
};
pub use reader::BitReader;
pub use wire::Wire;
pub use writer::BitWriter;

/// The netcode.io protocol id of hightick's game protocol (this wire format's
/// version): servers drop connect requests and tokens made for any other id.
/// Change it whenever a message layout changes incompatibly.
pub const PROTOCOL_ID: u64 = 0x4854_4943_4b00_0003;
