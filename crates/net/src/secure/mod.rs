//! The secure layer: connect tokens, AEAD, the handshake and connection slots,
//! with netcode.io 1.02 semantics.
//!
//! What it is for: [`token`] (connect tokens and challenge tokens, and the
//! connection request that carries a token), [`crypto`] (the ciphers and
//! keys), [`wire`] (packet layouts, sealing and opening in place, over the
//! byte cursors of `cursor.rs`), [`replay`] (the replay window),
//! `token_history.rs` (token reuse protection), `link.rs` (one connection's
//! sealed link: ciphers, send sequence, replay window, timeouts), [`pacing`]
//! (a server connection's token bucket), the
//! [`Server`] and [`Client`] state machines built on them, the vocabulary
//! both ends share (`connection.rs`: [`Transmit`], [`DisconnectReason`]), drop
//! [`counters`] by [`DropKind`], and the layer's [`error`], [`NetError`].
//!
//! What it is not: it does not look inside a payload. Every connection owns a
//! [`PacketEndpoint`](crate::packet::PacketEndpoint) of the packet layer below
//! (sequence numbers, acks, channels, fragments, RTT); this layer only seals
//! what the endpoint writes and feeds it what it opened. Imports go one way:
//! `secure` uses [`crate::packet`], never the reverse. [`NetError`] wraps the
//! packet layer's [`PacketError`](crate::packet::PacketError).

pub mod client;
mod connection;
pub mod counters;
pub mod crypto;
mod cursor;
pub mod error;
mod link;
pub mod pacing;
pub mod replay;
pub mod server;
pub mod token;
mod token_history;
pub mod wire;

pub use client::{Client, ClientConfig, ClientEvent, ClientState, ConnectStage};
pub use connection::{DisconnectReason, Transmit};
pub use counters::{DropCounters, DropKind};
pub use crypto::Key;
pub use error::NetError;
pub use pacing::Pacing;
pub use server::{Server, ServerConfig, ServerEvent};
pub use token::{ConnectToken, OpenedToken, PrivateToken, ServerAddresses, TokenParams};
