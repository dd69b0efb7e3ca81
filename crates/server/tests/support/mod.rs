//! Shared by the server's end-to-end tests: a host on loopback, HTTP calls
//! to its admin API, and a bare client (the secure layer plus input batches)
//! over a real UDP socket.

#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hightick_arena::game::Arena;
use hightick_arena::input::ArenaInput;
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{Client, ClientConfig, ConnectToken, Key, TokenParams};
use hightick_proto::{
    BitReader, BitWriter, InputBatch, InputCommand, MessageKind, SnapshotHeader, SnapshotKind,
};
use hightick_server::{Host, HostConfig, MatchInfo};

/// A host with `workers` workers on loopback ports chosen by the kernel.
pub(crate) fn start_host(workers: usize, key: &Key, tweak: impl FnOnce(&mut HostConfig)) -> Host {
    let mut config = HostConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        admin: "127.0.0.1:0".parse().unwrap(),
        workers,
        match_linger_s: 0.5,
        ..HostConfig::default()
    };
    tweak(&mut config);
    Host::start::<Arena>(&config, key).expect("host starts")
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// `GET http://admin{path}` -> status and body.
pub(crate) fn get(admin: SocketAddr, path: &str) -> (u16, String) {
    let mut response = agent()
        .get(&format!("http://{admin}{path}"))
        .call()
        .expect("admin answers");
    let status = response.status().as_u16();
    (
        status,
        response.body_mut().read_to_string().unwrap_or_default(),
    )
}

/// `POST http://admin{path}` with a raw body -> status and body.
pub(crate) fn post(admin: SocketAddr, path: &str, body: &str) -> (u16, String) {
    send(admin, path, body, None)
}

/// `POST path` with `body` and an `Authorization` header: status and text.
pub(crate) fn post_as(
    admin: SocketAddr,
    path: &str,
    body: &str,
    authorization: &str,
) -> (u16, String) {
    send(admin, path, body, Some(authorization))
}

fn send(admin: SocketAddr, path: &str, body: &str, authorization: Option<&str>) -> (u16, String) {
    let mut request = agent()
        .post(&format!("http://{admin}{path}"))
        .header("content-type", "application/json");
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let mut response = request.send(body).expect("admin answers");
    let status = response.status().as_u16();
    (
        status,
        response.body_mut().read_to_string().unwrap_or_default(),
    )
}

/// `POST /v1/matches` with `body`, which must be answered 201: the match.
pub(crate) fn create_match(admin: SocketAddr, body: &str) -> MatchInfo {
    let (status, answer) = post(admin, "/v1/matches", body);
    assert_eq!(status, 201, "{answer}");
    serde_json::from_str(&answer).expect("a MatchInfo")
}

/// `GET /v1/matches`, which must be answered 200: every match, oldest first.
pub(crate) fn list_matches(admin: SocketAddr) -> Vec<MatchInfo> {
    let (status, answer) = get(admin, "/v1/matches");
    assert_eq!(status, 200, "{answer}");
    serde_json::from_str(&answer).expect("a list of MatchInfo")
}

/// A connect token for `client_id` to `server`.
pub(crate) fn token(key: &Key, client_id: u64, server: SocketAddr) -> ConnectToken {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    ConnectToken::generate(
        &TokenParams {
            protocol_id: hightick_proto::PROTOCOL_ID,
            client_id,
            create_unix: now,
            expire_unix: now + 60,
            timeout_seconds: 2,
            server_addresses: &[server],
            user_data: &[],
        },
        key,
        &mut rand::rng(),
    )
    .expect("token")
}

/// The secure layer over a real socket, sending an input batch per call
/// to [`BareClient::send_inputs`] and counting what comes down.
pub(crate) struct BareClient {
    pub net: Client,
    pub socket: UdpSocket,
    pub server: SocketAddr,
    /// A relay (`hightick netem`) the datagrams go through, if any: sent to
    /// it, and what comes from it is the server's.
    pub via: Option<SocketAddr>,
    pub snapshots: u64,
    pub full_resyncs: u64,
    pub events: u64,
    pub bytes_in: u64,
    buf: Vec<u8>,
    message: Vec<u8>,
}

impl BareClient {
    pub(crate) fn new(key: &Key, client_id: u64, server: SocketAddr) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        let net = Client::new(
            token(key, client_id, server),
            ClientConfig::default(),
            Instant::now(),
        )
        .unwrap();
        Self {
            net,
            socket,
            server,
            via: None,
            snapshots: 0,
            full_resyncs: 0,
            events: 0,
            bytes_in: 0,
            buf: vec![0; MAX_PACKET_BYTES + 64],
            message: vec![0; 4096],
        }
    }

    /// Sends what is due, reads what arrived, counts messages.
    pub(crate) fn pump(&mut self) {
        let now = Instant::now();
        if self.net.poll_timeout().is_some_and(|t| t <= now) {
            self.net.handle_timeout(now);
        }
        while let Some(t) = self.net.poll_transmit(now, &mut self.buf) {
            let _ = self
                .socket
                .send_to(&self.buf[..t.len], self.via.unwrap_or(t.destination));
        }
        while let Ok((n, from)) = self.socket.recv_from(&mut self.buf) {
            self.bytes_in += n as u64;
            let from = if Some(from) == self.via {
                self.server
            } else {
                from
            };
            self.net.handle_datagram(now, from, &mut self.buf[..n]);
        }
        while let Some(m) = self.net.poll_message(&mut self.message) {
            let mut r = BitReader::new(&self.message[..m.len]);
            match MessageKind::decode(&mut r) {
                Ok(MessageKind::Snapshot) => {
                    self.snapshots += 1;
                    if SnapshotHeader::decode(&mut r)
                        .is_ok_and(|h| h.kind == SnapshotKind::FullResync)
                    {
                        self.full_resyncs += 1;
                    }
                }
                Ok(MessageKind::Event) => self.events += 1,
                _ => {}
            }
        }
    }

    /// Queues an input batch for ticks `tick-3..=tick` (walking forward).
    pub(crate) fn send_inputs(&mut self, tick: u32) {
        if !self.net.is_connected() {
            return;
        }
        let commands: Vec<InputCommand<ArenaInput>> = (0..4u32)
            .map(|back| {
                InputCommand::new(
                    tick.saturating_sub(back),
                    tick.saturating_sub(back),
                    ArenaInput {
                        move_y: 127,
                        ..ArenaInput::default()
                    },
                )
            })
            .collect();
        let mut w = BitWriter::new(&mut self.message);
        MessageKind::InputBatch.encode(&mut w).unwrap();
        InputBatch::from_commands(&commands)
            .unwrap()
            .encode(&mut w)
            .unwrap();
        let n = w.finish();
        let _ = self.net.send_unreliable(&self.message[..n]);
    }
}

/// Pumps `clients` at about 128 Hz until `done` or `limit` passes.
pub(crate) fn play(
    clients: &mut [BareClient],
    limit: Duration,
    mut done: impl FnMut(&[BareClient]) -> bool,
) -> bool {
    let start = Instant::now();
    let mut tick = 0u32;
    while start.elapsed() < limit {
        tick += 1;
        for c in clients.iter_mut() {
            c.send_inputs(tick + 20);
            c.pump();
        }
        if done(clients) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(7800));
    }
    false
}
