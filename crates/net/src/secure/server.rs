//! The server side of the secure layer: connection requests, challenges,
//! client slots, keep-alives, timeouts and disconnects (netcode.io 1.02), with a
//! [`PacketEndpoint`] per connected slot for messages, acks and RTT.
//!
//! Sans-IO: feed it datagrams with [`Server::handle_datagram`], pull datagrams
//! to send with [`Server::poll_transmit`], wake it at [`Server::poll_timeout`]
//! with [`Server::handle_timeout`], and read [`Server::poll_event`]. It never
//! reads a clock or touches a socket.
//!
//! Rules it keeps:
//! - only a valid connect token listing this server's address starts a
//!   handshake; every other datagram is dropped and counted ([`DropCounters`]);
//! - it never answers an unauthenticated datagram with more bytes than it
//!   received: a connection request is 1078 bytes, its answer (challenge, at
//!   most 333 bytes, or denied, 25 bytes) is smaller, and nothing else is
//!   answered before the sender proved it holds the token's keys;
//! - a token used from a second address, or again after its connection ended,
//!   is refused;
//! - a client id already connected may connect again with a fresh token, from
//!   any address (a rejoin after its link died, before the old connection
//!   timed out): once the new handshake completes, the new connection takes
//!   over the slot (`Disconnected { reason: Replaced }`, then `Connected`,
//!   same slot);
//! - lookups by address and client id are O(1) in maps sized at start; the
//!   packet path allocates nothing (a slot's packet endpoint is allocated when
//!   the client connects).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use foldhash::fast::RandomState;

use crate::packet::Delivery;
use crate::packet::{PacketConfig, PacketEndpoint, ReceivedMessage};
use crate::secure::connection::{DisconnectReason, Transmit};
use crate::secure::counters::{DropCounters, DropKind};
use crate::secure::crypto::{ChallengeCipher, Key, MAC_BYTES, PacketCipher};
use crate::secure::error::NetError;
use crate::secure::link::{Link, earliest, timeout_from_seconds};
use crate::secure::pacing::{Pacer, Pacing};
use crate::secure::token::{
    CHALLENGE_TOKEN_BYTES, ConnectToken, USER_DATA_BYTES, open_challenge, seal_challenge,
};
use crate::secure::token_history::{Reuse, TokenHistory};
use crate::secure::wire::{self, MAX_PACKET_BYTES, PacketKind, REQUEST_BYTES};

/// Denied packets sent before a connection exists use sequences from here on,
/// far above any connection's own sequences, so no nonce repeats under a key.
const DENIED_SEQUENCE_BASE: u64 = 1 << 62;

/// Longest keep-alive or handshake interval a config may ask for.
pub(crate) const MAX_INTERVAL: Duration = Duration::from_secs(3600);

/// Settings of a [`Server`].
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The game's protocol id; requests for other ids are dropped.
    pub protocol_id: u64,
    /// The private key shared with the gateway that seals connect tokens.
    pub private_key: Key,
    /// This server's address as listed in tokens.
    pub public_address: SocketAddr,
    /// Client slots (1 to 65535).
    pub max_clients: usize,
    /// Handshakes in progress at once (default `4 * max_clients`).
    pub max_pending: usize,
    /// Tokens remembered for reuse protection (default `8 * max_clients`).
    pub token_history: usize,
    /// Keep-alive period of an otherwise silent connection (default 100 ms).
    pub keep_alive_interval: Duration,
    /// Redundant disconnect packets sent when the server closes a slot (default 10).
    pub disconnect_packets: u32,
    /// The packet layer of every slot (clients must use the same).
    pub packet: PacketConfig,
    /// Pacing of each connection's packets beyond the host's own (one per
    /// [`Server::transmit_payload`] call): `None` (the default) sends what
    /// [`Server::poll_transmit`] has at once. See [`crate::secure::pacing`].
    pub pacing: Option<Pacing>,
}

impl ServerConfig {
    /// A config with defaults for everything but the essentials.
    pub fn new(
        protocol_id: u64,
        private_key: Key,
        public_address: SocketAddr,
        max_clients: usize,
    ) -> Self {
        Self {
            protocol_id,
            private_key,
            public_address,
            max_clients,
            max_pending: max_clients.saturating_mul(4),
            token_history: max_clients.saturating_mul(8),
            keep_alive_interval: Duration::from_millis(100),
            disconnect_packets: 10,
            packet: PacketConfig::default(),
            pacing: None,
        }
    }

    /// Checks every field; the error names the first field at fault.
    pub fn validate(&self) -> Result<(), NetError> {
        let bad = |field, reason| Err(NetError::InvalidParameter { field, reason });
        if !(1..=usize::from(u16::MAX)).contains(&self.max_clients) {
            return bad("max_clients", "must be in 1..=65535");
        }
        if !(1..=1 << 20).contains(&self.max_pending) {
            return bad("max_pending", "must be in 1..=1048576");
        }
        if !(1..=1 << 22).contains(&self.token_history) {
            return bad("token_history", "must be in 1..=4194304");
        }
        if self.keep_alive_interval.is_zero() || self.keep_alive_interval > MAX_INTERVAL {
            return bad(
                "keep_alive_interval",
                "must be positive and at most an hour",
            );
        }
        if self.packet.max_packet_size > wire::MAX_PAYLOAD_BYTES {
            return bad(
                "packet.max_packet_size",
                "must be at most 1200 (one payload packet)",
            );
        }
        self.packet.validate()?;
        if let Some(pacing) = &self.pacing {
            pacing.validate()?;
        }
        Ok(())
    }
}

/// What a [`Server`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // boxing the user data would allocate per connection
pub enum ServerEvent {
    /// A client completed the handshake and holds `slot`.
    Connected {
        /// The slot it holds, in `0..max_clients`.
        slot: usize,
        /// Its id from the connect token.
        client_id: u64,
        /// The user data from its connect token.
        user_data: [u8; USER_DATA_BYTES],
    },
    /// The client in `slot` is gone. The slot is reused only after this event
    /// has been polled.
    Disconnected {
        /// The slot it held.
        slot: usize,
        /// Its id.
        client_id: u64,
        /// Why it ended.
        reason: DisconnectReason,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    Pending(usize),
    Slot(usize),
}

#[derive(Debug)]
struct Pending {
    link: Link,
    client_id: u64,
    mac: [u8; MAC_BYTES],
    user_data: [u8; USER_DATA_BYTES],
    expire_at: Instant,
}

impl Pending {
    fn deadline(&self) -> Instant {
        self.link
            .deadline()
            .map_or(self.expire_at, |d| d.min(self.expire_at))
    }
}

/// `repr(C)`: what every packet sent or received reads comes first (the
/// bucket, the packet layer, the link with its replay window last), the
/// handshake's leftovers after.
#[derive(Debug)]
#[repr(C)]
struct Connection {
    /// Its bucket, when the server paces.
    pacer: Option<Pacer>,
    /// The client has sent a keep-alive or payload since connecting.
    confirmed: bool,
    endpoint: PacketEndpoint,
    link: Link,
    client_id: u64,
    mac: [u8; MAC_BYTES],
    user_data: [u8; USER_DATA_BYTES],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Free,
    Connected,
    /// Sending redundant disconnect packets before the slot frees.
    Closing {
        remaining: u32,
    },
}

/// Aligned to a cache line, so a slot's first fields and its connection's
/// start share one.
#[derive(Debug)]
#[repr(C, align(64))]
struct Slot {
    state: SlotState,
    /// A `Disconnected` event for this slot waits to be polled.
    awaiting_event: bool,
    /// The slot took in a payload and is on the readable list.
    readable: bool,
    connection: Option<Connection>,
}

impl Slot {
    fn is_free(&self) -> bool {
        self.state == SlotState::Free && !self.awaiting_event
    }
}

// `Denied` carries the pending connection's cipher, which makes it the large
// variant; replies sit in a queue allocated once at start, and boxing the
// cipher would allocate once per refusal instead.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Reply {
    Challenge {
        pending: usize,
        address: SocketAddr,
    },
    KeepAlive {
        slot: usize,
        address: SocketAddr,
    },
    Denied {
        address: SocketAddr,
        cipher: PacketCipher,
        sequence: u64,
    },
    DenyPending {
        pending: usize,
        address: SocketAddr,
    },
}

/// Maps instants to unix seconds without reading a clock: a pair given at
/// construction anchors the mapping.
#[derive(Debug, Clone, Copy)]
struct UnixAnchor {
    instant: Instant,
    unix: u64,
}

impl UnixAnchor {
    fn unix_at(&self, now: Instant) -> u64 {
        self.unix
            .saturating_add(now.saturating_duration_since(self.instant).as_secs())
    }

    /// The instant of a unix time; times more than a year ahead count as a
    /// year ahead (token lifetimes are seconds to minutes).
    fn instant_of(&self, unix: u64) -> Instant {
        let secs = unix.saturating_sub(self.unix).min(YEAR_SECS);
        self.instant
            .checked_add(Duration::from_secs(secs))
            .unwrap_or(self.instant)
    }
}

const YEAR_SECS: u64 = 365 * 24 * 3600;

/// The server state machine. See the [module docs](self).
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    /// `config.packet`, shared by every connection's endpoint.
    packet: Arc<PacketConfig>,
    anchor: UnixAnchor,
    challenge: ChallengeCipher,
    challenge_sequence: u64,
    denied_sequence: u64,
    slots: Vec<Slot>,
    pending: Vec<Option<Pending>>,
    /// Looked up for every datagram: a fast hasher, seeded per process (the
    /// keys are addresses anyone can send from).
    peers: HashMap<SocketAddr, Peer, RandomState>,
    client_ids: HashMap<u64, usize, RandomState>,
    tokens: TokenHistory,
    replies: VecDeque<Reply>,
    /// Slots that took in a payload since [`Self::poll_readable`] last
    /// returned them.
    readable: Vec<usize>,
    reply_capacity: usize,
    events: VecDeque<ServerEvent>,
    counters: DropCounters,
    cursor: usize,
    /// Slots connected or closing, the only ones timers and transmits visit.
    active: Vec<usize>,
    /// Handshake entries in use.
    pending_live: usize,
    connected: usize,
    last_now: Instant,
}

impl Server {
    /// A server with all its tables allocated. `now` and `unix_now` anchor its
    /// notion of unix time (for token expiry); `rng` draws the challenge key.
    pub fn new<R: rand::CryptoRng + ?Sized>(
        config: ServerConfig,
        now: Instant,
        unix_now: u64,
        rng: &mut R,
    ) -> Result<Self, NetError> {
        config.validate()?;
        let max = config.max_clients;
        let reply_capacity = config.max_pending + max;
        Ok(Self {
            packet: Arc::new(config.packet.clone()),
            anchor: UnixAnchor {
                instant: now,
                unix: unix_now,
            },
            challenge: ChallengeCipher::new(&Key::generate(rng)),
            challenge_sequence: 0,
            denied_sequence: DENIED_SEQUENCE_BASE,
            slots: (0..max)
                .map(|_| Slot {
                    state: SlotState::Free,
                    connection: None,
                    awaiting_event: false,
                    readable: false,
                })
                .collect(),
            pending: (0..config.max_pending).map(|_| None).collect(),
            // Twice the most entries: the maps then rehash in place, never grow.
            peers: HashMap::with_capacity_and_hasher(
                2 * (max + config.max_pending),
                RandomState::default(),
            ),
            client_ids: HashMap::with_capacity_and_hasher(2 * max, RandomState::default()),
            tokens: TokenHistory::new(config.token_history),
            replies: VecDeque::with_capacity(reply_capacity),
            readable: Vec::with_capacity(max),
            reply_capacity,
            events: VecDeque::with_capacity(2 * max),
            counters: DropCounters::default(),
            cursor: 0,
            active: Vec::with_capacity(max),
            pending_live: 0,
            connected: 0,
            last_now: now,
            config,
        })
    }

    /// Changes the address connect tokens must list: a server whose public
    /// address became known after it started (an Agones GameServer's
    /// status). From then on a token listing only the old address is
    /// refused; connections already made go on.
    pub fn set_public_address(&mut self, address: SocketAddr) {
        self.config.public_address = address;
    }

    /// The config the server runs with.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Re-anchors unix time (for example after the host clock was corrected).
    pub fn set_unix_time(&mut self, now: Instant, unix_now: u64) {
        self.anchor = UnixAnchor {
            instant: now,
            unix: unix_now,
        };
    }

    /// Datagrams dropped so far, by kind.
    pub fn counters(&self) -> &DropCounters {
        &self.counters
    }

    /// Number of slots.
    pub fn max_clients(&self) -> usize {
        self.slots.len()
    }

    /// Clients connected now.
    pub fn connected_clients(&self) -> usize {
        self.connected
    }

    /// No connection, closing slot or handshake in progress: until a datagram
    /// arrives, [`Self::handle_timeout`] has nothing to do.
    pub fn is_idle(&self) -> bool {
        self.active.is_empty() && self.pending_live == 0
    }

    fn connection(&self, slot: usize) -> Option<&Connection> {
        let s = self.slots.get(slot)?;
        if s.state == SlotState::Connected {
            s.connection.as_ref()
        } else {
            None
        }
    }

    fn connection_mut(&mut self, slot: usize) -> Result<&mut Connection, NetError> {
        match self.slots.get_mut(slot) {
            Some(s) if s.state == SlotState::Connected => {
                s.connection.as_mut().ok_or(NetError::NotConnected(slot))
            }
            _ => Err(NetError::NotConnected(slot)),
        }
    }

    /// Whether `slot` holds a connected client.
    pub fn is_connected(&self, slot: usize) -> bool {
        self.connection(slot).is_some()
    }

    /// The client id in `slot`, if connected.
    pub fn client_id(&self, slot: usize) -> Option<u64> {
        self.connection(slot).map(|c| c.client_id)
    }

    /// The address of the client in `slot`, if connected.
    pub fn client_address(&self, slot: usize) -> Option<SocketAddr> {
        self.connection(slot).map(|c| c.link.address)
    }

    /// The user data of the client in `slot`, if connected.
    pub fn user_data(&self, slot: usize) -> Option<&[u8; USER_DATA_BYTES]> {
        self.connection(slot).map(|c| &c.user_data)
    }

    /// The packet layer of `slot` (RTT, loss, stats), if connected.
    pub fn endpoint(&self, slot: usize) -> Option<&PacketEndpoint> {
        self.connection(slot).map(|c| &c.endpoint)
    }

    /// Queues a message on the reliable ordered channel of `slot`.
    pub fn send_reliable(&mut self, slot: usize, msg: &[u8]) -> Result<(), NetError> {
        Ok(self.connection_mut(slot)?.endpoint.send_reliable(msg)?)
    }

    /// Queues a message on the unreliable channel of `slot` (next packet only).
    pub fn send_unreliable(&mut self, slot: usize, msg: &[u8]) -> Result<(), NetError> {
        Ok(self.connection_mut(slot)?.endpoint.send_unreliable(msg)?)
    }

    /// Whether handshake replies (challenges, keep-alives that confirm a
    /// connection, denials) wait for [`Self::poll_transmit`]: a host that
    /// polls transmits on a cadence polls at once when this is true.
    pub fn replies_pending(&self) -> bool {
        !self.replies.is_empty()
    }

    /// A slot with something to poll since it was last returned, each once;
    /// `None` when there are no more. A slot turns readable when it takes in
    /// a payload (messages, acks and so delivery notifications), and when
    /// [`Self::handle_timeout`] or [`Self::transmit_payload`] leave delivery
    /// notifications waiting (packets presumed lost). A host polls these
    /// instead of every slot: between them they cover every message and
    /// notification.
    pub fn poll_readable(&mut self) -> Option<usize> {
        let slot = self.readable.pop()?;
        if let Some(s) = self.slots.get_mut(slot) {
            s.readable = false;
        }
        Some(slot)
    }

    fn mark_readable(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        if !s.readable {
            s.readable = true;
            self.readable.push(slot);
        }
    }

    /// Copies the next message received from `slot` into `out`.
    pub fn poll_message(&mut self, slot: usize, out: &mut [u8]) -> Option<ReceivedMessage> {
        self.connection_mut(slot).ok()?.endpoint.poll_message(out)
    }

    /// The packet layer of `slot`, to queue messages on directly (for
    /// example a match handing over its tick's events and snapshot).
    pub fn endpoint_mut(&mut self, slot: usize) -> Option<&mut PacketEndpoint> {
        self.connection_mut(slot).ok().map(|c| &mut c.endpoint)
    }

    /// Writes `slot`'s next payload packet (whatever its packet layer has
    /// queued), sealed, into `buf`, and returns it with the packet layer's
    /// sequence, so the caller can tie delivery notifications to what the
    /// packet carried. `None`: the slot is not connected or has nothing to
    /// send. Keep-alives, handshake replies and disconnects still come from
    /// [`Self::poll_transmit`].
    pub fn transmit_payload(
        &mut self,
        now: Instant,
        slot: usize,
        buf: &mut [u8],
    ) -> Option<(Transmit, u16)> {
        self.last_now = self.last_now.max(now);
        if buf.len() < MAX_PACKET_BYTES {
            return None;
        }
        let s = self.slots.get_mut(slot)?;
        if s.state != SlotState::Connected {
            return None;
        }
        let conn = s.connection.as_mut()?;
        let destination = conn.link.address;
        let endpoint = &mut conn.endpoint;
        let mut sequence = 0;
        let len = conn.link.seal(now, PacketKind::Payload, buf, |body| {
            endpoint.write_packet(now, body).map(|(seq, len)| {
                sequence = seq;
                len
            })
        });
        // Writing resolves timed-out packets as lost, whether or not it
        // leaves a packet to send.
        if let (Some(pacer), Some(len)) = (conn.pacer.as_mut(), len) {
            pacer.spend(len);
        }
        if conn.endpoint.deliveries_pending() {
            self.mark_readable(slot);
        }
        let len = len?;
        Some((Transmit { destination, len }, sequence))
    }

    /// Hints the cache to fetch what [`Self::transmit_payload`] to `slot`
    /// reads: the slot, its packet layer and the sending half of its link. A
    /// host about to send to many slots after a sleep calls it for each of
    /// them first, so their cache misses overlap instead of queueing one
    /// after another (see [`crate::prefetch`]). Does nothing for a slot
    /// that is not connected.
    pub fn prefetch(&self, slot: usize) {
        let Some(s) = self.slots.get(slot) else {
            return;
        };
        let Some(conn) = s.connection.as_ref() else {
            return;
        };
        let start: *const u8 = (s as *const Slot).cast();
        let endpoint: *const u8 = (&conn.endpoint as *const PacketEndpoint).cast();
        crate::prefetch::prefetch_range(start, endpoint as usize - start as usize);
        conn.endpoint.prefetch();
        conn.link.prefetch_send();
    }

    /// The next delivery notification (acked / presumed lost) of a packet sent to `slot`.
    pub fn poll_delivery(&mut self, slot: usize) -> Option<Delivery> {
        self.connection_mut(slot).ok()?.endpoint.poll_delivery()
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        let event = self.events.pop_front()?;
        if let ServerEvent::Disconnected { slot, .. } = event
            && let Some(s) = self.slots.get_mut(slot)
        {
            s.awaiting_event = false;
        }
        Some(event)
    }

    /// Closes the connection in `slot`: the client is told with a few redundant
    /// disconnect packets (see [`ServerConfig::disconnect_packets`]) and a
    /// `Disconnected` event follows.
    pub fn disconnect(&mut self, slot: usize) -> Result<(), NetError> {
        self.connection_mut(slot)?;
        self.close_slot(slot, DisconnectReason::ClosedLocally);
        Ok(())
    }

    fn close_slot(&mut self, slot: usize, reason: DisconnectReason) {
        let farewells = self.config.disconnect_packets;
        let Some(s) = self.slots.get_mut(slot) else {
            return;
        };
        let Some(conn) = &s.connection else {
            return;
        };
        let (client_id, address, mac) = (conn.client_id, conn.link.address, conn.mac);
        let remaining = if reason == DisconnectReason::ClosedLocally {
            farewells
        } else {
            0
        };
        let freed = remaining == 0;
        if remaining > 0 {
            s.state = SlotState::Closing { remaining };
        } else {
            s.state = SlotState::Free;
            s.connection = None;
        }
        s.awaiting_event = true;
        if freed {
            self.deactivate(slot);
        }
        self.connected -= 1;
        self.peers.remove(&address);
        self.client_ids.remove(&client_id);
        self.tokens.spend(&mac);
        self.events.push_back(ServerEvent::Disconnected {
            slot,
            client_id,
            reason,
        });
    }

    fn queue_reply(&mut self, reply: Reply) {
        if self.replies.len() < self.reply_capacity {
            self.replies.push_back(reply);
        }
    }

    /// Processes one received datagram, decrypting it in place.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, datagram: &mut [u8]) {
        self.last_now = self.last_now.max(now);
        if let Err(kind) = self.process(now, from, datagram) {
            self.counters.count(kind);
        }
    }

    fn process(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &mut [u8],
    ) -> Result<(), DropKind> {
        match datagram.first() {
            None => return Err(DropKind::Truncated),
            Some(0) => return self.process_request(now, from, datagram),
            Some(_) => {}
        }
        let header = wire::read_header(datagram)?;
        match header.kind {
            PacketKind::Response
            | PacketKind::KeepAlive
            | PacketKind::Payload
            | PacketKind::Disconnect => {}
            _ => return Err(DropKind::UnexpectedPacket),
        }
        match self.peers.get(&from).copied() {
            None => Err(DropKind::UnknownAddress),
            Some(Peer::Pending(i)) if header.kind == PacketKind::Response => {
                self.process_response(now, i, datagram, &header)
            }
            Some(Peer::Pending(_)) => Err(DropKind::UnexpectedPacket),
            // A response retransmitted after the connection was made.
            Some(Peer::Slot(_)) if header.kind == PacketKind::Response => {
                Err(DropKind::UnexpectedPacket)
            }
            Some(Peer::Slot(slot)) => self.process_connected(now, slot, datagram, &header),
        }
    }

    fn process_request(
        &mut self,
        now: Instant,
        from: SocketAddr,
        request: &[u8],
    ) -> Result<(), DropKind> {
        if request.len() < REQUEST_BYTES {
            return Err(DropKind::Truncated);
        }
        if request.len() > REQUEST_BYTES {
            return Err(DropKind::Oversized);
        }
        if matches!(self.peers.get(&from), Some(Peer::Slot(_))) {
            return Err(DropKind::AlreadyConnected);
        }
        let opened = ConnectToken::open(
            request,
            &self.config.private_key,
            self.config.protocol_id,
            self.config.public_address,
            self.anchor.unix_at(now),
        )
        .map_err(|e| token_drop_kind(&e))?;
        let private = &opened.private;
        if self.holds_token(private.client_id, &opened.mac) {
            return Err(DropKind::AlreadyConnected);
        }
        self.tokens
            .admit(&opened.mac, from)
            .map_err(|reuse| match reuse {
                Reuse::OtherAddress | Reuse::Spent => DropKind::TokenReused,
            })?;
        let existing = match self.peers.get(&from) {
            Some(&Peer::Pending(i)) => Some(i),
            _ => None,
        };
        // A rejoin takes its own slot over: it needs no free one.
        let rejoin = self.client_ids.contains_key(&private.client_id);
        if !rejoin && !self.slots.iter().any(Slot::is_free) {
            // Tell the client, sealed with its token's key: 25 bytes for 1078 received.
            match existing {
                Some(i)
                    if self.pending[i]
                        .as_ref()
                        .is_some_and(|p| p.mac == opened.mac) =>
                {
                    self.deny_pending(i);
                }
                _ => {
                    let sequence = self.denied_sequence;
                    self.denied_sequence += 1;
                    let cipher =
                        PacketCipher::new(&private.server_to_client_key, self.config.protocol_id);
                    self.queue_reply(Reply::Denied {
                        address: from,
                        cipher,
                        sequence,
                    });
                }
            }
            return Err(DropKind::ServerFull);
        }
        let index = match existing {
            // The client resends its request until a challenge arrives.
            Some(i)
                if self.pending[i]
                    .as_ref()
                    .is_some_and(|p| p.mac == opened.mac) =>
            {
                i
            }
            Some(i) => {
                self.take_pending(i);
                i
            }
            None => self.free_pending(now).ok_or(DropKind::PendingFull)?,
        };
        if self.pending[index].is_none() {
            let link = Link::new(
                from,
                &private.server_to_client_key,
                &private.client_to_server_key,
                self.config.protocol_id,
                timeout_from_seconds(private.timeout_seconds),
                now,
            );
            self.pending[index] = Some(Pending {
                link,
                client_id: private.client_id,
                mac: opened.mac,
                user_data: private.user_data,
                expire_at: self.anchor.instant_of(opened.expire_unix),
            });
            self.pending_live += 1;
            self.peers.insert(from, Peer::Pending(index));
        } else if let Some(p) = self.pending[index].as_mut() {
            p.link.last_received = now;
        }
        self.queue_reply(Reply::Challenge {
            pending: index,
            address: from,
        });
        Ok(())
    }

    /// A free handshake entry, reclaiming one whose deadline passed.
    fn free_pending(&mut self, now: Instant) -> Option<usize> {
        if let Some(i) = self.pending.iter().position(Option::is_none) {
            return Some(i);
        }
        let i = self
            .pending
            .iter()
            .position(|p| p.as_ref().is_some_and(|p| now >= p.deadline()))?;
        self.drop_pending(i);
        Some(i)
    }

    /// Empties handshake entry `i`, keeping the count of live ones.
    fn take_pending(&mut self, i: usize) -> Option<Pending> {
        let p = self.pending.get_mut(i)?.take();
        if p.is_some() {
            self.pending_live -= 1;
        }
        p
    }

    /// Slot `slot` became free: it leaves the list of active slots.
    fn deactivate(&mut self, slot: usize) {
        if let Some(i) = self.active.iter().position(|&a| a == slot) {
            self.active.swap_remove(i);
        }
    }

    fn drop_pending(&mut self, i: usize) {
        if let Some(p) = self.take_pending(i)
            && self.peers.get(&p.link.address) == Some(&Peer::Pending(i))
        {
            self.peers.remove(&p.link.address);
        }
    }

    /// Queues a denied packet sealed on a handshake's own link; the handshake
    /// ends once it is sent.
    fn deny_pending(&mut self, i: usize) {
        if let Some(p) = self.pending[i].as_ref() {
            let address = p.link.address;
            self.queue_reply(Reply::DenyPending {
                pending: i,
                address,
            });
        }
    }

    fn process_response(
        &mut self,
        now: Instant,
        index: usize,
        datagram: &mut [u8],
        header: &wire::Header,
    ) -> Result<(), DropKind> {
        let pending = self.pending[index]
            .as_mut()
            .ok_or(DropKind::UnknownAddress)?;
        let body = pending.link.open(now, datagram, header)?;
        let (sequence, sealed) =
            wire::read_challenge_body(&datagram[body]).ok_or(DropKind::InvalidChallenge)?;
        let (client_id, user_data) = open_challenge(&self.challenge, sequence, sealed)
            .map_err(|_| DropKind::InvalidChallenge)?;
        if client_id != pending.client_id {
            return Err(DropKind::InvalidChallenge);
        }
        let mac = pending.mac;
        if self.holds_token(client_id, &mac) {
            return Err(DropKind::AlreadyConnected);
        }
        if let Some(&slot) = self.client_ids.get(&client_id) {
            return self.replace_connection(now, index, slot);
        }
        let Some(slot) = self.slots.iter().position(Slot::is_free) else {
            self.deny_pending(index);
            return Err(DropKind::ServerFull);
        };
        let Some(pending) = self.take_pending(index) else {
            return Err(DropKind::UnknownAddress);
        };
        let address = pending.link.address;
        self.slots[slot] = Slot {
            state: SlotState::Connected,
            connection: Some(self.connection_of(pending, client_id, user_data, now)),
            awaiting_event: false,
            readable: false,
        };
        self.connected += 1;
        self.active.push(slot);
        self.client_ids.insert(client_id, slot);
        self.announce(slot, address, client_id, user_data);
        Ok(())
    }

    /// A connection took `slot` from `address`: datagrams from there are
    /// its, the host hears of it, and a keep-alive confirms it to the client.
    fn announce(
        &mut self,
        slot: usize,
        address: SocketAddr,
        client_id: u64,
        user_data: [u8; USER_DATA_BYTES],
    ) {
        self.peers.insert(address, Peer::Slot(slot));
        self.events.push_back(ServerEvent::Connected {
            slot,
            client_id,
            user_data,
        });
        self.queue_reply(Reply::KeepAlive { slot, address });
    }

    /// The connection a completed handshake makes: its link, a fresh
    /// packet layer and, when the server paces, a full bucket.
    fn connection_of(
        &self,
        pending: Pending,
        client_id: u64,
        user_data: [u8; USER_DATA_BYTES],
        now: Instant,
    ) -> Connection {
        Connection {
            link: pending.link,
            client_id,
            mac: pending.mac,
            user_data,
            confirmed: false,
            endpoint: PacketEndpoint::new_shared(Arc::clone(&self.packet), now),
            pacer: self.config.pacing.map(|p| Pacer::new(now, &p)),
        }
    }

    /// Whether `client_id` is connected with the token whose tag is `mac`
    /// (a fresh token of a connected client may take its slot over).
    fn holds_token(&self, client_id: u64, mac: &[u8; MAC_BYTES]) -> bool {
        self.client_ids
            .get(&client_id)
            .and_then(|&slot| self.connection(slot))
            .is_some_and(|c| c.mac == *mac)
    }

    /// The handshake in entry `index` completed for a client already
    /// connected in `slot`: the old connection ends (its token spent, its
    /// address forgotten, `Disconnected { reason: Replaced }`) and the new
    /// one takes the same slot with a fresh packet layer (`Connected`).
    fn replace_connection(
        &mut self,
        now: Instant,
        index: usize,
        slot: usize,
    ) -> Result<(), DropKind> {
        let Some(pending) = self.take_pending(index) else {
            return Err(DropKind::UnknownAddress);
        };
        let Some(old) = self.slots[slot].connection.take() else {
            return Err(DropKind::UnknownAddress);
        };
        let client_id = old.client_id;
        self.peers.remove(&old.link.address);
        self.tokens.spend(&old.mac);
        self.events.push_back(ServerEvent::Disconnected {
            slot,
            client_id,
            reason: DisconnectReason::Replaced,
        });
        let address = pending.link.address;
        let user_data = pending.user_data;
        self.slots[slot].connection = Some(self.connection_of(pending, client_id, user_data, now));
        self.announce(slot, address, client_id, user_data);
        Ok(())
    }

    fn process_connected(
        &mut self,
        now: Instant,
        slot: usize,
        datagram: &mut [u8],
        header: &wire::Header,
    ) -> Result<(), DropKind> {
        let conn = self
            .connection_mut(slot)
            .map_err(|_| DropKind::UnknownAddress)?;
        let body = conn.link.open(now, datagram, header)?;
        match header.kind {
            PacketKind::KeepAlive => {
                conn.confirmed = true;
                Ok(())
            }
            PacketKind::Payload => {
                conn.confirmed = true;
                conn.endpoint
                    .read_packet(now, &datagram[body])
                    .map_err(|_| DropKind::PayloadRejected)?;
                self.mark_readable(slot);
                Ok(())
            }
            PacketKind::Disconnect => {
                self.close_slot(slot, DisconnectReason::ClosedByPeer);
                Ok(())
            }
            _ => Err(DropKind::UnexpectedPacket),
        }
    }

    /// The next datagram to send, written into `buf`, or `None` when nothing
    /// is due. Call it until it returns `None` after every
    /// [`Self::handle_datagram`] batch, [`Self::handle_timeout`] and send.
    /// `buf` must hold [`MAX_PACKET_BYTES`]; with a shorter one nothing is sent.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.last_now = self.last_now.max(now);
        if buf.len() < MAX_PACKET_BYTES {
            return None;
        }
        while let Some(reply) = self.replies.pop_front() {
            if let Some(t) = self.write_reply(now, reply, buf) {
                return Some(t);
            }
        }
        // Only connected and closing slots have anything to send.
        let mut steps = self.active.len();
        let mut k = self.cursor;
        while steps > 0 && !self.active.is_empty() {
            k %= self.active.len();
            let slot = self.active[k];
            let written = self.write_slot(now, slot, buf);
            if self.slots[slot].state == SlotState::Free {
                // The last active slot moved into position k.
                self.deactivate(slot);
            } else {
                k += 1;
            }
            steps -= 1;
            if let Some(t) = written {
                self.cursor = k;
                return Some(t);
            }
        }
        None
    }

    fn write_reply(&mut self, now: Instant, reply: Reply, buf: &mut [u8]) -> Option<Transmit> {
        match reply {
            Reply::Challenge { pending, address } => {
                let p = self.pending.get_mut(pending)?.as_mut()?;
                if p.link.address != address {
                    return None;
                }
                let challenge_sequence = self.challenge_sequence;
                self.challenge_sequence += 1;
                let mut token = [0u8; CHALLENGE_TOKEN_BYTES];
                seal_challenge(
                    &self.challenge,
                    challenge_sequence,
                    p.client_id,
                    &p.user_data,
                    &mut token,
                );
                let len = p.link.seal(now, PacketKind::Challenge, buf, |body| {
                    wire::write_challenge_body(body, challenge_sequence, &token)
                })?;
                Some(Transmit {
                    destination: address,
                    len,
                })
            }
            Reply::KeepAlive { slot, address } => {
                let max_clients = self.slots.len() as u32;
                let conn = self.connection_mut(slot).ok()?;
                if conn.link.address != address {
                    return None;
                }
                let len = conn.link.seal(now, PacketKind::KeepAlive, buf, |body| {
                    wire::write_keep_alive_body(body, slot as u32, max_clients)
                })?;
                Some(Transmit {
                    destination: address,
                    len,
                })
            }
            Reply::DenyPending { pending, address } => {
                let p = self.pending.get_mut(pending)?.as_mut()?;
                if p.link.address != address {
                    return None;
                }
                let len = p.link.seal(now, PacketKind::Denied, buf, |_| Some(0));
                self.drop_pending(pending);
                Some(Transmit {
                    destination: address,
                    len: len?,
                })
            }
            Reply::Denied {
                address,
                cipher,
                sequence,
            } => {
                let len = wire::seal_packet(buf, PacketKind::Denied, sequence, 0, &cipher)?;
                Some(Transmit {
                    destination: address,
                    len,
                })
            }
        }
    }

    fn write_slot(&mut self, now: Instant, slot: usize, buf: &mut [u8]) -> Option<Transmit> {
        let interval = self.config.keep_alive_interval;
        let pacing = self.config.pacing;
        let max_clients = self.slots.len() as u32;
        let s = &mut self.slots[slot];
        match s.state {
            SlotState::Free => None,
            SlotState::Closing { remaining } => {
                let conn = s.connection.as_mut()?;
                let len = conn
                    .link
                    .seal(now, PacketKind::Disconnect, buf, |_| Some(0));
                let destination = conn.link.address;
                if remaining <= 1 {
                    s.state = SlotState::Free;
                    s.connection = None;
                } else {
                    s.state = SlotState::Closing {
                        remaining: remaining - 1,
                    };
                }
                len.map(|len| Transmit { destination, len })
            }
            SlotState::Connected => {
                let conn = s.connection.as_mut()?;
                let destination = conn.link.address;
                let endpoint = &mut conn.endpoint;
                let held = match (conn.pacer.as_mut(), &pacing) {
                    (Some(pacer), Some(pacing)) => !pacer.ready(now, pacing),
                    _ => false,
                };
                let payload = if held {
                    None
                } else {
                    conn.link.seal(now, PacketKind::Payload, buf, |body| {
                        endpoint.write_packet(now, body).map(|(_, len)| len)
                    })
                };
                if let (Some(pacer), Some(len)) = (conn.pacer.as_mut(), payload) {
                    pacer.spend(len);
                }
                let len = payload.or_else(|| {
                    if now < conn.link.keep_alive_at(interval, now) {
                        return None;
                    }
                    conn.link.seal(now, PacketKind::KeepAlive, buf, |body| {
                        wire::write_keep_alive_body(body, slot as u32, max_clients)
                    })
                })?;
                Some(Transmit { destination, len })
            }
        }
    }

    /// The next instant [`Self::handle_timeout`] (and then
    /// [`Self::poll_transmit`]) has work: a keep-alive, a resend, a loss or
    /// connection timeout, a handshake expiring.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let now = self.last_now;
        let interval = self.config.keep_alive_interval;
        let replies = (!self.replies.is_empty()).then_some(now);
        let slots = self.active.iter().map(|&i| &self.slots[i]).flat_map(|s| {
            match (s.state, &s.connection) {
                (SlotState::Connected, Some(c)) => {
                    let mut at = c.link.wakeups(&c.endpoint, interval, now);
                    // A paced connection's packets wait for its bucket.
                    if let (Some(pacer), Some(pacing)) = (&c.pacer, &self.config.pacing) {
                        at[2] = at[2].map(|t| t.max(pacer.ready_at(pacing)));
                    }
                    at
                }
                (SlotState::Closing { .. }, Some(_)) => [Some(now), None, None],
                _ => [None; 3],
            }
        });
        let pending = self.pending.iter().flatten().map(|p| Some(p.deadline()));
        earliest(std::iter::once(replies).chain(slots).chain(pending))
    }

    /// Advances timers to `now`: connections silent for their timeout close,
    /// handshakes past their deadline are forgotten, packet layers presume
    /// lost what timed out.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        // Backwards: closing a slot swaps the last active one into its place.
        for k in (0..self.active.len()).rev() {
            let slot = self.active[k];
            let s = &mut self.slots[slot];
            if s.state != SlotState::Connected {
                continue;
            }
            let Some(conn) = s.connection.as_mut() else {
                continue;
            };
            if conn.link.timed_out(now) {
                self.close_slot(slot, DisconnectReason::TimedOut);
            } else {
                conn.endpoint.handle_timeout(now);
                if conn.endpoint.deliveries_pending() {
                    self.mark_readable(slot);
                }
            }
        }
        for i in 0..if self.pending_live > 0 {
            self.pending.len()
        } else {
            0
        } {
            if self.pending[i]
                .as_ref()
                .is_some_and(|p| now >= p.deadline())
            {
                self.drop_pending(i);
            }
        }
    }
}

/// How a refused token is counted.
fn token_drop_kind(e: &NetError) -> DropKind {
    match e {
        NetError::TokenExpired { .. } => DropKind::ExpiredToken,
        NetError::TokenForged => DropKind::ForgedToken,
        NetError::WrongProtocol { .. } => DropKind::WrongProtocol,
        NetError::WrongVersion => DropKind::WrongVersion,
        NetError::ServerAddressNotListed(_) => DropKind::AddressNotListed,
        _ => DropKind::MalformedToken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ServerConfig {
        ServerConfig::new(
            1,
            Key::from_bytes([1; 32]),
            "127.0.0.1:1".parse().unwrap(),
            8,
        )
    }

    #[test]
    fn config_validation_names_the_field() {
        assert!(config().validate().is_ok());
        let field_of = |c: ServerConfig| match c.validate() {
            Err(NetError::InvalidParameter { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field_of(ServerConfig {
                max_clients: 0,
                ..config()
            }),
            "max_clients"
        );
        assert_eq!(
            field_of(ServerConfig {
                max_pending: 0,
                ..config()
            }),
            "max_pending"
        );
        assert_eq!(
            field_of(ServerConfig {
                token_history: 0,
                ..config()
            }),
            "token_history"
        );
        assert_eq!(
            field_of(ServerConfig {
                keep_alive_interval: Duration::ZERO,
                ..config()
            }),
            "keep_alive_interval"
        );
        let mut big = config();
        big.packet.max_packet_size = 1300;
        assert_eq!(field_of(big), "packet.max_packet_size");
    }

    #[test]
    fn unix_anchor_maps_both_ways() {
        let t0 = Instant::now();
        let a = UnixAnchor {
            instant: t0,
            unix: 1_000,
        };
        assert_eq!(a.unix_at(t0 + Duration::from_millis(2_500)), 1_002);
        assert_eq!(a.unix_at(t0), 1_000);
        assert_eq!(a.instant_of(1_010), t0 + Duration::from_secs(10));
        assert_eq!(a.instant_of(500), t0, "the past maps to the anchor");
        assert_eq!(a.instant_of(u64::MAX), t0 + Duration::from_secs(YEAR_SECS));
    }

    #[test]
    fn token_errors_map_to_drop_kinds() {
        assert_eq!(
            token_drop_kind(&NetError::TokenForged),
            DropKind::ForgedToken
        );
        assert_eq!(
            token_drop_kind(&NetError::TokenExpired {
                expire_unix: 1,
                now_unix: 2
            }),
            DropKind::ExpiredToken
        );
        assert_eq!(
            token_drop_kind(&NetError::WrongProtocol {
                expected: 1,
                found: 2
            }),
            DropKind::WrongProtocol
        );
        assert_eq!(
            token_drop_kind(&NetError::MalformedToken("x")),
            DropKind::MalformedToken
        );
    }
}
