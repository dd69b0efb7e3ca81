//! Snapshot framing, game-agnostic: a [`SnapshotHeader`], then entity
//! records, then an end marker.
//!
//! Each record is an [`EntityRecordHeader`] followed by the payloads of the
//! field groups its `group_mask` names, written by the game in group order.
//! Records are preceded by a 1 bit; the end marker is a 0 bit, so a reader
//! loops on [`read_entity_record_header`] until it returns `None`.
//!
//! Header sizes: 1 (present) + 7/12/18 (entity id, see
//! [`write_entity_id`](super::write_entity_id)) + op (`Update` 1 bit,
//! `Enter` 2 + 8 archetype bits, `Leave` 2 bits) + 8 group bits (not for
//! `Leave`). An update of entity 5 costs 17 bits.

use super::entity::{EntityId, read_entity_id, write_entity_id};
use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// Field groups an entity record can carry (bits of `group_mask`).
pub const GROUP_COUNT: u32 = 8;

/// What a snapshot is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SnapshotKind {
    /// Carries the field groups changed since what the client acknowledged.
    #[default]
    Delta,
    /// Carries full state of everything the client may know, replacing its
    /// world (reconnect, late join, after a [`ResyncRequest`](super::ResyncRequest)).
    FullResync,
}

/// The start of every snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SnapshotHeader {
    /// The server tick the snapshot shows.
    pub server_tick: u32,
    /// The newest input tick the server has processed for this client.
    /// Written relative to `server_tick`, so nearby ticks are cheap.
    pub input_ack_tick: u32,
    /// Delta or full resync.
    pub kind: SnapshotKind,
}

impl SnapshotHeader {
    /// Writes the header: kind (1 bit), server tick (32 bits), input ack as a
    /// signed varint offset from the server tick.
    #[inline]
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.all_or_nothing(|w| {
            w.write_bool(self.kind == SnapshotKind::FullResync)?;
            w.write_u32(self.server_tick)?;
            w.write_signed_varint(self.input_ack_tick.wrapping_sub(self.server_tick) as i32)
        })
    }

    /// Reads a header written by [`encode`](Self::encode).
    #[inline]
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        let kind = if r.read_bool()? {
            SnapshotKind::FullResync
        } else {
            SnapshotKind::Delta
        };
        let server_tick = r.read_u32()?;
        let offset = r.read_signed_varint()?;
        Ok(Self {
            server_tick,
            input_ack_tick: server_tick.wrapping_add(offset as u32),
            kind,
        })
    }
}

/// What an entity record does to the client's view of the entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntityOp {
    /// The entity becomes relevant: create it from this archetype; the groups
    /// that follow are its full state.
    Enter {
        /// The game's kind of entity (player, grenade, ...).
        archetype: u8,
    },
    /// The groups that follow changed.
    Update,
    /// The entity is no longer relevant: remove it. No groups follow.
    Leave,
}

/// The header of one entity record in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntityRecordHeader {
    /// Which entity.
    pub entity: EntityId,
    /// Enter, update or leave.
    pub op: EntityOp,
    /// Which of the up to [`GROUP_COUNT`] field groups follow, bit `i` for
    /// group `i`. Must be 0 for `Leave` and non-zero for `Update`.
    pub group_mask: u8,
}

impl EntityRecordHeader {
    /// An update of `entity` carrying `group_mask`.
    #[inline]
    pub const fn update(entity: EntityId, group_mask: u8) -> Self {
        Self {
            entity,
            op: EntityOp::Update,
            group_mask,
        }
    }

    /// `entity` entering as `archetype`, carrying `group_mask`.
    #[inline]
    pub const fn enter(entity: EntityId, archetype: u8, group_mask: u8) -> Self {
        Self {
            entity,
            op: EntityOp::Enter { archetype },
            group_mask,
        }
    }

    /// `entity` leaving.
    #[inline]
    pub const fn leave(entity: EntityId) -> Self {
        Self {
            entity,
            op: EntityOp::Leave,
            group_mask: 0,
        }
    }

    /// Same as [`write_entity_record_header`].
    #[inline]
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        write_entity_record_header(w, self)
    }

    /// Same as [`read_entity_record_header`]: `None` at the end marker.
    #[inline]
    pub fn decode(r: &mut BitReader) -> Result<Option<Self>, ProtoError> {
        read_entity_record_header(r)
    }

    #[inline]
    fn validate(&self) -> Result<(), ProtoError> {
        match self.op {
            EntityOp::Update if self.group_mask == 0 => Err(ProtoError::invalid("group_mask")),
            EntityOp::Leave if self.group_mask != 0 => Err(ProtoError::invalid("group_mask")),
            _ => Ok(()),
        }
    }
}

/// Writes an entity record header (all or nothing). An `Update` without
/// groups or a `Leave` with groups is [`ProtoError::InvalidValue`].
#[inline]
pub fn write_entity_record_header(
    w: &mut BitWriter,
    header: &EntityRecordHeader,
) -> Result<(), ProtoError> {
    header.validate()?;
    w.all_or_nothing(|w| {
        w.write_bool(true)?;
        write_entity_id(w, header.entity)?;
        match header.op {
            EntityOp::Update => w.write_bits(0, 1)?,
            EntityOp::Enter { archetype } => {
                w.write_bits(0b01 | (u32::from(archetype) << 2), 10)?
            }
            EntityOp::Leave => return w.write_bits(0b11, 2),
        }
        w.write_u8(header.group_mask)
    })
}

/// Writes the end-of-records marker (one 0 bit).
#[inline]
pub fn write_end_of_records(w: &mut BitWriter) -> Result<(), ProtoError> {
    w.write_bool(false)
}

/// Reads the next entity record header, or `None` at the end marker.
#[inline]
pub fn read_entity_record_header(
    r: &mut BitReader,
) -> Result<Option<EntityRecordHeader>, ProtoError> {
    if !r.read_bool()? {
        return Ok(None);
    }
    let entity = read_entity_id(r)?;
    let op = if !r.read_bool()? {
        EntityOp::Update
    } else if !r.read_bool()? {
        EntityOp::Enter {
            archetype: r.read_u8()?,
        }
    } else {
        EntityOp::Leave
    };
    let group_mask = if op == EntityOp::Leave {
        0
    } else {
        r.read_u8()?
    };
    let header = EntityRecordHeader {
        entity,
        op,
        group_mask,
    };
    header.validate()?;
    Ok(Some(header))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits_of(h: &EntityRecordHeader) -> Result<usize, ProtoError> {
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        write_entity_record_header(&mut w, h)?;
        Ok(w.bits_written())
    }

    #[test]
    fn record_headers_cost_what_the_docs_say() {
        assert_eq!(
            bits_of(&EntityRecordHeader::update(EntityId(5), 0b11)),
            Ok(17)
        );
        assert_eq!(
            bits_of(&EntityRecordHeader::enter(EntityId(5), 3, 0xFF)),
            Ok(1 + 7 + 10 + 8)
        );
        assert_eq!(
            bits_of(&EntityRecordHeader::leave(EntityId(500))),
            Ok(1 + 12 + 2)
        );
    }

    #[test]
    fn empty_updates_and_leaves_with_groups_are_invalid() {
        let empty = EntityRecordHeader::update(EntityId(1), 0);
        assert_eq!(bits_of(&empty), Err(ProtoError::invalid("group_mask")));
        let leave = EntityRecordHeader {
            group_mask: 1,
            ..EntityRecordHeader::leave(EntityId(1))
        };
        assert_eq!(bits_of(&leave), Err(ProtoError::invalid("group_mask")));
        // The same on the read side: present, id 1, update, mask 0.
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        w.write_bool(true).unwrap();
        write_entity_id(&mut w, EntityId(1)).unwrap();
        w.write_bits(0, 1).unwrap();
        w.write_u8(0).unwrap();
        assert_eq!(
            read_entity_record_header(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("group_mask"))
        );
    }

    #[test]
    fn end_marker_ends_the_records() {
        let mut buf = [0xFFu8; 4];
        let mut w = BitWriter::new(&mut buf);
        write_entity_record_header(&mut w, &EntityRecordHeader::leave(EntityId(2))).unwrap();
        write_end_of_records(&mut w).unwrap();
        let len = w.finish();
        let mut r = BitReader::new(&buf[..len]);
        assert_eq!(
            read_entity_record_header(&mut r).unwrap(),
            Some(EntityRecordHeader::leave(EntityId(2)))
        );
        assert_eq!(read_entity_record_header(&mut r).unwrap(), None);
    }

    #[test]
    fn header_ack_is_relative_to_the_server_tick() {
        let header = SnapshotHeader {
            server_tick: 5_000,
            input_ack_tick: 4_998,
            kind: SnapshotKind::FullResync,
        };
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        header.encode(&mut w).unwrap();
        assert_eq!(w.bits_written(), 1 + 32 + 5);
        assert_eq!(
            SnapshotHeader::decode(&mut BitReader::new(&buf)).unwrap(),
            header
        );
    }
}
