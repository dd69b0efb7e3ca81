//! A fixed-size byte ring addressed by ever-growing offsets, for message bytes
//! that are stored and released in first-in, first-out order.
//!
//! The reliable sender keeps queued message bytes here until the oldest
//! message is acknowledged; the unreliable receiver keeps length-prefixed
//! messages here until they are polled. Offsets are `u64` positions in the
//! stream of all bytes ever pushed; the live bytes are `tail..head`, and a
//! position maps to the buffer modulo its capacity, so a message may wrap
//! around the end and is read back in two pieces. [`ByteRing::new`]
//! allocates everything at once; a ring made by [`ByteRing::growing`] starts
//! small and reallocates (at most a handful of times, doubling) only when a
//! push needs more room than it has, so the rare large message pays for its
//! storage and a connection that never sends one keeps a few lines.

/// FIFO byte storage over one buffer that grows up to a fixed capacity.
#[derive(Debug)]
pub(crate) struct ByteRing {
    buf: Box<[u8]>,
    /// Most bytes the ring holds; `buf` grows toward it on demand.
    capacity: usize,
    head: u64,
    tail: u64,
}

impl ByteRing {
    /// A ring holding at most `capacity` (> 0) bytes, all allocated now.
    pub(crate) fn new(capacity: usize) -> Self {
        Self::growing(capacity, capacity)
    }

    /// A ring holding at most `capacity` (> 0) bytes that allocates `start`
    /// now and grows (doubling) when a push needs more.
    pub(crate) fn growing(start: usize, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            buf: vec![0; start.clamp(1, capacity)].into_boxed_slice(),
            capacity,
            head: 0,
            tail: 0,
        }
    }

    /// Bytes that can still be pushed.
    pub(crate) fn free(&self) -> usize {
        self.capacity - (self.head - self.tail) as usize
    }

    /// Bytes allocated now.
    #[cfg(test)]
    pub(crate) fn allocated(&self) -> usize {
        self.buf.len()
    }

    /// Reallocates to hold at least `needed` live bytes (at most the
    /// capacity), each live byte moved to its offset's place in the new size.
    fn grow(&mut self, needed: usize) {
        let old_len = self.buf.len();
        let new_len = needed.max(old_len * 2).min(self.capacity);
        let mut grown = vec![0; new_len].into_boxed_slice();
        let mut offset = self.tail;
        while offset < self.head {
            let old_at = (offset % old_len as u64) as usize;
            let new_at = (offset % new_len as u64) as usize;
            let n = ((self.head - offset) as usize)
                .min(old_len - old_at)
                .min(new_len - new_at);
            grown[new_at..new_at + n].copy_from_slice(&self.buf[old_at..old_at + n]);
            offset += n as u64;
        }
        self.buf = grown;
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
        let live = (self.head - self.tail) as usize;
        if live + total > self.buf.len() {
            self.grow(live + total);
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

    #[test]
    fn a_growing_ring_keeps_wrapped_bytes_and_stops_at_capacity() {
        let mut ring = ByteRing::growing(4, 16);
        assert_eq!((ring.allocated(), ring.free()), (4, 16));
        let a = ring.push(&[b"abc"]).unwrap();
        ring.release_to(a + 2);
        let b = ring.push(&[b"def"]).unwrap(); // wraps at 4: "c" + "def" live
        assert_eq!(ring.allocated(), 4);
        let c = ring.push(&[b"ghijk"]).unwrap(); // needs 9: grows to 9
        assert_eq!(ring.allocated(), 9);
        let mut out = [0u8; 9];
        ring.read(a + 2, &mut out);
        assert_eq!(&out, b"cdefghijk");
        let mut part = [0u8; 3];
        ring.read(b, &mut part);
        assert_eq!(&part, b"def");
        let d = ring.push(&[b"lmnopqr"]).unwrap(); // 16 live: grows to 16
        assert_eq!((ring.allocated(), ring.free()), (16, 0));
        assert!(ring.push(&[b"s"]).is_none());
        let mut all = [0u8; 16];
        ring.read(a + 2, &mut all);
        assert_eq!(&all, b"cdefghijklmnopqr");
        ring.release_to(c + 5);
        let e = ring.push(&[b"stuvwxyz"]).unwrap();
        assert_eq!(ring.allocated(), 16);
        let mut tail = [0u8; 15];
        ring.read(d, &mut tail);
        assert_eq!(&tail, b"lmnopqrstuvwxyz");
        assert_eq!(e, d + 7);
    }
}
