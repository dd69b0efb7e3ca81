//! How the writer finds what changed for a client: push (changed ticks) or
//! poll (value comparison, for comparison only).

use hightick_proto::BitWriter;

use super::source::ReplicationSource;
use crate::tick::Tick;
use crate::world::{GroupMask, MAX_GROUPS, ReplicationWorld};
use hightick_proto::EntityId;

/// What a change detector is told about one entity of one client.
#[derive(Debug)]
pub struct EntityView<'a, S: ReplicationSource> {
    /// The entity.
    pub entity: EntityId,
    /// Its archetype.
    pub archetype: S::Archetype,
    /// The newest tick the client has acknowledged for it.
    pub acked_tick: Tick,
    /// The groups this client may be sent (owner-only groups are left out
    /// for everyone but the owner).
    pub groups: GroupMask,
    /// The replicated world.
    pub world: &'a ReplicationWorld<S::Archetype>,
    /// The game, which writes the values.
    pub source: &'a S,
}

/// Decides which field groups of an entity a client needs. The writer keeps
/// everything else (presence, acks, budget, priority) the same for every
/// detector.
pub trait ChangeDetection {
    /// What the detector remembers per client.
    type Memory: std::fmt::Debug;

    /// Whether a present entity none of whose groups changed (by the
    /// world's changed ticks) since the client's acked tick needs nothing,
    /// so the writer may pass it by without asking: true for push, false
    /// for polling, which compares values.
    const SKIPS_UNCHANGED: bool = false;

    /// Memory for one client of a world of `entities` slots.
    fn memory(&self, entities: usize) -> Self::Memory;

    /// The groups of a present entity the client must be sent now.
    fn groups_to_send<S: ReplicationSource>(
        &self,
        memory: &mut Self::Memory,
        view: &EntityView<'_, S>,
    ) -> GroupMask;

    /// `groups` of the entity went into a packet.
    fn written<S: ReplicationSource>(
        &self,
        memory: &mut Self::Memory,
        view: &EntityView<'_, S>,
        groups: GroupMask,
    );

    /// A packet carrying `groups` of `entity` was lost.
    fn lost(&self, memory: &mut Self::Memory, entity: EntityId, groups: GroupMask);

    /// The client no longer holds `entity` (or holds another incarnation).
    fn forget(&self, memory: &mut Self::Memory, entity: EntityId);

    /// Forgets everything (join, reconnect).
    fn reset(&self, memory: &mut Self::Memory);
}

/// Push replication: a group is sent when its `changed_tick` is newer than
/// the tick the client acknowledged for the entity. Nothing is compared and
/// nothing remembered per client beyond the acked tick.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChangedTicks;

impl ChangeDetection for ChangedTicks {
    type Memory = ();

    const SKIPS_UNCHANGED: bool = true;

    fn memory(&self, _entities: usize) {}

    fn groups_to_send<S: ReplicationSource>(
        &self,
        _: &mut (),
        view: &EntityView<'_, S>,
    ) -> GroupMask {
        view.world
            .changed_since(view.entity, view.acked_tick, view.groups)
    }

    fn written<S: ReplicationSource>(&self, _: &mut (), _: &EntityView<'_, S>, _: GroupMask) {}

    fn lost(&self, _: &mut (), _: EntityId, _: GroupMask) {}

    fn forget(&self, _: &mut (), _: EntityId) {}

    fn reset(&self, _: &mut ()) {}
}

/// Naive polling replication, kept to measure push against: per client and
/// entity it keeps the bytes last sent of every group, and every tick it
/// writes every group of every relevant entity and compares. A lost packet
/// invalidates the groups it carried, so they are sent again.
#[derive(Debug, Clone, Copy)]
pub struct ValueComparison {
    /// Bytes kept per group; a group written longer is always resent.
    pub group_bytes: usize,
}

impl Default for ValueComparison {
    fn default() -> Self {
        Self { group_bytes: 32 }
    }
}

/// The per-client memory of [`ValueComparison`].
#[derive(Debug)]
pub struct ShadowValues {
    bytes: Box<[u8]>,
    /// Bits of each shadow, `u16::MAX` when nothing valid is held.
    bits: Box<[u16]>,
    scratch: Box<[u8]>,
}

const NO_SHADOW: u16 = u16::MAX;

impl ValueComparison {
    fn slot(&self, entity: EntityId, group: u8) -> usize {
        usize::from(entity.0) * usize::from(MAX_GROUPS) + usize::from(group)
    }

    /// Writes `group` into the scratch buffer; `None` if it does not fit.
    fn write_scratch<S: ReplicationSource>(
        scratch: &mut [u8],
        view: &EntityView<'_, S>,
        group: u8,
    ) -> Option<usize> {
        scratch.fill(0);
        let mut w = BitWriter::new(scratch);
        view.source
            .write_group(view.entity, view.archetype, group, &mut w)
            .ok()?;
        Some(w.bits_written())
    }
}

impl ChangeDetection for ValueComparison {
    type Memory = ShadowValues;

    fn memory(&self, entities: usize) -> ShadowValues {
        let slots = entities * usize::from(MAX_GROUPS);
        ShadowValues {
            bytes: vec![0; slots * self.group_bytes].into_boxed_slice(),
            bits: vec![NO_SHADOW; slots].into_boxed_slice(),
            scratch: vec![0; self.group_bytes].into_boxed_slice(),
        }
    }

    fn groups_to_send<S: ReplicationSource>(
        &self,
        memory: &mut ShadowValues,
        view: &EntityView<'_, S>,
    ) -> GroupMask {
        let mut mask = 0u8;
        for group in view.groups.iter() {
            let slot = self.slot(view.entity, group);
            let same = match Self::write_scratch(&mut memory.scratch, view, group) {
                Some(bits) if memory.bits[slot] as usize == bits => {
                    let shadow = &memory.bytes[slot * self.group_bytes..][..self.group_bytes];
                    shadow[..bits.div_ceil(8)] == memory.scratch[..bits.div_ceil(8)]
                }
                _ => false,
            };
            if !same {
                mask |= 1 << group;
            }
        }
        GroupMask(mask)
    }

    fn written<S: ReplicationSource>(
        &self,
        memory: &mut ShadowValues,
        view: &EntityView<'_, S>,
        groups: GroupMask,
    ) {
        for group in groups.iter() {
            let slot = self.slot(view.entity, group);
            let shadow = &mut memory.bytes[slot * self.group_bytes..][..self.group_bytes];
            memory.bits[slot] = match Self::write_scratch(shadow, view, group) {
                Some(bits) => bits as u16,
                None => NO_SHADOW,
            };
        }
    }

    fn lost(&self, memory: &mut ShadowValues, entity: EntityId, groups: GroupMask) {
        for group in groups.iter() {
            if let Some(b) = memory.bits.get_mut(self.slot(entity, group)) {
                *b = NO_SHADOW;
            }
        }
    }

    fn forget(&self, memory: &mut ShadowValues, entity: EntityId) {
        let start = self.slot(entity, 0);
        if let Some(bits) = memory.bits.get_mut(start..start + usize::from(MAX_GROUPS)) {
            bits.fill(NO_SHADOW);
        }
    }

    fn reset(&self, memory: &mut ShadowValues) {
        memory.bits.fill(NO_SHADOW);
    }
}
