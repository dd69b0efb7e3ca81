//! The error values of the secure layer: token generation and opening, and the
//! per-connection calls an application makes on a [`crate::Server`] or
//! [`crate::Client`].
//!
//! Datagrams from the network never produce an error value: they are dropped
//! and counted by kind (see [`crate::DropKind`]). Errors are for callers.

use std::net::SocketAddr;

use crate::packet::PacketError;

/// Everything that can go wrong in a call into the secure layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// The token's expire timestamp is not later than the time it was checked at.
    #[error("connect token expired at unix time {expire_unix}, checked at {now_unix}")]
    TokenExpired {
        /// Expire timestamp carried by the token (unix seconds).
        expire_unix: u64,
        /// The time it was checked at (unix seconds).
        now_unix: u64,
    },
    /// The sealed private part did not authenticate under the private key: the
    /// token was forged, tampered with, or sealed with another key.
    #[error("connect token is forged or tampered (private part failed to authenticate)")]
    TokenForged,
    /// The token was made for another game or application.
    #[error("connect token is for protocol id {found:#x}, expected {expected:#x}")]
    WrongProtocol {
        /// Protocol id this side runs.
        expected: u64,
        /// Protocol id found in the token or packet.
        found: u64,
    },
    /// The token carries a version string other than netcode.io 1.02.
    #[error("connect token has an unknown version string")]
    WrongVersion,
    /// The token authenticated but this server's address is not in its list.
    #[error("server address {0} is not listed in the connect token")]
    ServerAddressNotListed(SocketAddr),
    /// The token bytes do not follow the layout (wrong size, address count out of
    /// [1, 32], unknown address type, create later than expire, ...).
    #[error("malformed connect token: {0}")]
    MalformedToken(&'static str),
    /// Parameters given to token generation or a constructor are out of range.
    #[error("invalid parameter `{field}`: {reason}")]
    InvalidParameter {
        /// The parameter at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The slot index is out of range or the slot holds no connected client.
    #[error("slot {0} holds no connected client")]
    NotConnected(usize),
    /// The client is not in the connected state.
    #[error("the client is not connected")]
    ClientNotConnected,
    /// A payload is larger than one packet can carry.
    #[error("payload of {len} bytes exceeds the maximum of {max}")]
    PayloadTooLarge {
        /// Length given.
        len: usize,
        /// The maximum accepted.
        max: usize,
    },
    /// A payload must carry at least one byte (netcode.io payload packets are 1..=1200 bytes).
    #[error("payload is empty")]
    EmptyPayload,
    /// The output buffer is too small for the datagram to be written.
    #[error("output buffer of {len} bytes is smaller than the {needed} bytes needed")]
    BufferTooSmall {
        /// Length given.
        len: usize,
        /// Length needed.
        needed: usize,
    },
    /// The packet layer refused a message or a config.
    #[error("packet layer: {0}")]
    Packet(#[from] PacketError),
}
