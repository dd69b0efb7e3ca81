//! The replicated entity table: which entities exist, of which archetype, and
//! when each of their field groups last changed.
//!
//! The values themselves live in the game's own storage. Game code changes a
//! replicated value through [`ReplicationWorld::set`] (or stamps a change it
//! made itself with [`ReplicationWorld::mark_changed`]): either stamps the
//! field group's `changed_tick` with the current tick. The replication writer
//! reads only these stamps; nothing ever scans values to find changes.
//!
//! A player's avatar, the entity it steers ([`ReplicationWorld::spawn_avatar`]),
//! is kept here too: games and their relevance rules look it up by player,
//! the match tells each client its own, and by default a player's avatar
//! leaves with it.
//!
//! Freed entity ids are reused in first-freed, first-reused order, and only
//! after a quarantine (`reuse_delay` ticks), so a client never confuses a
//! late record about an old entity with the new one in the same slot.

use std::fmt::Debug;

use crate::error::EngineError;
use crate::interest::InterestSet;
use crate::player::PlayerId;
use crate::tick::Tick;
use hightick_proto::EntityId;

/// Field groups an entity can have (bits of a [`GroupMask`]).
pub const MAX_GROUPS: u8 = 8;

/// A set of field groups, bit `i` for group `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GroupMask(pub u8);

impl GroupMask {
    /// No group.
    pub const EMPTY: Self = Self(0);

    /// Groups `0..count` (count clamped to [`MAX_GROUPS`]).
    pub const fn first(count: u8) -> Self {
        if count >= MAX_GROUPS {
            Self(u8::MAX)
        } else {
            Self((1u8 << count) - 1)
        }
    }

    /// Only `group` (a group of 8 or more gives the empty mask).
    pub const fn only(group: u8) -> Self {
        if group >= MAX_GROUPS {
            Self(0)
        } else {
            Self(1 << group)
        }
    }

    /// Whether `group` is in the mask.
    pub const fn contains(self, group: u8) -> bool {
        group < MAX_GROUPS && self.0 & (1 << group) != 0
    }

    /// Whether no group is in the mask.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The number of groups in the mask.
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The groups in ascending order.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let g = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            Some(g)
        })
    }
}

impl std::ops::BitOr for GroupMask {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl std::ops::Not for GroupMask {
    type Output = Self;
    fn not(self) -> Self {
        Self(!self.0)
    }
}

impl std::ops::BitAnd for GroupMask {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}

/// A kind of replicated entity (player, projectile, pickup...): its wire id
/// and the field groups it replicates. Shared by server and client so both
/// read and write the same groups.
pub trait Archetype: Copy + Eq + Debug + Send + Sync + 'static {
    /// The id written in Enter records.
    fn wire_id(self) -> u8;
    /// The archetype of a wire id, if the game has one.
    fn from_wire_id(id: u8) -> Option<Self>;
    /// The field groups entities of this archetype replicate.
    fn groups(self) -> GroupMask;
    /// The groups (among [`groups`](Self::groups)) only the entity's owner
    /// is sent, as named by
    /// [`ReplicationSource::owner`](crate::replication::ReplicationSource::owner):
    /// e.g. the exact motion state a client predicts its own player from.
    /// Default: none.
    fn owner_groups(self) -> GroupMask {
        GroupMask::EMPTY
    }

    /// The kinds and the state each carries, as data: `Some` when derived,
    /// `None` (the default) when hand-written.
    const SCHEMA: Option<&'static [crate::schema::ArchetypeSchema]> = None;
}

#[derive(Debug, Clone, Copy)]
struct Freed {
    slot: u16,
    at: Tick,
}

/// The replicated entity table of one match, sized at creation.
#[derive(Debug, Clone)]
pub struct ReplicationWorld<A> {
    tick: Tick,
    alive: InterestSet,
    archetypes: Box<[Option<A>]>,
    generations: Box<[u16]>,
    changed: Box<[[Tick; MAX_GROUPS as usize]]>,
    last_changed: Box<[Tick]>,
    /// Free slots in first-freed order (a ring).
    free: Box<[Freed]>,
    free_head: usize,
    free_len: usize,
    reuse_delay: Tick,
    /// Each player's avatar, by slot (grown as players get one).
    avatars: Vec<Option<EntityId>>,
}

impl<A: Archetype> ReplicationWorld<A> {
    /// A world of `capacity` entity slots (at most 65,536) whose freed ids
    /// wait `reuse_delay` ticks before reuse.
    pub fn new(capacity: usize, reuse_delay: Tick) -> Self {
        let capacity = capacity.min(usize::from(u16::MAX) + 1);
        Self {
            tick: 0,
            alive: InterestSet::with_capacity(capacity),
            archetypes: vec![None; capacity].into_boxed_slice(),
            generations: vec![0; capacity].into_boxed_slice(),
            changed: vec![[0; MAX_GROUPS as usize]; capacity].into_boxed_slice(),
            last_changed: vec![0; capacity].into_boxed_slice(),
            free: (0..capacity)
                .map(|slot| Freed {
                    slot: slot as u16,
                    at: 0,
                })
                .collect(),
            free_head: 0,
            free_len: capacity,
            reuse_delay,
            avatars: Vec::new(),
        }
    }

    /// The number of entity slots.
    pub fn capacity(&self) -> usize {
        self.archetypes.len()
    }

    /// The tick being simulated (changes are stamped with it).
    pub fn tick(&self) -> Tick {
        self.tick
    }

    /// Sets the tick changes are stamped with (the match runtime does this
    /// before each tick).
    pub fn begin_tick(&mut self, tick: Tick) {
        self.tick = tick;
    }

    /// Creates an entity of `archetype`; every group counts as changed now.
    pub fn spawn(&mut self, archetype: A) -> Result<EntityId, EngineError> {
        if self.free_len == 0 {
            return Err(EngineError::EntityCapacity {
                capacity: self.capacity(),
            });
        }
        let oldest = self.free[self.free_head];
        if oldest.at != 0 && self.tick < oldest.at.saturating_add(self.reuse_delay) {
            return Err(EngineError::EntityCapacity {
                capacity: self.capacity(),
            });
        }
        self.free_head = (self.free_head + 1) % self.free.len();
        self.free_len -= 1;
        let i = usize::from(oldest.slot);
        self.archetypes[i] = Some(archetype);
        self.generations[i] = self.generations[i].wrapping_add(1);
        self.changed[i] = [self.tick; MAX_GROUPS as usize];
        self.last_changed[i] = self.tick;
        self.alive.insert(EntityId(oldest.slot));
        Ok(EntityId(oldest.slot))
    }

    /// Creates an entity of `archetype` as `player`'s avatar (see
    /// [`Self::set_avatar`]).
    pub fn spawn_avatar(
        &mut self,
        player: PlayerId,
        archetype: A,
    ) -> Result<EntityId, EngineError> {
        let entity = self.spawn(archetype)?;
        self.set_avatar(player, Some(entity));
        Ok(entity)
    }

    /// Makes `entity` the one `player` steers (`None`: none). Its client is
    /// told with the next packet and on every new connection; despawning
    /// the entity clears it.
    pub fn set_avatar(&mut self, player: PlayerId, entity: Option<EntityId>) {
        let i = usize::from(player.0);
        if self.avatars.len() <= i {
            self.avatars.resize(i + 1, None);
        }
        self.avatars[i] = entity.filter(|e| self.alive.contains(*e));
    }

    /// The entity `player` steers, if any.
    pub fn avatar(&self, player: PlayerId) -> Option<EntityId> {
        self.avatars.get(usize::from(player.0)).copied().flatten()
    }

    /// Removes an entity; its id is reused after the quarantine (a player
    /// whose avatar it was has none). Returns whether it existed.
    pub fn despawn(&mut self, entity: EntityId) -> bool {
        if !self.alive.remove(entity) {
            return false;
        }
        for avatar in &mut self.avatars {
            if *avatar == Some(entity) {
                *avatar = None;
            }
        }
        let i = usize::from(entity.0);
        self.archetypes[i] = None;
        let tail = (self.free_head + self.free_len) % self.free.len();
        self.free[tail] = Freed {
            slot: entity.0,
            // `at == 0` means "never used"; a despawn at tick 0 counts as tick 1.
            at: self.tick.max(1),
        };
        self.free_len += 1;
        true
    }

    /// Whether `entity` exists.
    pub fn is_alive(&self, entity: EntityId) -> bool {
        self.alive.contains(entity)
    }

    /// Every live entity.
    pub fn alive(&self) -> &InterestSet {
        &self.alive
    }

    /// The archetype of a live entity.
    pub fn archetype(&self, entity: EntityId) -> Option<A> {
        self.archetypes
            .get(usize::from(entity.0))
            .copied()
            .flatten()
    }

    /// How many times the slot of `entity` has been spawned (wrapping): tells
    /// one incarnation of an id from the next.
    pub fn generation(&self, entity: EntityId) -> u16 {
        self.generations
            .get(usize::from(entity.0))
            .copied()
            .unwrap_or(0)
    }

    /// Stamps `group` of `entity` as changed at the current tick. Unknown
    /// entities and groups are ignored.
    pub fn mark_changed(&mut self, entity: EntityId, group: u8) {
        let i = usize::from(entity.0);
        if group < MAX_GROUPS && self.alive.contains(entity) {
            self.changed[i][usize::from(group)] = self.tick;
            self.last_changed[i] = self.tick;
        }
    }

    /// The setter for replicated values: stores `value` in the game's `slot`
    /// and, if it differs, stamps `group` of `entity` as changed. Returns
    /// whether it changed.
    pub fn set<T: PartialEq>(
        &mut self,
        entity: EntityId,
        group: u8,
        slot: &mut T,
        value: T,
    ) -> bool {
        if *slot == value {
            return false;
        }
        *slot = value;
        self.mark_changed(entity, group);
        true
    }

    /// The tick `group` of `entity` last changed (0 for unknown ones).
    pub fn changed_tick(&self, entity: EntityId, group: u8) -> Tick {
        self.changed
            .get(usize::from(entity.0))
            .and_then(|c| c.get(usize::from(group)))
            .copied()
            .unwrap_or(0)
    }

    /// Whether any group of `entity` changed after `since` (spawning stamps
    /// every group).
    #[inline]
    pub fn changed_after(&self, entity: EntityId, since: Tick) -> bool {
        self.last_changed
            .get(usize::from(entity.0))
            .is_some_and(|&t| t > since)
    }

    /// The groups of `entity` changed after `since`, limited to `groups`.
    pub fn changed_since(&self, entity: EntityId, since: Tick, groups: GroupMask) -> GroupMask {
        let i = usize::from(entity.0);
        if self.last_changed.get(i).is_none_or(|&t| t <= since) {
            return GroupMask::EMPTY;
        }
        // All eight groups at once, without a branch per group (one vector
        // compare), then limited to `groups`.
        let mut mask = 0u8;
        for (g, &t) in self.changed[i].iter().enumerate() {
            mask |= u8::from(t > since) << g;
        }
        GroupMask(mask & groups.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Thing;

    #[test]
    fn setters_stamp_changed_ticks_per_group() {
        let mut w = ReplicationWorld::<Thing>::new(4, 10);
        w.begin_tick(5);
        let e = w.spawn(Thing).unwrap();
        assert_eq!(w.changed_since(e, 4, Thing.groups()), GroupMask(0b111));
        assert_eq!(w.changed_since(e, 5, Thing.groups()), GroupMask::EMPTY);
        w.begin_tick(9);
        let mut hp = 100;
        assert!(!w.set(e, 1, &mut hp, 100), "an equal value is no change");
        assert!(w.set(e, 1, &mut hp, 90));
        assert_eq!(hp, 90);
        assert_eq!(w.changed_tick(e, 1), 9);
        assert_eq!(w.changed_since(e, 5, Thing.groups()), GroupMask(0b010));
        w.mark_changed(e, 2);
        assert_eq!(w.changed_since(e, 8, Thing.groups()), GroupMask(0b110));
        assert_eq!(w.changed_since(e, 8, GroupMask::only(2)), GroupMask(0b100));
    }

    #[test]
    fn ids_are_reused_first_freed_first_and_after_the_quarantine() {
        let mut w = ReplicationWorld::<Thing>::new(2, 10);
        w.begin_tick(1);
        let a = w.spawn(Thing).unwrap();
        let b = w.spawn(Thing).unwrap();
        assert!(w.spawn(Thing).is_err(), "full");
        let gen_a = w.generation(a);
        assert!(w.despawn(a) && !w.despawn(a));
        assert!(!w.is_alive(a) && w.archetype(a).is_none());
        w.begin_tick(10);
        assert!(w.spawn(Thing).is_err(), "still in quarantine");
        w.begin_tick(11);
        let c = w.spawn(Thing).unwrap();
        assert_eq!(c, a);
        assert_ne!(w.generation(c), gen_a);
        assert!(w.is_alive(b) && w.alive().len() == 2);
    }

    #[test]
    fn an_avatar_is_kept_by_player_until_its_entity_goes() {
        let mut w = ReplicationWorld::<Thing>::new(4, 10);
        w.begin_tick(1);
        let (p0, p3) = (PlayerId(0), PlayerId(3));
        let a = w.spawn_avatar(p3, Thing).unwrap();
        assert_eq!((w.avatar(p3), w.avatar(p0)), (Some(a), None));
        let b = w.spawn(Thing).unwrap();
        w.set_avatar(p0, Some(b));
        assert!(w.despawn(a));
        assert_eq!((w.avatar(p3), w.avatar(p0)), (None, Some(b)));
        w.set_avatar(p3, Some(a));
        assert_eq!(w.avatar(p3), None, "a dead entity is no avatar");
        w.set_avatar(p0, None);
        assert_eq!(w.avatar(p0), None);
    }

    #[test]
    fn group_masks() {
        assert_eq!(GroupMask::first(8), GroupMask(0xFF));
        assert_eq!(GroupMask::first(0), GroupMask::EMPTY);
        assert_eq!(GroupMask(0b1010).iter().collect::<Vec<_>>(), vec![1, 3]);
        assert!(GroupMask::only(3).contains(3) && !GroupMask::only(9).contains(9));
        assert_eq!((GroupMask(1) | GroupMask(2)).len(), 2);
    }
}
