//! What the writer needs of the game ([`ReplicationSource`]), the ticks a
//! delta record is written against ([`RecordTicks`]), and which groups a
//! viewer may be sent.

use hightick_proto::{BitWriter, EntityId, ProtoError};

use crate::player::PlayerId;
use crate::tick::Tick;
use crate::world::Archetype;

/// What the writer needs from the game: the values of field groups, and how
/// much each entity matters to each viewer.
pub trait ReplicationSource {
    /// The game's kinds of replicated entities.
    type Archetype: Archetype;

    /// Writes the current value of field group `group` of `entity`. The
    /// client's [`Replica::read_group`] must read exactly what this writes.
    fn write_group(
        &self,
        entity: EntityId,
        archetype: Self::Archetype,
        group: u8,
        w: &mut BitWriter,
    ) -> Result<(), ProtoError>;

    /// Writes field group `group` of `entity` for a client that already
    /// holds the entity's values as of `ticks.acked` (the newest tick it
    /// acknowledged for the entity; `None` for an Enter or a resync), in a
    /// snapshot of tick `ticks.snapshot`: so the game may write the group
    /// relative to that state (fewer bits). The client's
    /// [`Replica::read_group_at`] must read exactly what this writes. What
    /// is written must depend only on the arguments and the game's state
    /// (never on which client asks): one encoding of a record goes to every
    /// client that needs it in the tick. The default writes the value whole
    /// ([`write_group`](Self::write_group)).
    fn write_group_since(
        &self,
        entity: EntityId,
        archetype: Self::Archetype,
        group: u8,
        ticks: RecordTicks,
        w: &mut BitWriter,
    ) -> Result<(), ProtoError> {
        let _ = ticks;
        self.write_group(entity, archetype, group, w)
    }

    /// How much `entity` matters to `viewer` per tick (e.g. higher when
    /// near). Added to the entity's priority accumulator every tick it waits;
    /// clamped to `0.001..=1e6`. The default treats every entity alike.
    fn priority(&self, viewer: PlayerId, entity: EntityId) -> f32 {
        let _ = (viewer, entity);
        1.0
    }

    /// The player who owns `entity`: the only viewer sent its archetype's
    /// [`owner_groups`](Archetype::owner_groups). Asked only for archetypes
    /// that have such groups. Default: nobody.
    fn owner(&self, entity: EntityId) -> Option<PlayerId> {
        let _ = entity;
        None
    }
}

/// The ticks of one entity record, for a group written relative to what the
/// client holds ([`ReplicationSource::write_group_since`]).
///
/// The contract that makes deltas safe: when the writer names `acked`, the
/// client has applied a record of this entity with a tick at or before
/// `acked` whose values equal the server's values at `acked`, and no record
/// of this incarnation between that one and `acked` carried other values. A
/// client that remembers the values of the records it read (newest first,
/// by tick) finds them as the newest it holds at or before `acked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordTicks {
    /// The snapshot's server tick.
    pub snapshot: Tick,
    /// The newest tick the client acknowledged for the entity, when it
    /// holds the entity's values from then (not for Enter records).
    pub acked: Option<Tick>,
}

/// The groups of `entity` (of `archetype`) that `viewer` may be sent: all
/// of them, less the owner-only groups unless `viewer` owns it.
#[inline]
pub(crate) fn visible_groups<S: ReplicationSource>(
    source: &S,
    archetype: S::Archetype,
    entity: EntityId,
    viewer: PlayerId,
) -> crate::world::GroupMask {
    let all = archetype.groups();
    let private = archetype.owner_groups();
    if private.is_empty() || source.owner(entity) == Some(viewer) {
        all
    } else {
        all & !private
    }
}
