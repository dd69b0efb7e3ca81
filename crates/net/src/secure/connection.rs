//! Vocabulary both ends of a connection share: a datagram to send, and why a
//! connection ended.

use std::net::SocketAddr;

/// A datagram `poll_transmit` wrote into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Where to send it.
    pub destination: SocketAddr,
    /// Its length, at the start of the buffer.
    pub len: usize,
}

/// Why a connection ended (or never started).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DisconnectReason {
    /// This side closed it (`disconnect`).
    ClosedLocally,
    /// The other side sent a disconnect packet.
    ClosedByPeer,
    /// Nothing arrived from the other side for the token's timeout.
    TimedOut,
    /// Server: the same client completed a handshake with a fresh token (a
    /// rejoin, perhaps from a new address) and took over the slot.
    Replaced,
    /// Client: every server listed in the token refused it (server full).
    Denied,
    /// Client: no server listed in the token answered the handshake in time.
    ConnectTimedOut,
    /// Client: the token expired before a server accepted it.
    TokenExpired,
}
