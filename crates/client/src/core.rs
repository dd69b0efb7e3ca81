//! [`GameClient`]: the sans-IO game client over `hightick-net`'s [`Client`].

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use hightick_engine::events::ReliableEvent;
use hightick_engine::replication::ClientWorld;
use hightick_engine::schema::wire_hash;
use hightick_engine::tick::Tick;
use hightick_engine::{EntityId, Game};
use hightick_net::{Channel, Client, ClientConfig, ClientState, ConnectToken, Transmit};
use hightick_proto::message::{MAX_REDUNDANCY, ResyncReason, ResyncRequest, SnapshotKind};
use hightick_proto::{
    Avatar, BitReader, BitWriter, InputBatch, InputCommand, MessageKind, SchemaHash,
};

use crate::error::{ClientError, Refusal};
use crate::interpolation::Interpolation;
use crate::stats::ClientStats;

/// Largest message the client reads (the packet layer's fragment limit).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Longest input batch or resync request on the wire (a game's input
/// payload is meant to be a few bytes; four of them must fit).
const MAX_UPLINK_BYTES: usize = 1024;

/// Reads a replica's feet position, for the interpolation buffer.
pub type PositionOf<R> = fn(&R) -> Option<[f32; 3]>;

/// Settings of a [`GameClient`].
#[derive(Debug, Clone)]
pub struct GameClientConfig {
    /// Entity slots of the client's world (the match's `max_entities`).
    pub entities: usize,
    /// The server's tick rate, for the server tick estimate.
    pub tick_rate_hz: u32,
    /// Decoded events held until polled; older ones are dropped past it.
    pub event_capacity: usize,
    /// The connection layer (`PacketConfig::default()` on both ends, except
    /// that acks wait up to two ticks to ride on the next input packet).
    pub net: ClientConfig,
}

impl Default for GameClientConfig {
    fn default() -> Self {
        let tick_rate_hz = 128;
        let mut net = ClientConfig::default();
        net.packet.ack_delay = Duration::from_secs(2) / tick_rate_hz;
        Self {
            entities: 256,
            tick_rate_hz,
            event_capacity: 256,
            net,
        }
    }
}

/// The game client of game `G`: it sends `G::Input`, reads `G::Replica`
/// snapshots and `G::Event`s. See the [crate docs](crate).
#[derive(Debug)]
pub struct GameClient<G: Game> {
    net: Client,
    tick_rate_hz: u32,
    world: ClientWorld<G::Replica>,
    interpolation: Interpolation,
    position_of: Option<PositionOf<G::Replica>>,
    /// The last inputs, newest first.
    inputs: [InputCommand<G::Input>; MAX_REDUNDANCY],
    input_len: usize,
    events: VecDeque<G::Event>,
    event_capacity: usize,
    message: Box<[u8]>,
    stats: ClientStats,
    interarrival: Histogram<u64>,
    last_snapshot_at: Option<Instant>,
    /// Newest snapshot tick applied and when it arrived.
    newest: Option<(Tick, Instant)>,
    /// Server tick of the last snapshot whose positions were recorded.
    recorded_tick: Option<Tick>,
    /// A resync was requested and no full state has come yet.
    resync_pending: bool,
    /// Why it turned its server away, if it did.
    refusal: Option<Refusal>,
}

impl<G: Game> GameClient<G> {
    /// A client that will connect with `token`.
    pub fn new(token: ConnectToken, now: Instant) -> Result<Self, ClientError> {
        Self::with_config(token, GameClientConfig::default(), now)
    }

    /// A client with explicit settings.
    pub fn with_config(
        token: ConnectToken,
        config: GameClientConfig,
        now: Instant,
    ) -> Result<Self, ClientError> {
        let net = Client::new(token, config.net, now)?;
        Ok(Self {
            net,
            tick_rate_hz: config.tick_rate_hz.max(1),
            world: ClientWorld::new(config.entities),
            interpolation: Interpolation::new(config.entities),
            position_of: None,
            inputs: [InputCommand::default(); MAX_REDUNDANCY],
            input_len: 0,
            events: VecDeque::with_capacity(config.event_capacity.max(1)),
            event_capacity: config.event_capacity.max(1),
            message: vec![0; MAX_MESSAGE_BYTES].into_boxed_slice(),
            stats: ClientStats::default(),
            // 1 us .. 60 s, 2 significant figures: a few KiB, allocated once.
            interarrival: Histogram::new_with_bounds(1, 60_000_000, 2)
                .expect("constant histogram bounds are valid"),
            last_snapshot_at: None,
            newest: None,
            recorded_tick: None,
            resync_pending: false,
            refusal: None,
        })
    }

    /// Feeds the interpolation buffer with the position `position_of` reads
    /// from each replica, at every applied snapshot.
    pub fn track_positions(&mut self, position_of: PositionOf<G::Replica>) {
        self.position_of = Some(position_of);
    }

    /// The connection's state.
    pub fn state(&self) -> ClientState {
        self.net.state()
    }

    /// Whether the handshake completed and the connection is up.
    pub fn is_connected(&self) -> bool {
        self.net.is_connected()
    }

    /// The connection layer (RTT, loss, drop counters).
    pub fn net(&self) -> &Client {
        &self.net
    }

    /// The replicated world as the client holds it.
    pub fn world(&self) -> &ClientWorld<G::Replica> {
        &self.world
    }

    /// The counters.
    pub fn stats(&self) -> ClientStats {
        self.stats
    }

    /// Snapshot inter-arrival times, microseconds.
    pub fn snapshot_interarrival(&self) -> &Histogram<u64> {
        &self.interarrival
    }

    /// The server tick now, estimated from the newest snapshot and the time
    /// since it arrived (`None` before the first snapshot).
    pub fn server_tick_estimate(&self, now: Instant) -> Option<f32> {
        let (tick, at) = self.newest?;
        let elapsed = now.saturating_duration_since(at).as_secs_f32();
        Some(tick as f32 + elapsed * self.tick_rate_hz as f32)
    }

    /// The newest snapshot applied: its server tick and when it arrived.
    pub fn newest_snapshot(&self) -> Option<(Tick, Instant)> {
        self.newest
    }

    /// The interpolation buffer: the positions of the last few snapshots of
    /// each entity, when a tracker is set ([`Self::track_positions`]).
    pub fn interpolation(&self) -> &Interpolation {
        &self.interpolation
    }

    /// `entity`'s position at `render_tick` (a fractional server tick) from
    /// the interpolation buffer; `None` if the entity is not held or no
    /// position tracker is set ([`Self::track_positions`]).
    pub fn interpolated(&self, entity: EntityId, render_tick: f32) -> Option<[f32; 3]> {
        if !self.world.contains(entity) {
            return None;
        }
        self.interpolation.at(entity, render_tick)
    }

    /// The next decoded event, oldest first.
    pub fn poll_event(&mut self) -> Option<G::Event> {
        self.events.pop_front()
    }

    /// Sends `command` with the three before it (4-deep redundancy) on the
    /// unreliable channel. The command is kept for redundancy even when the
    /// connection is not up yet ([`ClientError::NotConnected`]).
    pub fn send_input(&mut self, command: InputCommand<G::Input>) -> Result<(), ClientError> {
        self.inputs.copy_within(0..MAX_REDUNDANCY - 1, 1);
        self.inputs[0] = command;
        self.input_len = (self.input_len + 1).min(MAX_REDUNDANCY);
        if !self.net.is_connected() {
            return Err(self
                .refusal
                .map_or(ClientError::NotConnected, ClientError::Refused));
        }
        let batch = InputBatch::from_commands(&self.inputs[..self.input_len])?;
        let mut buf = [0u8; MAX_UPLINK_BYTES];
        let mut w = BitWriter::new(&mut buf);
        MessageKind::InputBatch.encode(&mut w)?;
        batch.encode(&mut w)?;
        let len = w.finish();
        self.net.send_unreliable(&buf[..len])?;
        self.stats.inputs_sent += 1;
        Ok(())
    }

    /// Counts a desync found by the caller (or by the client itself) and,
    /// unless one is already pending, asks the server for a full resync on
    /// the reliable channel; snapshots are dropped until it arrives.
    pub fn report_desync(&mut self) {
        self.stats.desyncs += 1;
        if self.resync_pending || !self.net.is_connected() {
            return;
        }
        let request = ResyncRequest {
            reason: ResyncReason::Desync,
            last_server_tick: self.newest.map(|(t, _)| t),
        };
        let mut buf = [0u8; MAX_UPLINK_BYTES];
        let mut w = BitWriter::new(&mut buf);
        let encoded = MessageKind::ResyncRequest
            .encode(&mut w)
            .and_then(|()| request.encode(&mut w));
        if encoded.is_err() {
            return;
        }
        let len = w.finish();
        if self.net.send_reliable(&buf[..len]).is_ok() {
            self.stats.resyncs_requested += 1;
            self.resync_pending = true;
            self.world.expect_full_resync();
        }
    }

    /// Feeds one datagram received from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, datagram: &mut [u8]) {
        self.stats.packets_in += 1;
        self.stats.bytes_in += datagram.len() as u64;
        self.net.handle_datagram(now, from, datagram);
        self.drain(now);
    }

    /// The next datagram to send, written into `buf` (at least
    /// `hightick_net::wire::MAX_PACKET_BYTES` long). Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let t = self.net.poll_transmit(now, buf)?;
        self.stats.packets_out += 1;
        self.stats.bytes_out += t.len as u64;
        Some(t)
    }

    /// When [`Self::handle_timeout`] is due next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.net.poll_timeout()
    }

    /// Runs the connection's timers (resends, keep-alives, timeouts).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.net.handle_timeout(now);
        self.drain(now);
    }

    /// Why this client turned its server away, if it did: then it is
    /// disconnected and reads nothing more.
    pub fn refusal(&self) -> Option<Refusal> {
        self.refusal
    }

    /// Closes the connection (a few redundant disconnect packets follow).
    pub fn disconnect(&mut self) {
        self.net.disconnect();
    }

    fn drain(&mut self, now: Instant) {
        while self.net.poll_event().is_some() {}
        while self.net.poll_delivery().is_some() {}
        while let Some(m) = self.net.poll_message(&mut self.message) {
            if self.refusal.is_some() {
                continue;
            }
            let len = m.len.min(self.message.len());
            match m.channel {
                Channel::Unreliable => self.on_snapshot(now, len),
                Channel::Reliable => self.on_event(len),
            }
        }
    }

    fn on_snapshot(&mut self, now: Instant, len: usize) {
        if let Some(at) = self.last_snapshot_at {
            let gap = now.saturating_duration_since(at);
            self.stats.last_snapshot_interval = Some(gap);
            self.interarrival
                .saturating_record(gap.as_micros().clamp(1, u128::from(u64::MAX)) as u64);
        }
        self.last_snapshot_at = Some(now);
        let info = match self.world.apply(&self.message[..len]) {
            Ok(info) => info,
            Err(_) => {
                self.stats.decode_errors += 1;
                self.report_desync();
                return;
            }
        };
        if !info.applied {
            self.stats.snapshots_dropped += 1;
            return;
        }
        self.stats.snapshots_applied += 1;
        let tick = info.header.server_tick;
        if info.header.kind == SnapshotKind::FullResync {
            self.stats.full_resyncs += 1;
            self.resync_pending = false;
        }
        if self.newest.is_none_or(|(t, _)| tick > t) {
            self.newest = Some((tick, now));
            self.record_positions(tick);
        }
    }

    /// Records every held entity's position at `tick`; an entity that was
    /// missing from the previous recording starts a fresh track.
    fn record_positions(&mut self, tick: Tick) {
        let Some(position_of) = self.position_of else {
            return;
        };
        let previous = self.recorded_tick;
        for e in self.world.iter() {
            if self.interpolation.newest_tick(e.entity) != previous {
                self.interpolation.forget(e.entity);
            }
            if let Some(p) = position_of(e.state) {
                self.interpolation.record(e.entity, tick, p);
            }
        }
        self.recorded_tick = Some(tick);
    }

    fn on_event(&mut self, len: usize) {
        let mut r = BitReader::new(&self.message[..len]);
        let event = match MessageKind::decode(&mut r) {
            Ok(MessageKind::Event) => G::Event::decode(&mut r),
            Ok(MessageKind::SchemaHash) => {
                let hash = SchemaHash::decode(&mut r);
                return self.check_schema(hash);
            }
            Ok(MessageKind::Avatar) => {
                match Avatar::decode(&mut r) {
                    Ok(Avatar(avatar)) => self.world.set_avatar(avatar),
                    Err(_) => self.stats.decode_errors += 1,
                }
                return;
            }
            _ => {
                self.stats.decode_errors += 1;
                return;
            }
        };
        match event {
            Ok(event) => {
                self.stats.events += 1;
                if self.events.len() >= self.event_capacity {
                    self.events.pop_front();
                    self.stats.events_dropped += 1;
                }
                self.events.push_back(event);
            }
            Err(_) => self.stats.decode_errors += 1,
        }
    }

    /// The server's schema hash against this client's own: another one
    /// means another version of the game, refused before anything else is
    /// read.
    fn check_schema(&mut self, hash: Result<SchemaHash, hightick_proto::ProtoError>) {
        let Ok(SchemaHash(server)) = hash else {
            self.stats.decode_errors += 1;
            return;
        };
        let client = wire_hash::<G>();
        if server != client {
            self.refusal = Some(Refusal::SchemaMismatch { server, client });
            self.events.clear();
            self.net.disconnect();
        }
    }

    /// Time until the connection layer needs [`Self::handle_timeout`], from `now`.
    pub fn timeout_in(&self, now: Instant) -> Option<Duration> {
        self.poll_timeout()
            .map(|t| t.saturating_duration_since(now))
    }
}
