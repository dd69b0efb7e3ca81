//! Drop counters by kind: every datagram the secure layer refuses is counted
//! under exactly one [`DropKind`], so an operator can tell a flood of garbage
//! from a clock skew (expired tokens) or an attack (forged tokens, replays).

use std::fmt;

/// Why a datagram (or a reply to one) was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropKind {
    /// Shorter than any valid packet, or shorter than its type requires.
    Truncated,
    /// Longer than the largest valid packet, or longer than its type allows.
    Oversized,
    /// Prefix byte with an unknown packet type or a sequence length outside [1, 8].
    Malformed,
    /// Connection request carrying a version string other than netcode.io 1.02.
    WrongVersion,
    /// Connection request for another protocol id.
    WrongProtocol,
    /// Connection request whose token has expired.
    ExpiredToken,
    /// Connection request whose token fails to authenticate under the private key.
    ForgedToken,
    /// Token authenticated but its contents break the layout.
    MalformedToken,
    /// Token authenticated but does not list this server's address.
    AddressNotListed,
    /// Token already used from another address, or already spent on a connection.
    TokenReused,
    /// Request or response from an address or client id that is already connected.
    AlreadyConnected,
    /// Every client slot is taken (the requester gets a small denied packet).
    ServerFull,
    /// No room left for another connection in progress.
    PendingFull,
    /// Encrypted packet from an address with no connection or connection in progress.
    UnknownAddress,
    /// Sequence already received or older than the replay window.
    Replayed,
    /// Packet failed authentication: tampered, forged, or sealed with another key.
    AuthFailed,
    /// Challenge token inside a response failed to open or names another client.
    InvalidChallenge,
    /// A valid packet of a type this side does not take in its current state.
    UnexpectedPacket,
    /// The packet layer refused an authenticated payload (malformed inside).
    PayloadRejected,
}

impl DropKind {
    /// Every kind, in declaration order.
    pub const ALL: [DropKind; 19] = [
        DropKind::Truncated,
        DropKind::Oversized,
        DropKind::Malformed,
        DropKind::WrongVersion,
        DropKind::WrongProtocol,
        DropKind::ExpiredToken,
        DropKind::ForgedToken,
        DropKind::MalformedToken,
        DropKind::AddressNotListed,
        DropKind::TokenReused,
        DropKind::AlreadyConnected,
        DropKind::ServerFull,
        DropKind::PendingFull,
        DropKind::UnknownAddress,
        DropKind::Replayed,
        DropKind::AuthFailed,
        DropKind::InvalidChallenge,
        DropKind::UnexpectedPacket,
        DropKind::PayloadRejected,
    ];

    /// A stable snake_case name, for metrics labels.
    pub const fn name(self) -> &'static str {
        match self {
            DropKind::Truncated => "truncated",
            DropKind::Oversized => "oversized",
            DropKind::Malformed => "malformed",
            DropKind::WrongVersion => "wrong_version",
            DropKind::WrongProtocol => "wrong_protocol",
            DropKind::ExpiredToken => "expired_token",
            DropKind::ForgedToken => "forged_token",
            DropKind::MalformedToken => "malformed_token",
            DropKind::AddressNotListed => "address_not_listed",
            DropKind::TokenReused => "token_reused",
            DropKind::AlreadyConnected => "already_connected",
            DropKind::ServerFull => "server_full",
            DropKind::PendingFull => "pending_full",
            DropKind::UnknownAddress => "unknown_address",
            DropKind::Replayed => "replayed",
            DropKind::AuthFailed => "auth_failed",
            DropKind::InvalidChallenge => "invalid_challenge",
            DropKind::UnexpectedPacket => "unexpected_packet",
            DropKind::PayloadRejected => "payload_rejected",
        }
    }
}

impl fmt::Display for DropKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Counts of dropped datagrams, one per [`DropKind`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DropCounters {
    counts: [u64; DropKind::ALL.len()],
}

impl DropCounters {
    /// Adds one drop of `kind`.
    pub fn count(&mut self, kind: DropKind) {
        let n = &mut self.counts[kind as usize];
        *n = n.saturating_add(1);
    }

    /// Drops counted under `kind`.
    pub fn get(&self, kind: DropKind) -> u64 {
        self.counts[kind as usize]
    }

    /// Drops of every kind together.
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// Every kind with its count, including zeros, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (DropKind, u64)> + '_ {
        DropKind::ALL.iter().map(|&k| (k, self.get(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_kind_in_index_order() {
        for (i, k) in DropKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
    }

    #[test]
    fn counts_by_kind() {
        let mut c = DropCounters::default();
        c.count(DropKind::Replayed);
        c.count(DropKind::Replayed);
        c.count(DropKind::AuthFailed);
        assert_eq!(c.get(DropKind::Replayed), 2);
        assert_eq!(c.get(DropKind::AuthFailed), 1);
        assert_eq!(c.get(DropKind::Truncated), 0);
        assert_eq!(c.total(), 3);
        assert_eq!(c.iter().filter(|(_, n)| *n > 0).count(), 2);
        assert_eq!(DropKind::ForgedToken.to_string(), "forged_token");
    }
}
