//! The sealed link of one connection, the same on both ends: where to send,
//! the per-direction ciphers, the send sequence (the AEAD nonce), the replay
//! window of the receiving direction, and the instants that drive keep-alives
//! and timeouts.

use std::net::SocketAddr;
use std::ops::Range;
use std::time::{Duration, Instant};

use crate::packet::PacketEndpoint;
use crate::secure::counters::DropKind;
use crate::secure::crypto::{Key, PacketCipher};
use crate::secure::replay::ReplayWindow;
use crate::secure::wire::{self, Header, MAX_PACKET_BYTES, MAX_PAYLOAD_BYTES, PacketKind};

/// One connection's sealed link.
///
/// `repr(C)` keeps the fields in this order: the small ones sealing and
/// opening read share the first cache lines, then the ciphers, then the
/// 2 KiB replay window (one line of it is read per packet opened).
#[derive(Debug, Clone)]
#[repr(C)]
pub(crate) struct Link {
    pub(crate) address: SocketAddr,
    send_sequence: u64,
    pub(crate) last_received: Instant,
    pub(crate) last_sent: Option<Instant>,
    /// `None`: the token disabled timeouts (development only).
    pub(crate) timeout: Option<Duration>,
    send: PacketCipher,
    recv: PacketCipher,
    replay: ReplayWindow,
}

/// Converts a token's timeout seconds (negative: disabled) to a duration.
pub(crate) fn timeout_from_seconds(seconds: i32) -> Option<Duration> {
    u64::try_from(seconds).ok().map(Duration::from_secs)
}

impl Link {
    pub(crate) fn new(
        address: SocketAddr,
        send_key: &Key,
        recv_key: &Key,
        protocol_id: u64,
        timeout: Option<Duration>,
        now: Instant,
    ) -> Self {
        Self {
            address,
            send: PacketCipher::new(send_key, protocol_id),
            recv: PacketCipher::new(recv_key, protocol_id),
            send_sequence: 0,
            replay: ReplayWindow::new(),
            last_received: now,
            last_sent: None,
            timeout,
        }
    }

    /// Points the link at another address, keeping the send sequence (so no
    /// nonce is ever reused under the same key) and forgetting received sequences.
    pub(crate) fn retarget(&mut self, address: SocketAddr, now: Instant) {
        self.address = address;
        self.replay.reset();
        self.last_received = now;
        self.last_sent = None;
    }

    /// Seals a packet of `kind` into `out`. `write_body` gets the body area (at
    /// most [`MAX_PAYLOAD_BYTES`]) and returns how many bytes it wrote, or `None`
    /// to send nothing. Returns the datagram length.
    pub(crate) fn seal(
        &mut self,
        now: Instant,
        kind: PacketKind,
        out: &mut [u8],
        write_body: impl FnOnce(&mut [u8]) -> Option<usize>,
    ) -> Option<usize> {
        let sequence = self.send_sequence;
        let offset = wire::body_offset(sequence);
        let area = out.get_mut(offset..MAX_PACKET_BYTES.min(out.len()))?;
        let room = area
            .len()
            .saturating_sub(crate::secure::crypto::MAC_BYTES)
            .min(MAX_PAYLOAD_BYTES);
        let body_len = write_body(&mut area[..room])?;
        let len = wire::seal_packet(out, kind, sequence, body_len, &self.send)?;
        self.send_sequence += 1;
        self.last_sent = Some(now);
        Some(len)
    }

    /// Hints the cache to fetch what [`Self::seal`] reads: the fields before
    /// the ciphers and the lines of the sending cipher that sealing reads.
    pub(crate) fn prefetch_send(&self) {
        crate::prefetch::prefetch_range(
            (self as *const Self).cast(),
            std::mem::offset_of!(Self, send),
        );
        self.send.prefetch();
    }

    /// Opens a received packet in place: replay check (for the kinds netcode.io
    /// protects), authentication, then the replay window advances and the link
    /// counts as alive. Returns where the plaintext body lies.
    pub(crate) fn open(
        &mut self,
        now: Instant,
        datagram: &mut [u8],
        header: &Header,
    ) -> Result<Range<usize>, DropKind> {
        let protected = header.kind.is_replay_protected();
        if protected && self.replay.is_replay(header.sequence) {
            return Err(DropKind::Replayed);
        }
        wire::open_packet(datagram, header, &self.recv).map_err(|_| DropKind::AuthFailed)?;
        if protected {
            self.replay.accept(header.sequence);
        }
        self.last_received = now;
        Ok(header.body.clone())
    }

    /// When the link times out if nothing more arrives.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.timeout.and_then(|t| self.last_received.checked_add(t))
    }

    pub(crate) fn timed_out(&self, now: Instant) -> bool {
        self.deadline().is_some_and(|d| now >= d)
    }

    /// When the next keep-alive is due if nothing else is sent.
    pub(crate) fn keep_alive_at(&self, interval: Duration, now: Instant) -> Instant {
        self.last_sent.map_or(now, |t| t + interval)
    }

    /// The wake-ups of a connected link carrying `endpoint`: its timeout, its
    /// next keep-alive, and the packet layer's next resend or loss deadline.
    pub(crate) fn wakeups(
        &self,
        endpoint: &PacketEndpoint,
        keep_alive_interval: Duration,
        now: Instant,
    ) -> [Option<Instant>; 3] {
        [
            self.deadline(),
            Some(self.keep_alive_at(keep_alive_interval, now)),
            endpoint.poll_timeout(),
        ]
    }
}

/// The earliest of some instants, if any.
pub(crate) fn earliest(instants: impl IntoIterator<Item = Option<Instant>>) -> Option<Instant> {
    instants.into_iter().flatten().min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(now: Instant, timeout: Option<Duration>) -> Link {
        let key = Key::from_bytes([3; 32]);
        Link::new("127.0.0.1:1".parse().unwrap(), &key, &key, 9, timeout, now)
    }

    #[test]
    fn negative_timeouts_disable_the_deadline() {
        assert_eq!(timeout_from_seconds(-1), None);
        assert_eq!(timeout_from_seconds(5), Some(Duration::from_secs(5)));
        let now = Instant::now();
        assert_eq!(link(now, None).deadline(), None);
        assert!(!link(now, None).timed_out(now + Duration::from_secs(1 << 30)));
        let l = link(now, Some(Duration::from_secs(5)));
        assert!(!l.timed_out(now + Duration::from_millis(4_999)));
        assert!(l.timed_out(now + Duration::from_secs(5)));
    }

    #[test]
    fn sealed_packets_open_once_and_sequences_advance() {
        let now = Instant::now();
        // The same key both ways, so a link can open what it sealed.
        let mut a = link(now, None);
        let mut buf = [0u8; MAX_PACKET_BYTES];
        let len = a
            .seal(now, PacketKind::Payload, &mut buf, |body| {
                body[..3].copy_from_slice(b"abc");
                Some(3)
            })
            .unwrap();
        assert_eq!(a.last_sent, Some(now));
        let second = a.seal(
            now,
            PacketKind::KeepAlive,
            &mut [0u8; MAX_PACKET_BYTES],
            |_| Some(8),
        );
        assert!(second.is_some());
        let header = wire::read_header(&buf[..len]).unwrap();
        assert_eq!(header.sequence, 0);
        let mut copy = buf;
        let body = a.open(now, &mut copy[..len], &header).unwrap();
        assert_eq!(&copy[body], b"abc");
        assert_eq!(
            a.open(now, &mut buf[..len], &header),
            Err(DropKind::Replayed)
        );
        // Nothing to send: no sequence used.
        assert!(
            a.seal(now, PacketKind::Payload, &mut buf, |_| None)
                .is_none()
        );
        let len = a
            .seal(now, PacketKind::Payload, &mut buf, |_| Some(1))
            .unwrap();
        assert_eq!(wire::read_header(&buf[..len]).unwrap().sequence, 2);
    }
}
