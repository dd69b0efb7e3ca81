//! Shared set-up of the fuzz targets: a server and a client that completed
//! the handshake, and a splitter that turns one fuzz input into datagrams.
//!
//! Run a target with `cargo +nightly fuzz run server_datagram` from the
//! repository root (cargo-fuzz finds this folder).

use std::net::SocketAddr;
use std::time::Instant;

use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{Client, ClientConfig, ConnectToken, Key, Server, ServerConfig, TokenParams};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Protocol id of the fuzz set-up.
pub const PROTOCOL: u64 = 0x6675_7A7A;
/// Unix time the server is anchored at.
pub const UNIX_NOW: u64 = 1_700_000_000;

/// The server's address.
pub fn server_addr() -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 1], 40000))
}

/// The connected client's address.
pub fn client_addr() -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 2], 50000))
}

/// The private key the gateway and server share.
pub fn private_key() -> Key {
    Key::from_bytes([0x42; 32])
}

/// A deterministic token for client `id`.
pub fn token(id: u64) -> ConnectToken {
    let mut rng = ChaCha20Rng::seed_from_u64(id);
    ConnectToken::generate(
        &TokenParams {
            protocol_id: PROTOCOL,
            client_id: id,
            create_unix: UNIX_NOW - 5,
            expire_unix: UNIX_NOW + 60,
            timeout_seconds: 10,
            server_addresses: &[server_addr()],
            user_data: b"fuzz",
        },
        &private_key(),
        &mut rng,
    )
    .expect("valid token parameters")
}

/// A server (2 slots) and a client connected to it in slot 0, at `now`.
pub fn connected(now: Instant) -> (Server, Client) {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let config = ServerConfig::new(PROTOCOL, private_key(), server_addr(), 2);
    let mut server = Server::new(config, now, UNIX_NOW, &mut rng).expect("valid config");
    let mut client = Client::new(token(1), ClientConfig::default(), now).expect("valid token");
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    for _ in 0..3 {
        while let Some(t) = client.poll_transmit(now, &mut buf) {
            server.handle_datagram(now, client_addr(), &mut buf[..t.len]);
        }
        while let Some(t) = server.poll_transmit(now, &mut buf) {
            client.handle_datagram(now, server_addr(), &mut buf[..t.len]);
        }
    }
    assert!(client.is_connected() && server.is_connected(0));
    (server, client)
}

/// Splits a fuzz input into datagrams: each starts with a length byte pair
/// (little-endian, capped at 1500), the rest of the input if shorter.
pub fn datagrams(mut data: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (len, rest) = data.split_first_chunk::<2>()?;
        let len = usize::from(u16::from_le_bytes(*len))
            .min(1500)
            .min(rest.len());
        let (datagram, rest) = rest.split_at(len);
        data = rest;
        Some(datagram)
    })
}
