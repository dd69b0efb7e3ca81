//! Push replication: what each client is sent, and the client side that
//! applies it.
//!
//! - [`ReplicationWriter`] keeps, per client and entity, the newest tick the
//!   client acknowledged, plus a small ring of sent-packet records (which
//!   entities went in which packet). A snapshot carries every field group
//!   changed since the entity's acked tick; the ack of packet P advances the
//!   acked tick of the entities P carried; a loss leaves them to be sent
//!   again, as their newest values. Entities entering relevance get Enter
//!   records (full state) until one is acked; leaving ones get Leave records
//!   until one is acked. A byte budget per client per tick bounds each
//!   snapshot, and a priority accumulator decides who waits.
//! - [`ClientWorld`] applies snapshots on the client ([`SnapshotReader`]
//!   parses them).
//! - [`ValueComparison`] turns the writer into the naive polling writer the
//!   benchmarks compare against.

mod client;
mod detect;
mod sent;
mod writer;

use hightick_proto::{BitWriter, ProtoError};

use crate::world::Archetype;
use crate::{EntityId, PlayerId};

pub use client::{ApplyStats, ClientEntity, ClientWorld, Replica, SnapshotInfo, SnapshotReader};
pub use detect::{ChangeDetection, ChangedTicks, EntityView, ShadowValues, ValueComparison};
pub use writer::{
    PacketFate, PollingWriter, PushWriter, ReplicationStats, ReplicationWriter, SnapshotSummary,
    WriterConfig,
};

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
