//! Test driver for the secure layer: one `Server` and one `Client` joined by
//! two simulated links, with a virtual clock that jumps to the next wake-up
//! (a datagram arriving or a `poll_timeout`), never sleeping. Modelled on
//! quinn-proto's tests/util.rs `Pair`.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hightick_net::sim_link::{SimLink, SimLinkConfig};
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{
    Client, ClientConfig, ClientEvent, ConnectToken, Key, Server, ServerConfig, ServerEvent,
    TokenParams,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

pub(crate) const PROTOCOL: u64 = 0x6869_6768_7469_636B;
pub(crate) const UNIX_START: u64 = 1_700_000_000;
pub(crate) const USER_DATA: &[u8] = b"account=42;team=blue";

pub(crate) fn server_addr() -> SocketAddr {
    "10.0.0.1:40000".parse().unwrap()
}

pub(crate) fn client_addr() -> SocketAddr {
    "10.0.0.2:50000".parse().unwrap()
}

/// Deterministic keys and tokens.
pub(crate) struct Gateway {
    pub rng: ChaCha20Rng,
    pub private_key: Key,
}

impl Gateway {
    pub(crate) fn new(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let private_key = Key::generate(&mut rng);
        Self { rng, private_key }
    }

    /// A token valid for 60 s from `UNIX_START`, timeout `timeout` seconds.
    pub(crate) fn token(
        &mut self,
        client_id: u64,
        servers: &[SocketAddr],
        timeout: i32,
    ) -> ConnectToken {
        self.token_at(client_id, servers, timeout, UNIX_START, UNIX_START + 60)
    }

    pub(crate) fn token_at(
        &mut self,
        client_id: u64,
        servers: &[SocketAddr],
        timeout: i32,
        create: u64,
        expire: u64,
    ) -> ConnectToken {
        ConnectToken::generate(
            &TokenParams {
                protocol_id: PROTOCOL,
                client_id,
                create_unix: create,
                expire_unix: expire,
                timeout_seconds: timeout,
                server_addresses: servers,
                user_data: USER_DATA,
            },
            &self.private_key,
            &mut self.rng,
        )
        .unwrap()
    }

    /// A fresh server with `max_clients` slots and a client holding `token`,
    /// joined by clean links of `latency_ms` (seeded `seed` and `seed + 1`).
    pub(crate) fn pair(
        &mut self,
        max_clients: usize,
        token: ConnectToken,
        latency_ms: u64,
        seed: u64,
    ) -> Pair {
        let now = Instant::now();
        let server = self.server(max_clients, now);
        let client = Client::new(token, ClientConfig::default(), now).unwrap();
        Pair::new(
            server,
            client,
            now,
            clean_link(latency_ms, seed),
            clean_link(latency_ms, seed + 1),
        )
    }

    pub(crate) fn server(&mut self, max_clients: usize, now: Instant) -> Server {
        self.server_with(max_clients, now, |_| {})
    }

    /// [`Self::server`] with its config changed by `tweak` first.
    pub(crate) fn server_with(
        &mut self,
        max_clients: usize,
        now: Instant,
        tweak: impl FnOnce(&mut ServerConfig),
    ) -> Server {
        let mut config = ServerConfig::new(
            PROTOCOL,
            self.private_key.clone(),
            server_addr(),
            max_clients,
        );
        tweak(&mut config);
        Server::new(config, now, UNIX_START, &mut self.rng).unwrap()
    }
}

/// A lossless link with a fixed one-way latency.
pub(crate) fn clean_link(latency_ms: u64, seed: u64) -> SimLinkConfig {
    SimLinkConfig {
        latency: Duration::from_millis(latency_ms),
        seed,
        ..SimLinkConfig::default()
    }
}

/// A bad link: loss, jitter, duplication, reordering.
pub(crate) fn lossy_link(loss: f32, seed: u64) -> SimLinkConfig {
    SimLinkConfig {
        loss,
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(20),
        duplicate: 0.02,
        reorder: 0.1,
        seed,
        capacity: 4096,
        ..SimLinkConfig::default()
    }
}

pub(crate) struct Pair {
    pub start: Instant,
    pub now: Instant,
    pub server: Server,
    pub client: Client,
    pub client_addr: SocketAddr,
    pub to_server: SimLink,
    pub to_client: SimLink,
    pub server_events: Vec<ServerEvent>,
    pub client_events: Vec<ClientEvent>,
    /// Every datagram the client sent, in order (for capture and replay tests).
    pub captured_from_client: Vec<Vec<u8>>,
    /// Every datagram the server sent to the client.
    pub captured_from_server: Vec<Vec<u8>>,
    /// When each of those was sent.
    pub captured_from_server_at: Vec<Instant>,
    pub capture: bool,
    /// Datagrams sent to an address nobody listens on.
    pub stray: usize,
    buf: Vec<u8>,
    rx: Vec<u8>,
    stalls: u32,
}

impl Pair {
    pub(crate) fn new(
        server: Server,
        client: Client,
        now: Instant,
        up: SimLinkConfig,
        down: SimLinkConfig,
    ) -> Self {
        Self {
            start: now,
            now,
            server,
            client,
            client_addr: client_addr(),
            to_server: SimLink::new(up),
            to_client: SimLink::new(down),
            server_events: Vec::new(),
            client_events: Vec::new(),
            captured_from_client: Vec::new(),
            captured_from_server: Vec::new(),
            captured_from_server_at: Vec::new(),
            capture: false,
            stray: 0,
            buf: vec![0; MAX_PACKET_BYTES],
            rx: vec![0; 2048],
            stalls: 0,
        }
    }

    /// A connected pair over the given links (panics if the handshake fails).
    pub(crate) fn connected(seed: u64, up: SimLinkConfig, down: SimLinkConfig) -> Self {
        let now = Instant::now();
        let mut gw = Gateway::new(seed);
        let server = gw.server(4, now);
        let token = gw.token(1000 + seed, &[server_addr()], 10);
        let client = Client::new(token, ClientConfig::default(), now).unwrap();
        let mut pair = Self::new(server, client, now, up, down);
        assert!(
            pair.run_until(Duration::from_secs(5), |p| p.client.is_connected()
                && p.server.is_connected(0)),
            "handshake did not complete"
        );
        pair
    }

    /// Sends everything both sides have due.
    pub(crate) fn flush(&mut self) {
        while let Some(t) = self.client.poll_transmit(self.now, &mut self.buf) {
            let bytes = &self.buf[..t.len];
            if self.capture {
                self.captured_from_client.push(bytes.to_vec());
            }
            if t.destination == server_addr() {
                self.to_server.send(self.now, bytes);
            } else {
                self.stray += 1;
            }
        }
        while let Some(t) = self.server.poll_transmit(self.now, &mut self.buf) {
            let bytes = &self.buf[..t.len];
            if t.destination == self.client_addr {
                if self.capture {
                    self.captured_from_server.push(bytes.to_vec());
                    self.captured_from_server_at.push(self.now);
                }
                self.to_client.send(self.now, bytes);
            } else {
                self.stray += 1;
            }
        }
    }

    /// Hands over every datagram due by now.
    pub(crate) fn deliver(&mut self) -> bool {
        let mut any = false;
        while let Some(n) = self.to_server.poll_deliver(self.now, &mut self.rx) {
            self.server
                .handle_datagram(self.now, self.client_addr, &mut self.rx[..n]);
            any = true;
        }
        while let Some(n) = self.to_client.poll_deliver(self.now, &mut self.rx) {
            self.client
                .handle_datagram(self.now, server_addr(), &mut self.rx[..n]);
            any = true;
        }
        self.collect_events();
        any
    }

    pub(crate) fn collect_events(&mut self) {
        while let Some(e) = self.server.poll_event() {
            self.server_events.push(e);
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
    }

    /// One round: send, deliver, then jump the clock to the next wake-up (or
    /// `extra`, whichever is first). Returns `false` when nothing is left to happen.
    pub(crate) fn step(&mut self, extra: Option<Instant>) -> bool {
        self.flush();
        self.deliver();
        self.flush();
        let next = [
            self.to_server.next_delivery(),
            self.to_client.next_delivery(),
            self.server.poll_timeout(),
            self.client.poll_timeout(),
            extra,
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else { return false };
        if next > self.now {
            self.now = next;
            self.stalls = 0;
        } else {
            self.stalls += 1;
            assert!(
                self.stalls < 10_000,
                "no progress: a wake-up keeps asking for the past"
            );
        }
        self.server.handle_timeout(self.now);
        self.client.handle_timeout(self.now);
        self.collect_events();
        true
    }

    /// Steps until `done` holds (true) or `limit` of virtual time passes (false).
    pub(crate) fn run_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&mut Self) -> bool,
    ) -> bool {
        let end = self.now + limit;
        while self.now < end {
            if done(self) {
                return true;
            }
            if !self.step(Some(end)) {
                break;
            }
        }
        done(self)
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.now - self.start
    }
}
