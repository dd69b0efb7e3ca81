//! The client side of the secure layer: it takes a connect token, tries each
//! server address in turn (request, then challenge response), and once
//! connected carries a [`PacketEndpoint`] for messages, acks and RTT.
//!
//! Sans-IO like the server: [`Client::handle_datagram`],
//! [`Client::poll_transmit`], [`Client::poll_timeout`],
//! [`Client::handle_timeout`], [`Client::poll_event`].
//!
//! One deliberate difference from netcode.io: an authenticated payload packet
//! received while waiting for the server's keep-alive also completes the
//! handshake (only a server that accepted our response can seal one), so a lost
//! keep-alive does not cost the first payloads.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::packet::Delivery;
use crate::packet::{PacketConfig, PacketEndpoint, ReceivedMessage};
use crate::secure::connection::{DisconnectReason, Transmit};
use crate::secure::counters::{DropCounters, DropKind};
use crate::secure::error::NetError;
use crate::secure::link::{Link, earliest, timeout_from_seconds};
use crate::secure::server::MAX_INTERVAL;
use crate::secure::token::{CHALLENGE_TOKEN_BYTES, ConnectToken};
use crate::secure::wire::{self, MAX_PACKET_BYTES, PacketKind};

/// Settings of a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// How often a request or response is resent while connecting (default 100 ms).
    pub handshake_interval: Duration,
    /// Keep-alive period of an otherwise silent connection (default 100 ms).
    pub keep_alive_interval: Duration,
    /// Redundant disconnect packets sent on [`Client::disconnect`] (default 10).
    pub disconnect_packets: u32,
    /// The packet layer (the server must use the same).
    pub packet: PacketConfig,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            handshake_interval: Duration::from_millis(100),
            keep_alive_interval: Duration::from_millis(100),
            disconnect_packets: 10,
            packet: PacketConfig::default(),
        }
    }
}

/// Where a connection attempt stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectStage {
    /// Sending connection requests, waiting for a challenge.
    SendingRequest,
    /// Echoing the challenge, waiting for the server's keep-alive.
    SendingResponse,
}

/// The client's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientState {
    /// Handshaking with the server at index `server` of the token's list.
    Connecting {
        /// Index into the token's server addresses.
        server: usize,
        /// How far the handshake got.
        stage: ConnectStage,
    },
    /// Connected: messages flow.
    Connected,
    /// Over, for the given reason.
    Disconnected(DisconnectReason),
}

/// What a [`Client`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientEvent {
    /// The handshake completed with `server`.
    Connected {
        /// The server's address.
        server: SocketAddr,
    },
    /// The connection ended or could not be made.
    Disconnected(DisconnectReason),
}

/// The client state machine. See the [module docs](self).
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    token: ConnectToken,
    state: ClientState,
    link: Link,
    endpoint: PacketEndpoint,
    /// The challenge body to echo: challenge sequence and sealed token.
    challenge: Option<(u64, [u8; CHALLENGE_TOKEN_BYTES])>,
    attempt_started: Instant,
    token_deadline: Instant,
    next_handshake: Instant,
    client_index: u32,
    max_clients: u32,
    farewells: u32,
    events: VecDeque<ClientEvent>,
    counters: DropCounters,
    last_now: Instant,
}

impl Client {
    /// A client that starts connecting to the token's first server at `now`.
    /// The whole attempt may take as long as the token is valid for
    /// (`expire - create` seconds); each server gets the token's timeout.
    pub fn new(token: ConnectToken, config: ClientConfig, now: Instant) -> Result<Self, NetError> {
        if token.expire_unix <= token.create_unix {
            return Err(NetError::MalformedToken("expires before it was created"));
        }
        let bad = |field, reason| Err(NetError::InvalidParameter { field, reason });
        let in_range = |d: Duration| !d.is_zero() && d <= MAX_INTERVAL;
        if !in_range(config.handshake_interval) {
            return bad("handshake_interval", "must be positive and at most an hour");
        }
        if !in_range(config.keep_alive_interval) {
            return bad(
                "keep_alive_interval",
                "must be positive and at most an hour",
            );
        }
        if config.packet.max_packet_size > wire::MAX_PAYLOAD_BYTES {
            return bad(
                "packet.max_packet_size",
                "must be at most 1200 (one payload packet)",
            );
        }
        let endpoint = PacketEndpoint::try_new(&config.packet, now)?;
        let first = *token
            .server_addresses
            .as_slice()
            .first()
            .ok_or(NetError::MalformedToken("no server address"))?;
        let link = Link::new(
            first,
            &token.client_to_server_key,
            &token.server_to_client_key,
            token.protocol_id,
            timeout_from_seconds(token.timeout_seconds),
            now,
        );
        // Tokens live seconds to minutes; cap absurd lifetimes at a year.
        let valid_for =
            Duration::from_secs((token.expire_unix - token.create_unix).min(365 * 24 * 3600));
        Ok(Self {
            state: ClientState::Connecting {
                server: 0,
                stage: ConnectStage::SendingRequest,
            },
            link,
            endpoint,
            challenge: None,
            attempt_started: now,
            token_deadline: now.checked_add(valid_for).unwrap_or(now),
            next_handshake: now,
            client_index: 0,
            max_clients: 0,
            farewells: 0,
            events: VecDeque::with_capacity(4),
            counters: DropCounters::default(),
            last_now: now,
            config,
            token,
        })
    }

    /// The current state.
    pub fn state(&self) -> ClientState {
        self.state
    }

    /// Whether the handshake completed and the connection is up.
    pub fn is_connected(&self) -> bool {
        self.state == ClientState::Connected
    }

    /// The server being connected to (or connected to).
    pub fn server_address(&self) -> SocketAddr {
        self.link.address
    }

    /// The slot the server gave this client and the server's slot count, as
    /// told by its keep-alives (zeros until the first one arrives).
    pub fn slot(&self) -> (u32, u32) {
        (self.client_index, self.max_clients)
    }

    /// Datagrams dropped so far, by kind.
    pub fn counters(&self) -> &DropCounters {
        &self.counters
    }

    /// The packet layer (RTT, loss, stats).
    pub fn endpoint(&self) -> &PacketEndpoint {
        &self.endpoint
    }

    fn endpoint_mut(&mut self) -> Result<&mut PacketEndpoint, NetError> {
        if self.is_connected() {
            Ok(&mut self.endpoint)
        } else {
            Err(NetError::ClientNotConnected)
        }
    }

    /// Queues a message on the reliable ordered channel.
    pub fn send_reliable(&mut self, msg: &[u8]) -> Result<(), NetError> {
        Ok(self.endpoint_mut()?.send_reliable(msg)?)
    }

    /// Queues a message on the unreliable channel (next packet only).
    pub fn send_unreliable(&mut self, msg: &[u8]) -> Result<(), NetError> {
        Ok(self.endpoint_mut()?.send_unreliable(msg)?)
    }

    /// Copies the next message received into `out`.
    pub fn poll_message(&mut self, out: &mut [u8]) -> Option<ReceivedMessage> {
        self.endpoint.poll_message(out)
    }

    /// The next delivery notification (acked / presumed lost) of a sent packet.
    pub fn poll_delivery(&mut self) -> Option<Delivery> {
        self.endpoint.poll_delivery()
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// Ends the connection (or the attempt). When connected, the server is
    /// told with a few redundant disconnect packets from `poll_transmit`.
    pub fn disconnect(&mut self) {
        if self.is_connected() {
            self.farewells = self.config.disconnect_packets;
        }
        self.finish(DisconnectReason::ClosedLocally);
    }

    fn finish(&mut self, reason: DisconnectReason) {
        if !matches!(self.state, ClientState::Disconnected(_)) {
            self.state = ClientState::Disconnected(reason);
            self.events.push_back(ClientEvent::Disconnected(reason));
        }
    }

    fn connect(&mut self) {
        self.state = ClientState::Connected;
        self.challenge = None;
        self.events.push_back(ClientEvent::Connected {
            server: self.link.address,
        });
    }

    /// Moves on to the next server of the token, or ends with `reason`.
    fn next_server(&mut self, now: Instant, reason: DisconnectReason) {
        let ClientState::Connecting { server, .. } = self.state else {
            return;
        };
        match self.token.server_addresses.as_slice().get(server + 1) {
            Some(&address) => {
                self.state = ClientState::Connecting {
                    server: server + 1,
                    stage: ConnectStage::SendingRequest,
                };
                self.link.retarget(address, now);
                self.challenge = None;
                self.attempt_started = now;
                self.next_handshake = now;
            }
            None => self.finish(reason),
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
        if datagram.first() == Some(&0) {
            return Err(DropKind::UnexpectedPacket);
        }
        let header = wire::read_header(datagram)?;
        if from != self.link.address {
            return Err(DropKind::UnknownAddress);
        }
        let stage = match self.state {
            ClientState::Connecting { stage, .. } => Some(stage),
            ClientState::Connected => None,
            ClientState::Disconnected(_) => return Err(DropKind::UnexpectedPacket),
        };
        use ConnectStage::*;
        let expected = matches!(
            (header.kind, stage),
            (PacketKind::Denied, Some(_))
                | (PacketKind::Challenge, Some(SendingRequest))
                | (
                    PacketKind::KeepAlive | PacketKind::Payload,
                    Some(SendingResponse) | None
                )
                | (PacketKind::Disconnect, None)
        );
        if !expected {
            return Err(DropKind::UnexpectedPacket);
        }
        let body = self.link.open(now, datagram, &header)?;
        let body = &datagram[body];
        match header.kind {
            PacketKind::Denied => self.next_server(now, DisconnectReason::Denied),
            PacketKind::Challenge => {
                let (sequence, token) =
                    wire::read_challenge_body(body).ok_or(DropKind::Truncated)?;
                self.challenge = Some((sequence, *token));
                if let ClientState::Connecting { server, .. } = self.state {
                    self.state = ClientState::Connecting {
                        server,
                        stage: SendingResponse,
                    };
                }
                self.next_handshake = now;
            }
            PacketKind::KeepAlive => {
                if let Some((index, max)) = wire::read_keep_alive_body(body) {
                    self.client_index = index;
                    self.max_clients = max;
                }
                if stage.is_some() {
                    self.connect();
                }
            }
            PacketKind::Payload => {
                if stage.is_some() {
                    self.connect();
                }
                self.endpoint
                    .read_packet(now, body)
                    .map_err(|_| DropKind::PayloadRejected)?;
            }
            PacketKind::Disconnect => self.finish(DisconnectReason::ClosedByPeer),
            PacketKind::Request | PacketKind::Response => return Err(DropKind::UnexpectedPacket),
        }
        Ok(())
    }

    /// The next datagram to send, written into `buf`, or `None` when nothing
    /// is due. `buf` must hold [`MAX_PACKET_BYTES`]; with a shorter one
    /// nothing is sent.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.last_now = self.last_now.max(now);
        if buf.len() < MAX_PACKET_BYTES {
            return None;
        }
        let destination = self.link.address;
        let len = match self.state {
            ClientState::Disconnected(_) if self.farewells > 0 => {
                self.farewells -= 1;
                self.link
                    .seal(now, PacketKind::Disconnect, buf, |_| Some(0))?
            }
            ClientState::Disconnected(_) => return None,
            ClientState::Connecting { stage, .. } => {
                if now < self.next_handshake {
                    return None;
                }
                self.next_handshake = now + self.config.handshake_interval;
                match (stage, &self.challenge) {
                    (ConnectStage::SendingResponse, Some((sequence, token))) => {
                        let (sequence, token) = (*sequence, *token);
                        self.link.seal(now, PacketKind::Response, buf, |body| {
                            wire::write_challenge_body(body, sequence, &token)
                        })?
                    }
                    _ => wire::write_request(&self.token, buf)?,
                }
            }
            ClientState::Connected => {
                let endpoint = &mut self.endpoint;
                let (index, max) = (self.client_index, self.max_clients);
                let interval = self.config.keep_alive_interval;
                let link = &mut self.link;
                link.seal(now, PacketKind::Payload, buf, |body| {
                    endpoint.write_packet(now, body).map(|(_, len)| len)
                })
                .or_else(|| {
                    if now < link.keep_alive_at(interval, now) {
                        return None;
                    }
                    link.seal(now, PacketKind::KeepAlive, buf, |body| {
                        wire::write_keep_alive_body(body, index, max)
                    })
                })?
            }
        };
        Some(Transmit { destination, len })
    }

    fn attempt_deadline(&self) -> Option<Instant> {
        self.link
            .timeout
            .and_then(|t| self.attempt_started.checked_add(t))
    }

    /// The next instant [`Self::handle_timeout`] (and then
    /// [`Self::poll_transmit`]) has work.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            ClientState::Connecting { .. } => earliest([
                Some(self.next_handshake),
                Some(self.token_deadline),
                self.attempt_deadline(),
            ]),
            ClientState::Connected => earliest(self.link.wakeups(
                &self.endpoint,
                self.config.keep_alive_interval,
                self.last_now,
            )),
            ClientState::Disconnected(_) => (self.farewells > 0).then_some(self.last_now),
        }
    }

    /// Advances timers to `now`: the token's validity, each server's
    /// handshake timeout, the connection timeout, the packet layer's losses.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        match self.state {
            ClientState::Connecting { .. } => {
                if now >= self.token_deadline {
                    self.finish(DisconnectReason::TokenExpired);
                } else if self.attempt_deadline().is_some_and(|d| now >= d) {
                    self.next_server(now, DisconnectReason::ConnectTimedOut);
                }
            }
            ClientState::Connected => {
                if self.link.timed_out(now) {
                    self.finish(DisconnectReason::TimedOut);
                } else {
                    self.endpoint.handle_timeout(now);
                }
            }
            ClientState::Disconnected(_) => {}
        }
    }
}
