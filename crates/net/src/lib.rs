//! hightick-net: the sans-IO connection layer between a game server and its
//! clients: every byte a match sends or receives passes through here.
//!
//! What it is for:
//! - **Connect tokens** (netcode.io 1.02): after login the gateway
//!   [generates](ConnectToken::generate) a token listing the servers the client
//!   may join, per-connection keys and 256 bytes of user data, its private part
//!   sealed with XChaCha20-Poly1305 under a key only gateway and servers share;
//!   a server [opens](ConnectToken::open) it with clear errors (expired, forged,
//!   wrong protocol, server not listed).
//! - **The secure layer**: [`Server`] and [`Client`] state machines. The
//!   handshake (request, challenge, response, keep-alive), ChaCha20-Poly1305 on
//!   every packet (sealed and opened in place, nonce = packet sequence),
//!   replay protection, timeouts, a connection limit, token reuse protection.
//!   A server never answers an unauthenticated datagram with more bytes than it
//!   received. Malformed input of any kind is dropped and counted by
//!   [`DropKind`], never a panic.
//! - **The packet layer**, one [`PacketEndpoint`] per connection inside the
//!   secure layer: sequence numbers, acks, per-packet delivery notifications
//!   (acked / presumed lost), a reliable ordered channel, an unreliable channel,
//!   fragments up to 64 KiB, RTT and loss estimates. [`Server`] and [`Client`]
//!   expose it per connection (`send_reliable`, `send_unreliable`,
//!   `poll_message`, `poll_delivery`, `endpoint`).
//! - `sim_link`: a simulated lossy link for tests, deterministic from a seed;
//!   `sim_server`: a server and its clients connected in memory, for tests
//!   and benchmarks of what rides on the secure layer (feature `sim`).
//!
//! Layout: the two layers are two modules, and imports go one way, from
//! [`secure`] down to [`packet`]:
//! - [`packet`]: the packet layer (`endpoint.rs`, acks in `reliable.rs` and
//!   `sequence.rs`, the `channel*.rs` files, `fragment.rs`, `rtt.rs`) and its
//!   errors, [`PacketError`] and [`Malformed`]. It never imports from [`secure`].
//! - [`secure`]: the secure layer (`server.rs`, `client.rs`, `token.rs`,
//!   `wire.rs`, `crypto.rs`, `replay.rs`, `token_history.rs`, `link.rs`,
//!   `connection.rs`, `counters.rs`, `cursor.rs`) and its error, [`NetError`],
//!   which wraps [`PacketError`].
//! - `sim_link` and `sim_server` stay at the root: test support that
//!   other crates name by these paths, one over each layer, compiled only
//!   with the `sim` feature (tests and benches turn it on through their
//!   dev-dependencies).
//!
//! The flat paths of before (`hightick_net::wire`, `hightick_net::crypto`,
//! `hightick_net::token`, `hightick_net::channel`, `hightick_net::rtt`, ...)
//! are re-exports of the modules inside the layers.
//!
//! What it is not: it reads no clock and touches no socket (the host process
//! does UDP I/O and passes `Instant`s and, for token expiry, unix seconds in);
//! it has no congestion control and knows no game messages (`hightick-proto`
//! encodes those into the bytes it carries).
//!
//! Sans-IO, quinn-proto style: feed datagrams with `handle_datagram(now, from,
//! bytes)`, pull datagrams with `poll_transmit(now, buf)` until `None`, read
//! `poll_event()`, and wake at `poll_timeout()` to call `handle_timeout(now)`.
//! The packet path allocates nothing after set-up.
//!
//! A token-to-connected handshake, driven by hand:
//!
//! ```
//! use std::net::SocketAddr;
//! use std::time::Instant;
//! use hightick_net::wire::MAX_PACKET_BYTES;
//! use hightick_net::{Client, ClientConfig, ConnectToken, Key, NetError, Server, ServerConfig};
//! use hightick_net::{ServerEvent, TokenParams};
//!
//! # fn main() -> Result<(), NetError> {
//! let mut rng = rand::rng();
//! let server_addr: SocketAddr = "203.0.113.7:40000".parse().unwrap();
//! let client_addr: SocketAddr = "198.51.100.2:53000".parse().unwrap();
//! let private_key = Key::generate(&mut rng); // shared by gateway and servers
//! let (now, unix_now) = (Instant::now(), 1_700_000_000); // passed in, never read
//!
//! // Gateway, after login: a token for client 42, valid for 30 s.
//! let token = ConnectToken::generate(
//!     &TokenParams {
//!         protocol_id: 7,
//!         client_id: 42,
//!         create_unix: unix_now,
//!         expire_unix: unix_now + 30,
//!         timeout_seconds: 5,
//!         server_addresses: &[server_addr],
//!         user_data: b"team=blue",
//!     },
//!     &private_key,
//!     &mut rng,
//! )?;
//! let token_bytes = token.encode(); // 2048 bytes, to the client over HTTPS
//!
//! let config = ServerConfig::new(7, private_key, server_addr, 10);
//! let mut server = Server::new(config, now, unix_now, &mut rng)?;
//! let mut client = Client::new(ConnectToken::decode(&token_bytes)?, ClientConfig::default(), now)?;
//!
//! // Request -> challenge, then response -> keep-alive.
//! let mut buf = [0u8; MAX_PACKET_BYTES];
//! for _ in 0..2 {
//!     while let Some(t) = client.poll_transmit(now, &mut buf) {
//!         server.handle_datagram(now, client_addr, &mut buf[..t.len]);
//!     }
//!     while let Some(t) = server.poll_transmit(now, &mut buf) {
//!         client.handle_datagram(now, server_addr, &mut buf[..t.len]);
//!     }
//! }
//! assert!(client.is_connected());
//! let Some(ServerEvent::Connected { slot, client_id: 42, user_data }) = server.poll_event() else {
//!     panic!("not connected");
//! };
//! assert_eq!(&user_data[..9], b"team=blue");
//!
//! // Messages now flow through the connection's packet layer.
//! client.send_reliable(b"buy rifle")?;
//! let t = client.poll_transmit(now, &mut buf).unwrap();
//! server.handle_datagram(now, client_addr, &mut buf[..t.len]);
//! let mut message = [0u8; 64];
//! let m = server.poll_message(slot, &mut message).unwrap();
//! assert_eq!(&message[..m.len], b"buy rifle");
//! # Ok(())
//! # }
//! ```

// ---- the two layers: `packet` never imports from `secure`
pub mod packet;
pub mod prefetch;
pub mod secure;

// ---- the public paths other crates name, kept from the flat layout
pub use packet::{channel, reliable, rtt, sequence};
pub use secure::{client, counters, crypto, error, replay, server, token, wire};

pub use packet::{
    Channel, Delivery, DeliveryOutcome, HEADER_LEN, Malformed, PacketConfig, PacketEndpoint,
    PacketError, PacketHeader, PacketStats, ReceivedMessage,
};
pub use secure::{
    Client, ClientConfig, ClientEvent, ClientState, ConnectStage, ConnectToken, DisconnectReason,
    DropCounters, DropKind, Key, NetError, OpenedToken, Pacing, PrivateToken, Server,
    ServerAddresses, ServerConfig, ServerEvent, TokenParams, Transmit,
};

// ---- test support: simulated links and servers, over both layers (the
// `sim` feature, which only tests and benches turn on: no shipped binary
// carries them)
#[cfg(feature = "sim")]
pub mod sim_link;
#[cfg(feature = "sim")]
pub mod sim_server;
