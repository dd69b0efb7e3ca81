//! The replication writer: per client, what to put in this tick's snapshot.

use hightick_proto::message::{
    EntityRecordHeader, SnapshotHeader, SnapshotKind, write_end_of_records,
    write_entity_record_header,
};
use hightick_proto::{BitWriter, MessageKind, ProtoError};

use super::source::{RecordTicks, ReplicationSource, visible_groups};
use crate::error::EngineError;
use crate::interest::InterestSet;
use crate::player::PlayerId;
use crate::replication::detect::{ChangeDetection, ChangedTicks, EntityView};
use crate::replication::sent::{RecordOp, SentEntry, SentPacket, SentPackets};
use crate::replication::shared::{RecordKey, SharedRecordStats, SharedRecords};
use crate::tick::Tick;
use crate::world::{Archetype, GroupMask, ReplicationWorld};
use hightick_proto::EntityId;

/// The weight a pending Leave record adds to its accumulator each tick: high,
/// because a Leave is a few bits and frees the client of a stale entity.
const LEAVE_WEIGHT: f32 = 1_000.0;
/// Priority weights the game returns are clamped to this range.
const MIN_WEIGHT: f32 = 1e-3;
const MAX_WEIGHT: f32 = 1e6;
/// After this many records in a row did not fit, the rest of the tick's
/// candidates wait without being tried.
const MAX_MISSES_IN_A_ROW: u32 = 8;

/// Sizes of a writer, fixed at creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterConfig {
    /// Client slots (one per player).
    pub clients: usize,
    /// Entity slots of the replicated world.
    pub entities: usize,
    /// Snapshot bytes per client per tick, everything included.
    pub budget_bytes: usize,
    /// Sent-packet records kept per client (packets in flight).
    pub sent_packets: usize,
    /// Entity entries shared by a client's sent-packet records.
    pub sent_entries: usize,
}

/// What happened to a sent packet, as the connection layer reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketFate {
    /// The client acknowledged it.
    Acked,
    /// Presumed lost.
    Lost,
}

/// Counters of one client's replication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplicationStats {
    /// Snapshots written.
    pub snapshots: u64,
    /// Snapshot bytes written.
    pub bytes: u64,
    /// Entity records written.
    pub records: u64,
    /// Records that waited for a later tick because the budget was spent.
    pub deferred: u64,
    /// Records the game failed to write (other than running out of room).
    pub encode_errors: u64,
    /// Snapshot packets acknowledged.
    pub packets_acked: u64,
    /// Snapshot packets lost (including those never sent or evicted).
    pub packets_lost: u64,
    /// Full resyncs started (join, reconnect, request).
    pub full_resyncs: u64,
}

/// What one call to [`ReplicationWriter::write_snapshot`] produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// Payload length in bytes.
    pub bytes: usize,
    /// Delta or full resync.
    pub kind: SnapshotKind,
    /// Entity records in the payload.
    pub records: u32,
    /// Records that had to wait for a later tick.
    pub deferred: u32,
}

/// Where an entity stands with one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// The client does not hold it (acknowledged).
    Absent,
    /// Relevant; Enter records (full state) are sent until one is acked.
    Entering,
    /// The client holds it; updates carry the groups changed since `acked`.
    Present,
    /// No longer relevant; Leave records are sent until one is acked.
    Leaving,
}

/// Per client, per entity: presence, acked tick and priority accumulator.
#[derive(Debug, Clone, Copy)]
struct Baseline {
    presence: Presence,
    /// Whether an Enter of this incarnation may have reached the client.
    enter_sent: bool,
    generation: u16,
    /// The tick the current presence began; acks of older packets are stale.
    since: Tick,
    /// The newest tick the client acknowledged for the entity.
    acked: Tick,
    priority: f32,
}

const ABSENT: Baseline = Baseline {
    presence: Presence::Absent,
    enter_sent: false,
    generation: 0,
    since: 0,
    acked: 0,
    priority: 0.0,
};

#[derive(Debug)]
struct ClientReplication<M> {
    connected: bool,
    baselines: Box<[Baseline]>,
    /// Entities not Absent.
    known: InterestSet,
    relevant: InterestSet,
    previous: InterestSet,
    sent: SentPackets,
    resync_pending: bool,
    memory: M,
    stats: ReplicationStats,
    /// Running average of the bits of one record, to guess how many fit.
    record_bits: u32,
    /// Whether the last snapshot deferred records.
    deferred_last: bool,
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    /// Sort key: descending priority, then ascending entity (set by
    /// [`Candidate::weigh`]).
    key: u64,
    entity: u16,
    op: RecordOp,
    groups: GroupMask,
    /// The accumulated priority; with this tick's weight once weighed.
    priority: f32,
}

impl Candidate {
    /// A candidate whose accumulator holds `accumulated`, not yet weighed.
    fn new(entity: u16, op: RecordOp, groups: GroupMask, accumulated: f32) -> Self {
        Self {
            key: u64::from(entity),
            entity,
            op,
            groups,
            priority: accumulated,
        }
    }

    /// Adds this tick's weight to the priority and sets the sort key.
    fn weigh<S: ReplicationSource>(&mut self, source: &S, viewer: PlayerId) {
        self.priority += weight(source, viewer, self);
        // Priorities are positive and finite: their bit patterns order like
        // the values, so inverting them sorts the highest first.
        self.key = (u64::from(!self.priority.to_bits()) << 16) | u64::from(self.entity);
    }
}

/// What waiting one more tick adds to a candidate's priority.
fn weight<S: ReplicationSource>(source: &S, viewer: PlayerId, cand: &Candidate) -> f32 {
    if cand.op == RecordOp::Leave {
        LEAVE_WEIGHT
    } else {
        sanitize_weight(source.priority(viewer, EntityId(cand.entity)))
    }
}

/// Orders the candidates that can fit by priority: the `fit` most urgent
/// first, the rest after in any order. Of those `fit`, the three quarters
/// sure to fit go first in any order (each is more urgent than every one
/// after it) and only the last quarter, where the budget runs out, is
/// sorted: so the records that wait are the least urgent, without sorting
/// them all. When all are expected to fit the order does not matter, unless
/// the last guess was wrong.
fn order_candidates(candidates: &mut [Candidate], fit: usize, deferred_last: bool) {
    let fit = if candidates.len() > fit {
        if fit > 0 {
            candidates.select_nth_unstable_by_key(fit, |c| c.key);
        }
        fit
    } else if deferred_last {
        candidates.len()
    } else {
        return;
    };
    let head = &mut candidates[..fit];
    let sure = fit * 3 / 4;
    if sure > 0 && sure < head.len() {
        head.select_nth_unstable_by_key(sure, |c| c.key);
    }
    head[sure..].sort_unstable_by_key(|c| c.key);
}

/// Builds per-client snapshot payloads by push replication (or, with
/// [`ValueComparison`](super::detect::ValueComparison), by naive polling).
///
/// The coupling with the connection layer: [`write_snapshot`](Self::write_snapshot)
/// builds the payload, the host sends it in one packet and reports the
/// packet's sequence with [`packet_sent`](Self::packet_sent), and later its
/// fate with [`on_delivery`](Self::on_delivery).
#[derive(Debug)]
pub struct ReplicationWriter<D: ChangeDetection = ChangedTicks> {
    detection: D,
    clients: Box<[ClientReplication<D::Memory>]>,
    candidates: Vec<Candidate>,
    shared: SharedRecords,
    entities: usize,
    budget_bytes: usize,
}

/// The push writer (the one matches use).
pub type PushWriter = ReplicationWriter<ChangedTicks>;
/// The naive polling writer, for comparison.
pub type PollingWriter = ReplicationWriter<super::detect::ValueComparison>;

fn sanitize_weight(w: f32) -> f32 {
    if w.is_nan() {
        1.0
    } else {
        w.clamp(MIN_WEIGHT, MAX_WEIGHT)
    }
}

impl<D: ChangeDetection> ReplicationWriter<D> {
    /// A writer with everything allocated for `config`.
    pub fn new(config: &WriterConfig, detection: D) -> Self {
        let entities = config.entities;
        let clients = (0..config.clients)
            .map(|_| ClientReplication {
                connected: false,
                baselines: vec![ABSENT; entities].into_boxed_slice(),
                known: InterestSet::with_capacity(entities),
                relevant: InterestSet::with_capacity(entities),
                previous: InterestSet::with_capacity(entities),
                sent: SentPackets::new(config.sent_packets, config.sent_entries.max(entities)),
                resync_pending: false,
                memory: detection.memory(entities),
                stats: ReplicationStats::default(),
                record_bits: 64,
                deferred_last: true,
            })
            .collect();
        Self {
            detection,
            clients,
            candidates: Vec::with_capacity(entities),
            shared: SharedRecords::new(entities),
            entities,
            budget_bytes: config.budget_bytes,
        }
    }

    /// The snapshot byte budget per client per tick.
    pub fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    /// Changes the byte budget.
    pub fn set_budget_bytes(&mut self, bytes: usize) {
        self.budget_bytes = bytes;
    }

    fn client_mut(
        &mut self,
        client: PlayerId,
    ) -> Result<&mut ClientReplication<D::Memory>, EngineError> {
        self.clients
            .get_mut(usize::from(client.0))
            .ok_or(EngineError::UnknownPlayer(client.0))
    }

    fn detection_and_client(
        &mut self,
        client: PlayerId,
    ) -> Result<(&D, &mut ClientReplication<D::Memory>), EngineError> {
        let st = self
            .clients
            .get_mut(usize::from(client.0))
            .ok_or(EngineError::UnknownPlayer(client.0))?;
        Ok((&self.detection, st))
    }

    fn reset(detection: &D, st: &mut ClientReplication<D::Memory>) {
        st.baselines.fill(ABSENT);
        st.known.clear();
        st.relevant.clear();
        st.previous.clear();
        st.sent.clear();
        detection.reset(&mut st.memory);
        st.resync_pending = true;
        st.deferred_last = true;
        st.stats.full_resyncs += 1;
    }

    /// A new client in this slot (join): nothing is known of it, the next
    /// snapshots are a full resync.
    pub fn connect(&mut self, client: PlayerId) -> Result<(), EngineError> {
        let (detection, st) = self.detection_and_client(client)?;
        st.stats = ReplicationStats::default();
        st.connected = true;
        Self::reset(detection, st);
        Ok(())
    }

    /// The client of this slot reconnected or asked for a resync: its acked
    /// ticks are forgotten and the next snapshots are a full resync.
    pub fn resync(&mut self, client: PlayerId) -> Result<(), EngineError> {
        let (detection, st) = self.detection_and_client(client)?;
        if !st.connected {
            return Err(EngineError::UnknownPlayer(client.0));
        }
        Self::reset(detection, st);
        Ok(())
    }

    /// The client left; its slot writes nothing until connected again.
    pub fn disconnect(&mut self, client: PlayerId) {
        if let Ok(st) = self.client_mut(client) {
            st.connected = false;
            st.sent.clear();
        }
    }

    /// Whether a client is connected in this slot.
    pub fn is_connected(&self, client: PlayerId) -> bool {
        self.clients
            .get(usize::from(client.0))
            .is_some_and(|c| c.connected)
    }

    /// Whether the client may hold `entity` (an Enter may have reached it and
    /// no Leave has been acknowledged since).
    pub fn may_know(&self, client: PlayerId, entity: EntityId) -> bool {
        self.clients
            .get(usize::from(client.0))
            .is_some_and(|c| c.known.contains(entity))
    }

    /// Whether the client's snapshots are full resyncs until one is acked.
    pub fn is_resyncing(&self, client: PlayerId) -> bool {
        self.clients
            .get(usize::from(client.0))
            .is_some_and(|c| c.resync_pending)
    }

    /// The counters of one client.
    pub fn stats(&self, client: PlayerId) -> Option<ReplicationStats> {
        self.clients.get(usize::from(client.0)).map(|c| c.stats)
    }

    /// How many records were copied from one encoded earlier in the same
    /// tick for another client, and how many were encoded.
    pub fn shared_record_stats(&self) -> SharedRecordStats {
        self.shared.stats
    }

    /// Hints the cache to fetch what the next [`Self::write_snapshot`] for
    /// `client` reads: its state, baselines, interest sets and sent-packet
    /// slots (see [`hightick_net::prefetch`]).
    pub fn prefetch(&self, client: PlayerId) {
        let Some(st) = self.clients.get(usize::from(client.0)) else {
            return;
        };
        hightick_net::prefetch::prefetch(st);
        hightick_net::prefetch::prefetch(&st.baselines[..]);
        st.known.prefetch();
        st.relevant.prefetch();
        st.previous.prefetch();
        st.sent.prefetch();
    }

    /// Writes `client`'s snapshot for the world's current tick into `out`
    /// (at most the byte budget of it) and returns what went in. `relevance`
    /// is the set of entities the client may know this tick (the game's fog
    /// of war); entities not alive are never sent.
    pub fn write_snapshot<S: ReplicationSource>(
        &mut self,
        client: PlayerId,
        world: &ReplicationWorld<S::Archetype>,
        source: &S,
        relevance: &InterestSet,
        input_ack_tick: Tick,
        out: &mut [u8],
    ) -> Result<SnapshotSummary, EngineError> {
        if world.capacity() != self.entities {
            return Err(EngineError::Config {
                field: "max_entities",
                reason: "the world and the replication writer disagree",
            });
        }
        let tick = world.tick();
        let entities = self.entities;
        let Self {
            detection,
            clients,
            candidates,
            shared,
            budget_bytes,
            ..
        } = self;
        let st = clients
            .get_mut(usize::from(client.0))
            .filter(|c| c.connected)
            .ok_or(EngineError::UnknownPlayer(client.0))?;

        retire_unsent(detection, st, entities);
        update_presence(detection, st, world, relevance, tick);
        collect_candidates(detection, st, world, source, client, tick, candidates);

        let kind = if st.resync_pending {
            SnapshotKind::FullResync
        } else {
            SnapshotKind::Delta
        };
        let budget = (*budget_bytes).min(out.len());
        let mut w = BitWriter::new(&mut out[..budget]);
        MessageKind::Snapshot.encode(&mut w)?;
        SnapshotHeader {
            server_tick: tick,
            input_ack_tick,
            kind,
        }
        .encode(&mut w)?;
        // One bit stays free for the end-of-records marker.
        let limit_bits = (budget * 8).saturating_sub(1);
        let records_start = w.bits_written();
        let room = limit_bits.saturating_sub(records_start);
        let weighed = weigh_and_order(candidates, st, source, client, room);
        st.sent.begin(tick, kind == SnapshotKind::FullResync);
        let mut summary = SnapshotSummary {
            bytes: 0,
            kind,
            records: 0,
            deferred: 0,
        };
        let mut misses = 0;
        for cand in candidates.iter() {
            let b = &mut st.baselines[usize::from(cand.entity)];
            let written = misses < MAX_MISSES_IN_A_ROW && {
                let mark = w.mark();
                let ticks = RecordTicks {
                    snapshot: tick,
                    acked: (cand.op == RecordOp::Update && b.acked > 0).then_some(b.acked),
                };
                let result = write_shared(shared, &mut w, cand, ticks, world, source);
                let fits = result.is_ok() && w.bits_written() <= limit_bits;
                if !fits {
                    w.rewind(mark);
                    if let Err(err) = result
                        && !matches!(err, ProtoError::WriteOverflow { .. })
                    {
                        st.stats.encode_errors += 1;
                    }
                }
                fits
            };
            if !written {
                misses += 1;
                b.priority = if weighed {
                    cand.priority
                } else {
                    cand.priority + weight(source, client, cand)
                };
                summary.deferred += 1;
                continue;
            }
            misses = 0;
            summary.records += 1;
            record_written(detection, st, cand, world, source);
        }
        let records_bits = w.bits_written() - records_start;
        write_end_of_records(&mut w)?;
        summary.bytes = w.finish();
        count_snapshot(st, &summary, records_bits);
        Ok(summary)
    }

    /// The snapshot written last for `client` went out in packet `sequence`.
    /// A snapshot never reported sent counts as lost when the next one is
    /// written.
    pub fn packet_sent(&mut self, client: PlayerId, sequence: u16) {
        if let Ok(st) = self.client_mut(client) {
            st.sent.mark_sent(sequence);
        }
    }

    /// The fate of packet `sequence` of `client`: an ack advances the acked
    /// tick of every entity it carried; a loss leaves them to be sent again
    /// (as their newest values). Unknown or repeated sequences are ignored.
    pub fn on_delivery(&mut self, client: PlayerId, sequence: u16, fate: PacketFate) {
        let detection = &self.detection;
        let Some(st) = self.clients.get_mut(usize::from(client.0)) else {
            return;
        };
        if let Some(p) = st.sent.take(sequence) {
            settle(detection, st, &p, fate);
        }
    }
}

/// A record of `cand` went into the snapshot: its wait is over, an Enter is
/// marked sent, change detection learns what the client will hold, and the
/// packet's ring remembers the record for its ack or loss.
#[inline]
fn record_written<D: ChangeDetection, S: ReplicationSource>(
    detection: &D,
    st: &mut ClientReplication<D::Memory>,
    cand: &Candidate,
    world: &ReplicationWorld<S::Archetype>,
    source: &S,
) {
    let b = &mut st.baselines[usize::from(cand.entity)];
    b.priority = 0.0;
    if cand.op != RecordOp::Leave {
        if cand.op == RecordOp::Enter {
            b.enter_sent = true;
        }
        let entity = EntityId(cand.entity);
        if let Some(archetype) = world.archetype(entity) {
            let view = EntityView {
                entity,
                archetype,
                acked_tick: b.acked,
                groups: cand.groups,
                world,
                source,
            };
            detection.written(&mut st.memory, &view, cand.groups);
        }
    }
    st.sent.push(SentEntry {
        entity: cand.entity,
        op: cand.op,
        groups: cand.groups.0,
    });
}

/// Packets built but never sent, and records the ring has no room for,
/// count as lost.
fn retire_unsent<D: ChangeDetection>(
    detection: &D,
    st: &mut ClientReplication<D::Memory>,
    entities: usize,
) {
    if let Some(p) = st.sent.withdraw_unsent() {
        settle(detection, st, &p, PacketFate::Lost);
    }
    while let Some(p) = st.sent.evict_for(entities) {
        settle(detection, st, &p, PacketFate::Lost);
    }
}

/// Orders `candidates` for a snapshot with `room` bits for records; whether
/// they were weighed. The game's priorities are asked for only when the
/// candidates are ordered: when every one is expected to fit (the whole
/// crowd within the budget), only those that end up waiting are weighed.
fn weigh_and_order<S: ReplicationSource, M>(
    candidates: &mut [Candidate],
    st: &ClientReplication<M>,
    source: &S,
    client: PlayerId,
    room: usize,
) -> bool {
    let fit = room / st.record_bits.max(1) as usize * 5 / 4 + 2;
    let weighed = candidates.len() > fit || st.deferred_last;
    if weighed {
        candidates.iter_mut().for_each(|c| c.weigh(source, client));
    }
    order_candidates(candidates, fit, st.deferred_last);
    weighed
}

/// A written snapshot in the client's running figures: the mean record
/// size (for the next snapshot's estimate of what fits), whether records
/// waited, and the totals.
fn count_snapshot<M>(
    st: &mut ClientReplication<M>,
    summary: &SnapshotSummary,
    records_bits: usize,
) {
    if let Some(bits) = (records_bits as u32).checked_div(summary.records) {
        st.record_bits = (st.record_bits * 3 + bits) / 4;
    }
    st.deferred_last = summary.deferred > 0;
    st.stats.snapshots += 1;
    st.stats.bytes += summary.bytes as u64;
    st.stats.records += u64::from(summary.records);
    st.stats.deferred += u64::from(summary.deferred);
}

/// Applies the fate of a packet to the client's baselines.
fn settle<D: ChangeDetection>(
    detection: &D,
    st: &mut ClientReplication<D::Memory>,
    packet: &SentPacket,
    fate: PacketFate,
) {
    let ClientReplication {
        baselines,
        known,
        sent,
        resync_pending,
        memory,
        stats,
        ..
    } = st;
    match fate {
        PacketFate::Acked => {
            stats.packets_acked += 1;
            if packet.full_resync {
                *resync_pending = false;
            }
            let tick = packet.tick;
            for entry in sent.entries(packet) {
                let Some(b) = baselines.get_mut(usize::from(entry.entity)) else {
                    continue;
                };
                if tick < b.since {
                    continue; // about an earlier presence of the entity
                }
                match (entry.op, b.presence) {
                    (RecordOp::Enter, Presence::Entering | Presence::Present)
                    | (RecordOp::Update, Presence::Present) => {
                        b.presence = Presence::Present;
                        b.acked = b.acked.max(tick);
                    }
                    (RecordOp::Leave, Presence::Leaving) => {
                        *b = ABSENT;
                        known.remove(EntityId(entry.entity));
                    }
                    _ => {}
                }
            }
        }
        PacketFate::Lost => {
            stats.packets_lost += 1;
            for entry in sent.entries(packet) {
                if entry.op != RecordOp::Leave {
                    detection.lost(memory, EntityId(entry.entity), GroupMask(entry.groups));
                }
            }
        }
    }
}

/// Moves entities entering and leaving relevance between presences.
fn update_presence<D: ChangeDetection, A: Archetype>(
    detection: &D,
    st: &mut ClientReplication<D::Memory>,
    world: &ReplicationWorld<A>,
    relevance: &InterestSet,
    tick: Tick,
) {
    let ClientReplication {
        baselines,
        known,
        relevant,
        previous,
        memory,
        ..
    } = st;
    relevant.copy_from(relevance);
    relevant.intersect_with(world.alive());
    for e in relevant.entered(previous) {
        let b = &mut baselines[usize::from(e.0)];
        match b.presence {
            Presence::Absent => {
                *b = Baseline {
                    presence: Presence::Entering,
                    generation: world.generation(e),
                    since: tick,
                    ..ABSENT
                };
                known.insert(e);
                detection.forget(memory, e);
            }
            Presence::Leaving => {
                b.presence = Presence::Entering;
                b.generation = world.generation(e);
                b.since = tick;
                b.acked = 0;
                detection.forget(memory, e);
            }
            Presence::Entering | Presence::Present => {}
        }
    }
    for e in relevant.left(previous) {
        let b = &mut baselines[usize::from(e.0)];
        match b.presence {
            Presence::Entering if !b.enter_sent => {
                *b = ABSENT;
                known.remove(e);
            }
            Presence::Entering | Presence::Present => {
                b.presence = Presence::Leaving;
                b.since = tick;
            }
            Presence::Absent | Presence::Leaving => {}
        }
    }
    previous.copy_from(relevant);
}

/// Lists the records the client needs this tick, with their accumulated
/// priorities (this tick's weights are added when they are ordered).
fn collect_candidates<D: ChangeDetection, S: ReplicationSource>(
    detection: &D,
    st: &mut ClientReplication<D::Memory>,
    world: &ReplicationWorld<S::Archetype>,
    source: &S,
    viewer: PlayerId,
    tick: Tick,
    candidates: &mut Vec<Candidate>,
) {
    let ClientReplication {
        baselines,
        known,
        relevant,
        memory,
        ..
    } = st;
    candidates.clear();
    for e in known.iter() {
        let b = &mut baselines[usize::from(e.0)];
        // The common case of a crowd's quiet entities: held and unchanged
        // since the ack. A new incarnation in the slot never passes here:
        // spawning stamps every group.
        if D::SKIPS_UNCHANGED && b.presence == Presence::Present && !world.changed_after(e, b.acked)
        {
            continue;
        }
        let archetype = world.archetype(e);
        if relevant.contains(e) {
            // The slot holds a new incarnation: enter it afresh.
            let generation = world.generation(e);
            if b.generation != generation {
                b.generation = generation;
                if matches!(b.presence, Presence::Entering | Presence::Present) {
                    b.presence = Presence::Entering;
                    b.since = tick;
                    b.acked = 0;
                }
                detection.forget(memory, e);
            }
        }
        let (op, groups) = match (b.presence, archetype) {
            (Presence::Entering, Some(a)) => {
                (RecordOp::Enter, visible_groups(source, a, e, viewer))
            }
            (Presence::Present, Some(a)) => {
                let view = EntityView {
                    entity: e,
                    archetype: a,
                    acked_tick: b.acked,
                    groups: visible_groups(source, a, e, viewer),
                    world,
                    source,
                };
                let groups = detection.groups_to_send(memory, &view);
                if groups.is_empty() {
                    continue;
                }
                (RecordOp::Update, groups)
            }
            (Presence::Leaving, _) => (RecordOp::Leave, GroupMask::EMPTY),
            _ => continue,
        };
        candidates.push(Candidate::new(e.0, op, groups, b.priority));
    }
}

/// Writes one entity record: a copy of the same record written for another
/// client earlier in the tick, else encoded (and kept for the next).
fn write_shared<S: ReplicationSource>(
    shared: &mut SharedRecords,
    w: &mut BitWriter,
    cand: &Candidate,
    ticks: RecordTicks,
    world: &ReplicationWorld<S::Archetype>,
    source: &S,
) -> Result<(), ProtoError> {
    let entity = usize::from(cand.entity);
    let key = RecordKey {
        op: cand.op,
        groups: cand.groups.0,
        acked: ticks.acked.unwrap_or(0),
    };
    if let Some(copied) = shared.copy(entity, ticks.snapshot, key, w) {
        return copied;
    }
    let start = w.bits_written();
    write_record(w, cand, ticks, world, source)?;
    shared.keep(
        entity,
        ticks.snapshot,
        key,
        w.written(),
        start,
        w.bits_written(),
    );
    Ok(())
}

/// Writes one entity record: header, then the groups in ascending order.
fn write_record<S: ReplicationSource>(
    w: &mut BitWriter,
    cand: &Candidate,
    ticks: RecordTicks,
    world: &ReplicationWorld<S::Archetype>,
    source: &S,
) -> Result<(), ProtoError> {
    let e = EntityId(cand.entity);
    let archetype = match (cand.op, world.archetype(e)) {
        (RecordOp::Leave, _) => {
            return write_entity_record_header(w, &EntityRecordHeader::leave(e));
        }
        (_, Some(a)) => a,
        (_, None) => return Err(ProtoError::invalid("entity archetype")),
    };
    let header = if cand.op == RecordOp::Enter {
        EntityRecordHeader::enter(e, archetype.wire_id(), cand.groups.0)
    } else {
        EntityRecordHeader::update(e, cand.groups.0)
    };
    write_entity_record_header(w, &header)?;
    for group in cand.groups.iter() {
        source.write_group_since(e, archetype, group, ticks, w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Thing;
    use hightick_proto::BitReader;
    use hightick_proto::message::{EntityOp, read_entity_record_header};

    struct Values([u8; 8]);
    impl ReplicationSource for Values {
        type Archetype = Thing;
        fn write_group(
            &self,
            e: EntityId,
            _: Thing,
            group: u8,
            w: &mut BitWriter,
        ) -> Result<(), ProtoError> {
            w.write_u8(self.0[usize::from(e.0)].wrapping_add(group))
        }
    }

    const P: PlayerId = PlayerId(0);

    fn writer() -> PushWriter {
        let mut w = PushWriter::new(
            &WriterConfig {
                clients: 1,
                entities: 8,
                budget_bytes: 200,
                sent_packets: 8,
                sent_entries: 64,
            },
            ChangedTicks,
        );
        w.connect(P).unwrap();
        w
    }

    /// Writes a snapshot at `tick` and lists its records as (entity, op, groups).
    fn snapshot(
        w: &mut PushWriter,
        world: &mut ReplicationWorld<Thing>,
        values: &Values,
        relevant: &[u16],
        tick: Tick,
    ) -> (SnapshotKind, Vec<(u16, char, u8)>) {
        world.begin_tick(tick);
        let mut set = InterestSet::with_capacity(8);
        relevant.iter().for_each(|&e| {
            set.insert(EntityId(e));
        });
        let mut out = [0u8; 200];
        let s = w
            .write_snapshot(P, world, values, &set, 0, &mut out)
            .unwrap();
        let mut r = BitReader::new(&out[..s.bytes]);
        MessageKind::decode(&mut r).unwrap();
        let header = SnapshotHeader::decode(&mut r).unwrap();
        let mut records = Vec::new();
        while let Some(h) = read_entity_record_header(&mut r).unwrap() {
            let op = match h.op {
                EntityOp::Enter { .. } => 'E',
                EntityOp::Update => 'U',
                EntityOp::Leave => 'L',
            };
            for _ in 0..h.group_mask.count_ones() {
                r.read_u8().unwrap();
            }
            records.push((h.entity.0, op, h.group_mask));
        }
        (header.kind, records)
    }

    #[test]
    fn enter_is_resent_until_acked_then_only_changes_go() {
        let (mut w, values) = (writer(), Values([10; 8]));
        let mut world = ReplicationWorld::new(8, 0);
        let a = world.spawn(Thing).unwrap();
        let (kind, recs) = snapshot(&mut w, &mut world, &values, &[0], 1);
        assert_eq!(
            (kind, recs.clone()),
            (SnapshotKind::FullResync, vec![(0, 'E', 0b111)])
        );
        w.packet_sent(P, 1);
        // Not acked yet: the Enter goes again.
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 2);
        assert_eq!(recs, vec![(0, 'E', 0b111)]);
        w.packet_sent(P, 2);
        w.on_delivery(P, 1, PacketFate::Acked);
        assert!(!w.is_resyncing(P));
        let (kind, recs) = snapshot(&mut w, &mut world, &values, &[0], 3);
        assert_eq!((kind, recs), (SnapshotKind::Delta, vec![]));
        w.packet_sent(P, 3);
        world.begin_tick(4);
        world.mark_changed(a, 1);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 4);
        assert_eq!(recs, vec![(0, 'U', 0b10)]);
        w.packet_sent(P, 4);
        // Lost: the change goes again with the next snapshot, as it is now.
        w.on_delivery(P, 4, PacketFate::Lost);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 5);
        assert_eq!(recs, vec![(0, 'U', 0b10)]);
        w.packet_sent(P, 5);
        w.on_delivery(P, 5, PacketFate::Acked);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 6);
        assert!(recs.is_empty());
        assert_eq!(w.stats(P).unwrap().packets_lost, 1);
    }

    #[test]
    fn leaving_sends_leave_until_acked_and_an_unsent_enter_needs_none() {
        let (mut w, values) = (writer(), Values([1; 8]));
        let mut world = ReplicationWorld::new(8, 0);
        world.spawn(Thing).unwrap();
        world.spawn(Thing).unwrap();
        snapshot(&mut w, &mut world, &values, &[0], 1);
        w.packet_sent(P, 1);
        w.on_delivery(P, 1, PacketFate::Acked);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[], 2);
        assert_eq!(recs, vec![(0, 'L', 0)]);
        w.packet_sent(P, 2);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[], 3);
        assert_eq!(recs, vec![(0, 'L', 0)], "again until acked");
        w.packet_sent(P, 3);
        w.on_delivery(P, 3, PacketFate::Acked);
        assert!(!w.may_know(P, EntityId(0)));
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[], 4);
        assert!(recs.is_empty());
        // Entity 1 becomes relevant but the budget is zero: its Enter never
        // goes out, so leaving needs no Leave.
        w.set_budget_bytes(8);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[1], 5);
        assert!(recs.is_empty());
        assert!(w.may_know(P, EntityId(1)));
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[], 6);
        assert!(recs.is_empty());
        assert!(!w.may_know(P, EntityId(1)));
    }

    #[test]
    fn re_entering_before_the_leave_is_acked_sends_enter_and_stale_acks_are_ignored() {
        let (mut w, values) = (writer(), Values([1; 8]));
        let mut world = ReplicationWorld::new(8, 0);
        world.spawn(Thing).unwrap();
        snapshot(&mut w, &mut world, &values, &[0], 1);
        w.packet_sent(P, 1);
        w.on_delivery(P, 1, PacketFate::Acked);
        snapshot(&mut w, &mut world, &values, &[], 2); // Leave
        w.packet_sent(P, 2);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 3);
        assert_eq!(recs, vec![(0, 'E', 0b111)]);
        w.packet_sent(P, 3);
        // The Leave's ack arrives late: it is about an earlier presence.
        w.on_delivery(P, 2, PacketFate::Acked);
        assert!(w.may_know(P, EntityId(0)));
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 4);
        assert_eq!(recs, vec![(0, 'E', 0b111)], "still entering");
        w.packet_sent(P, 4);
        w.on_delivery(P, 3, PacketFate::Acked);
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 5);
        assert!(recs.is_empty());
    }

    #[test]
    fn a_new_incarnation_in_the_same_slot_enters_afresh() {
        let (mut w, values) = (writer(), Values([1; 8]));
        let mut world = ReplicationWorld::new(8, 0);
        let a = world.spawn(Thing).unwrap();
        for _ in 1..8 {
            world.spawn(Thing).unwrap();
        }
        snapshot(&mut w, &mut world, &values, &[0], 1);
        w.packet_sent(P, 1);
        w.on_delivery(P, 1, PacketFate::Acked);
        world.begin_tick(2);
        world.despawn(a);
        assert_eq!(world.spawn(Thing).unwrap(), a, "the only free slot");
        let (_, recs) = snapshot(&mut w, &mut world, &values, &[0], 2);
        assert_eq!(recs, vec![(0, 'E', 0b111)]);
    }

    #[test]
    fn budget_shortage_defers_and_accumulates_priority() {
        let (mut w, values) = (writer(), Values([1; 8]));
        let mut world = ReplicationWorld::new(8, 0);
        for _ in 0..8 {
            world.spawn(Thing).unwrap();
        }
        // Header (8 + 1 + 32 + 5 bits) plus ~3.5 bytes per Enter record.
        w.set_budget_bytes(14);
        let all: Vec<u16> = (0..8).collect();
        let mut seen = std::collections::BTreeSet::new();
        for tick in 1..=8 {
            let (_, recs) = snapshot(&mut w, &mut world, &values, &all, tick);
            assert!(!recs.is_empty() && recs.len() < 8);
            seen.extend(recs.iter().map(|r| r.0));
        }
        assert_eq!(seen.len(), 8, "every entity had its turn");
        assert!(w.stats(P).unwrap().deferred > 0);
    }

    /// An archetype whose group 1 only its owner is sent.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Private;
    impl crate::world::Archetype for Private {
        fn wire_id(self) -> u8 {
            2
        }
        fn from_wire_id(id: u8) -> Option<Self> {
            (id == 2).then_some(Private)
        }
        fn groups(self) -> GroupMask {
            GroupMask::first(2)
        }
        fn owner_groups(self) -> GroupMask {
            GroupMask::only(1)
        }
    }

    /// Entity `e` belongs to player `e`.
    struct Owned;
    impl ReplicationSource for Owned {
        type Archetype = Private;
        fn write_group(
            &self,
            e: EntityId,
            _: Private,
            g: u8,
            w: &mut BitWriter,
        ) -> Result<(), ProtoError> {
            w.write_u8(e.0 as u8 * 10 + g)
        }
        fn owner(&self, entity: EntityId) -> Option<PlayerId> {
            Some(PlayerId(entity.0))
        }
    }

    #[test]
    fn owner_groups_reach_the_owner_only() {
        let mut w = PushWriter::new(
            &WriterConfig {
                clients: 2,
                entities: 4,
                budget_bytes: 200,
                sent_packets: 8,
                sent_entries: 64,
            },
            ChangedTicks,
        );
        let mut world = ReplicationWorld::new(4, 0);
        let mine = world.spawn(Private).unwrap();
        let theirs = world.spawn(Private).unwrap();
        let mut set = InterestSet::with_capacity(4);
        set.insert(mine);
        set.insert(theirs);
        // (viewer, entity) -> group mask of its records, over an Enter and
        // then an Update of both groups.
        let mut masks = std::collections::BTreeMap::new();
        for tick in 1..=2 {
            world.begin_tick(tick);
            if tick == 2 {
                for e in [mine, theirs] {
                    world.mark_changed(e, 0);
                    world.mark_changed(e, 1);
                }
            }
            for viewer in [PlayerId(0), PlayerId(1)] {
                if tick == 1 {
                    w.connect(viewer).unwrap();
                }
                let mut out = [0u8; 200];
                let s = w
                    .write_snapshot(viewer, &world, &Owned, &set, 0, &mut out)
                    .unwrap();
                w.packet_sent(viewer, tick as u16);
                w.on_delivery(viewer, tick as u16, PacketFate::Acked);
                let mut r = BitReader::new(&out[..s.bytes]);
                MessageKind::decode(&mut r).unwrap();
                SnapshotHeader::decode(&mut r).unwrap();
                while let Some(h) = read_entity_record_header(&mut r).unwrap() {
                    let mut values = Vec::new();
                    for _ in 0..h.group_mask.count_ones() {
                        values.push(r.read_u8().unwrap());
                    }
                    masks.insert((tick, viewer.0, h.entity.0), (h.group_mask, values));
                }
            }
        }
        for tick in 1..=2 {
            // Player 0 owns entity 0: both groups; of entity 1 only group 0.
            assert_eq!(masks[&(tick, 0, 0)], (0b11, vec![0, 1]), "tick {tick}");
            assert_eq!(masks[&(tick, 0, 1)], (0b01, vec![10]), "tick {tick}");
            assert_eq!(masks[&(tick, 1, 0)], (0b01, vec![0]), "tick {tick}");
            assert_eq!(masks[&(tick, 1, 1)], (0b11, vec![10, 11]), "tick {tick}");
        }
    }
}
