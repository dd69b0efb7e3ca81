//! Entity records encoded once per tick and copied into every snapshot that
//! needs the same one.
//!
//! A record's bits depend only on the entity, the operation, the groups and
//! the tick the client acknowledged for the entity (the base of any delta),
//! never on the viewer: so within one tick, clients whose needs agree get a
//! copy of the bits the first of them had encoded, instead of encoding them
//! again. Each entity slot keeps up to eight records of the current tick; a record
//! longer than [`MAX_BITS`] is encoded every time.

use hightick_proto::{BitReader, BitWriter, ProtoError};

use crate::replication::sent::RecordOp;
use crate::tick::Tick;

/// Records kept per entity slot and tick (clients whose acked ticks differ
/// need different records; beyond these the rest are encoded each time).
/// Live, a crowd's acks come back over a spread of ticks, so a body's
/// records this tick have several bases: 4 ways left a live plaza100
/// encoding a good share of its records again (docs/PERFORMANCE.md, "A
/// crowd at a third of Colyseus' CPU").
const WAYS: usize = 8;
/// Longest record kept, in bits.
pub(crate) const MAX_BITS: usize = 192;
const WORDS: usize = MAX_BITS / 64;

/// What makes two records the same within a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordKey {
    pub op: RecordOp,
    pub groups: u8,
    /// The base tick of the record's deltas (0: none).
    pub acked: Tick,
}

#[derive(Debug, Clone, Copy)]
struct Kept {
    /// The tick the bits were encoded in (0: empty).
    tick: Tick,
    key: RecordKey,
    len: u16,
    bits: [u64; WORDS],
}

const EMPTY: Kept = Kept {
    tick: 0,
    key: RecordKey {
        op: RecordOp::Leave,
        groups: 0,
        acked: 0,
    },
    len: 0,
    bits: [0; WORDS],
};

/// How often a record was copied rather than encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SharedRecordStats {
    /// Records copied from one encoded earlier in the tick.
    pub copied: u64,
    /// Records encoded (and kept, when short enough).
    pub encoded: u64,
}

/// The records of the current tick, per entity slot.
#[derive(Debug)]
pub(crate) struct SharedRecords {
    slots: Box<[[Kept; WAYS]]>,
    /// Per slot, the way the next new record replaces.
    next: Box<[u8]>,
    pub stats: SharedRecordStats,
}

impl SharedRecords {
    pub(crate) fn new(entities: usize) -> Self {
        Self {
            slots: vec![[EMPTY; WAYS]; entities].into_boxed_slice(),
            next: vec![0; entities].into_boxed_slice(),
            stats: SharedRecordStats::default(),
        }
    }

    /// Writes the record kept for `entity` and `key` in `tick` into `w`, if
    /// one is kept: `None` when it must be encoded.
    pub(crate) fn copy(
        &mut self,
        entity: usize,
        tick: Tick,
        key: RecordKey,
        w: &mut BitWriter,
    ) -> Option<Result<(), ProtoError>> {
        if tick == 0 {
            return None; // the tick of empty ways: before the first tick
        }
        let kept = self
            .slots
            .get(entity)?
            .iter()
            .find(|k| k.tick == tick && k.key == key)?;
        self.stats.copied += 1;
        let len = usize::from(kept.len);
        let remaining_bits = w.remaining_bits();
        if len > remaining_bits {
            return Some(Err(ProtoError::WriteOverflow {
                needed_bits: len,
                remaining_bits,
            }));
        }
        // In 32-bit pieces, the writer's fast path: the room is checked
        // above, and a kept word holds nothing above its length.
        let mut left = len;
        for &word in &kept.bits {
            for half in [word as u32, (word >> 32) as u32] {
                let n = left.min(32);
                if let Err(e) = w.write_bits(half, n as u32) {
                    return Some(Err(e));
                }
                left -= n;
                if left == 0 {
                    return Some(Ok(()));
                }
            }
        }
        Some(Ok(()))
    }

    /// Keeps the record just encoded for `entity` and `key` in `tick`: the
    /// bits of `written` (the snapshot so far) from bit `start` to its end.
    pub(crate) fn keep(
        &mut self,
        entity: usize,
        tick: Tick,
        key: RecordKey,
        written: &[u8],
        start: usize,
        end: usize,
    ) {
        if tick == 0 {
            return;
        }
        self.stats.encoded += 1;
        let len = end.saturating_sub(start);
        if len > MAX_BITS {
            return;
        }
        let (Some(ways), Some(next)) = (self.slots.get_mut(entity), self.next.get_mut(entity))
        else {
            return;
        };
        let mut r = BitReader::new(written);
        if r.skip_bits(start).is_err() {
            return;
        }
        let mut bits = [0u64; WORDS];
        let mut left = len;
        for word in bits.iter_mut() {
            let n = left.min(64);
            let Ok(read) = r.read_bits_u64(n as u32) else {
                return;
            };
            *word = read;
            left -= n;
        }
        // An old tick's way first, else round robin.
        let way = ways
            .iter()
            .position(|k| k.tick != tick)
            .unwrap_or(usize::from(*next) % WAYS);
        *next = ((way + 1) % WAYS) as u8;
        ways[way] = Kept {
            tick,
            key,
            len: len as u16,
            bits,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(acked: Tick) -> RecordKey {
        RecordKey {
            op: RecordOp::Update,
            groups: 1,
            acked,
        }
    }

    /// Writes `len` pseudo-random bits at an odd offset, keeps them, and
    /// copies them into another writer at another offset.
    fn round_trip(len: usize) -> (Vec<u8>, Vec<u8>) {
        let mut shared = SharedRecords::new(4);
        let mut a = [0u8; 64];
        let mut w = BitWriter::new(&mut a);
        w.write_bits(0b101, 3).unwrap();
        let start = w.bits_written();
        let mut x = 0x9e37_79b9u32;
        let mut left = len;
        while left > 0 {
            let n = left.min(17);
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            w.write_bits(x & ((1u32 << n) - 1), n as u32).unwrap();
            left -= n;
        }
        let end = w.bits_written();
        shared.keep(2, 9, key(5), w.written(), start, end);
        let expected = w.written()[..].to_vec();
        let mut b = [0u8; 64];
        let mut w2 = BitWriter::new(&mut b);
        w2.write_bits(0b101, 3).unwrap();
        shared
            .copy(2, 9, key(5), &mut w2)
            .expect("kept")
            .expect("fits");
        assert_eq!(w2.bits_written(), end);
        let copied = w2.written().to_vec();
        (expected, copied)
    }

    #[test]
    fn records_of_every_length_copy_bit_for_bit() {
        for len in [1, 31, 32, 33, 63, 64, 65, 100, 128, 150, MAX_BITS] {
            let (expected, copied) = round_trip(len);
            assert_eq!(expected, copied, "{len} bits");
        }
    }

    #[test]
    fn only_the_same_key_in_the_same_tick_is_copied() {
        let mut shared = SharedRecords::new(2);
        let mut a = [0u8; 8];
        let mut w = BitWriter::new(&mut a);
        w.write_bits(0x2a, 7).unwrap();
        shared.keep(1, 9, key(5), w.written(), 0, 7);
        let mut b = [0u8; 8];
        let mut w2 = BitWriter::new(&mut b);
        assert!(shared.copy(1, 9, key(6), &mut w2).is_none());
        assert!(shared.copy(1, 10, key(5), &mut w2).is_none());
        assert!(shared.copy(0, 9, key(5), &mut w2).is_none());
        assert!(shared.copy(1, 9, key(5), &mut w2).is_some());
        assert_eq!(shared.stats.copied, 1);
    }

    #[test]
    fn eight_bases_in_one_tick_are_all_kept() {
        // A crowd's clients acked a body at up to eight different ticks:
        // each base's record is encoded once and copied after.
        let mut shared = SharedRecords::new(1);
        for acked in 1..=8 {
            shared.keep(0, 20, key(acked), &[acked as u8], 0, 8);
        }
        for acked in 1..=8 {
            let mut b = [0u8; 4];
            let mut w = BitWriter::new(&mut b);
            shared
                .copy(0, 20, key(acked), &mut w)
                .expect("kept")
                .unwrap();
            assert_eq!(w.written(), [acked as u8]);
        }
        assert_eq!(shared.stats.copied, 8);
    }

    #[test]
    fn nothing_is_kept_or_copied_before_the_first_tick() {
        // Tick 0 marks empty ways: a 0-bit Leave there must not be "copied".
        let mut shared = SharedRecords::new(1);
        let leave = RecordKey {
            op: RecordOp::Leave,
            groups: 0,
            acked: 0,
        };
        let mut b = [0u8; 8];
        assert!(
            shared
                .copy(0, 0, leave, &mut BitWriter::new(&mut b))
                .is_none()
        );
        shared.keep(0, 0, leave, &[0xff], 0, 3);
        assert!(
            shared
                .copy(0, 0, leave, &mut BitWriter::new(&mut b))
                .is_none()
        );
        assert_eq!(shared.stats, SharedRecordStats::default());
    }

    #[test]
    fn a_record_longer_than_kept_is_encoded_each_time() {
        let mut shared = SharedRecords::new(1);
        let buf = [0xffu8; 64];
        shared.keep(0, 1, key(0), &buf, 0, MAX_BITS + 1);
        let mut b = [0u8; 64];
        assert!(
            shared
                .copy(0, 1, key(0), &mut BitWriter::new(&mut b))
                .is_none()
        );
    }

    #[test]
    fn a_record_that_does_not_fit_is_refused() {
        let mut shared = SharedRecords::new(1);
        let buf = [0xffu8; 16];
        shared.keep(0, 1, key(0), &buf, 0, 100);
        let mut b = [0u8; 4];
        let result = shared.copy(0, 1, key(0), &mut BitWriter::new(&mut b));
        assert!(matches!(
            result,
            Some(Err(ProtoError::WriteOverflow { .. }))
        ));
    }
}
