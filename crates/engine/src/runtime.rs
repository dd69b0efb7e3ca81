//! [`Match`]: the tick runtime of one match.

use hightick_proto::message::ResyncRequest;
use hightick_proto::{BitReader, EntityId, InputBatch, InputCommand, MessageKind, ProtoError};
use hightick_telemetry::{Frame, Subsystem};

use crate::config::MatchConfig;
use crate::error::EngineError;
use crate::events::EventQueue;
use crate::game::{FrameScopes, Game, TickContext, connected_players, slot_connected};
use crate::input::{InputArrival, InputBuffer, InputStats};
use crate::interest::InterestSet;
use crate::player::PlayerId;
use crate::replication::{
    ChangeDetection, ChangedTicks, PacketFate, ReplicationStats, ReplicationWriter,
};
use crate::tick::Tick;
use crate::world::ReplicationWorld;

/// Bytes at the start of each snapshot payload asked for before a tick: a
/// 5v5 snapshot is about 60 bytes.
const PAYLOAD_PREFETCH_BYTES: usize = 128;

/// What the inputs of one batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputReceipt {
    /// Stored for their ticks.
    pub accepted: u32,
    /// Redundant copies of inputs already held.
    pub duplicates: u32,
    /// For ticks already simulated.
    pub late: u32,
    /// Too far ahead.
    pub too_early: u32,
}

impl InputReceipt {
    fn count(&mut self, arrival: InputArrival) {
        match arrival {
            InputArrival::Accepted => self.accepted += 1,
            InputArrival::Duplicate => self.duplicates += 1,
            InputArrival::Late => self.late += 1,
            InputArrival::TooEarly => self.too_early += 1,
        }
    }
}

/// What a client message was, once handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientMessage {
    /// An input batch, stored.
    Inputs(InputReceipt),
    /// A resync request: the next snapshots are full.
    Resync(ResyncRequest),
}

/// What one tick produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TickReport {
    /// The tick simulated.
    pub tick: Tick,
    /// Snapshots built (one per connected client).
    pub snapshots: u32,
    /// Their bytes in all.
    pub snapshot_bytes: usize,
    /// Entity records in them.
    pub records: u32,
    /// Records that wait for a later tick (budget).
    pub deferred: u32,
    /// Snapshots that could not be built (see [`MatchStats::snapshot_errors`]).
    pub snapshot_errors: u32,
}

/// Counters of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchStats {
    /// Ticks simulated.
    pub ticks: u64,
    /// Client messages that failed to decode or were of a kind a server does
    /// not take.
    pub malformed_messages: u64,
    /// Snapshots that could not be built.
    pub snapshot_errors: u64,
}

/// The least snapshot budget [`Match::set_snapshot_budget`] sets: a
/// header and a record or two.
pub const MIN_SNAPSHOT_BUDGET_BYTES: u16 = 32;

/// One match: a [`Game`], its replicated world, and per player the input
/// buffer, relevance set, event queue and snapshot payload. Everything is
/// allocated by [`Match::new`]; a steady-state [`tick`](Self::tick) allocates
/// nothing.
///
/// The runtime never reads a clock: the host calls `tick` when the deadline
/// comes (see [`FixedStep`](crate::tick::FixedStep)), then for each player
/// sends [`snapshot`](Self::snapshot) unreliably and the queued
/// [events](Self::pop_event) reliably in one packet, reports the packet with
/// [`packet_sent`](Self::packet_sent), and later its fate with
/// [`on_delivery`](Self::on_delivery).
#[derive(Debug)]
pub struct Match<G: Game, D: ChangeDetection = ChangedTicks> {
    config: MatchConfig,
    game: G,
    world: ReplicationWorld<G::Archetype>,
    writer: ReplicationWriter<D>,
    connected: Box<[bool]>,
    inputs: Box<[InputBuffer<InputCommand<G::Input>>]>,
    events: Box<[EventQueue<G::Event>]>,
    relevance: Box<[InterestSet]>,
    payloads: Box<[u8]>,
    payload_lens: Box<[usize]>,
    /// Each player's snapshot byte budget (at most the config's; the host
    /// lowers it for a client on a bad link).
    player_budgets: Box<[u16]>,
    tick: Tick,
    stats: MatchStats,
    /// The game's [`wire_hash`](crate::schema::wire_hash).
    schema_hash: u64,
    /// Each player's connection still has to be told the schema hash (its
    /// first reliable message).
    hash_pending: Box<[bool]>,
    /// The avatar each player's connection was last told of (a new
    /// connection knows of none).
    avatar_told: Box<[Option<EntityId>]>,
}

impl<G: Game> Match<G> {
    /// A match of `game` sized by `config`, with push replication.
    pub fn new(config: MatchConfig, game: G) -> Result<Self, EngineError> {
        Self::with_detection(config, game, ChangedTicks)
    }
}

impl<G: Game, D: ChangeDetection> Match<G, D> {
    /// A match whose writer finds changes with `detection` (the benchmarks
    /// use [`ValueComparison`](crate::replication::ValueComparison) to compare
    /// against polling).
    pub fn with_detection(config: MatchConfig, game: G, detection: D) -> Result<Self, EngineError> {
        config.validate()?;
        let players = usize::from(config.max_players);
        let entities = usize::from(config.max_entities);
        let budget = usize::from(config.snapshot_budget_bytes);
        Ok(Self {
            world: ReplicationWorld::new(entities, config.entity_reuse_delay_ticks),
            writer: ReplicationWriter::new(&config.writer(), detection),
            connected: vec![false; players].into_boxed_slice(),
            inputs: (0..players)
                .map(|_| InputBuffer::new(usize::from(config.input_window_ticks)))
                .collect(),
            events: (0..players)
                .map(|_| EventQueue::new(config.event_queue_capacity()))
                .collect(),
            relevance: (0..players)
                .map(|_| InterestSet::with_capacity(entities))
                .collect(),
            payloads: vec![0; players * budget].into_boxed_slice(),
            payload_lens: vec![0; players].into_boxed_slice(),
            player_budgets: vec![config.snapshot_budget_bytes; players].into_boxed_slice(),
            tick: 0,
            stats: MatchStats::default(),
            schema_hash: crate::schema::wire_hash::<G>(),
            hash_pending: vec![false; players].into_boxed_slice(),
            avatar_told: vec![None; players].into_boxed_slice(),
            config,
            game,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &MatchConfig {
        &self.config
    }

    /// The game.
    pub fn game(&self) -> &G {
        &self.game
    }

    /// The game, mutably (set-up between ticks; replicated changes belong in
    /// [`Game::tick`] so they are stamped).
    pub fn game_mut(&mut self) -> &mut G {
        &mut self.game
    }

    /// The replicated world.
    pub fn world(&self) -> &ReplicationWorld<G::Archetype> {
        &self.world
    }

    /// The replication writer (read-only: stats, what a client may know).
    pub fn writer(&self) -> &ReplicationWriter<D> {
        &self.writer
    }

    /// The last tick simulated (0 before the first).
    pub fn tick_number(&self) -> Tick {
        self.tick
    }

    /// The counters.
    pub fn stats(&self) -> MatchStats {
        self.stats
    }

    /// The hash of the game's wire schema, the first reliable message on
    /// each connection ([`crate::schema::wire_hash`]).
    pub fn schema_hash(&self) -> u64 {
        self.schema_hash
    }

    /// Whether `player`'s connection is still to be sent the schema hash.
    pub(crate) fn hash_pending(&self, player: PlayerId) -> bool {
        self.hash_pending
            .get(usize::from(player.0))
            .copied()
            .unwrap_or(false)
    }

    /// `player`'s connection was sent the schema hash.
    pub(crate) fn hash_sent(&mut self, player: PlayerId) {
        if let Some(pending) = self.hash_pending.get_mut(usize::from(player.0)) {
            *pending = false;
        }
    }

    /// `player`'s avatar when its connection has not been told of it yet
    /// ([`ReplicationWorld::avatar`]; `Some(None)`: it has none now).
    pub(crate) fn avatar_untold(&self, player: PlayerId) -> Option<Option<EntityId>> {
        let told = *self.avatar_told.get(usize::from(player.0))?;
        let now = self.world.avatar(player);
        (now != told).then_some(now)
    }

    /// `player`'s connection was told its avatar is `avatar`.
    pub(crate) fn avatar_sent(&mut self, player: PlayerId, avatar: Option<EntityId>) {
        if let Some(told) = self.avatar_told.get_mut(usize::from(player.0)) {
            *told = avatar;
        }
    }

    /// The game's result, once the match is over.
    pub fn result(&self) -> Option<G::MatchResult> {
        self.game.result()
    }

    /// Whether a player is connected in this slot.
    pub fn is_connected(&self, player: PlayerId) -> bool {
        slot_connected(&self.connected, player)
    }

    /// The connected players, in slot order.
    pub fn players(&self) -> impl Iterator<Item = PlayerId> + '_ {
        connected_players(&self.connected)
    }

    fn slot(&self, player: PlayerId) -> Result<usize, EngineError> {
        let i = usize::from(player.0);
        if slot_connected(&self.connected, player) {
            Ok(i)
        } else {
            Err(EngineError::UnknownPlayer(player.0))
        }
    }

    fn context<'a>(
        tick: Tick,
        config: &MatchConfig,
        world: &'a mut ReplicationWorld<G::Archetype>,
        events: &'a mut [EventQueue<G::Event>],
        connected: &'a [bool],
        frame: Option<&'a dyn FrameScopes>,
    ) -> TickContext<'a, G> {
        TickContext::new(tick, config.tick_rate_hz, world, events, connected, frame)
    }

    /// Runs game code outside a tick (join, leave). Changes made between
    /// ticks belong to the next tick: stamped with it, they go into its
    /// snapshots.
    fn between_ticks<R>(&mut self, f: impl FnOnce(&mut G, &mut TickContext<'_, G>) -> R) -> R {
        let next = self.tick + 1;
        self.world.begin_tick(next);
        self.in_tick(next, None, f)
    }

    /// A player joins: the lowest free slot, the game's [`Game::join`], and a
    /// full resync for its first snapshots.
    pub fn join(&mut self) -> Result<PlayerId, EngineError> {
        let i = self
            .connected
            .iter()
            .position(|c| !c)
            .ok_or(EngineError::MatchFull {
                capacity: self.connected.len(),
            })?;
        let player = PlayerId(i as u16);
        // The slot counts as connected while the game sets it up, so it can
        // already send the newcomer events.
        self.connected[i] = true;
        self.events[i].clear();
        self.avatar_told[i] = None;
        if let Err(refused) = self.between_ticks(|game, ctx| game.join(ctx, player)) {
            self.connected[i] = false;
            return Err(EngineError::JoinRefused(refused.0));
        }
        self.inputs[i].reset(self.tick + 1);
        self.writer.connect(player)?;
        self.payload_lens[i] = 0;
        Ok(player)
    }

    /// A player leaves: the game's [`Game::leave`], then the slot is free.
    pub fn leave(&mut self, player: PlayerId) -> Result<(), EngineError> {
        let i = self.slot(player)?;
        self.between_ticks(|game, ctx| game.leave(ctx, player));
        self.connected[i] = false;
        self.events[i].clear();
        self.writer.disconnect(player);
        self.payload_lens[i] = 0;
        Ok(())
    }

    /// The player's client reconnected (a new connection for the same slot):
    /// its acknowledged state is forgotten and it gets a full resync.
    pub fn reconnect(&mut self, player: PlayerId) -> Result<(), EngineError> {
        let i = self.slot(player)?;
        self.hash_pending[i] = true;
        self.avatar_told[i] = None;
        self.inputs[i].reset(self.tick + 1);
        // Events queued for the old connection are lost with it; the game
        // tells the new one what it needs to know again.
        self.events[i].clear();
        self.between_ticks(|game, ctx| game.reconnect(ctx, player));
        // Introductions that did not fit are counted; they cannot be
        // answered by another reconnect (it would overflow the same way).
        self.events[i].take_overflow();
        self.writer.resync(player)
    }

    /// The player's connection is gone (its client may come back:
    /// [`Self::reconnect`]): events for it are no longer queued.
    pub fn link_lost(&mut self, player: PlayerId) -> Result<(), EngineError> {
        let i = self.slot(player)?;
        self.events[i].pause();
        Ok(())
    }

    /// The player's seat is released after the host's seat timeout: the
    /// game's [`Game::seat_released`] decides what becomes of it.
    pub fn release_seat(&mut self, player: PlayerId) -> Result<(), EngineError> {
        self.slot(player)?;
        self.between_ticks(|game, ctx| game.seat_released(ctx, player));
        Ok(())
    }

    /// The player's client asked for a full resync.
    pub fn resync(&mut self, player: PlayerId) -> Result<(), EngineError> {
        self.slot(player)?;
        self.writer.resync(player)
    }

    /// Offers one input command.
    pub fn receive_command(
        &mut self,
        player: PlayerId,
        command: &InputCommand<G::Input>,
    ) -> Result<InputArrival, EngineError> {
        let i = self.slot(player)?;
        Ok(self.inputs[i].insert(command.tick, command))
    }

    /// Offers every command of a batch (redundant copies are deduplicated).
    pub fn receive_inputs(
        &mut self,
        player: PlayerId,
        batch: &InputBatch<G::Input>,
    ) -> Result<InputReceipt, EngineError> {
        let i = self.slot(player)?;
        let mut receipt = InputReceipt::default();
        for command in batch.as_slice() {
            receipt.count(self.inputs[i].insert(command.tick, command));
        }
        Ok(receipt)
    }

    /// Handles one message from a client (an input batch or a resync
    /// request). Malformed messages are errors and counted, never panics.
    pub fn handle_message(
        &mut self,
        player: PlayerId,
        bytes: &[u8],
    ) -> Result<ClientMessage, EngineError> {
        self.slot(player)?;
        let decoded = Self::decode_message(bytes);
        match decoded {
            Ok(Decoded::Inputs(batch)) => self
                .receive_inputs(player, &batch)
                .map(ClientMessage::Inputs),
            Ok(Decoded::Resync(request)) => {
                self.resync(player)?;
                Ok(ClientMessage::Resync(request))
            }
            Err(e) => {
                self.stats.malformed_messages += 1;
                Err(e.into())
            }
        }
    }

    fn decode_message(bytes: &[u8]) -> Result<Decoded<G::Input>, ProtoError> {
        let mut r = BitReader::new(bytes);
        match MessageKind::decode(&mut r)? {
            MessageKind::InputBatch => Ok(Decoded::Inputs(InputBatch::decode(&mut r)?)),
            MessageKind::ResyncRequest => Ok(Decoded::Resync(ResyncRequest::decode(&mut r)?)),
            MessageKind::Snapshot
            | MessageKind::Event
            | MessageKind::SchemaHash
            | MessageKind::Avatar => Err(ProtoError::invalid("message kind for a server")),
        }
    }

    /// Reliable events dropped because a player's queue was full, all
    /// players since the match began.
    pub fn events_dropped(&self) -> u64 {
        self.events.iter().map(EventQueue::dropped).sum()
    }

    /// Times a player's event queue filled up (each answered with a full
    /// resync and the game's reconnect hook), all players since the match
    /// began.
    pub fn event_overflows(&self) -> u64 {
        self.events.iter().map(EventQueue::overflows).sum()
    }

    /// The counters of a player's input stream.
    pub fn input_stats(&self, player: PlayerId) -> Option<InputStats> {
        let i = self.slot(player).ok()?;
        Some(self.inputs[i].stats())
    }

    /// The counters of a player's replication.
    pub fn replication_stats(&self, player: PlayerId) -> Option<ReplicationStats> {
        self.writer.stats(player)
    }

    /// How many entity records were copied from one encoded for another
    /// client in the same tick, and how many were encoded.
    pub fn shared_record_stats(&self) -> crate::replication::SharedRecordStats {
        self.writer.shared_record_stats()
    }

    /// Sets `player`'s snapshot byte budget from the next tick on, clamped
    /// to [`MIN_SNAPSHOT_BUDGET_BYTES`] and the config's
    /// `snapshot_budget_bytes` (the host lowers it while the player's link
    /// is bad; what does not fit waits in the priority accumulator). Returns
    /// the budget set.
    pub fn set_snapshot_budget(
        &mut self,
        player: PlayerId,
        bytes: u16,
    ) -> Result<u16, EngineError> {
        let i = self.slot(player)?;
        let most = self.config.snapshot_budget_bytes;
        let set = bytes.clamp(MIN_SNAPSHOT_BUDGET_BYTES.min(most), most);
        self.player_budgets[i] = set;
        Ok(set)
    }

    /// `player`'s snapshot byte budget (the config's unless lowered).
    pub fn snapshot_budget(&self, player: PlayerId) -> Option<u16> {
        let i = self.slot(player).ok()?;
        Some(self.player_budgets[i])
    }

    /// Runs one tick: inputs, the game's tick, then a snapshot per client.
    pub fn tick(&mut self) -> TickReport {
        self.run_tick(None)
    }

    /// [`tick`](Self::tick), with the engine's and the game's scopes
    /// recorded in `frame`.
    pub fn tick_in(&mut self, frame: &Frame<'_>) -> TickReport {
        self.run_tick(Some(frame))
    }

    /// Runs game code inside tick `tick` (already begun in the world).
    fn in_tick<R>(
        &mut self,
        tick: Tick,
        frame: Option<&dyn FrameScopes>,
        f: impl FnOnce(&mut G, &mut TickContext<'_, G>) -> R,
    ) -> R {
        let mut ctx = Self::context(
            tick,
            &self.config,
            &mut self.world,
            &mut self.events,
            &self.connected,
            frame,
        );
        f(&mut self.game, &mut ctx)
    }

    fn run_tick(&mut self, frame: Option<&dyn FrameScopes>) -> TickReport {
        self.tick += 1;
        let tick = self.tick;
        self.stats.ticks += 1;
        self.world.begin_tick(tick);
        self.prefetch_clients(tick);
        {
            let mut ctx = Self::context(
                tick,
                &self.config,
                &mut self.world,
                &mut self.events,
                &self.connected,
                frame,
            );
            for (i, inputs) in self.inputs.iter_mut().enumerate() {
                if ctx.is_connected(PlayerId(i as u16)) {
                    let (command, source) = inputs.take(tick);
                    let command = *command;
                    self.game
                        .input(&mut ctx, PlayerId(i as u16), &command, source);
                }
            }
            self.game.tick(&mut ctx);
        }
        self.resync_overflowed(tick, frame);
        let mut report = TickReport {
            tick,
            ..TickReport::default()
        };
        let budget = usize::from(self.config.snapshot_budget_bytes);
        for i in 0..self.connected.len() {
            self.payload_lens[i] = 0;
            if !self.connected[i] {
                continue;
            }
            let player = PlayerId(i as u16);
            let relevant = &mut self.relevance[i];
            {
                let _fow = frame.map(|f| f.open(Subsystem::Fow, "relevance"));
                relevant.clear();
                self.game.relevance(player, &self.world, relevant);
            }
            let _replication = frame.map(|f| f.open(Subsystem::Replication, "snapshot"));
            let own = usize::from(self.player_budgets[i]).min(budget);
            let out = &mut self.payloads[i * budget..i * budget + own];
            match self.writer.write_snapshot(
                player,
                &self.world,
                &self.game,
                relevant,
                self.inputs[i].newest_received(),
                out,
            ) {
                Ok(summary) => {
                    self.payload_lens[i] = summary.bytes;
                    report.snapshots += 1;
                    report.snapshot_bytes += summary.bytes;
                    report.records += summary.records;
                    report.deferred += summary.deferred;
                }
                Err(_) => {
                    report.snapshot_errors += 1;
                    self.stats.snapshot_errors += 1;
                }
            }
        }
        report
    }

    /// Asks the cache for every connected client's state this tick reads
    /// (input slot, relevance set, replication state, payload start) before
    /// the game runs: after a sleep it is all cold, and the misses overlap
    /// with each other and the game's work instead of queueing one client
    /// after another (see [`hightick_net::prefetch`]).
    fn prefetch_clients(&self, tick: Tick) {
        let budget = usize::from(self.config.snapshot_budget_bytes);
        for i in 0..self.connected.len() {
            if !self.connected[i] {
                continue;
            }
            self.inputs[i].prefetch(tick);
            self.relevance[i].prefetch();
            self.writer.prefetch(PlayerId(i as u16));
            let start = i * budget;
            if let Some(head) = self
                .payloads
                .get(start..start + budget.min(PAYLOAD_PREFETCH_BYTES))
            {
                hightick_net::prefetch::prefetch(head);
            }
        }
    }

    /// Players whose event queue overflowed this tick lost events: they get
    /// a full resync from this tick's snapshot on, and the game's reconnect
    /// hook tells them again what a newcomer learns.
    fn resync_overflowed(&mut self, tick: Tick, frame: Option<&dyn FrameScopes>) {
        for i in 0..self.events.len() {
            if !self.connected[i] || !self.events[i].take_overflow() {
                continue;
            }
            let player = PlayerId(i as u16);
            self.events[i].clear();
            self.in_tick(tick, frame, |game, ctx| game.reconnect(ctx, player));
            self.events[i].take_overflow();
            let _ = self.writer.resync(player);
        }
    }

    /// This tick's snapshot payload for `player` (empty when none was built).
    pub fn snapshot(&self, player: PlayerId) -> &[u8] {
        let i = usize::from(player.0);
        let budget = usize::from(self.config.snapshot_budget_bytes);
        match self.payload_lens.get(i) {
            Some(&len) => &self.payloads[i * budget..i * budget + len],
            None => &[],
        }
    }

    /// This tick's snapshot of `player` went out in packet `sequence`.
    pub fn packet_sent(&mut self, player: PlayerId, sequence: u16) {
        self.writer.packet_sent(player, sequence);
    }

    /// The fate of packet `sequence` of `player`.
    pub fn on_delivery(&mut self, player: PlayerId, sequence: u16, fate: PacketFate) {
        self.writer.on_delivery(player, sequence, fate);
    }

    /// The next reliable event queued for `player`.
    pub fn pop_event(&mut self, player: PlayerId) -> Option<G::Event> {
        self.events.get_mut(usize::from(player.0))?.pop()
    }

    /// The oldest reliable event queued for `player`, left queued (pop it once
    /// the reliable channel took it).
    pub fn peek_event(&self, player: PlayerId) -> Option<&G::Event> {
        self.events.get(usize::from(player.0))?.front()
    }
}

enum Decoded<P> {
    Inputs(InputBatch<P>),
    Resync(ResyncRequest),
}
