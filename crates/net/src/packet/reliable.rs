//! Packet-level reliability: sequence numbers, acks with a 32-bit bitfield,
//! sent-packet records and per-packet delivery notifications (the job
//! reliable.io does under yojimbo's channels).
//!
//! Every packet payload starts with a 9-byte header, little-endian:
//!
//! | bytes | field |
//! |-------|-------|
//! | 1 | flags: bit 0 set when the ack fields are meaningful, other bits 0 |
//! | 2 | `sequence` of this packet |
//! | 2 | `ack`: the newest sequence received from the peer |
//! | 4 | `ack_bits`: bit `i` set when `ack - 1 - i` was received too |
//!
//! `SentPackets` remembers, per sequence, when a packet left and which
//! reliable pieces it carried. An ack resolves a record as
//! [`DeliveryOutcome::Acked`] exactly once and reports its pieces to the
//! reliable channel; a record is presumed [`DeliveryOutcome::Lost`] when a
//! newer ack header can no longer mention it (it is more than 32 behind the
//! peer's `ack`), when it is older than the loss timeout, or when the record
//! ring needs its slot. A record is never reported twice: an ack arriving after
//! a packet was presumed lost is ignored. `ReceivedPackets` is the receive
//! window that generates the ack fields and rejects duplicate and stale packets.

use std::time::{Duration, Instant};

use crate::packet::channel_reliable::PieceRef;
use crate::packet::error::{Malformed, PacketError};
use crate::packet::rtt::LossEstimator;
use crate::packet::sequence::{SequenceBuffer, ack_field, sequence_diff, sequence_less_than};
use crate::prefetch::prefetch;

/// Bytes of the packet header.
pub const HEADER_LEN: usize = 9;

const FLAG_HAS_ACK: u8 = 1;

/// The header at the start of every packet payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    /// Sequence number of this packet.
    pub sequence: u16,
    /// Newest sequence received from the peer and the bitfield of the 32
    /// before it; `None` before anything was received.
    pub ack: Option<(u16, u32)>,
}

impl PacketHeader {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `out`;
    /// returns false (writing nothing) when `out` is shorter.
    pub fn write(&self, out: &mut [u8]) -> bool {
        let Some(dst) = out.get_mut(..HEADER_LEN) else {
            return false;
        };
        let (flags, (ack, bits)) = match self.ack {
            Some(ack) => (FLAG_HAS_ACK, ack),
            None => (0, (0, 0)),
        };
        dst[0] = flags;
        dst[1..3].copy_from_slice(&self.sequence.to_le_bytes());
        dst[3..5].copy_from_slice(&ack.to_le_bytes());
        dst[5..9].copy_from_slice(&bits.to_le_bytes());
        true
    }

    /// Reads a header; returns it and the bytes after it.
    pub fn read(payload: &[u8]) -> Result<(Self, &[u8]), Malformed> {
        let (head, rest) = payload
            .split_at_checked(HEADER_LEN)
            .ok_or(Malformed::Truncated)?;
        let flags = head[0];
        let sequence = u16::from_le_bytes([head[1], head[2]]);
        let ack = u16::from_le_bytes([head[3], head[4]]);
        let bits = u32::from_le_bytes([head[5], head[6], head[7], head[8]]);
        let ack = match flags {
            FLAG_HAS_ACK => Some((ack, bits)),
            0 if ack == 0 && bits == 0 => None,
            _ => return Err(Malformed::ReservedBits),
        };
        Ok((Self { sequence, ack }, rest))
    }
}

/// The fate of one sent packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryOutcome {
    /// The peer acknowledged the packet: it arrived and was accepted.
    Acked,
    /// The packet is presumed lost (it may still have arrived).
    Lost,
}

/// Notification about one sent packet, reported exactly once per packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Delivery {
    /// The sequence `write_packet` returned for the packet.
    pub sequence: u16,
    /// Acked or presumed lost.
    pub outcome: DeliveryOutcome,
}

/// Bounded queue of delivery notifications plus the loss estimate they feed.
#[derive(Debug)]
pub(crate) struct Deliveries {
    queue: Box<[Delivery]>,
    head: usize,
    len: usize,
    pub(crate) dropped: u64,
    pub(crate) acked: u64,
    pub(crate) lost: u64,
    pub(crate) loss: LossEstimator,
}

impl Deliveries {
    pub(crate) fn new(capacity: usize, loss_smoothing: f32) -> Self {
        let empty = Delivery {
            sequence: 0,
            outcome: DeliveryOutcome::Lost,
        };
        Self {
            queue: vec![empty; capacity.max(1)].into_boxed_slice(),
            head: 0,
            len: 0,
            dropped: 0,
            acked: 0,
            lost: 0,
            loss: LossEstimator::new(loss_smoothing),
        }
    }

    /// Queues a notification; when the queue is full the oldest one is
    /// overwritten and counted in `dropped`.
    pub(crate) fn report(&mut self, sequence: u16, outcome: DeliveryOutcome) {
        match outcome {
            DeliveryOutcome::Acked => self.acked += 1,
            DeliveryOutcome::Lost => self.lost += 1,
        }
        self.loss.record(outcome == DeliveryOutcome::Lost);
        let cap = self.queue.len();
        if self.len == cap {
            self.head = (self.head + 1) % cap;
            self.len -= 1;
            self.dropped += 1;
        }
        self.queue[(self.head + self.len) % cap] = Delivery { sequence, outcome };
        self.len += 1;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Hints the cache to fetch the slot the next report fills.
    pub(crate) fn prefetch(&self) {
        prefetch(&self.queue[(self.head + self.len) % self.queue.len()]);
    }

    pub(crate) fn pop(&mut self) -> Option<Delivery> {
        if self.len == 0 {
            return None;
        }
        let delivery = self.queue[self.head];
        self.head = (self.head + 1) % self.queue.len();
        self.len -= 1;
        Some(delivery)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct SentPacket {
    sent_at: Option<Instant>,
    pending: bool,
    pieces: u16,
}

/// Records of recently sent packets, resolved as acked or lost.
#[derive(Debug)]
pub(crate) struct SentPackets {
    records: SequenceBuffer<SentPacket>,
    pieces: Box<[PieceRef]>,
    max_pieces: usize,
    next_sequence: u16,
    oldest_pending: u16,
}

impl SentPackets {
    /// `window` records (a power of two), each listing up to `max_pieces`.
    pub(crate) fn new(window: usize, max_pieces: usize) -> Self {
        Self {
            records: SequenceBuffer::new(window),
            pieces: vec![PieceRef::default(); window * max_pieces].into_boxed_slice(),
            max_pieces,
            next_sequence: 0,
            oldest_pending: 0,
        }
    }

    /// Hints the cache to fetch the record the next packet takes.
    pub(crate) fn prefetch(&self) {
        self.records.prefetch(self.next_sequence);
    }

    fn is_pending(&self, sequence: u16) -> bool {
        self.records.get(sequence).is_some_and(|r| r.pending)
    }

    fn skip_resolved(&mut self) {
        while self.oldest_pending != self.next_sequence && !self.is_pending(self.oldest_pending) {
            self.oldest_pending = self.oldest_pending.wrapping_add(1);
        }
    }

    fn lose_oldest(&mut self, deliveries: &mut Deliveries) {
        if let Some(record) = self.records.get_mut(self.oldest_pending)
            && record.pending
        {
            record.pending = false;
            deliveries.report(self.oldest_pending, DeliveryOutcome::Lost);
        }
        self.oldest_pending = self.oldest_pending.wrapping_add(1);
    }

    /// Records a packet sent at `now` carrying `carried` (truncated to the
    /// per-packet maximum) and returns its sequence. A record still pending in
    /// the slot being reused is presumed lost first.
    pub(crate) fn record(
        &mut self,
        now: Instant,
        carried: &[PieceRef],
        deliveries: &mut Deliveries,
    ) -> u16 {
        let window = self.records.capacity();
        while usize::from(self.next_sequence.wrapping_sub(self.oldest_pending)) >= window {
            self.lose_oldest(deliveries);
        }
        let sequence = self.next_sequence;
        let count = carried.len().min(self.max_pieces);
        let slot = self.records.slot_of(sequence);
        self.pieces[slot * self.max_pieces..][..count].copy_from_slice(&carried[..count]);
        if let Some(record) = self.records.insert(sequence) {
            *record = SentPacket {
                sent_at: Some(now),
                pending: true,
                pieces: count as u16,
            };
        }
        self.next_sequence = sequence.wrapping_add(1);
        sequence
    }

    /// The bits of an ack bitfield relative to `ack` (bit `i` names
    /// `ack - 1 - i`) that can name a pending packet: those not older than
    /// the oldest pending one. Zero when nothing is pending.
    pub(crate) fn pending_ack_bits(&self, ack: u16) -> u32 {
        if self.oldest_pending == self.next_sequence {
            return 0;
        }
        match sequence_diff(ack, self.oldest_pending) {
            d if d <= 0 => 0,
            d if d >= 32 => u32::MAX,
            d => (1u32 << d) - 1,
        }
    }

    /// Resolves `sequence` as acked if it is pending: reports it, hands each
    /// carried piece to `on_piece`, and returns when it was sent.
    pub(crate) fn ack(
        &mut self,
        sequence: u16,
        deliveries: &mut Deliveries,
        mut on_piece: impl FnMut(PieceRef),
    ) -> Option<Instant> {
        let slot = self.records.slot_of(sequence);
        let record = self.records.get_mut(sequence)?;
        if !record.pending {
            return None;
        }
        record.pending = false;
        let (sent_at, count) = (record.sent_at, usize::from(record.pieces));
        deliveries.report(sequence, DeliveryOutcome::Acked);
        for piece in &self.pieces[slot * self.max_pieces..][..count] {
            on_piece(*piece);
        }
        sent_at
    }

    /// Presumes lost every pending packet more than 32 behind `ack`, the
    /// newest sequence the peer says it received (ignored unless it is one we
    /// sent recently).
    pub(crate) fn lose_beyond_ack_window(&mut self, ack: u16, deliveries: &mut Deliveries) {
        let last_sent = self.next_sequence.wrapping_sub(1);
        let behind = sequence_diff(last_sent, ack);
        if self.oldest_pending == self.next_sequence
            || !(0..self.records.capacity() as i32).contains(&behind)
        {
            return;
        }
        let limit = ack.wrapping_sub(32);
        while self.oldest_pending != self.next_sequence
            && sequence_less_than(self.oldest_pending, limit)
        {
            self.lose_oldest(deliveries);
        }
        self.skip_resolved();
    }

    /// Presumes lost every pending packet sent `timeout` or more before `now`.
    pub(crate) fn lose_timed_out(
        &mut self,
        now: Instant,
        timeout: Duration,
        deliveries: &mut Deliveries,
    ) {
        self.skip_resolved();
        while self.oldest_pending != self.next_sequence {
            let sent_at = self
                .records
                .get(self.oldest_pending)
                .and_then(|r| r.sent_at);
            match sent_at {
                Some(at) if now < at + timeout => break,
                _ => self.lose_oldest(deliveries),
            }
            self.skip_resolved();
        }
    }

    /// When the oldest pending packet times out.
    pub(crate) fn next_loss_deadline(&self, timeout: Duration) -> Option<Instant> {
        let mut sequence = self.oldest_pending;
        while sequence != self.next_sequence {
            if let Some(record) = self.records.get(sequence)
                && record.pending
            {
                return record.sent_at.map(|at| at + timeout);
            }
            sequence = sequence.wrapping_add(1);
        }
        None
    }
}

/// Sequences received from the peer: the ack source and the duplicate filter.
#[derive(Debug)]
pub(crate) struct ReceivedPackets {
    /// One bit per sequence number of the window (bit `s & mask`): received.
    /// A bitmap rather than a [`SequenceBuffer`] of numbers: the default
    /// 256-packet window is one cache line instead of sixteen, and the 32 ack
    /// bits of every outgoing header come from one or two words.
    bits: Box<[u64]>,
    most_recent: Option<u16>,
    mask: usize,
}

impl ReceivedPackets {
    /// A window of `window` packets (a power of two, at least 64).
    pub(crate) fn new(window: usize) -> Self {
        assert!(
            window.is_power_of_two()
                && (64..=crate::packet::sequence::MAX_SEQUENCE_WINDOW).contains(&window),
            "received window must be a power of two in 64..={}, got {window}",
            crate::packet::sequence::MAX_SEQUENCE_WINDOW
        );
        Self {
            bits: vec![0; window / 64].into_boxed_slice(),
            most_recent: None,
            mask: window - 1,
        }
    }

    /// Hints the cache to fetch the bitmap's words.
    pub(crate) fn prefetch(&self) {
        prefetch(&self.bits[..]);
    }

    fn bit(&self, sequence: u16) -> bool {
        let slot = usize::from(sequence) & self.mask;
        self.bits[slot / 64] & (1 << (slot % 64)) != 0
    }

    fn set_bit(&mut self, sequence: u16, on: bool) {
        let slot = usize::from(sequence) & self.mask;
        let word = &mut self.bits[slot / 64];
        if on {
            *word |= 1 << (slot % 64);
        } else {
            *word &= !(1 << (slot % 64));
        }
    }

    /// Whether `sequence` lies in the window behind the most recent.
    fn in_window(&self, sequence: u16) -> bool {
        self.most_recent
            .is_some_and(|recent| (0..=self.mask as i32).contains(&sequence_diff(recent, sequence)))
    }

    fn is_too_old(&self, sequence: u16) -> bool {
        self.most_recent
            .is_some_and(|recent| sequence_diff(recent, sequence) > self.mask as i32)
    }

    /// Rejects a sequence already received or too old to tell.
    pub(crate) fn check(&self, sequence: u16) -> Result<(), PacketError> {
        if self.in_window(sequence) && self.bit(sequence) {
            Err(PacketError::Duplicate(sequence))
        } else if self.is_too_old(sequence) {
            Err(PacketError::Stale(sequence))
        } else {
            Ok(())
        }
    }

    /// Marks `sequence` received; a newer one first clears the numbers it
    /// skipped (they were not received).
    pub(crate) fn record(&mut self, sequence: u16) {
        if self.is_too_old(sequence) {
            return;
        }
        match self.most_recent {
            Some(recent) if sequence_diff(sequence, recent) <= 0 => {}
            Some(recent) => {
                let gap = sequence_diff(sequence, recent) as usize;
                if gap > self.mask {
                    self.bits.fill(0);
                } else {
                    for step in 1..gap {
                        self.set_bit(recent.wrapping_add(step as u16), false);
                    }
                }
                self.most_recent = Some(sequence);
            }
            None => self.most_recent = Some(sequence),
        }
        self.set_bit(sequence, true);
    }

    /// The ack fields for the next packet header: the most recent sequence
    /// and, in bit `i`, whether `most_recent - 1 - i` was received.
    pub(crate) fn ack(&self) -> Option<(u16, u32)> {
        let ack = self.most_recent?;
        Some((ack, ack_field(ack, |s| self.bit(s))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_reserved_bits() {
        let header = PacketHeader {
            sequence: 65535,
            ack: Some((7, 0xdead_beef)),
        };
        let mut buf = [0u8; 12];
        assert!(header.write(&mut buf));
        buf[9..].copy_from_slice(b"xyz");
        let (read, rest) = PacketHeader::read(&buf).unwrap();
        assert_eq!(read, header);
        assert_eq!(rest, b"xyz");
        let none = PacketHeader {
            sequence: 1,
            ack: None,
        };
        assert!(none.write(&mut buf));
        assert_eq!(PacketHeader::read(&buf[..9]).unwrap().0, none);
        buf[0] = 2;
        assert_eq!(PacketHeader::read(&buf), Err(Malformed::ReservedBits));
        buf[0] = 0;
        buf[3] = 1;
        assert_eq!(PacketHeader::read(&buf), Err(Malformed::ReservedBits));
        assert_eq!(PacketHeader::read(&buf[..8]), Err(Malformed::Truncated));
        assert!(!header.write(&mut buf[..8]));
    }

    /// The bitmap window answers as the sequence buffer it replaced, through
    /// wraparound, gaps wider than the window, duplicates and stale packets.
    #[test]
    fn received_window_matches_a_sequence_buffer() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for window in [64, 256] {
            let mut bitmap = ReceivedPackets::new(window);
            let mut model: SequenceBuffer<()> = SequenceBuffer::new(window);
            let mut next: u16 = 65_000;
            for _ in 0..20_000 {
                let sequence = match rng.random_range(0..10) {
                    0 => next.wrapping_sub(rng.random_range(0..window as u16 * 2)),
                    1 => next.wrapping_add(rng.random_range(0..window as u16 * 2)),
                    _ => next.wrapping_add(rng.random_range(0..3)),
                };
                let expected = if model.contains(sequence) {
                    Err(PacketError::Duplicate(sequence))
                } else if model.is_too_old(sequence) {
                    Err(PacketError::Stale(sequence))
                } else {
                    Ok(())
                };
                assert_eq!(bitmap.check(sequence), expected, "check {sequence}");
                if expected.is_ok() {
                    bitmap.record(sequence);
                    let _ = model.insert(sequence);
                    if sequence_diff(sequence, next) >= 0 {
                        next = sequence.wrapping_add(1);
                    }
                }
                assert_eq!(bitmap.ack(), model.ack_bits(), "ack after {sequence}");
            }
        }
    }

    #[test]
    fn every_record_resolves_once() {
        let t0 = Instant::now();
        let mut d = Deliveries::new(64, 0.1);
        let mut sent = SentPackets::new(64, 4);
        let piece = PieceRef { id: 3, index: 1 };
        for _ in 0..40 {
            sent.record(t0, &[piece], &mut d);
        }
        let mut pieces = Vec::new();
        assert_eq!(sent.ack(39, &mut d, |p| pieces.push(p)), Some(t0));
        assert_eq!(sent.ack(39, &mut d, |p| pieces.push(p)), None);
        assert_eq!(pieces, vec![piece]);
        // ack 39 means everything before 7 can no longer be acked.
        sent.lose_beyond_ack_window(39, &mut d);
        assert_eq!(d.lost, 7);
        assert_eq!(sent.ack(3, &mut d, |_| {}), None);
        sent.ack(10, &mut d, |_| {});
        // A bogus ack from the future changes nothing.
        sent.lose_beyond_ack_window(1000, &mut d);
        assert_eq!(d.lost, 7);
        assert_eq!(
            sent.next_loss_deadline(Duration::from_secs(1)),
            Some(t0 + Duration::from_secs(1))
        );
        sent.lose_timed_out(t0 + Duration::from_secs(1), Duration::from_secs(1), &mut d);
        assert_eq!(d.lost, 7 + 31);
        assert_eq!(d.acked, 2);
        assert_eq!(sent.next_loss_deadline(Duration::from_secs(1)), None);
        let mut seen = std::collections::HashSet::new();
        while let Some(delivery) = d.pop() {
            assert!(seen.insert(delivery.sequence));
        }
        assert_eq!(seen.len(), 40);
    }

    #[test]
    fn pending_ack_bits_cover_only_pending_packets() {
        let t0 = Instant::now();
        let mut d = Deliveries::new(64, 0.1);
        let mut sent = SentPackets::new(64, 1);
        assert_eq!(sent.pending_ack_bits(5), 0, "nothing sent");
        for _ in 0..40 {
            sent.record(t0, &[], &mut d);
        }
        // Everything from 0 is pending: ack 39 may name 7..=38 (bits 0..=31).
        assert_eq!(sent.pending_ack_bits(39), u32::MAX);
        assert_eq!(sent.pending_ack_bits(3), 0b111, "bits for 2, 1, 0");
        assert_eq!(sent.pending_ack_bits(0), 0);
        sent.ack(39, &mut d, |_| {});
        sent.lose_beyond_ack_window(39, &mut d); // 0..=6 lost, 7 now the oldest
        assert_eq!(sent.pending_ack_bits(10), 0b111, "bits for 9, 8, 7");
        for s in 7..39 {
            sent.ack(s, &mut d, |_| {});
        }
        sent.lose_timed_out(t0, Duration::from_secs(1), &mut d);
        assert_eq!(sent.pending_ack_bits(39), 0, "all resolved");
    }

    #[test]
    fn full_record_ring_presumes_the_oldest_lost() {
        let t0 = Instant::now();
        let mut d = Deliveries::new(4, 0.1);
        let mut sent = SentPackets::new(4, 1);
        for _ in 0..6 {
            sent.record(t0, &[], &mut d);
        }
        assert_eq!(d.lost, 2);
        assert_eq!(d.pop().map(|x| x.sequence), Some(0));
        assert_eq!(sent.ack(1, &mut d, |_| {}), None);
        assert!(sent.ack(5, &mut d, |_| {}).is_some());
    }

    #[test]
    fn delivery_queue_overwrites_oldest_when_full() {
        let mut d = Deliveries::new(2, 0.1);
        for s in 0..3 {
            d.report(s, DeliveryOutcome::Acked);
        }
        assert_eq!(d.dropped, 1);
        assert_eq!(d.pop().map(|x| x.sequence), Some(1));
        assert_eq!(d.pop().map(|x| x.sequence), Some(2));
        assert_eq!(d.pop(), None);
    }

    #[test]
    fn received_window_filters() {
        let mut rx = ReceivedPackets::new(64);
        assert_eq!(rx.ack(), None);
        rx.record(100);
        assert_eq!(rx.check(100), Err(PacketError::Duplicate(100)));
        assert_eq!(rx.check(36), Err(PacketError::Stale(36)));
        assert_eq!(rx.check(37), Ok(()));
        rx.record(98);
        assert_eq!(rx.ack(), Some((100, 0b10)));
    }
}
