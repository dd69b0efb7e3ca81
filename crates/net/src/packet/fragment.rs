//! Fragmentation of large reliable messages, and the bounded storage that
//! reassembles them.
//!
//! A reliable message of at most `fragment_size` bytes travels whole, as one
//! piece. A longer one (up to `max_message_size`, 64 KiB by default) is cut
//! into `ceil(len / fragment_size)` fragments; every fragment but the last is
//! exactly `fragment_size` bytes and the last is 1..=`fragment_size` bytes, so
//! the fragment count and the last fragment's length determine the total.
//! [`FragmentGeometry::check_fragment`] rejects everything else (absurd
//! counts, out-of-range indices, wrong lengths, totals over the maximum)
//! before any state is touched; the reliable receiver also rejects a fragment
//! whose count disagrees with earlier fragments of the same message.
//!
//! Received pieces are stored in a [`ChunkPool`] of `fragment_size`-byte
//! chunks, and a fragmented message in progress maps its fragment indices to
//! chunks through one of a few [`ReassemblySlots`]. Both are bounded at
//! set-up, so a flood of fragments can at worst fill them; the packet layer
//! then stops accepting (and acknowledging) packets until the application
//! drains messages. The pool's bytes grow toward its bound as chunks are
//! first needed (a connection that only ever receives small messages keeps
//! a few lines); nothing else here allocates after construction.

use crate::packet::error::Malformed;

/// How messages are cut into pieces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FragmentGeometry {
    /// Bytes per fragment and the largest message sent whole.
    pub(crate) fragment_size: usize,
    /// Largest reliable message.
    pub(crate) max_message_size: usize,
    /// Pieces of the largest message.
    pub(crate) max_fragments: u16,
}

impl FragmentGeometry {
    /// Geometry for validated sizes (`max_message_size / fragment_size` must
    /// fit in `u16`, which config validation guarantees).
    pub(crate) fn new(fragment_size: usize, max_message_size: usize) -> Self {
        let max_fragments = max_message_size.div_ceil(fragment_size).max(1);
        Self {
            fragment_size,
            max_message_size,
            max_fragments: u16::try_from(max_fragments).unwrap_or(u16::MAX),
        }
    }

    /// Number of pieces a message of `len` bytes travels in (1 when whole).
    pub(crate) fn piece_count(&self, len: usize) -> u16 {
        if len <= self.fragment_size {
            1
        } else {
            len.div_ceil(self.fragment_size) as u16
        }
    }

    /// Byte range of piece `index` within a message of `len` bytes.
    pub(crate) fn piece_range(&self, len: usize, index: u16) -> (usize, usize) {
        let start = usize::from(index) * self.fragment_size;
        let end = (start + self.fragment_size).min(len);
        (start.min(end), end)
    }

    /// Checks one fragment's header against the geometry.
    pub(crate) fn check_fragment(
        &self,
        index: u16,
        count: u16,
        len: usize,
    ) -> Result<(), Malformed> {
        if count < 2 || count > self.max_fragments {
            return Err(Malformed::FragmentCount);
        }
        if index >= count {
            return Err(Malformed::FragmentIndex);
        }
        let last = index == count - 1;
        if !last && len != self.fragment_size {
            return Err(Malformed::FragmentLength);
        }
        if last {
            let total = usize::from(count - 1) * self.fragment_size + len;
            if len == 0 || len > self.fragment_size || total > self.max_message_size {
                return Err(Malformed::FragmentLength);
            }
        }
        Ok(())
    }

    /// Total length of a fragmented message of `count` pieces whose last
    /// fragment is `last_len` bytes.
    pub(crate) fn total_len(&self, count: u16, last_len: usize) -> usize {
        usize::from(count - 1) * self.fragment_size + last_len
    }
}

/// Marks "no chunk" in reassembly tables and message slots.
pub(crate) const NO_CHUNK: u32 = u32::MAX;

/// Fixed-size chunks of received message bytes with a free list. The bytes
/// behind the chunks grow (doubling) toward the pool's size as chunks never
/// used before are first taken.
#[derive(Debug)]
pub(crate) struct ChunkPool {
    data: Box<[u8]>,
    chunk_size: usize,
    /// Released chunks, taken again first (last released first).
    free: Box<[u32]>,
    free_len: usize,
    /// Chunks `fresh..free.len()` were never taken.
    fresh: usize,
}

impl ChunkPool {
    /// `chunks` chunks of `chunk_size` bytes each, all allocated now.
    #[cfg(test)]
    pub(crate) fn new(chunks: usize, chunk_size: usize) -> Self {
        Self::growing(chunks, chunks, chunk_size)
    }

    /// `chunks` chunks of `chunk_size` bytes each, the bytes of `start` of
    /// them allocated now and the rest when first needed.
    pub(crate) fn growing(start: usize, chunks: usize, chunk_size: usize) -> Self {
        Self {
            data: vec![0; start.min(chunks) * chunk_size].into_boxed_slice(),
            chunk_size,
            free: vec![0; chunks].into_boxed_slice(),
            free_len: 0,
            fresh: 0,
        }
    }

    /// Chunks not in use.
    pub(crate) fn available(&self) -> usize {
        self.free_len + (self.free.len() - self.fresh)
    }

    /// Bytes allocated now.
    #[cfg(test)]
    pub(crate) fn allocated(&self) -> usize {
        self.data.len()
    }

    /// A chunk never taken before, growing the bytes behind it if needed.
    fn take_fresh(&mut self) -> Option<u32> {
        if self.fresh == self.free.len() {
            return None;
        }
        let chunk = self.fresh;
        self.fresh += 1;
        let needed = self.fresh * self.chunk_size;
        if needed > self.data.len() {
            let len = needed
                .max(self.data.len() * 2)
                .min(self.free.len() * self.chunk_size);
            let mut grown = vec![0; len].into_boxed_slice();
            grown[..self.data.len()].copy_from_slice(&self.data);
            self.data = grown;
        }
        Some(chunk as u32)
    }

    /// Takes a chunk and fills its start with `bytes` (at most a chunk).
    pub(crate) fn store(&mut self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() > self.chunk_size {
            return None;
        }
        let chunk = if self.free_len > 0 {
            self.free_len -= 1;
            self.free[self.free_len]
        } else {
            self.take_fresh()?
        };
        let at = chunk as usize * self.chunk_size;
        self.data[at..at + bytes.len()].copy_from_slice(bytes);
        Some(chunk)
    }

    /// The first `len` bytes of `chunk`.
    pub(crate) fn bytes(&self, chunk: u32, len: usize) -> &[u8] {
        let at = chunk as usize * self.chunk_size;
        &self.data[at..at + len.min(self.chunk_size)]
    }

    /// Returns `chunk` to the pool (ignores [`NO_CHUNK`]).
    pub(crate) fn release(&mut self, chunk: u32) {
        if chunk != NO_CHUNK && self.free_len < self.free.len() {
            self.free[self.free_len] = chunk;
            self.free_len += 1;
        }
    }
}

/// A few fragment-index-to-chunk tables, one per fragmented message being
/// reassembled or waiting to be delivered.
#[derive(Debug)]
pub(crate) struct ReassemblySlots {
    tables: Box<[u32]>,
    in_use: Box<[bool]>,
    width: usize,
}

impl ReassemblySlots {
    /// `slots` tables of `max_fragments` entries.
    pub(crate) fn new(slots: usize, max_fragments: u16) -> Self {
        let width = usize::from(max_fragments);
        Self {
            tables: vec![NO_CHUNK; slots * width].into_boxed_slice(),
            in_use: vec![false; slots].into_boxed_slice(),
            width,
        }
    }

    /// Slots not in use.
    pub(crate) fn available(&self) -> usize {
        self.in_use.iter().filter(|used| !**used).count()
    }

    /// Takes a free slot with an empty table.
    pub(crate) fn acquire(&mut self) -> Option<u32> {
        let slot = self.in_use.iter().position(|used| !used)?;
        self.in_use[slot] = true;
        self.table_mut(slot as u32).fill(NO_CHUNK);
        Some(slot as u32)
    }

    /// The table of `slot`.
    pub(crate) fn table(&self, slot: u32) -> &[u32] {
        let at = slot as usize * self.width;
        &self.tables[at..at + self.width]
    }

    /// The table of `slot`, mutably.
    pub(crate) fn table_mut(&mut self, slot: u32) -> &mut [u32] {
        let at = slot as usize * self.width;
        &mut self.tables[at..at + self.width]
    }

    /// Frees `slot`.
    pub(crate) fn release(&mut self, slot: u32) {
        if let Some(used) = self.in_use.get_mut(slot as usize) {
            *used = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_cuts_and_checks() {
        let g = FragmentGeometry::new(256, 65536);
        assert_eq!(g.max_fragments, 256);
        assert_eq!(g.piece_count(0), 1);
        assert_eq!(g.piece_count(256), 1);
        assert_eq!(g.piece_count(257), 2);
        assert_eq!(g.piece_count(61440), 240);
        assert_eq!(g.piece_range(600, 2), (512, 600));
        assert_eq!(g.total_len(3, 88), 600);
        assert_eq!(g.check_fragment(0, 3, 256), Ok(()));
        assert_eq!(g.check_fragment(2, 3, 88), Ok(()));
        assert_eq!(g.check_fragment(2, 256, 256), Ok(()));
        assert_eq!(g.check_fragment(0, 1, 256), Err(Malformed::FragmentCount));
        assert_eq!(g.check_fragment(0, 257, 256), Err(Malformed::FragmentCount));
        assert_eq!(
            g.check_fragment(0, 60000, 256),
            Err(Malformed::FragmentCount)
        );
        assert_eq!(g.check_fragment(3, 3, 256), Err(Malformed::FragmentIndex));
        assert_eq!(g.check_fragment(0, 3, 100), Err(Malformed::FragmentLength));
        assert_eq!(g.check_fragment(2, 3, 0), Err(Malformed::FragmentLength));
        assert_eq!(g.check_fragment(2, 3, 257), Err(Malformed::FragmentLength));
        // 256 fragments whose last is full would be exactly 64 KiB: allowed.
        assert_eq!(g.check_fragment(255, 256, 256), Ok(()));
        let g = FragmentGeometry::new(256, 65000);
        assert_eq!(g.max_fragments, 254);
        assert_eq!(
            g.check_fragment(253, 254, 256),
            Err(Malformed::FragmentLength)
        );
        assert_eq!(g.check_fragment(253, 254, 232), Ok(()));
    }

    #[test]
    fn pool_and_slots_are_bounded() {
        let mut pool = ChunkPool::new(2, 4);
        let a = pool.store(b"ab").unwrap();
        let b = pool.store(b"wxyz").unwrap();
        assert!(pool.store(b"c").is_none());
        assert!(pool.store(b"toolong").is_none());
        assert_eq!(pool.bytes(a, 2), b"ab");
        assert_eq!(pool.bytes(b, 4), b"wxyz");
        pool.release(a);
        pool.release(NO_CHUNK);
        assert_eq!(pool.available(), 1);

        // A growing pool allocates chunk bytes as fresh chunks are first
        // taken, keeps what it stored, and stops at its size.
        let mut pool = ChunkPool::growing(1, 5, 2);
        assert_eq!((pool.allocated(), pool.available()), (2, 5));
        let stored: Vec<u32> = [b"ab", b"cd", b"ef"]
            .iter()
            .map(|bytes| pool.store(*bytes).unwrap())
            .collect();
        assert_eq!(pool.allocated(), 8);
        pool.release(stored[1]);
        assert_eq!(pool.store(b"gh"), Some(stored[1]));
        assert_eq!(pool.bytes(stored[0], 2), b"ab");
        assert_eq!(pool.bytes(stored[2], 2), b"ef");
        assert!(pool.store(b"ij").is_some() && pool.store(b"kl").is_some());
        assert_eq!((pool.allocated(), pool.available()), (10, 0));
        assert!(pool.store(b"m").is_none());

        let mut slots = ReassemblySlots::new(1, 3);
        let s = slots.acquire().unwrap();
        assert!(slots.acquire().is_none());
        slots.table_mut(s)[1] = 7;
        assert_eq!(slots.table(s), &[NO_CHUNK, 7, NO_CHUNK]);
        slots.release(s);
        assert_eq!(slots.available(), 1);
        let s = slots.acquire().unwrap();
        assert_eq!(slots.table(s), &[NO_CHUNK; 3]);
    }
}
