//! One match of any game played by its own bots in this process, sans IO:
//! the game's [`Match`], the secure layer's [`Server`] and one
//! [`GameClient`] per player with the game's bot ([`BotGame::Bot`]) deciding
//! its inputs, the datagrams handed across in memory on a virtual clock that
//! steps one tick period per tick.
//!
//! Timed per tick (a telemetry frame, as the live server records one): what
//! the server's thread does between its system calls. The inputs sealed by
//! the clients since the last tick are opened ([`Server::handle_datagram`]),
//! the connection timers run, every readable slot's messages and delivery
//! notifications go to the match, the match ticks, and every player's packet
//! is written and sealed ([`Match::transmit_tick`]). Untimed: the clients
//! open their packets, the bots read events and decide the next input, the
//! clients seal it; in a cold run also a write of one byte per cache line of
//! a buffer larger than the caches, as a live match finds them after
//! sleeping a period beside other matches and bots.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hightick_client::{GameClient, GameClientConfig};
use hightick_engine::{Bot, BotGame, Match, PlayerId};
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{ConnectToken, Key, Server, ServerConfig, ServerEvent, TokenParams};
use hightick_telemetry::{FrameRecorder, ModeBudget, RecorderConfig, Subsystem};

use crate::error::LabError;

/// Bytes written between ticks of a cold run to evict the caches: twice the
/// largest last-level cache of the hosts this runs on (as the arena's
/// `match_tick` bench).
pub const EVICT_BYTES: usize = 32 << 20;
/// The unix time the in-process server starts at (tokens last a day from it).
const UNIX_START: u64 = 1_700_000_000;
/// Handshake rounds to try: two suffice when nothing is lost.
const HANDSHAKE_ROUNDS: usize = 8;
/// Acks wait for the next packet up to this long (the host's setting).
const SERVER_ACK_DELAY: Duration = Duration::from_millis(50);
/// Datagrams a client may send in one tick (input, acks, a resync).
const DATAGRAMS_PER_CLIENT: usize = 4;

/// Whether the caches are left warm between ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caches {
    /// Left as the last tick left them.
    Warm,
    /// Evicted between ticks ([`EVICT_BYTES`]).
    Evicted,
}

/// What one run of the match measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SansIoRun {
    /// Mean tick time of each round, microseconds.
    pub round_means_us: Vec<f64>,
    /// Mean bytes of a client's datagram to the server.
    pub client_datagram_bytes: f64,
    /// Mean bytes of the server's packet to a client.
    pub server_datagram_bytes: f64,
}

/// One seat: the client, its bot, and where the server sees it.
struct Seat<G: BotGame> {
    client: GameClient<G>,
    bot: G::Bot,
    player: PlayerId,
    slot: usize,
    address: SocketAddr,
}

/// A bot match of `G` stepped in this process. See the module docs.
pub struct SansIoMatch<G: BotGame> {
    game: Match<G>,
    server: Server,
    seats: Vec<Seat<G>>,
    /// Client datagrams waiting for the server's next tick: (from, len).
    inbox: Vec<(SocketAddr, usize)>,
    inbox_buffers: Vec<Box<[u8]>>,
    /// Each seat's packet of this tick and its length.
    outbox: Vec<Box<[u8]>>,
    outbox_lens: Vec<usize>,
    scratch: Box<[u8]>,
    message: Box<[u8]>,
    start: Instant,
    period: Duration,
    ticks: u32,
}

impl<G: BotGame> std::fmt::Debug for SansIoMatch<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SansIoMatch")
            .field("players", &self.seats.len())
            .field("ticks", &self.ticks)
            .finish_non_exhaustive()
    }
}

fn address(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 50_000))
}

fn server_address() -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 1], 40_000))
}

fn setup(what: impl std::fmt::Display) -> LabError {
    LabError::Breakdown(format!("sans-IO match: {what}"))
}

impl<G: BotGame> SansIoMatch<G> {
    /// A match of `mode` (the game's mode name) with `settings` (the game's
    /// JSON; `null`: the mode's own), every seat taken by a bot through the
    /// handshake, seeded with `seed`.
    pub fn new(mode: &str, settings: &serde_json::Value, seed: u64) -> Result<Self, LabError> {
        let (mode, settings) = hightick_swarm::mode_and_settings::<G>(Some(mode), settings)?;
        let rate = mode.tick_rate_hz;
        let (config, rules) = G::create(mode, &settings, rate, seed).map_err(setup)?;
        let entities = usize::from(config.max_entities);
        let mut game = Match::new(config, rules).map_err(setup)?;
        let players = usize::from(mode.players);
        let mut rng = rand::rng();
        let key = Key::generate(&mut rng);
        let start = Instant::now();
        let mut net = ServerConfig::new(
            hightick_proto::PROTOCOL_ID,
            key.clone(),
            server_address(),
            players,
        );
        net.packet.ack_delay = SERVER_ACK_DELAY;
        let mut server = Server::new(net, start, UNIX_START, &mut rng).map_err(setup)?;
        let client_config = GameClientConfig {
            entities,
            tick_rate_hz: rate,
            ..GameClientConfig::default()
        };
        let mut clients = Vec::with_capacity(players);
        for i in 0..players {
            let token = ConnectToken::generate(
                &TokenParams {
                    protocol_id: hightick_proto::PROTOCOL_ID,
                    client_id: i as u64,
                    create_unix: UNIX_START,
                    expire_unix: UNIX_START + 24 * 3600,
                    timeout_seconds: 10,
                    server_addresses: &[server_address()],
                    user_data: &[],
                },
                &key,
                &mut rng,
            )
            .map_err(setup)?;
            let mut client =
                GameClient::<G>::with_config(token, client_config.clone(), start).map_err(setup)?;
            client.track_positions(G::replica_position);
            clients.push(client);
        }
        let mut datagram = vec![0u8; MAX_PACKET_BYTES].into_boxed_slice();
        let mut slots = vec![usize::MAX; players];
        for _ in 0..HANDSHAKE_ROUNDS {
            if clients.iter().all(GameClient::is_connected) {
                break;
            }
            for (i, client) in clients.iter_mut().enumerate() {
                while let Some(t) = client.poll_transmit(start, &mut datagram) {
                    server.handle_datagram(start, address(i), &mut datagram[..t.len]);
                }
            }
            while let Some(t) = server.poll_transmit(start, &mut datagram) {
                if let Some(i) = (0..players).find(|&i| address(i) == t.destination) {
                    clients[i].handle_datagram(start, server_address(), &mut datagram[..t.len]);
                }
            }
            while let Some(event) = server.poll_event() {
                if let ServerEvent::Connected {
                    slot, client_id, ..
                } = event
                    && let Some(s) = slots.get_mut(client_id as usize)
                {
                    *s = slot;
                }
            }
        }
        if let Some(i) = slots.iter().position(|&s| s == usize::MAX) {
            return Err(setup(format!("client {i} never connected")));
        }
        let mut seats = Vec::with_capacity(players);
        for (i, (client, slot)) in clients.into_iter().zip(slots).enumerate() {
            let player = game.join().map_err(setup)?;
            let bot = G::bot(mode, &settings, rate, i as u16, seed).map_err(setup)?;
            seats.push(Seat {
                client,
                bot,
                player,
                slot,
                address: address(i),
            });
        }
        Ok(Self {
            game,
            server,
            inbox: Vec::with_capacity(players * DATAGRAMS_PER_CLIENT),
            inbox_buffers: (0..players * DATAGRAMS_PER_CLIENT)
                .map(|_| vec![0u8; MAX_PACKET_BYTES].into_boxed_slice())
                .collect(),
            outbox: (0..players)
                .map(|_| vec![0u8; MAX_PACKET_BYTES].into_boxed_slice())
                .collect(),
            outbox_lens: vec![0; players],
            seats,
            scratch: datagram,
            message: vec![0u8; 64 * 1024].into_boxed_slice(),
            start,
            period: Duration::from_secs(1) / rate.max(1),
            ticks: 0,
        })
    }

    /// Players in the match.
    pub fn players(&self) -> usize {
        self.seats.len()
    }

    /// The match's tick rate.
    pub fn tick_rate_hz(&self) -> u32 {
        self.game.config().tick_rate_hz
    }

    fn now(&self) -> Instant {
        self.start + self.period * self.ticks
    }

    /// Untimed: every bot reads what its client got and decides the input
    /// for the server's next tick; the clients seal what they send.
    fn clients_act(&mut self) -> u64 {
        let now = self.now();
        let next = self.game.tick_number() + 1;
        self.inbox.clear();
        let mut bytes = 0;
        for seat in &mut self.seats {
            while let Some(event) = seat.client.poll_event() {
                if !seat.bot.observe(&event) {
                    seat.client.report_desync();
                }
            }
            for _ in 0..seat.bot.check_world(seat.client.world()) {
                seat.client.report_desync();
            }
            let command = seat.bot.command(seat.client.world(), next);
            // A client that lost its connection has nobody to send to.
            let _ = seat.client.send_input(command);
            seat.client.handle_timeout(now);
            while self.inbox.len() < self.inbox_buffers.len() {
                let buf = &mut self.inbox_buffers[self.inbox.len()];
                let Some(t) = seat.client.poll_transmit(now, buf) else {
                    break;
                };
                bytes += t.len as u64;
                self.inbox.push((seat.address, t.len));
            }
        }
        bytes
    }

    /// Timed: the server's work of one tick (see the module docs).
    fn server_tick(&mut self, frame: &hightick_telemetry::Frame<'_>) {
        let now = self.now();
        // As the live worker does: every seat's connection asked for first.
        for seat in &self.seats {
            self.server.prefetch(seat.slot);
        }
        {
            let _receive = frame.scope(Subsystem::Network, "receive");
            for (k, &(from, len)) in self.inbox.iter().enumerate() {
                self.server
                    .handle_datagram(now, from, &mut self.inbox_buffers[k][..len]);
            }
            self.server.handle_timeout(now);
            while let Some(slot) = self.server.poll_readable() {
                let Some(seat) = self.seats.iter().find(|s| s.slot == slot) else {
                    continue;
                };
                while let Some(m) = self.server.poll_message(slot, &mut self.message) {
                    // A malformed message is counted by the match.
                    let _ = self
                        .game
                        .handle_message(seat.player, &self.message[..m.len]);
                }
                self.game
                    .absorb_deliveries(seat.player, &mut self.server, slot);
            }
        }
        self.game.tick_in(frame);
        let _send = frame.scope(Subsystem::Network, "send_seal");
        for (i, seat) in self.seats.iter().enumerate() {
            self.outbox_lens[i] = self
                .game
                .transmit_tick(
                    seat.player,
                    &mut self.server,
                    seat.slot,
                    now,
                    &mut self.outbox[i],
                )
                .map_or(0, |t| t.len);
        }
    }

    /// Untimed: each client opens its packet; what else the server has to
    /// send (keep-alives, replies) reaches its client.
    fn clients_receive(&mut self) -> u64 {
        let now = self.now();
        let mut bytes = 0;
        for (i, seat) in self.seats.iter_mut().enumerate() {
            let len = self.outbox_lens[i];
            if len > 0 {
                bytes += len as u64;
                seat.client
                    .handle_datagram(now, server_address(), &mut self.outbox[i][..len]);
            }
        }
        while let Some(t) = self.server.poll_transmit(now, &mut self.scratch) {
            if let Some(seat) = self.seats.iter_mut().find(|s| s.address == t.destination) {
                seat.client
                    .handle_datagram(now, server_address(), &mut self.scratch[..t.len]);
            }
        }
        bytes
    }

    /// Runs `warmup` ticks unmeasured, then `rounds` rounds of
    /// `ticks_per_round` measured ticks, with the caches as `caches` says.
    pub fn run(
        &mut self,
        warmup: u32,
        rounds: u32,
        ticks_per_round: u32,
        caches: Caches,
    ) -> SansIoRun {
        let mut recorder = FrameRecorder::new(
            RecorderConfig {
                tick_rate_hz: f64::from(self.tick_rate_hz()),
                ..RecorderConfig::default()
            },
            ModeBudget::default(),
        )
        .expect("the default recorder config is valid");
        let mut evict = vec![
            0u8;
            if caches == Caches::Evicted {
                EVICT_BYTES
            } else {
                0
            }
        ];
        let mut round_means_us = Vec::with_capacity(rounds as usize);
        let (mut bytes_in, mut bytes_out, mut packets) = (0u64, 0u64, 0u64);
        let mut round_ns = 0u64;
        let mut in_round = 0u32;
        let total = warmup + rounds * ticks_per_round.max(1);
        for t in 0..total {
            let sent = self.clients_act();
            let frame = recorder.begin(u64::from(self.ticks));
            self.server_tick(&frame);
            let outcome = frame.end();
            self.ticks += 1;
            let received = self.clients_receive();
            if t >= warmup {
                bytes_in += sent;
                bytes_out += received;
                packets += self.outbox_lens.iter().filter(|&&l| l > 0).count() as u64;
                round_ns += outcome.total_ns;
                in_round += 1;
                if in_round == ticks_per_round.max(1) {
                    round_means_us.push(round_ns as f64 / f64::from(in_round) / 1e3);
                    (round_ns, in_round) = (0, 0);
                }
            }
            for b in evict.iter_mut().step_by(64) {
                *b = b.wrapping_add(1);
            }
            std::hint::black_box(&evict);
        }
        let client_ticks =
            (u64::from(rounds * ticks_per_round.max(1)) * self.seats.len() as u64).max(1);
        SansIoRun {
            round_means_us,
            client_datagram_bytes: bytes_in as f64 / client_ticks as f64,
            server_datagram_bytes: bytes_out as f64 / packets.max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_arena::game::Arena;

    #[test]
    fn an_arena_match_plays_over_the_secure_layer_in_memory() {
        let mut m = SansIoMatch::<Arena>::new("5v5", &serde_json::Value::Null, 7).unwrap();
        assert_eq!(m.players(), 10);
        let run = m.run(16, 2, 8, Caches::Warm);
        assert_eq!(run.round_means_us.len(), 2);
        assert!(
            run.round_means_us
                .iter()
                .all(|us| us.is_finite() && *us > 0.0)
        );
        // Inputs reached the match, and snapshots the clients.
        assert!(run.client_datagram_bytes > 0.0, "{run:?}");
        assert!(run.server_datagram_bytes > 0.0, "{run:?}");
        let inputs: u64 = m
            .seats
            .iter()
            .filter_map(|s| m.game.input_stats(s.player))
            .map(|s| s.accepted)
            .sum();
        assert!(inputs > 0);
        assert!(
            m.seats
                .iter()
                .all(|s| s.client.stats().snapshots_applied > 0)
        );
    }
}
