//! The error values of the packet layer: [`PacketError`] for a call into a
//! [`PacketEndpoint`](crate::packet::PacketEndpoint) or a config it refused,
//! and [`Malformed`] for what is wrong with a payload it dropped.
//!
//! They live at the bottom of the layer so that every module of it (channels,
//! fragments, acks) can name them without importing the endpoint built on top.
//! The secure layer wraps [`PacketError`] in [`NetError::Packet`](crate::NetError::Packet).

use thiserror::Error;

/// What is wrong with a malformed payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum Malformed {
    /// A header or block runs past the end of the payload.
    #[error("truncated")]
    Truncated,
    /// Header flags or unused ack fields are not zero.
    #[error("reserved header bits set")]
    ReservedBits,
    /// A block tag this version does not know.
    #[error("unknown block tag")]
    UnknownBlock,
    /// An unreliable message longer than the configured budget allows.
    #[error("unreliable message too large")]
    UnreliableTooLarge,
    /// A whole reliable message longer than a fragment.
    #[error("whole reliable message longer than a fragment")]
    ReliableTooLarge,
    /// A fragment count of 0, 1 or more than the largest message needs.
    #[error("fragment count out of range")]
    FragmentCount,
    /// A fragment index not below the fragment count.
    #[error("fragment index out of range")]
    FragmentIndex,
    /// A fragment of the wrong length, or a total over the maximum.
    #[error("fragment length or total out of range")]
    FragmentLength,
    /// Pieces of one message disagree about its fragment count.
    #[error("fragment count differs between pieces of one message")]
    FragmentMismatch,
    /// More reliable pieces in one packet than a sender ever puts there.
    #[error("too many reliable pieces in one packet")]
    TooManyPieces,
}

/// Errors of the packet layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PacketError {
    /// The message is longer than the channel allows.
    #[error("message of {len} bytes exceeds the maximum of {max}")]
    MessageTooLarge {
        /// Length of the rejected message.
        len: usize,
        /// Largest length the channel takes.
        max: usize,
    },
    /// The reliable queue (messages, bytes or fragmented messages in flight)
    /// is full; retry after acks arrive.
    #[error("reliable send queue is full")]
    SendQueueFull,
    /// The unreliable messages queued for the next packet fill its budget.
    #[error("unreliable budget of the next packet is full")]
    UnreliableFull,
    /// The payload is malformed; it was dropped.
    #[error("malformed packet: {0}")]
    Malformed(#[from] Malformed),
    /// The packet was received before; it was dropped.
    #[error("duplicate packet {0}")]
    Duplicate(u16),
    /// The packet is older than the receive window; it was dropped.
    #[error("stale packet {0}")]
    Stale(u16),
    /// The packet carries reliable data the receive window has no room for
    /// because messages were not polled; it was dropped unacknowledged (its
    /// acks were processed) and the sender will resend.
    #[error("receive window full")]
    ReceiveWindowFull,
    /// A config field is out of range.
    #[error("invalid packet config: {field} {reason}")]
    Config {
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
}
