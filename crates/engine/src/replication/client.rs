//! The client side of replication: [`ClientWorld`] applies snapshots.
//!
//! Packets may arrive late, twice or out of order, so every record is applied
//! only if it is newer than what the client holds: per entity the tick of the
//! last Enter/Leave applied and per field group the tick of the value held.
//! A full resync clears the world at the first full-resync snapshot of a run.

use hightick_proto::message::{
    EntityOp, EntityRecordHeader, SnapshotHeader, SnapshotKind, read_entity_record_header,
};
use hightick_proto::{BitReader, MessageKind, ProtoError};

use crate::error::EngineError;
use crate::interest::InterestSet;
use crate::tick::Tick;
use crate::world::{Archetype, GroupMask, MAX_GROUPS};
use hightick_proto::EntityId;

/// The client's copy of one entity's replicated state.
pub trait Replica: Default {
    /// The game's kinds of replicated entities.
    type Archetype: Archetype;

    /// The replicated fields and their groups, as data: `Some` when
    /// derived (`#[derive(Replicated)]`), `None` (the default) when
    /// hand-written.
    const SCHEMA: Option<&'static hightick_proto::wire::TypeSchema> = None;

    /// Reads field group `group`, exactly as the server's
    /// [`ReplicationSource::write_group`](super::ReplicationSource::write_group)
    /// wrote it.
    fn read_group(
        &mut self,
        archetype: Self::Archetype,
        group: u8,
        r: &mut BitReader,
    ) -> Result<(), ProtoError>;

    /// Reads field group `group` of a record of snapshot tick `tick`, exactly
    /// as the server's
    /// [`ReplicationSource::write_group_since`](super::ReplicationSource::write_group_since)
    /// wrote it. `newest` says whether the record is newer than the value the
    /// replica holds for the group: when it is not (a late or duplicate
    /// packet, or an entity the client does not hold), the replica must keep
    /// its value, though it may remember the record's as a base for later
    /// deltas. The default is [`read_whole_group`].
    fn read_group_at(
        &mut self,
        archetype: Self::Archetype,
        group: u8,
        tick: Tick,
        newest: bool,
        r: &mut BitReader,
    ) -> Result<(), ProtoError> {
        let _ = tick;
        read_whole_group(self, archetype, group, newest, r)
    }

    /// The entity is entered afresh (a new incarnation in its slot, or a
    /// newer full state of the one held): forget its values. The default
    /// starts from `Self::default()`. A replica that remembers delta bases
    /// by tick may keep them: a delta names a base no older than the
    /// entity's newest Enter the client acknowledged, so older ones are never
    /// asked for, while an Enter whose newer copy replaced it may be.
    fn renew(&mut self) {
        *self = Self::default();
    }
}

/// Reads a group written whole ([`Replica::read_group`]): into `replica`
/// when `newest`, else into a scratch copy (a late record changes nothing).
/// What [`Replica::read_group_at`] does by default, and what a replica that
/// writes only some groups relative to a base does for the others.
pub fn read_whole_group<R: Replica>(
    replica: &mut R,
    archetype: R::Archetype,
    group: u8,
    newest: bool,
    r: &mut BitReader,
) -> Result<(), ProtoError> {
    if newest {
        replica.read_group(archetype, group, r)
    } else {
        R::default().read_group(archetype, group, r)
    }
}

/// One entity as the client holds it.
#[derive(Debug, Clone, Copy)]
pub struct ClientEntity<'a, R: Replica> {
    /// Its id.
    pub entity: EntityId,
    /// Its archetype.
    pub archetype: R::Archetype,
    /// Its replicated state.
    pub state: &'a R,
}

#[derive(Debug)]
struct Slot<R: Replica> {
    present: bool,
    /// Kept after a Leave, to read late records about the entity.
    archetype: Option<R::Archetype>,
    /// Tick of the newest Enter or Leave applied.
    presence_tick: Tick,
    group_ticks: [Tick; MAX_GROUPS as usize],
    state: R,
}

impl<R: Replica> Slot<R> {
    fn newest_tick(&self) -> Tick {
        self.group_ticks
            .iter()
            .copied()
            .fold(self.presence_tick, Tick::max)
    }
}

/// Counters of snapshot application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApplyStats {
    /// Snapshots applied.
    pub snapshots: u64,
    /// Snapshots dropped whole (awaiting a full resync, or from before it).
    pub snapshots_dropped: u64,
    /// Entity records applied (at least one group or the presence).
    pub records_applied: u64,
    /// Entity records older than what the client held, skipped.
    pub records_stale: u64,
    /// Full resyncs that cleared the world.
    pub resyncs: u64,
}

/// What one applied snapshot said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// Its header.
    pub header: SnapshotHeader,
    /// Whether it was applied (`false`: dropped whole).
    pub applied: bool,
    /// Entity records it held (applied or stale).
    pub records: u32,
}

/// Reads a snapshot payload: the header, then one entity record at a time.
/// After each record header the caller reads the record's field groups (in
/// ascending group order) from [`groups`](Self::groups) before asking for
/// the next record. [`ClientWorld`] is built on it; tools that only inspect
/// snapshots can use it directly.
///
/// ```
/// use hightick_engine::replication::SnapshotReader;
/// # fn f(payload: &[u8]) -> Result<(), hightick_engine::EngineError> {
/// let mut reader = SnapshotReader::new(payload)?;
/// println!("server tick {}", reader.header().server_tick);
/// while let Some(record) = reader.next_record()? {
///     // ... read `record.group_mask`'s groups from `reader.groups()` ...
/// #   let _ = record;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SnapshotReader<'a> {
    header: SnapshotHeader,
    r: BitReader<'a>,
}

impl<'a> SnapshotReader<'a> {
    /// Checks the message tag and reads the header.
    pub fn new(payload: &'a [u8]) -> Result<Self, EngineError> {
        let mut r = BitReader::new(payload);
        if MessageKind::decode(&mut r)? != MessageKind::Snapshot {
            return Err(ProtoError::invalid("message kind").into());
        }
        let header = SnapshotHeader::decode(&mut r)?;
        Ok(Self { header, r })
    }

    /// The snapshot's header.
    pub fn header(&self) -> SnapshotHeader {
        self.header
    }

    /// The next record header, `None` at the end marker.
    pub fn next_record(&mut self) -> Result<Option<EntityRecordHeader>, EngineError> {
        Ok(read_entity_record_header(&mut self.r)?)
    }

    /// Where the current record's field groups are read from.
    pub fn groups(&mut self) -> &mut BitReader<'a> {
        &mut self.r
    }
}

/// The client's view of the replicated world.
#[derive(Debug)]
pub struct ClientWorld<R: Replica> {
    slots: Box<[Slot<R>]>,
    present: InterestSet,
    scratch: R,
    awaiting_full: bool,
    /// Tick of the full-resync snapshot that last cleared the world.
    resync_tick: Tick,
    /// Newest delta applied since that clear.
    newest_delta: Option<Tick>,
    newest_tick: Tick,
    stats: ApplyStats,
    /// The entity the server says this client's player steers.
    avatar: Option<EntityId>,
}

impl<R: Replica> ClientWorld<R> {
    /// An empty world of `entities` slots, waiting for a full resync.
    pub fn new(entities: usize) -> Self {
        Self {
            slots: (0..entities)
                .map(|_| Slot {
                    present: false,
                    archetype: None,
                    presence_tick: 0,
                    group_ticks: [0; MAX_GROUPS as usize],
                    state: R::default(),
                })
                .collect(),
            present: InterestSet::with_capacity(entities),
            scratch: R::default(),
            awaiting_full: true,
            resync_tick: 0,
            newest_delta: None,
            newest_tick: 0,
            stats: ApplyStats::default(),
            avatar: None,
        }
    }

    /// After a reconnect or a resync request: deltas are dropped until a
    /// full resync arrives, which clears the world.
    pub fn expect_full_resync(&mut self) {
        self.awaiting_full = true;
    }

    /// The newest server tick applied.
    pub fn server_tick(&self) -> Tick {
        self.newest_tick
    }

    /// The counters.
    pub fn stats(&self) -> ApplyStats {
        self.stats
    }

    /// The number of entities held.
    pub fn len(&self) -> usize {
        self.present.len()
    }

    /// Whether no entity is held.
    pub fn is_empty(&self) -> bool {
        self.present.is_empty()
    }

    /// Whether `entity` is held.
    pub fn contains(&self, entity: EntityId) -> bool {
        self.present.contains(entity)
    }

    /// The entities held.
    pub fn entities(&self) -> &InterestSet {
        &self.present
    }

    /// One entity, if held.
    pub fn get(&self, entity: EntityId) -> Option<ClientEntity<'_, R>> {
        let slot = self.slots.get(usize::from(entity.0))?;
        match (slot.present, slot.archetype) {
            (true, Some(archetype)) => Some(ClientEntity {
                entity,
                archetype,
                state: &slot.state,
            }),
            _ => None,
        }
    }

    /// The entity this client's player steers, as the server last said
    /// (`hightick_proto::Avatar`), whether or not it is held.
    pub fn avatar(&self) -> Option<EntityId> {
        self.avatar
    }

    /// Records what the server said of this client's avatar (the client
    /// does, on its `Avatar` message).
    pub fn set_avatar(&mut self, avatar: Option<EntityId>) {
        self.avatar = avatar;
    }

    /// This client's avatar, if it has one and it is held.
    pub fn mine(&self) -> Option<ClientEntity<'_, R>> {
        self.get(self.avatar?)
    }

    /// Every entity held, in id order.
    pub fn iter(&self) -> impl Iterator<Item = ClientEntity<'_, R>> + '_ {
        self.present.iter().filter_map(|e| self.get(e))
    }

    fn clear(&mut self, floor: Tick) {
        for slot in self.slots.iter_mut() {
            slot.present = false;
            slot.presence_tick = floor;
            slot.group_ticks = [floor; MAX_GROUPS as usize];
        }
        self.present.clear();
        self.stats.resyncs += 1;
    }

    /// Applies one snapshot payload (as written by the server's replication
    /// writer). A malformed payload is an error; records before the fault
    /// stay applied.
    pub fn apply(&mut self, payload: &[u8]) -> Result<SnapshotInfo, EngineError> {
        let mut reader = SnapshotReader::new(payload)?;
        let header = reader.header();
        let tick = header.server_tick;
        let mut info = SnapshotInfo {
            header,
            applied: false,
            records: 0,
        };
        match header.kind {
            SnapshotKind::FullResync => {
                let new_run = self.awaiting_full || self.newest_delta.is_some_and(|d| tick > d);
                if new_run {
                    let floor = self.newest_delta.unwrap_or(self.resync_tick);
                    self.clear(floor);
                    self.awaiting_full = false;
                    self.resync_tick = tick;
                    self.newest_delta = None;
                }
            }
            SnapshotKind::Delta => {
                if self.awaiting_full || tick < self.resync_tick {
                    self.stats.snapshots_dropped += 1;
                    return Ok(info);
                }
                self.newest_delta = Some(self.newest_delta.map_or(tick, |d| d.max(tick)));
            }
        }
        info.applied = true;
        self.newest_tick = self.newest_tick.max(tick);
        self.stats.snapshots += 1;
        while let Some(record) = reader.next_record()? {
            let r = reader.groups();
            info.records += 1;
            let i = usize::from(record.entity.0);
            if i >= self.slots.len() {
                return Err(EngineError::UnknownEntity(record.entity.0));
            }
            let applied = match record.op {
                EntityOp::Enter { archetype } => {
                    let a = R::Archetype::from_wire_id(archetype)
                        .ok_or(EngineError::UnknownArchetype(archetype))?;
                    self.apply_enter(i, a, GroupMask(record.group_mask), tick, r)?
                }
                EntityOp::Update => self.apply_update(i, GroupMask(record.group_mask), tick, r)?,
                EntityOp::Leave => self.apply_leave(i, tick),
            };
            if applied {
                self.stats.records_applied += 1;
            } else {
                self.stats.records_stale += 1;
            }
        }
        Ok(info)
    }

    fn apply_enter(
        &mut self,
        i: usize,
        archetype: R::Archetype,
        groups: GroupMask,
        tick: Tick,
        r: &mut BitReader,
    ) -> Result<bool, EngineError> {
        let slot = &mut self.slots[i];
        let replace = if slot.present {
            tick > slot.newest_tick()
        } else {
            tick > slot.presence_tick
        };
        if replace {
            // A new entity (or a newer full state of the one held).
            slot.state.renew();
            slot.archetype = Some(archetype);
            slot.present = true;
            slot.presence_tick = tick;
            slot.group_ticks = [tick; MAX_GROUPS as usize];
            self.present.insert(EntityId(i as u16));
            for g in groups.iter() {
                slot.state.read_group_at(archetype, g, tick, true, r)?;
            }
            return Ok(true);
        }
        if !slot.present {
            for g in groups.iter() {
                self.scratch.read_group_at(archetype, g, tick, false, r)?;
            }
            return Ok(false);
        }
        // A late copy of the Enter of the entity held: keep what is newer.
        let mut applied = false;
        for g in groups.iter() {
            let gt = &mut slot.group_ticks[usize::from(g)];
            let newest = tick > *gt;
            slot.state.read_group_at(archetype, g, tick, newest, r)?;
            if newest {
                *gt = tick;
                applied = true;
            }
        }
        Ok(applied)
    }

    fn apply_update(
        &mut self,
        i: usize,
        groups: GroupMask,
        tick: Tick,
        r: &mut BitReader,
    ) -> Result<bool, EngineError> {
        let slot = &mut self.slots[i];
        let archetype = slot.archetype.ok_or(EngineError::UnknownEntity(i as u16))?;
        let mut applied = false;
        for g in groups.iter() {
            let gt = &mut slot.group_ticks[usize::from(g)];
            if slot.present {
                let newest = tick > *gt;
                slot.state.read_group_at(archetype, g, tick, newest, r)?;
                if newest {
                    *gt = tick;
                    applied = true;
                }
            } else {
                self.scratch.read_group_at(archetype, g, tick, false, r)?;
            }
        }
        Ok(applied)
    }

    fn apply_leave(&mut self, i: usize, tick: Tick) -> bool {
        let slot = &mut self.slots[i];
        if tick <= slot.newest_tick() {
            return false;
        }
        slot.presence_tick = tick;
        if slot.present {
            slot.present = false;
            self.present.remove(EntityId(i as u16));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Thing;
    use hightick_proto::BitWriter;
    use hightick_proto::message::{
        EntityRecordHeader, write_end_of_records, write_entity_record_header,
    };
    use proptest::prelude::*;

    #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
    struct Pair([u8; 2]);
    impl Replica for Pair {
        type Archetype = Thing;
        fn read_group(&mut self, _: Thing, group: u8, r: &mut BitReader) -> Result<(), ProtoError> {
            let slot = self
                .0
                .get_mut(usize::from(group))
                .ok_or(ProtoError::invalid("group"))?;
            *slot = r.read_u8()?;
            Ok(())
        }
    }

    enum Rec {
        Enter(u16, u8),
        Update(u16, u8, u8),
        Leave(u16),
    }

    fn payload(tick: Tick, kind: SnapshotKind, records: &[Rec]) -> Vec<u8> {
        let mut buf = vec![0u8; 256];
        let mut w = BitWriter::new(&mut buf);
        MessageKind::Snapshot.encode(&mut w).unwrap();
        SnapshotHeader {
            server_tick: tick,
            input_ack_tick: 0,
            kind,
        }
        .encode(&mut w)
        .unwrap();
        for rec in records {
            match *rec {
                Rec::Enter(e, v) => {
                    write_entity_record_header(
                        &mut w,
                        &EntityRecordHeader::enter(EntityId(e), 1, 0b11),
                    )
                    .unwrap();
                    w.write_u8(v).unwrap();
                    w.write_u8(v).unwrap();
                }
                Rec::Update(e, group, v) => {
                    write_entity_record_header(
                        &mut w,
                        &EntityRecordHeader::update(EntityId(e), 1 << group),
                    )
                    .unwrap();
                    w.write_u8(v).unwrap();
                }
                Rec::Leave(e) => {
                    write_entity_record_header(&mut w, &EntityRecordHeader::leave(EntityId(e)))
                        .unwrap()
                }
            }
        }
        write_end_of_records(&mut w).unwrap();
        let n = w.finish();
        buf.truncate(n);
        buf
    }

    use Rec::{Enter, Leave, Update};
    use SnapshotKind::{Delta, FullResync};

    fn value(c: &ClientWorld<Pair>, e: u16) -> Option<[u8; 2]> {
        c.get(EntityId(e)).map(|x| x.state.0)
    }

    #[test]
    fn late_records_never_overwrite_newer_ones() {
        let mut c = ClientWorld::<Pair>::new(4);
        c.apply(&payload(1, FullResync, &[Enter(0, 1)])).unwrap();
        c.apply(&payload(5, Delta, &[Update(0, 0, 5)])).unwrap();
        c.apply(&payload(4, Delta, &[Update(0, 0, 4), Update(0, 1, 4)]))
            .unwrap();
        assert_eq!(
            value(&c, 0),
            Some([5, 4]),
            "group 0 is newer, group 1 is not"
        );
        // A late copy of the Enter changes nothing newer.
        c.apply(&payload(2, FullResync, &[Enter(0, 2)])).unwrap();
        assert_eq!(value(&c, 0), Some([5, 4]));
        assert_eq!(
            c.stats().records_stale,
            2,
            "the group-0 update of tick 4 and the enter"
        );
    }

    #[test]
    fn leave_and_enter_apply_in_tick_order() {
        let mut c = ClientWorld::<Pair>::new(4);
        c.apply(&payload(1, FullResync, &[Enter(1, 1)])).unwrap();
        c.apply(&payload(6, Delta, &[Leave(1)])).unwrap();
        assert!(!c.contains(EntityId(1)));
        // The Enter sent before the Leave arrives late: ignored.
        c.apply(&payload(3, Delta, &[Enter(1, 3), Update(1, 0, 3)]))
            .unwrap();
        assert!(!c.contains(EntityId(1)));
        // Re-entered at 8; the Leave of 7 arrives after: ignored.
        c.apply(&payload(8, Delta, &[Enter(1, 8)])).unwrap();
        c.apply(&payload(7, Delta, &[Leave(1)])).unwrap();
        assert_eq!(value(&c, 1), Some([8, 8]));
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn a_full_resync_clears_stale_entities_once_per_run() {
        let mut c = ClientWorld::<Pair>::new(4);
        assert!(
            !c.apply(&payload(1, Delta, &[Enter(0, 1)])).unwrap().applied,
            "waits for full"
        );
        c.apply(&payload(2, FullResync, &[Enter(0, 2), Enter(1, 2)]))
            .unwrap();
        c.apply(&payload(10, Delta, &[Update(0, 0, 10)])).unwrap();
        // Reconnect: entity 1 is gone on the server by now.
        c.expect_full_resync();
        assert!(
            !c.apply(&payload(11, Delta, &[Update(0, 0, 11)]))
                .unwrap()
                .applied
        );
        c.apply(&payload(21, FullResync, &[Enter(0, 21)])).unwrap();
        assert!(!c.contains(EntityId(1)), "cleared");
        // Another full snapshot of the same run (entity 2 did not fit in the
        // first) does not clear again; a late one from before the clear neither.
        c.apply(&payload(22, FullResync, &[Enter(2, 22)])).unwrap();
        c.apply(&payload(20, FullResync, &[Enter(3, 20)])).unwrap();
        assert!(c.contains(EntityId(0)) && c.contains(EntityId(2)) && c.contains(EntityId(3)));
        // A delta from before the resync is dropped whole.
        assert!(
            !c.apply(&payload(15, Delta, &[Enter(1, 15)]))
                .unwrap()
                .applied
        );
        assert!(!c.contains(EntityId(1)));
        // A server-side resync after deltas starts a new run.
        c.apply(&payload(30, Delta, &[Update(0, 0, 30)])).unwrap();
        c.apply(&payload(31, FullResync, &[Enter(2, 31)])).unwrap();
        assert!(!c.contains(EntityId(0)) && c.contains(EntityId(2)));
        assert_eq!(c.stats().resyncs, 3);
        assert_eq!(c.server_tick(), 31);
    }

    #[test]
    fn malformed_payloads_are_errors() {
        let mut c = ClientWorld::<Pair>::new(4);
        let good = payload(1, FullResync, &[Enter(0, 1)]);
        assert!(c.apply(&good[..good.len() - 1]).is_err());
        assert!(c.apply(&[]).is_err());
        assert!(matches!(
            c.apply(&payload(2, Delta, &[Update(3, 0, 1)])),
            Err(EngineError::UnknownEntity(3))
        ));
        assert!(matches!(
            c.apply(&payload(2, Delta, &[Enter(9, 1)])),
            Err(EngineError::UnknownEntity(9))
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut c = ClientWorld::<Pair>::new(4);
            let mut with_tag = vec![MessageKind::Snapshot.as_u8()];
            with_tag.extend_from_slice(&bytes);
            let _ = c.apply(&bytes);
            let _ = c.apply(&with_tag);
        }
    }
}
