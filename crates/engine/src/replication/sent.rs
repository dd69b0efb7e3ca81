//! The ring of sent-packet records of one client: which entities, with which
//! op and groups, went out at which tick in which packet sequence.
//!
//! Records sit in a FIFO in send order; their entries live in a circular
//! pool, so a record is two numbers and nothing is allocated after creation.
//! When the ring or the pool is full the oldest record is evicted and its
//! fate handled as a loss (a loss only means "send again").

use crate::tick::Tick;
use hightick_net::prefetch::prefetch;

/// What a record did to an entity on the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordOp {
    Enter,
    Update,
    Leave,
}

/// One entity record that went into a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SentEntry {
    pub(crate) entity: u16,
    pub(crate) op: RecordOp,
    pub(crate) groups: u8,
}

const EMPTY_ENTRY: SentEntry = SentEntry {
    entity: 0,
    op: RecordOp::Update,
    groups: 0,
};

/// One snapshot packet: its sequence once sent, its tick, and where its
/// entries are in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SentPacket {
    pub(crate) sequence: Option<u16>,
    pub(crate) tick: Tick,
    pub(crate) full_resync: bool,
    first: u64,
    len: u32,
    live: bool,
}

const EMPTY_PACKET: SentPacket = SentPacket {
    sequence: None,
    tick: 0,
    full_resync: false,
    first: 0,
    len: 0,
    live: false,
};

#[derive(Debug, Clone)]
pub(crate) struct SentPackets {
    packets: Box<[SentPacket]>,
    head: usize,
    len: usize,
    entries: Box<[SentEntry]>,
    /// Entries ever written (the pool's absolute write position).
    written: u64,
}

impl SentPackets {
    /// A ring of at least `packets` records sharing a pool of at least
    /// `entries` entries (both rounded up to powers of two, so positions
    /// wrap with a mask).
    pub(crate) fn new(packets: usize, entries: usize) -> Self {
        Self {
            packets: vec![EMPTY_PACKET; packets.max(1).next_power_of_two()].into_boxed_slice(),
            head: 0,
            len: 0,
            entries: vec![EMPTY_ENTRY; entries.max(1).next_power_of_two()].into_boxed_slice(),
            written: 0,
        }
    }

    /// Hints the cache to fetch what the next snapshot reads and writes:
    /// the oldest record (settled or evicted first), the one the new packet
    /// takes, and the pool entries it writes next.
    pub(crate) fn prefetch(&self) {
        prefetch(&self.packets[self.head]);
        prefetch(&self.packets[self.index(self.len)]);
        prefetch(&self.entries[self.entry_slot(self.written)]);
    }

    fn entry_slot(&self, abs: u64) -> usize {
        (abs & (self.entries.len() as u64 - 1)) as usize
    }

    /// Forgets every record (on join and reconnect).
    pub(crate) fn clear(&mut self) {
        self.packets.fill(EMPTY_PACKET);
        self.head = 0;
        self.len = 0;
    }

    fn index(&self, i: usize) -> usize {
        (self.head + i) & (self.packets.len() - 1)
    }

    fn tail(&self) -> Option<usize> {
        (self.len > 0).then(|| self.index(self.len - 1))
    }

    fn drop_dead_front(&mut self) {
        while self.len > 0 && !self.packets[self.head].live {
            self.head = self.index(1);
            self.len -= 1;
        }
    }

    /// The newest record if it was built but never sent: it is withdrawn
    /// (the caller treats it as lost).
    pub(crate) fn withdraw_unsent(&mut self) -> Option<SentPacket> {
        let tail = self.tail()?;
        let p = self.packets[tail];
        if !p.live || p.sequence.is_some() {
            return None;
        }
        self.packets[tail].live = false;
        self.len -= 1;
        Some(p)
    }

    /// Evicts the oldest record if a new packet of up to `max_entries`
    /// entries would not fit; call until `None`.
    pub(crate) fn evict_for(&mut self, max_entries: usize) -> Option<SentPacket> {
        self.drop_dead_front();
        if self.len == 0 {
            return None;
        }
        let oldest = self.packets[self.head];
        let pool = self.entries.len() as u64;
        let ring_full = self.len == self.packets.len();
        let pool_short = self.written + max_entries as u64 - oldest.first > pool;
        if !ring_full && !pool_short {
            return None;
        }
        self.packets[self.head].live = false;
        self.drop_dead_front();
        Some(oldest)
    }

    /// Starts the record of a packet built at `tick`. The caller has made
    /// room with [`evict_for`](Self::evict_for).
    pub(crate) fn begin(&mut self, tick: Tick, full_resync: bool) {
        debug_assert!(self.len < self.packets.len());
        let at = self.index(self.len);
        self.packets[at] = SentPacket {
            sequence: None,
            tick,
            full_resync,
            first: self.written,
            len: 0,
            live: true,
        };
        self.len += 1;
    }

    /// Adds an entry to the record being built.
    pub(crate) fn push(&mut self, entry: SentEntry) {
        let Some(tail) = self.tail() else { return };
        let slot = self.entry_slot(self.written);
        self.entries[slot] = entry;
        self.written += 1;
        self.packets[tail].len += 1;
    }

    /// Gives the newest record, if unsent, its packet sequence. Returns
    /// whether there was one.
    pub(crate) fn mark_sent(&mut self, sequence: u16) -> bool {
        let Some(tail) = self.tail() else {
            return false;
        };
        let p = &mut self.packets[tail];
        if !p.live || p.sequence.is_some() {
            return false;
        }
        p.sequence = Some(sequence);
        true
    }

    /// Removes and returns the record of packet `sequence`, if still held.
    pub(crate) fn take(&mut self, sequence: u16) -> Option<SentPacket> {
        let found = (0..self.len).rev().map(|i| self.index(i)).find(|&i| {
            let p = &self.packets[i];
            p.live && p.sequence == Some(sequence)
        })?;
        self.packets[found].live = false;
        let p = self.packets[found];
        self.drop_dead_front();
        Some(p)
    }

    /// The entries of a record taken from this ring (valid until the pool
    /// is written again).
    pub(crate) fn entries(&self, packet: &SentPacket) -> impl Iterator<Item = SentEntry> + '_ {
        (packet.first..packet.first + u64::from(packet.len))
            .map(move |abs| self.entries[self.entry_slot(abs)])
    }

    /// Records held (sent or not).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(entity: u16) -> SentEntry {
        SentEntry {
            entity,
            op: RecordOp::Update,
            groups: 1,
        }
    }

    fn send(ring: &mut SentPackets, tick: Tick, seq: u16, entities: &[u16]) {
        while ring.evict_for(4).is_some() {}
        ring.begin(tick, false);
        for &e in entities {
            ring.push(entry(e));
        }
        assert!(ring.mark_sent(seq));
    }

    #[test]
    fn acked_packets_return_their_entries() {
        let mut ring = SentPackets::new(4, 16);
        send(&mut ring, 10, 100, &[1, 2]);
        send(&mut ring, 11, 101, &[3]);
        let p = ring.take(100).unwrap();
        assert_eq!(p.tick, 10);
        let ents: Vec<u16> = ring.entries(&p).map(|e| e.entity).collect();
        assert_eq!(ents, vec![1, 2]);
        assert!(ring.take(100).is_none(), "reported once");
        assert_eq!(ring.len(), 1);
    }

    #[test]
    fn full_ring_evicts_the_oldest() {
        let mut ring = SentPackets::new(2, 64);
        send(&mut ring, 1, 1, &[1]);
        send(&mut ring, 2, 2, &[2]);
        assert_eq!(ring.evict_for(4).map(|p| p.tick), Some(1));
        assert!(ring.evict_for(4).is_none());
        ring.begin(3, false);
        assert!(ring.take(1).is_none());
        assert!(ring.take(2).is_some());
    }

    #[test]
    fn short_pool_evicts_the_oldest() {
        let mut ring = SentPackets::new(8, 8);
        send(&mut ring, 1, 1, &[1, 2, 3]);
        send(&mut ring, 2, 2, &[4]);
        // 4 entries used, a packet of up to 4 more fits exactly.
        assert!(ring.evict_for(4).is_none());
        send(&mut ring, 3, 3, &[5, 6, 7, 8]);
        // Now the pool is full: the next packet needs packets 1 and 2 gone.
        assert_eq!(ring.evict_for(4).map(|p| p.tick), Some(1));
        assert_eq!(ring.evict_for(4).map(|p| p.tick), Some(2));
        assert!(ring.evict_for(4).is_none());
        let p = ring.take(3).unwrap();
        assert_eq!(
            ring.entries(&p).map(|e| e.entity).collect::<Vec<_>>(),
            vec![5, 6, 7, 8]
        );
    }

    #[test]
    fn unsent_records_are_withdrawn() {
        let mut ring = SentPackets::new(4, 16);
        send(&mut ring, 1, 1, &[1]);
        ring.begin(2, true);
        ring.push(entry(2));
        let p = ring.withdraw_unsent().unwrap();
        assert!(p.full_resync && p.sequence.is_none());
        assert!(ring.withdraw_unsent().is_none(), "the sent one stays");
        assert!(!ring.mark_sent(9), "nothing unsent to mark");
        assert!(ring.take(1).is_some());
    }
}
