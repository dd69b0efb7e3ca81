//! [`FieldGroups`]: one archetype's replicated state, written and read
//! group by group by the same declaration (usually
//! `#[derive(Replicated)]`); [`ReplicaTable`]: a game's per-entity table
//! of such states.

use hightick_proto::{BitReader, BitWriter, EntityId, ProtoError};

use super::Replica;
use crate::world::GroupMask;

/// An archetype's replicated fields, grouped: the server writes a group
/// with [`write_group`](Self::write_group) (from its
/// [`ReplicationSource::write_group`](super::ReplicationSource::write_group))
/// and the client reads it with [`read_group`](Self::read_group) (from its
/// [`Replica::read_group`](super::Replica::read_group)), so the two can
/// not disagree.
///
/// ```
/// use hightick_engine::replication::FieldGroups;
/// use hightick_engine::{Replicated, world::GroupMask};
/// use hightick_proto::{BitReader, BitWriter};
///
/// #[derive(Debug, Default, PartialEq, Replicated)]
/// struct Door {
///     #[group(0)]
///     open: bool,
///     #[group(1)]
///     #[wire(range = 0..=9)]
///     lock: u8,
/// }
///
/// let mut buf = [0u8; 4];
/// let mut w = BitWriter::new(&mut buf);
/// let door = Door { open: true, lock: 7 };
/// door.write_group(1, &mut w).unwrap();
/// assert_eq!(w.bits_written(), 4);
/// let len = w.finish();
/// let mut seen = Door::default();
/// seen.read_group(1, &mut BitReader::new(&buf[..len])).unwrap();
/// assert_eq!((seen.lock, Door::GROUPS), (7, GroupMask(0b11)));
/// ```
pub trait FieldGroups {
    /// The groups the type has (an archetype's
    /// [`groups`](crate::world::Archetype::groups)).
    const GROUPS: GroupMask;

    /// The fields and their groups, as data (`None` when hand-written).
    const SCHEMA: Option<&'static hightick_proto::wire::TypeSchema> = None;

    /// Writes the fields of `group`, all or nothing; an unknown group is
    /// [`ProtoError::InvalidValue`].
    fn write_group(&self, group: u8, w: &mut BitWriter) -> Result<(), ProtoError>;

    /// Reads the fields of `group` as [`write_group`](Self::write_group)
    /// wrote them; on error nothing changes.
    fn read_group(&mut self, group: u8, r: &mut BitReader) -> Result<(), ProtoError>;
}

/// A game's table of one replicated state per entity slot, indexed by
/// [`EntityId`]'s slot: what `#[derive(ReplicationSource)]` reads the
/// field marked `#[replicas]` through. Implemented for `Vec`, boxed slices
/// and arrays of a [`Replica`] that has [`FieldGroups`].
pub trait ReplicaTable {
    /// The state of one entity (the client's view type too).
    type Replica: FieldGroups + Replica;

    /// The state in `entity`'s slot, if the table has one.
    fn replica(&self, entity: EntityId) -> Option<&Self::Replica>;
}

impl<R: FieldGroups + Replica> ReplicaTable for [R] {
    type Replica = R;
    #[inline]
    fn replica(&self, entity: EntityId) -> Option<&R> {
        self.get(usize::from(entity.0))
    }
}

impl<R: FieldGroups + Replica> ReplicaTable for Vec<R> {
    type Replica = R;
    #[inline]
    fn replica(&self, entity: EntityId) -> Option<&R> {
        self.as_slice().replica(entity)
    }
}

impl<R: FieldGroups + Replica> ReplicaTable for Box<[R]> {
    type Replica = R;
    #[inline]
    fn replica(&self, entity: EntityId) -> Option<&R> {
        (**self).replica(entity)
    }
}

impl<R: FieldGroups + Replica, const N: usize> ReplicaTable for [R; N] {
    type Replica = R;
    #[inline]
    fn replica(&self, entity: EntityId) -> Option<&R> {
        self.as_slice().replica(entity)
    }
}
