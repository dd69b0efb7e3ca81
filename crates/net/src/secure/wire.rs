//! Handshake and sealed packet encoding, netcode.io 1.02 layouts.
//!
//! A connection request (prefix byte 0) travels in the clear and is always
//! [`REQUEST_BYTES`] long: prefix, version info, protocol id, expire timestamp,
//! token nonce, sealed private token. Its layout ([`read_request`], [`write_request`])
//! lives in [`crate::token`] beside the token it carries and is re-exported
//! here. Every other packet is sealed:
//!
//! ```text
//! [prefix: (sequence bytes << 4) | kind] [sequence: 1-8 bytes, little-endian, high zeros omitted]
//! [body, encrypted] [16-byte tag]
//! ```
//!
//! Bodies: denied and disconnect are empty; challenge and response carry the
//! challenge sequence (u64) and the 300-byte sealed challenge token; keep-alive
//! carries the client index and max clients (u32 each); payload carries 1 to
//! 1200 opaque bytes for the packet layer above.
//!
//! Sealing and opening work in place on the caller's datagram buffer: the body
//! is written at [`body_offset`] and [`seal_packet`] adds header and tag around
//! it; [`read_header`] validates a datagram and [`open_packet`] decrypts its body
//! where it lies.

use std::ops::Range;

use crate::secure::counters::DropKind;
use crate::secure::crypto::{AuthFailed, MAC_BYTES, PacketCipher};
use crate::secure::cursor::{ByteReader, ByteWriter};
use crate::secure::token::CHALLENGE_TOKEN_BYTES;

/// The connection request's layout lives with the token it carries.
pub use crate::secure::token::{ConnectionRequest, REQUEST_BYTES, read_request, write_request};

/// Most payload bytes one packet carries.
pub const MAX_PAYLOAD_BYTES: usize = 1200;
/// The largest datagram of the protocol (a full payload packet with an 8-byte sequence).
/// Transmit buffers handed to `poll_transmit` must hold at least this many bytes.
pub const MAX_PACKET_BYTES: usize = 1 + 8 + MAX_PAYLOAD_BYTES + MAC_BYTES;
/// The smallest sealed packet: prefix, one sequence byte, empty body, tag.
pub const MIN_SEALED_BYTES: usize = 1 + 1 + MAC_BYTES;
/// Bytes of a challenge or response body: challenge sequence and sealed challenge token.
pub const CHALLENGE_BODY_BYTES: usize = 8 + CHALLENGE_TOKEN_BYTES;
/// Bytes of a keep-alive body: client index and max clients.
pub const KEEP_ALIVE_BODY_BYTES: usize = 8;

/// The packet kinds (low four bits of the prefix byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// Client to server, in the clear: carries the sealed private token.
    Request = 0,
    /// Server to client: refused (server full).
    Denied = 1,
    /// Server to client: a sealed challenge token to echo back.
    Challenge = 2,
    /// Client to server: the challenge token echoed back.
    Response = 3,
    /// Either way: liveness; server to client it also confirms the connection.
    KeepAlive = 4,
    /// Either way: bytes for the packet layer.
    Payload = 5,
    /// Either way: the connection is over.
    Disconnect = 6,
}

impl PacketKind {
    fn from_low_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            0 => Self::Request,
            1 => Self::Denied,
            2 => Self::Challenge,
            3 => Self::Response,
            4 => Self::KeepAlive,
            5 => Self::Payload,
            6 => Self::Disconnect,
            _ => return None,
        })
    }

    /// Body bytes a sealed packet of this kind must carry: `(min, max)`.
    const fn body_bounds(self) -> (usize, usize) {
        match self {
            Self::Request => (0, 0),
            Self::Denied | Self::Disconnect => (0, 0),
            Self::Challenge | Self::Response => (CHALLENGE_BODY_BYTES, CHALLENGE_BODY_BYTES),
            Self::KeepAlive => (KEEP_ALIVE_BODY_BYTES, KEEP_ALIVE_BODY_BYTES),
            Self::Payload => (1, MAX_PAYLOAD_BYTES),
        }
    }

    /// Whether the receiver runs this kind through its replay window.
    pub const fn is_replay_protected(self) -> bool {
        matches!(self, Self::KeepAlive | Self::Payload | Self::Disconnect)
    }
}

/// Bytes the sequence takes in a packet header (1 to 8: high zero bytes omitted).
pub const fn sequence_bytes(sequence: u64) -> usize {
    let significant = (64 - sequence.leading_zeros() as usize).div_ceil(8);
    if significant == 0 { 1 } else { significant }
}

/// Where the body of a packet sent with `sequence` starts.
pub const fn body_offset(sequence: u64) -> usize {
    1 + sequence_bytes(sequence)
}

/// Seals a packet in place. The body, `body_len` bytes, must already sit at
/// `out[body_offset(sequence)..]`; this writes the prefix and sequence before it,
/// encrypts it, and appends the tag. Returns the datagram length, or `None` when
/// `out` cannot hold it or `body_len` is out of range for `kind`.
pub fn seal_packet(
    out: &mut [u8],
    kind: PacketKind,
    sequence: u64,
    body_len: usize,
    cipher: &PacketCipher,
) -> Option<usize> {
    let (min, max) = kind.body_bounds();
    if kind == PacketKind::Request || body_len < min || body_len > max {
        return None;
    }
    let seq_len = sequence_bytes(sequence);
    let start = 1 + seq_len;
    let end = start + body_len;
    let total = end + MAC_BYTES;
    let datagram = out.get_mut(..total)?;
    let prefix = ((seq_len as u8) << 4) | kind as u8;
    datagram[0] = prefix;
    datagram[1..start].copy_from_slice(&sequence.to_le_bytes()[..seq_len]);
    let tag = cipher.seal(sequence, prefix, &mut datagram[start..end]);
    datagram[end..].copy_from_slice(&tag);
    Some(total)
}

/// A sealed packet's header, validated against the layout but not yet authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Packet kind.
    pub kind: PacketKind,
    /// Packet sequence (the nonce).
    pub sequence: u64,
    /// The prefix byte (authenticated as associated data).
    pub prefix: u8,
    /// Where the encrypted body lies in the datagram.
    pub body: Range<usize>,
}

/// Validates a sealed packet's layout, in netcode.io order: size, kind,
/// sequence length, body size for the kind. The error says how to count the drop.
pub fn read_header(datagram: &[u8]) -> Result<Header, DropKind> {
    if datagram.len() > MAX_PACKET_BYTES {
        return Err(DropKind::Oversized);
    }
    if datagram.len() < MIN_SEALED_BYTES {
        return Err(DropKind::Truncated);
    }
    let prefix = datagram[0];
    let kind = match PacketKind::from_low_bits(prefix & 0x0F) {
        Some(PacketKind::Request) | None => return Err(DropKind::Malformed),
        Some(kind) => kind,
    };
    let seq_len = usize::from(prefix >> 4);
    if !(1..=8).contains(&seq_len) {
        return Err(DropKind::Malformed);
    }
    let start = 1 + seq_len;
    let Some(body_len) = datagram.len().checked_sub(start + MAC_BYTES) else {
        return Err(DropKind::Truncated);
    };
    let (min, max) = kind.body_bounds();
    if body_len < min {
        return Err(DropKind::Truncated);
    }
    if body_len > max {
        return Err(DropKind::Oversized);
    }
    let mut seq = [0u8; 8];
    seq[..seq_len].copy_from_slice(&datagram[1..start]);
    Ok(Header {
        kind,
        sequence: u64::from_le_bytes(seq),
        prefix,
        body: start..start + body_len,
    })
}

/// Authenticates and decrypts the body of a packet in place.
pub fn open_packet(
    datagram: &mut [u8],
    header: &Header,
    cipher: &PacketCipher,
) -> Result<(), AuthFailed> {
    let end = header.body.end;
    let (body, rest) = datagram.split_at_mut(end);
    let tag: &[u8; MAC_BYTES] = rest
        .get(..MAC_BYTES)
        .and_then(|t| t.try_into().ok())
        .ok_or(AuthFailed)?;
    let body = body.get_mut(header.body.clone()).ok_or(AuthFailed)?;
    cipher.open(header.sequence, header.prefix, body, tag)
}

/// Writes a challenge or response body at `body`: challenge sequence, then the sealed token.
pub(crate) fn write_challenge_body(
    body: &mut [u8],
    challenge_sequence: u64,
    token: &[u8; CHALLENGE_TOKEN_BYTES],
) -> Option<usize> {
    let mut w = ByteWriter::new(body);
    w.u64(challenge_sequence)?;
    w.bytes(token)?;
    Some(w.len())
}

/// Reads a challenge or response body.
pub(crate) fn read_challenge_body(body: &[u8]) -> Option<(u64, &[u8; CHALLENGE_TOKEN_BYTES])> {
    let mut r = ByteReader::new(body);
    Some((r.u64()?, r.array()?))
}

/// Writes a keep-alive body: client index and max clients.
pub(crate) fn write_keep_alive_body(
    body: &mut [u8],
    client_index: u32,
    max_clients: u32,
) -> Option<usize> {
    let mut w = ByteWriter::new(body);
    w.u32(client_index)?;
    w.u32(max_clients)?;
    Some(w.len())
}

/// Reads a keep-alive body.
pub(crate) fn read_keep_alive_body(body: &[u8]) -> Option<(u32, u32)> {
    let mut r = ByteReader::new(body);
    Some((r.u32()?, r.u32()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secure::crypto::Key;
    use proptest::prelude::*;

    fn cipher() -> PacketCipher {
        PacketCipher::new(&Key::from_bytes([5; 32]), 99)
    }

    #[test]
    fn sizes_match_netcode() {
        assert_eq!(REQUEST_BYTES, 1078);
        assert_eq!(
            PacketKind::Request as u8,
            crate::secure::token::REQUEST_PREFIX
        );
        assert_eq!(MAX_PACKET_BYTES, 1225);
        assert_eq!(sequence_bytes(0), 1);
        assert_eq!(sequence_bytes(255), 1);
        assert_eq!(sequence_bytes(1000), 2);
        assert_eq!(sequence_bytes(u64::MAX), 8);
    }

    #[test]
    fn sequence_is_written_low_byte_first() {
        let mut out = [0u8; 64];
        let off = body_offset(1000);
        out[off] = 1;
        let len = seal_packet(&mut out, PacketKind::Payload, 1000, 1, &cipher()).unwrap();
        assert_eq!(len, 1 + 2 + 1 + 16);
        assert_eq!(out[0], 0x25);
        assert_eq!(&out[1..3], &[0xE8, 0x03]);
    }

    #[test]
    fn seal_read_open_round_trip() {
        let c = cipher();
        let mut out = [0u8; MAX_PACKET_BYTES];
        for seq in [0u64, 1, 300, 1 << 40, u64::MAX - 1] {
            let off = body_offset(seq);
            out[off..off + 200].fill(0xAB);
            let len = seal_packet(&mut out, PacketKind::Payload, seq, 200, &c).unwrap();
            let h = read_header(&out[..len]).unwrap();
            assert_eq!(
                (h.kind, h.sequence, h.body.len()),
                (PacketKind::Payload, seq, 200)
            );
            open_packet(&mut out[..len], &h, &c).unwrap();
            assert!(out[h.body].iter().all(|&b| b == 0xAB));
        }
    }

    #[test]
    fn body_sizes_are_enforced() {
        let c = cipher();
        let mut out = [0u8; MAX_PACKET_BYTES];
        assert_eq!(seal_packet(&mut out, PacketKind::Payload, 0, 0, &c), None);
        assert_eq!(seal_packet(&mut out, PacketKind::KeepAlive, 0, 7, &c), None);
        assert_eq!(seal_packet(&mut out, PacketKind::Request, 0, 0, &c), None);
        assert_eq!(
            seal_packet(&mut out[..20], PacketKind::KeepAlive, 0, 8, &c),
            None
        );
        let len = seal_packet(&mut out, PacketKind::KeepAlive, 0, 8, &c).unwrap();
        assert_eq!(read_header(&out[..len - 1]), Err(DropKind::Truncated));
        assert_eq!(read_header(&[0x17; 40]), Err(DropKind::Malformed), "kind 7");
        assert_eq!(
            read_header(&[0x05; 40]),
            Err(DropKind::Malformed),
            "0 sequence bytes"
        );
        assert_eq!(
            read_header(&[0x95; 40]),
            Err(DropKind::Malformed),
            "9 sequence bytes"
        );
        assert_eq!(
            read_header(&[0x11; 40]),
            Err(DropKind::Oversized),
            "denied with a body"
        );
        assert_eq!(read_header(&[0x15; 2000]), Err(DropKind::Oversized));
        assert_eq!(read_header(&[0x15; 3]), Err(DropKind::Truncated));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any bytes: header validation never panics, and a header it accepts
        /// describes a body inside the datagram of a legal size.
        #[test]
        fn read_header_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1400)) {
            if let Ok(h) = read_header(&bytes) {
                prop_assert!(h.body.end + MAC_BYTES == bytes.len());
                let mut copy = bytes.clone();
                prop_assert!(open_packet(&mut copy, &h, &cipher()).is_err());
            }
            let _ = read_request(&bytes);
        }

        /// Any single-bit flip of a sealed packet is refused.
        #[test]
        fn bit_flips_never_open(seq in 0u64..1 << 20, len in 1usize..300, bit in 0usize..8 * 330) {
            let c = cipher();
            let mut out = [0u8; MAX_PACKET_BYTES];
            let total = seal_packet(&mut out, PacketKind::Payload, seq, len, &c).unwrap();
            let bit = bit % (8 * total);
            out[bit / 8] ^= 1 << (bit % 8);
            if let Ok(h) = read_header(&out[..total]) {
                prop_assert!(open_packet(&mut out[..total], &h, &c).is_err());
            }
        }
    }
}
