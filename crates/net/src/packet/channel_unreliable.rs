//! The unreliable channel: messages go out in the next packet only and are
//! never resent.
//!
//! [`UnreliableSender`] encodes queued messages straight into their block form
//! in a buffer the size of one packet's unreliable budget, so building a
//! packet is one copy per message. [`UnreliableReceiver`] keeps received
//! messages, length-prefixed, in a byte ring until they are polled; when the
//! ring is full a new message is dropped and counted by the caller.

use crate::packet::channel::{BlockWriter, encode_unreliable, unreliable_block_len};
use crate::packet::channel_ring::ByteRing;

/// Bytes of the send buffer [`UnreliableSender::prefetch`] asks for.
const PREFETCH_BYTES: usize = 256;

/// Messages waiting for the next packet, already encoded as blocks.
#[derive(Debug)]
pub(crate) struct UnreliableSender {
    blocks: Box<[u8]>,
    len: usize,
}

impl UnreliableSender {
    /// A sender whose encoded messages (3 bytes of block header each) may
    /// fill `budget` bytes of one packet.
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            blocks: vec![0; budget].into_boxed_slice(),
            len: 0,
        }
    }

    /// Queues `msg` for the next packet; false when the budget is used up.
    pub(crate) fn queue(&mut self, msg: &[u8]) -> bool {
        match encode_unreliable(msg, &mut self.blocks[self.len..]) {
            Some(n) => {
                self.len += n;
                true
            }
            None => false,
        }
    }

    /// Hints the cache to fetch the start of the buffer, where the next
    /// messages go (a snapshot's worth).
    pub(crate) fn prefetch(&self) {
        crate::prefetch::prefetch(&self.blocks[..self.blocks.len().min(PREFETCH_BYTES)]);
    }

    /// True when messages are waiting.
    pub(crate) fn is_pending(&self) -> bool {
        self.len > 0
    }

    /// Moves every waiting message into `writer` and empties the queue.
    /// Returns `(written, dropped)`: messages that did not fit are dropped.
    pub(crate) fn drain_into(&mut self, writer: &mut BlockWriter<'_>) -> (u64, u64) {
        let (mut written, mut dropped) = (0, 0);
        let mut at = 0;
        while at < self.len {
            let n = unreliable_block_len(&self.blocks[at..]);
            if writer.raw_block(&self.blocks[at..at + n]) {
                written += 1;
            } else {
                dropped += 1;
            }
            at += n;
        }
        self.len = 0;
        (written, dropped)
    }
}

/// Received unreliable messages waiting to be polled.
#[derive(Debug)]
pub(crate) struct UnreliableReceiver {
    ring: ByteRing,
}

impl UnreliableReceiver {
    /// Room for `capacity` bytes of messages (plus 2 bytes each).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            ring: ByteRing::new(capacity),
        }
    }

    /// Keeps `msg`; false (nothing kept) when there is no room.
    pub(crate) fn store(&mut self, msg: &[u8]) -> bool {
        let Ok(len) = u16::try_from(msg.len()) else {
            return false;
        };
        self.ring.push(&[&len.to_le_bytes(), msg]).is_some()
    }

    /// Length of the oldest waiting message.
    pub(crate) fn next_len(&self) -> Option<usize> {
        if self.ring.is_empty() {
            return None;
        }
        let mut len = [0u8; 2];
        self.ring.read(self.ring.tail(), &mut len);
        Some(usize::from(u16::from_le_bytes(len)))
    }

    /// Copies the oldest message into `out` and forgets it; `None` when
    /// nothing waits or `out` is too short (the message stays queued).
    pub(crate) fn pop(&mut self, out: &mut [u8]) -> Option<usize> {
        let len = self.next_len()?;
        let dst = out.get_mut(..len)?;
        let start = self.ring.tail() + 2;
        self.ring.read(start, dst);
        self.ring.release_to(start + len as u64);
        Some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sender_drains_what_fits() {
        let mut tx = UnreliableSender::new(16);
        assert!(tx.queue(b"abcd")); // 7 bytes encoded
        assert!(tx.queue(b"efgh")); // 14
        assert!(!tx.queue(b"x")); // 18 > 16
        assert!(tx.is_pending());
        let mut buf = [0u8; 10];
        let mut w = BlockWriter::new(&mut buf, 0);
        assert_eq!(tx.drain_into(&mut w), (1, 1));
        assert!(!tx.is_pending());
        assert_eq!(&buf[..7], &[1, 4, 0, b'a', b'b', b'c', b'd']);
    }

    #[test]
    fn receiver_is_fifo_and_bounded() {
        let mut rx = UnreliableReceiver::new(10);
        assert!(rx.store(b"abc"));
        assert!(rx.store(b"de"));
        assert!(!rx.store(b"f")); // 5 + 4 + 3 > 10
        assert_eq!(rx.next_len(), Some(3));
        let mut small = [0u8; 2];
        assert_eq!(rx.pop(&mut small), None);
        let mut out = [0u8; 8];
        assert_eq!(rx.pop(&mut out), Some(3));
        assert_eq!(&out[..3], b"abc");
        assert!(rx.store(b"fghi"));
        assert_eq!(rx.pop(&mut out), Some(2));
        assert_eq!(&out[..2], b"de");
        assert_eq!(rx.pop(&mut out), Some(4));
        assert_eq!(&out[..4], b"fghi");
        assert_eq!(rx.pop(&mut out), None);
    }
}
