//! The reliable ordered channel: every message is delivered exactly once, in
//! the order it was sent, however packets are lost, duplicated or reordered.
//!
//! **Sender.** [`ReliableSender`] gives each message a wrapping `u16` id and
//! keeps its bytes in a byte ring and one record per piece (a whole message is
//! one piece; a large one is cut into fragments, see [`crate::fragment`]).
//! When a packet is built, pieces that were never sent or whose last send is
//! older than the resend delay (about 1.25 RTT) are written, oldest message
//! first; the packet layer remembers which pieces each packet carried and
//! calls [`ReliableSender::on_piece_acked`] when that packet is acknowledged.
//! A message is released when it and every older message are fully acked.
//! At most `message_window` messages, `reliable_buffer_bytes` bytes and
//! `max_fragmented_in_flight` fragmented messages are queued at once; beyond
//! that `send_reliable` fails with a full queue.
//!
//! **Receiver.** [`ReliableReceiver`] accepts pieces of messages whose id lies
//! in the window `next_to_deliver .. next_to_deliver + message_window`,
//! ignores pieces of already-delivered messages and duplicates, and hands
//! complete messages out strictly in id order. Its storage is sized so that
//! everything a sender with the same config can have in flight fits once the
//! application has polled what is deliverable; the packet layer checks room
//! for a whole packet before accepting it (see [`ReliableReceiver::classify`]).
//!
//! Neither side allocates in steady state. The sender's byte ring and the
//! receiver's chunk pool start with room for a full window of whole
//! (unfragmented) messages and grow (doubling, up to the sizes the config
//! allows) only for fragmented ones, so the rare large message pays for its
//! storage once and the connection keeps it.

use std::time::{Duration, Instant};

use crate::packet::channel::{BlockWriter, RELIABLE_BLOCK_OVERHEAD};
use crate::packet::channel_ring::ByteRing;
use crate::packet::error::{Malformed, PacketError};
use crate::packet::fragment::{ChunkPool, FragmentGeometry, NO_CHUNK, ReassemblySlots};
use crate::packet::sequence::sequence_diff;

/// One reliable piece carried by a packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PieceRef {
    pub(crate) id: u16,
    pub(crate) index: u16,
}

#[derive(Debug, Clone, Copy, Default)]
struct OutMessage {
    offset: u64,
    len: u32,
    first_piece: u64,
    piece_count: u16,
    unacked: u16,
}

#[derive(Debug, Clone, Copy, Default)]
struct OutPiece {
    last_sent: Option<Instant>,
    acked: bool,
}

/// Sizes shared by both sides of the reliable channel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReliableSizes {
    pub(crate) geometry: FragmentGeometry,
    /// Messages in flight (a power of two).
    pub(crate) window: usize,
    /// Bytes of queued messages.
    pub(crate) buffer_bytes: usize,
    /// Fragmented messages in flight.
    pub(crate) max_fragmented: usize,
}

impl ReliableSizes {
    /// Pieces (sender records) or chunks (receiver storage) everything in
    /// flight can need: a message of `len` bytes has `ceil(len / fragment)`
    /// pieces, at most `len / fragment + 1`, so all queued messages together
    /// have at most `window + buffer_bytes / fragment`.
    pub(crate) fn max_pieces(&self) -> usize {
        self.window + self.buffer_bytes.div_ceil(self.geometry.fragment_size)
    }

    /// Storage (bytes, or receive chunks) a full window of whole messages
    /// can need: what the sender's ring and the receiver's pool start with,
    /// so only fragmented messages ever grow them.
    fn whole_window_bytes(&self) -> usize {
        (self.window * self.geometry.fragment_size).min(self.buffer_bytes)
    }
}

/// Queued reliable messages and their resend state. `repr(C)`: the two ids
/// an idle sender's `write_due` reads come first.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct ReliableSender {
    oldest_unacked: u16,
    next_id: u16,
    sizes: ReliableSizes,
    messages: Box<[OutMessage]>,
    bytes: ByteRing,
    pieces: Box<[OutPiece]>,
    piece_head: u64,
    piece_tail: u64,
    fragmented_in_flight: usize,
}

impl ReliableSender {
    pub(crate) fn new(sizes: ReliableSizes) -> Self {
        Self {
            sizes,
            messages: vec![OutMessage::default(); sizes.window].into_boxed_slice(),
            oldest_unacked: 0,
            next_id: 0,
            bytes: ByteRing::growing(sizes.whole_window_bytes(), sizes.buffer_bytes),
            pieces: vec![OutPiece::default(); sizes.max_pieces()].into_boxed_slice(),
            piece_head: 0,
            piece_tail: 0,
            fragmented_in_flight: 0,
        }
    }

    fn slot(&self, id: u16) -> usize {
        usize::from(id) & (self.sizes.window - 1)
    }

    /// Hints the cache to fetch the record of the next message queued.
    pub(crate) fn prefetch(&self) {
        crate::prefetch::prefetch(&self.messages[self.slot(self.next_id)]);
    }

    fn piece_slot(&self, piece: u64) -> usize {
        (piece % self.pieces.len() as u64) as usize
    }

    /// Messages queued and not yet released.
    pub(crate) fn in_flight(&self) -> usize {
        usize::from(self.next_id.wrapping_sub(self.oldest_unacked))
    }

    /// Queues `msg`.
    pub(crate) fn queue(&mut self, msg: &[u8]) -> Result<(), PacketError> {
        let geometry = self.sizes.geometry;
        if msg.len() > geometry.max_message_size {
            return Err(PacketError::MessageTooLarge {
                len: msg.len(),
                max: geometry.max_message_size,
            });
        }
        let count = geometry.piece_count(msg.len());
        let fragmented = count > 1;
        let pieces_free = self.pieces.len() - (self.piece_head - self.piece_tail) as usize;
        if self.in_flight() >= self.sizes.window
            || (fragmented && self.fragmented_in_flight >= self.sizes.max_fragmented)
            || self.bytes.free() < msg.len()
            || pieces_free < usize::from(count)
        {
            return Err(PacketError::SendQueueFull);
        }
        let offset = self.bytes.push(&[msg]).ok_or(PacketError::SendQueueFull)?;
        let first_piece = self.piece_head;
        for piece in first_piece..first_piece + u64::from(count) {
            let slot = self.piece_slot(piece);
            self.pieces[slot] = OutPiece::default();
        }
        self.piece_head += u64::from(count);
        if fragmented {
            self.fragmented_in_flight += 1;
        }
        let slot = self.slot(self.next_id);
        self.messages[slot] = OutMessage {
            offset,
            len: msg.len() as u32,
            first_piece,
            piece_count: count,
            unacked: count,
        };
        self.next_id = self.next_id.wrapping_add(1);
        Ok(())
    }

    fn is_due(piece: &OutPiece, now: Instant, resend_delay: Duration) -> bool {
        !piece.acked
            && piece
                .last_sent
                .is_none_or(|sent| now >= sent + resend_delay)
    }

    /// Writes due pieces, oldest message first, into `writer` and lists them in
    /// `carried` (stopping when it is full). Returns how many were resends.
    pub(crate) fn write_due(
        &mut self,
        now: Instant,
        resend_delay: Duration,
        writer: &mut BlockWriter<'_>,
        carried: &mut [PieceRef],
        carried_len: &mut usize,
    ) -> u64 {
        let mut resent = 0;
        let mut id = self.oldest_unacked;
        while id != self.next_id {
            if writer.remaining() <= RELIABLE_BLOCK_OVERHEAD || *carried_len == carried.len() {
                break;
            }
            let msg = self.messages[self.slot(id)];
            for index in 0..msg.piece_count {
                if *carried_len == carried.len() {
                    break;
                }
                let piece_slot = self.piece_slot(msg.first_piece + u64::from(index));
                let piece = self.pieces[piece_slot];
                if !Self::is_due(&piece, now, resend_delay) {
                    continue;
                }
                let (start, end) = self.sizes.geometry.piece_range(msg.len as usize, index);
                let dst = if msg.piece_count == 1 {
                    writer.reliable(id, end - start)
                } else {
                    writer.fragment(id, index, msg.piece_count, end - start)
                };
                let Some(dst) = dst else { continue };
                self.bytes.read(msg.offset + start as u64, dst);
                carried[*carried_len] = PieceRef { id, index };
                *carried_len += 1;
                if piece.last_sent.is_some() {
                    resent += 1;
                }
                self.pieces[piece_slot].last_sent = Some(now);
            }
            id = id.wrapping_add(1);
        }
        resent
    }

    /// When the next piece becomes due: `now_hint` when a piece was never sent,
    /// `None` when nothing is unacknowledged.
    pub(crate) fn next_due(&self, resend_delay: Duration, now_hint: Instant) -> Option<Instant> {
        let mut due: Option<Instant> = None;
        let mut id = self.oldest_unacked;
        while id != self.next_id {
            let msg = self.messages[self.slot(id)];
            for index in 0..msg.piece_count {
                let piece = self.pieces[self.piece_slot(msg.first_piece + u64::from(index))];
                if piece.acked {
                    continue;
                }
                let at = piece.last_sent.map_or(now_hint, |sent| sent + resend_delay);
                due = Some(due.map_or(at, |d| d.min(at)));
            }
            id = id.wrapping_add(1);
        }
        due
    }

    /// Marks a piece delivered (its packet was acked) and releases messages
    /// that are now fully delivered at the front of the queue.
    pub(crate) fn on_piece_acked(&mut self, piece: PieceRef) {
        if usize::from(piece.id.wrapping_sub(self.oldest_unacked)) >= self.in_flight() {
            return;
        }
        let slot = self.slot(piece.id);
        let msg = self.messages[slot];
        if piece.index >= msg.piece_count {
            return;
        }
        let piece_slot = self.piece_slot(msg.first_piece + u64::from(piece.index));
        if self.pieces[piece_slot].acked {
            return;
        }
        self.pieces[piece_slot].acked = true;
        self.messages[slot].unacked -= 1;
        while self.oldest_unacked != self.next_id {
            let oldest = self.messages[self.slot(self.oldest_unacked)];
            if oldest.unacked > 0 {
                break;
            }
            self.bytes.release_to(oldest.offset + u64::from(oldest.len));
            self.piece_tail = oldest.first_piece + u64::from(oldest.piece_count);
            if oldest.piece_count > 1 {
                self.fragmented_in_flight -= 1;
            }
            self.oldest_unacked = self.oldest_unacked.wrapping_add(1);
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum SlotState {
    #[default]
    Empty,
    Partial,
    Complete,
}

#[derive(Debug, Clone, Copy, Default)]
struct InMessage {
    id: u16,
    state: SlotState,
    piece_count: u16,
    received: u16,
    len: u32,
    /// Chunk of a whole message, or reassembly slot of a fragmented one.
    storage: u32,
}

/// What accepting one received piece would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PieceFate {
    /// The message was delivered already: ignore the piece.
    Delivered,
    /// The piece is stored already: ignore it.
    Duplicate,
    /// A new piece; `opens` when it starts a new message (a fragmented one
    /// then needs a reassembly slot), `chunk` when it needs a chunk.
    New { opens: bool, chunk: bool },
    /// Beyond the receive window: the application has not drained messages.
    OutOfWindow,
}

/// Received reliable messages, reassembled and released in order.
#[derive(Debug)]
pub(crate) struct ReliableReceiver {
    sizes: ReliableSizes,
    slots: Box<[InMessage]>,
    next_deliver: u16,
    /// Messages opened and not yet delivered: while none are, polling reads
    /// no slot (the slots sit in their own allocation).
    open: usize,
    chunks: ChunkPool,
    reassembly: ReassemblySlots,
}

impl ReliableReceiver {
    pub(crate) fn new(sizes: ReliableSizes) -> Self {
        Self {
            sizes,
            slots: vec![InMessage::default(); sizes.window].into_boxed_slice(),
            next_deliver: 0,
            open: 0,
            chunks: ChunkPool::growing(
                sizes.window,
                sizes.max_pieces(),
                sizes.geometry.fragment_size,
            ),
            reassembly: ReassemblySlots::new(sizes.max_fragmented, sizes.geometry.max_fragments),
        }
    }

    fn slot(&self, id: u16) -> usize {
        usize::from(id) & (self.sizes.window - 1)
    }

    fn open_message(&self, id: u16) -> Option<&InMessage> {
        let msg = &self.slots[self.slot(id)];
        (msg.state != SlotState::Empty && msg.id == id).then_some(msg)
    }

    /// Free chunks.
    pub(crate) fn chunks_available(&self) -> usize {
        self.chunks.available()
    }

    /// Free reassembly slots.
    pub(crate) fn reassembly_available(&self) -> usize {
        self.reassembly.available()
    }

    /// Decides, without changing anything, what accepting a piece would do.
    /// `(index, count, len)` must already have passed the block checks.
    pub(crate) fn classify(
        &self,
        id: u16,
        index: u16,
        count: u16,
        len: usize,
    ) -> Result<PieceFate, Malformed> {
        let ahead = sequence_diff(id, self.next_deliver);
        if ahead < 0 {
            return Ok(PieceFate::Delivered);
        }
        if ahead as usize >= self.sizes.window {
            return Ok(PieceFate::OutOfWindow);
        }
        let Some(msg) = self.open_message(id) else {
            return Ok(PieceFate::New {
                opens: true,
                chunk: len > 0,
            });
        };
        if msg.piece_count != count {
            return Err(Malformed::FragmentMismatch);
        }
        if count == 1 || self.reassembly.table(msg.storage)[usize::from(index)] != NO_CHUNK {
            return Ok(PieceFate::Duplicate);
        }
        Ok(PieceFate::New {
            opens: false,
            chunk: true,
        })
    }

    /// Stores a piece that [`Self::classify`] called new, with room checked.
    /// Returns false if storage unexpectedly ran out (the piece is dropped).
    pub(crate) fn accept(&mut self, id: u16, index: u16, count: u16, data: &[u8]) -> bool {
        let slot = self.slot(id);
        if self.open_message(id).is_none() {
            let storage = if count > 1 {
                match self.reassembly.acquire() {
                    Some(s) => s,
                    None => return false,
                }
            } else {
                NO_CHUNK
            };
            self.open += 1;
            self.slots[slot] = InMessage {
                id,
                state: SlotState::Partial,
                piece_count: count,
                received: 0,
                len: 0,
                storage,
            };
        }
        let msg = self.slots[slot];
        if msg.piece_count != count || msg.state == SlotState::Complete {
            return true;
        }
        if count == 1 {
            let chunk = if data.is_empty() {
                NO_CHUNK
            } else {
                match self.chunks.store(data) {
                    Some(c) => c,
                    None => return false,
                }
            };
            self.slots[slot] = InMessage {
                state: SlotState::Complete,
                received: 1,
                len: data.len() as u32,
                storage: chunk,
                ..msg
            };
            return true;
        }
        let index = usize::from(index);
        if self.reassembly.table(msg.storage)[index] != NO_CHUNK {
            return true;
        }
        let Some(chunk) = self.chunks.store(data) else {
            return false;
        };
        self.reassembly.table_mut(msg.storage)[index] = chunk;
        let entry = &mut self.slots[slot];
        entry.received += 1;
        if index == usize::from(count) - 1 {
            entry.len = self.sizes.geometry.total_len(count, data.len()) as u32;
        }
        if entry.received == count {
            entry.state = SlotState::Complete;
        }
        true
    }

    /// Length of the next in-order message, if it is complete.
    pub(crate) fn next_len(&self) -> Option<usize> {
        if self.open == 0 {
            return None;
        }
        let msg = self.open_message(self.next_deliver)?;
        (msg.state == SlotState::Complete).then_some(msg.len as usize)
    }

    /// Copies the next in-order message into `out` and releases it; `None`
    /// when it is not complete or `out` is too short (it stays queued).
    pub(crate) fn pop(&mut self, out: &mut [u8]) -> Option<usize> {
        let len = self.next_len()?;
        let dst = out.get_mut(..len)?;
        let slot = self.slot(self.next_deliver);
        let msg = self.slots[slot];
        if msg.piece_count == 1 {
            if msg.storage != NO_CHUNK {
                dst.copy_from_slice(self.chunks.bytes(msg.storage, len));
                self.chunks.release(msg.storage);
            }
        } else {
            for index in 0..msg.piece_count {
                let (start, end) = self.sizes.geometry.piece_range(len, index);
                let chunk = self.reassembly.table(msg.storage)[usize::from(index)];
                dst[start..end].copy_from_slice(self.chunks.bytes(chunk, end - start));
                self.chunks.release(chunk);
            }
            self.reassembly.release(msg.storage);
        }
        self.slots[slot].state = SlotState::Empty;
        self.open -= 1;
        self.next_deliver = self.next_deliver.wrapping_add(1);
        Some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes() -> ReliableSizes {
        ReliableSizes {
            geometry: FragmentGeometry::new(8, 64),
            window: 4,
            buffer_bytes: 80,
            max_fragmented: 1,
        }
    }

    fn transfer(
        tx: &mut ReliableSender,
        rx: &mut ReliableReceiver,
        now: Instant,
        ack: bool,
    ) -> Vec<PieceRef> {
        let mut buf = [0u8; 64];
        let mut carried = [PieceRef::default(); 8];
        let mut n = 0;
        let mut w = BlockWriter::new(&mut buf, 0);
        tx.write_due(
            now,
            Duration::from_millis(100),
            &mut w,
            &mut carried,
            &mut n,
        );
        let end = w.position();
        let limits = crate::packet::channel::BlockLimits {
            geometry: sizes().geometry,
            max_unreliable: 0,
        };
        for block in crate::packet::channel::Blocks::new(&buf[..end], limits) {
            let (id, index, count, data) = block.unwrap().reliable_piece().unwrap();
            if let PieceFate::New { .. } = rx.classify(id, index, count, data.len()).unwrap() {
                assert!(rx.accept(id, index, count, data));
            }
        }
        if ack {
            for piece in &carried[..n] {
                tx.on_piece_acked(*piece);
            }
        }
        carried[..n].to_vec()
    }

    #[test]
    fn whole_and_fragmented_messages_arrive_in_order() {
        let now = Instant::now();
        let mut tx = ReliableSender::new(sizes());
        let mut rx = ReliableReceiver::new(sizes());
        tx.queue(b"hi").unwrap();
        tx.queue(b"0123456789abcdefXYZ").unwrap(); // 3 fragments
        tx.queue(b"").unwrap();
        assert_eq!(
            tx.queue(b"0123456789abcdef!"),
            Err(PacketError::SendQueueFull),
            "one fragmented message in flight at a time"
        );
        let carried = transfer(&mut tx, &mut rx, now, true);
        assert_eq!(carried.len(), 5);
        assert_eq!(tx.in_flight(), 0);
        let mut out = [0u8; 64];
        assert_eq!(rx.pop(&mut out), Some(2));
        assert_eq!(&out[..2], b"hi");
        assert_eq!(rx.pop(&mut out[..3]), None, "too short: stays queued");
        assert_eq!(rx.pop(&mut out), Some(19));
        assert_eq!(&out[..19], b"0123456789abcdefXYZ");
        assert_eq!(rx.pop(&mut out), Some(0));
        assert_eq!(rx.pop(&mut out), None);
        assert_eq!(rx.chunks_available(), sizes().max_pieces());
        assert_eq!(rx.reassembly_available(), 1);
    }

    #[test]
    fn unacked_pieces_are_resent_after_the_delay_only() {
        let now = Instant::now();
        let mut tx = ReliableSender::new(sizes());
        let mut rx = ReliableReceiver::new(sizes());
        tx.queue(b"abc").unwrap();
        assert_eq!(tx.next_due(Duration::from_millis(100), now), Some(now));
        assert_eq!(transfer(&mut tx, &mut rx, now, false).len(), 1);
        assert!(transfer(&mut tx, &mut rx, now + Duration::from_millis(50), false).is_empty());
        assert_eq!(
            tx.next_due(Duration::from_millis(100), now),
            Some(now + Duration::from_millis(100))
        );
        let again = transfer(&mut tx, &mut rx, now + Duration::from_millis(100), true);
        assert_eq!(again, vec![PieceRef { id: 0, index: 0 }]);
        assert_eq!(tx.next_due(Duration::from_millis(100), now), None);
        // The receiver saw the piece twice but keeps one copy.
        let mut out = [0u8; 8];
        assert_eq!(rx.pop(&mut out), Some(3));
        assert_eq!(rx.pop(&mut out), None);
    }

    #[test]
    fn receiver_window_and_mismatches() {
        let mut rx = ReliableReceiver::new(sizes());
        assert_eq!(rx.classify(4, 0, 1, 1), Ok(PieceFate::OutOfWindow));
        assert_eq!(rx.classify(65535, 0, 1, 1), Ok(PieceFate::Delivered));
        assert_eq!(
            rx.classify(1, 0, 3, 8),
            Ok(PieceFate::New {
                opens: true,
                chunk: true
            })
        );
        assert!(rx.accept(1, 0, 3, &[1; 8]));
        assert_eq!(rx.classify(1, 0, 3, 8), Ok(PieceFate::Duplicate));
        assert_eq!(rx.classify(1, 1, 4, 8), Err(Malformed::FragmentMismatch));
        assert_eq!(rx.classify(1, 0, 1, 8), Err(Malformed::FragmentMismatch));
        assert_eq!(
            rx.classify(1, 2, 3, 5),
            Ok(PieceFate::New {
                opens: false,
                chunk: true
            })
        );
        assert_eq!(rx.next_len(), None);
    }

    #[test]
    fn sender_limits_are_enforced() {
        let mut tx = ReliableSender::new(sizes());
        assert_eq!(
            tx.queue(&[0; 65]),
            Err(PacketError::MessageTooLarge { len: 65, max: 64 })
        );
        for _ in 0..4 {
            tx.queue(b"x").unwrap();
        }
        assert_eq!(tx.queue(b"x"), Err(PacketError::SendQueueFull));
        tx.on_piece_acked(PieceRef { id: 1, index: 0 });
        assert_eq!(tx.in_flight(), 4, "id 0 still holds the queue");
        tx.on_piece_acked(PieceRef { id: 0, index: 0 });
        assert_eq!(tx.in_flight(), 2);
        tx.on_piece_acked(PieceRef { id: 0, index: 0 });
        tx.on_piece_acked(PieceRef { id: 9, index: 0 });
        tx.on_piece_acked(PieceRef { id: 2, index: 5 });
        assert_eq!(tx.in_flight(), 2);
    }
}
