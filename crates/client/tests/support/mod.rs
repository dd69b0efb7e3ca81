//! An in-process host for the client's tests: a real `hightick_net::Server`
//! and a `Match<Arena>` (the 5v5 scenario), wired the way the server crate
//! wires them, and clients exchanging datagrams with it directly (no
//! sockets), driven by a virtual clock.

#![allow(dead_code)]

pub(crate) mod prediction_run;

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hightick_arena::game::{Arena, ArenaReplica};
use hightick_arena::scenario::Scenario;
use hightick_client::GameClient;
use hightick_engine::{Match, PlayerId};
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{ConnectToken, Key, Server, ServerConfig, ServerEvent, TokenParams};

pub(crate) const SERVER: &str = "10.0.0.1:40000";
pub(crate) const PERIOD: Duration = Duration::from_nanos(1_000_000_000 / 128);

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1_700_000_000, |d| d.as_secs())
}

pub(crate) fn client_address(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, 1, i as u8 + 1], 50_000))
}

pub(crate) struct Host {
    pub server: Server,
    pub game: Match<Arena>,
    pub key: Key,
    /// The player of each server slot.
    pub seats: Vec<Option<PlayerId>>,
    pub now: Instant,
    buf: Vec<u8>,
    message: Vec<u8>,
    /// Datagrams to send, in order.
    pub outbox: Vec<(SocketAddr, Vec<u8>)>,
}

impl Host {
    /// A 5v5 arena match with `players` joined (client id `i` plays player
    /// `i`), whose server listens on the simulated [`SERVER`] address.
    pub(crate) fn new(players: usize, now: Instant) -> Self {
        Self::at(SERVER.parse().unwrap(), players, now)
    }

    /// The same, with the server at `address`.
    pub(crate) fn at(address: SocketAddr, players: usize, now: Instant) -> Self {
        let scenario = Scenario::five_v_five();
        let arena = Arena::new(scenario.arena.clone(), &scenario.match_config, 7).unwrap();
        let mut game = Match::new(scenario.match_config.clone(), arena).unwrap();
        for _ in 0..players {
            game.join().unwrap();
        }
        let key = Key::generate(&mut rand::rng());
        let config = ServerConfig::new(hightick_proto::PROTOCOL_ID, key.clone(), address, players);
        let server = Server::new(config, now, unix_now(), &mut rand::rng()).unwrap();
        Self {
            server,
            game,
            key,
            seats: vec![None; players],
            now,
            buf: vec![0; MAX_PACKET_BYTES],
            message: vec![0; 64 * 1024],
            outbox: Vec::new(),
        }
    }

    pub(crate) fn token(&self, client_id: u64) -> ConnectToken {
        let address = self.server.config().public_address;
        let unix = unix_now();
        ConnectToken::generate(
            &TokenParams {
                protocol_id: hightick_proto::PROTOCOL_ID,
                client_id,
                create_unix: unix,
                expire_unix: unix + 60,
                timeout_seconds: 5,
                server_addresses: &[address],
                user_data: &[],
            },
            &self.key,
            &mut rand::rng(),
        )
        .unwrap()
    }

    pub(crate) fn client(&self, client_id: u64) -> GameClient<Arena> {
        let mut c = GameClient::new(self.token(client_id), self.now).unwrap();
        c.track_positions(|r: &ArenaReplica| r.transform.map(|t| t.position));
        c
    }

    /// A datagram from client `i`.
    pub(crate) fn receive(&mut self, i: usize, datagram: &mut [u8]) {
        self.server
            .handle_datagram(self.now, client_address(i), datagram);
    }

    /// One server tick: connections, messages, the match tick, one packet
    /// per seated client, then the secure layer's own datagrams.
    pub(crate) fn tick(&mut self) {
        let now = self.now;
        self.server.handle_timeout(now);
        while let Some(event) = self.server.poll_event() {
            match event {
                ServerEvent::Connected {
                    slot, client_id, ..
                } => {
                    let player = PlayerId(client_id as u16);
                    self.game.reconnect(player).unwrap();
                    self.seats[slot] = Some(player);
                }
                ServerEvent::Disconnected { slot, .. } => self.seats[slot] = None,
            }
        }
        for slot in 0..self.seats.len() {
            let Some(player) = self.seats[slot] else {
                continue;
            };
            while let Some(m) = self.server.poll_message(slot, &mut self.message) {
                let _ = self.game.handle_message(player, &self.message[..m.len]);
            }
            self.game.absorb_deliveries(player, &mut self.server, slot);
        }
        self.game.tick();
        for slot in 0..self.seats.len() {
            let Some(player) = self.seats[slot] else {
                continue;
            };
            if let Some(t) =
                self.game
                    .transmit_tick(player, &mut self.server, slot, now, &mut self.buf)
            {
                self.outbox
                    .push((t.destination, self.buf[..t.len].to_vec()));
            }
        }
        self.flush();
    }

    /// Takes the datagrams queued for `to`.
    pub(crate) fn take_outbox(&mut self, to: SocketAddr) -> Vec<Vec<u8>> {
        let (mine, rest) = std::mem::take(&mut self.outbox)
            .into_iter()
            .partition(|(a, _)| *a == to);
        self.outbox = rest;
        mine.into_iter().map(|(_, d)| d).collect()
    }

    /// The secure layer's own datagrams (handshake, keep-alives, resends).
    pub(crate) fn flush(&mut self) {
        while let Some(t) = self.server.poll_transmit(self.now, &mut self.buf) {
            self.outbox
                .push((t.destination, self.buf[..t.len].to_vec()));
        }
    }
}

/// Sends what a client has queued to the host.
pub(crate) fn uplink(host: &mut Host, i: usize, client: &mut GameClient<Arena>) {
    let mut buf = [0u8; MAX_PACKET_BYTES];
    while let Some(t) = client.poll_transmit(host.now, &mut buf) {
        host.receive(i, &mut buf[..t.len]);
    }
}

/// Delivers the host's datagrams for client `i`.
pub(crate) fn downlink(host: &mut Host, i: usize, client: &mut GameClient<Arena>) {
    let server = SERVER.parse().unwrap();
    for mut d in host.take_outbox(client_address(i)) {
        client.handle_datagram(host.now, server, &mut d);
    }
    if client.poll_timeout().is_some_and(|t| t <= host.now) {
        client.handle_timeout(host.now);
    }
}

/// Serves `host` over a real UDP socket on a std thread, ticking at 128 Hz
/// on the wall clock, until `stop` is set; returns the host when done.
pub(crate) fn serve_udp(
    mut host: Host,
    socket: std::net::UdpSocket,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<Host> {
    use std::sync::atomic::Ordering;
    std::thread::spawn(move || {
        socket.set_nonblocking(true).unwrap();
        let mut buf = vec![0u8; 2048];
        let mut next = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            while let Ok((n, from)) = socket.recv_from(&mut buf) {
                host.now = Instant::now();
                host.server.handle_datagram(host.now, from, &mut buf[..n]);
            }
            host.now = Instant::now();
            if host.now >= next {
                host.tick();
                next += PERIOD;
            } else {
                host.flush();
            }
            for (to, d) in host.outbox.drain(..) {
                let _ = socket.send_to(&d, to);
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        host
    })
}
