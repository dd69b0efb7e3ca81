//! A fixed-size byte ring addressed by ever-growing offsets, for message bytes
//! that are stored and released in first-in, first-out order.
//!
//! The reliable sender keeps queued message bytes here until the oldest
//! message is acknowledged; the unreliable receiver keeps length-prefixed
//! messages here until they are polled. Offsets are `u64` positions in the
//! stream of all bytes ever pushed; the live bytes are `tail..head`, and a
//! position maps to the buffer modulo its capacity, so a message may wrap
//! around the end and is read back in two pieces. Never allocates after
//! [`ByteRing::new`].

/// FIFO byte storage over one preallocated buffer.
#[derive(Debug)]
pub(crate) struct ByteRing {
    buf: Box<[u8]>,
    head: u64,
    tail: u64,
}

impl ByteRing {
    /// A ring holding at most `capacity` (> 0) bytes.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            buf: vec![0; capacity.max(1)].into_boxed_slice(),
            head: 0,
            tail: 0,
        }
    }

    /// Bytes that can still be pushed.
    pub(crate) fn free(&self) -> usize {
        self.buf.len() - (self.head - self.tail) as usize
    }

    /// True when no bytes are live.
    pub(crate) fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// Offset of the oldest live byte.
    pub(crate) fn tail(&self) -> u64 {
        self.tail
    }

    /// Appends `parts` back to back; returns the offset of the first byte, or
    /// `None` (storing nothing) when they do not fit.
    pub(crate) fn push(&mut self, parts: &[&[u8]]) -> Option<u64> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total > self.free() {
            return None;
        }
        let start = self.head;
        for part in parts {
            self.write_at(self.head, part);
            self.head += part.len() as u64;
        }
        Some(start)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) {
        let cap = self.buf.len();
        let at = (offset % cap as u64) as usize;
        let first = data.len().min(cap - at);
        self.buf[at..at + first].copy_from_slice(&data[..first]);
        self.buf[..data.len() - first].copy_from_slice(&data[first..]);
    }

    /// Copies `out.len()` live bytes starting at `offset` into `out`.
    pub(crate) fn read(&self, offset: u64, out: &mut [u8]) {
        debug_assert!(offset >= self.tail && offset + out.len() as u64 <= self.head);
        let cap = self.buf.len();
        let at = (offset % cap as u64) as usize;
        let first = out.len().min(cap - at);
        out[..first].copy_from_slice(&self.buf[at..at + first]);
        let rest = out.len() - first;
        out[first..].copy_from_slice(&self.buf[..rest]);
    }

    /// Releases every byte before `offset` (clamped to the live range).
    pub(crate) fn release_to(&mut self, offset: u64) {
        self.tail = offset.clamp(self.tail, self.head);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_reads_back() {
        let mut ring = ByteRing::new(8);
        let a = ring.push(&[b"abcde"]).unwrap();
        assert_eq!(ring.free(), 3);
        assert!(ring.push(&[b"wxyz"]).is_none());
        ring.release_to(a + 5);
        assert!(ring.is_empty());
        let b = ring.push(&[b"12", b"3456"]).unwrap(); // wraps at 8
        let mut out = [0u8; 6];
        ring.read(b, &mut out);
        assert_eq!(&out, b"123456");
        let mut part = [0u8; 3];
        ring.read(b + 2, &mut part);
        assert_eq!(&part, b"345");
        assert_eq!(ring.tail(), 5);
        ring.release_to(u64::MAX);
        assert_eq!(ring.free(), 8);
    }
}
