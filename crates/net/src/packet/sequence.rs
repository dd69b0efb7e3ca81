//! 16-bit sequence numbers that wrap around, and a ring buffer indexed by them.
//!
//! Packet sequence numbers and reliable message ids are `u16` and wrap from
//! 65535 to 0. Two numbers are compared by their signed distance: `a` is newer
//! than `b` when `a - b` (wrapping) lies in `1..32768`. Numbers exactly 32768
//! apart are neither newer nor older than each other; every window in this
//! crate is at most 32768 wide, so that case never has to be decided.
//!
//! [`SequenceBuffer`] stores one entry per sequence number for the most recent
//! `capacity` numbers (capacity a power of two, so a slot index survives
//! wraparound). Inserting a newer number clears the slots it skipped, so an
//! entry is never mistaken for the one 65536 numbers later. It holds the
//! sent-packet records; the engine's replication writer can key its
//! sent-packet ring the same way. (The received-packet window needs one bit
//! per number, so it is a bitmap with the same rules: `reliable::ReceivedPackets`.)
//!
//! This module does not allocate after [`SequenceBuffer::new`].
//!
//! ```
//! use hightick_net::sequence::{sequence_greater_than, SequenceBuffer};
//!
//! assert!(sequence_greater_than(0, 65535));
//! let mut sent: SequenceBuffer<u32> = SequenceBuffer::new(64);
//! *sent.insert(65535).unwrap() = 7;
//! *sent.insert(1).unwrap() = 9; // skips 0, which is cleared
//! assert_eq!(sent.get(65535), Some(&7));
//! assert_eq!(sent.get(0), None);
//! assert_eq!(sent.most_recent(), Some(1));
//! ```

/// Signed distance `a - b` between two wrapping sequence numbers, in
/// `-32768..=32767`.
#[inline]
pub fn sequence_diff(a: u16, b: u16) -> i32 {
    i32::from(a.wrapping_sub(b) as i16)
}

/// True when `a` is newer than `b` (wrapping): `a - b` lies in `1..32768`.
#[inline]
pub fn sequence_greater_than(a: u16, b: u16) -> bool {
    sequence_diff(a, b) > 0
}

/// True when `a` is older than `b` (wrapping): `b - a` lies in `1..32768`.
#[inline]
pub fn sequence_less_than(a: u16, b: u16) -> bool {
    sequence_diff(b, a) > 0
}

/// Largest capacity of a [`SequenceBuffer`] (half the sequence space).
pub const MAX_SEQUENCE_WINDOW: usize = 32768;

const EMPTY: u32 = u32::MAX;

/// A ring of entries indexed by wrapping `u16` sequence numbers, holding the
/// most recent `capacity` of them.
#[derive(Debug, Clone)]
pub struct SequenceBuffer<T> {
    /// Each slot's sequence number (`EMPTY` when none) beside its entry, so
    /// a lookup reads one cache line, not one in each of two arrays.
    slots: Box<[Slot<T>]>,
    most_recent: Option<u16>,
    mask: usize,
}

#[derive(Debug, Clone)]
struct Slot<T> {
    sequence: u32,
    entry: T,
}

impl<T: Default + Clone> SequenceBuffer<T> {
    /// A buffer for `capacity` sequence numbers.
    ///
    /// # Panics
    /// When `capacity` is not a power of two in `1..=32768` (a set-up error).
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity.is_power_of_two() && capacity <= MAX_SEQUENCE_WINDOW,
            "SequenceBuffer capacity must be a power of two <= 32768, got {capacity}"
        );
        Self {
            slots: vec![
                Slot {
                    sequence: EMPTY,
                    entry: T::default(),
                };
                capacity
            ]
            .into_boxed_slice(),
            most_recent: None,
            mask: capacity - 1,
        }
    }
}

impl<T: Default> SequenceBuffer<T> {
    /// Number of sequence numbers the buffer holds.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// The newest sequence number ever inserted, if any.
    pub fn most_recent(&self) -> Option<u16> {
        self.most_recent
    }

    /// True when `sequence` is too old to be stored: `capacity` or more behind
    /// the most recent one.
    pub fn is_too_old(&self, sequence: u16) -> bool {
        match self.most_recent {
            Some(recent) => sequence_diff(recent, sequence) >= self.capacity() as i32,
            None => false,
        }
    }

    /// Stores a fresh (default) entry for `sequence` and returns it, or `None`
    /// when `sequence` is too old. A newer `sequence` becomes the most recent
    /// and clears the slots of the numbers it skipped.
    pub fn insert(&mut self, sequence: u16) -> Option<&mut T> {
        if self.is_too_old(sequence) {
            return None;
        }
        match self.most_recent {
            Some(recent) if !sequence_greater_than(sequence, recent) => {}
            Some(recent) => {
                let gap = sequence_diff(sequence, recent) as usize;
                if gap > self.capacity() {
                    for slot in &mut self.slots {
                        slot.sequence = EMPTY;
                    }
                } else {
                    for step in 1..gap {
                        let skipped = recent.wrapping_add(step as u16);
                        self.slots[usize::from(skipped) & self.mask].sequence = EMPTY;
                    }
                }
                self.most_recent = Some(sequence);
            }
            None => self.most_recent = Some(sequence),
        }
        let slot = &mut self.slots[usize::from(sequence) & self.mask];
        slot.sequence = u32::from(sequence);
        slot.entry = T::default();
        Some(&mut slot.entry)
    }

    /// True when an entry for `sequence` is stored.
    pub fn contains(&self, sequence: u16) -> bool {
        self.slots[usize::from(sequence) & self.mask].sequence == u32::from(sequence)
    }

    /// The entry for `sequence`, if stored.
    pub fn get(&self, sequence: u16) -> Option<&T> {
        let slot = &self.slots[usize::from(sequence) & self.mask];
        (slot.sequence == u32::from(sequence)).then_some(&slot.entry)
    }

    /// The entry for `sequence`, mutably, if stored.
    pub fn get_mut(&mut self, sequence: u16) -> Option<&mut T> {
        let slot = &mut self.slots[usize::from(sequence) & self.mask];
        (slot.sequence == u32::from(sequence)).then_some(&mut slot.entry)
    }

    /// Forgets the entry for `sequence` (no effect if it is not stored).
    pub fn remove(&mut self, sequence: u16) {
        let slot = &mut self.slots[usize::from(sequence) & self.mask];
        if slot.sequence == u32::from(sequence) {
            slot.sequence = EMPTY;
        }
    }

    /// Hints the cache to fetch `sequence`'s slot (see [`crate::prefetch`]).
    pub fn prefetch(&self, sequence: u16) {
        crate::prefetch::prefetch(&self.slots[usize::from(sequence) & self.mask]);
    }

    /// The index of `sequence`'s slot, for callers that keep parallel arrays.
    pub fn slot_of(&self, sequence: u16) -> usize {
        usize::from(sequence) & self.mask
    }

    /// Ack header for a received-packet window: the most recent sequence and a
    /// bitfield whose bit `i` says whether `most_recent - 1 - i` is stored.
    /// `None` before anything was inserted.
    pub fn ack_bits(&self) -> Option<(u16, u32)> {
        let ack = self.most_recent?;
        Some((ack, ack_field(ack, |s| self.contains(s))))
    }
}

/// The 32-bit ack field behind `ack`: bit `i` set when `received(ack - 1 - i)`.
pub fn ack_field(ack: u16, received: impl Fn(u16) -> bool) -> u32 {
    (0..32u16)
        .filter(|&i| received(ack.wrapping_sub(i + 1)))
        .fold(0, |bits, i| bits | 1 << i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn comparisons_wrap() {
        assert!(sequence_greater_than(1, 0));
        assert!(sequence_greater_than(0, 65535));
        assert!(sequence_greater_than(100, 65000));
        assert!(sequence_less_than(65000, 100));
        assert!(!sequence_greater_than(5, 5));
        assert_eq!(sequence_diff(2, 65534), 4);
        assert_eq!(sequence_diff(65534, 2), -4);
        // Exactly half the space apart: neither is newer.
        assert!(!sequence_greater_than(32768, 0));
        assert!(!sequence_greater_than(0, 32768));
    }

    #[test]
    fn insert_skips_clear_and_old_is_rejected() {
        let mut buf: SequenceBuffer<u8> = SequenceBuffer::new(8);
        *buf.insert(65533).unwrap() = 1;
        *buf.insert(65534).unwrap() = 2;
        *buf.insert(2).unwrap() = 3; // skips 65535, 0, 1
        assert_eq!(buf.get(65533), Some(&1));
        assert_eq!(buf.get(65534), Some(&2));
        assert!(!buf.contains(65535) && !buf.contains(0) && !buf.contains(1));
        assert_eq!(buf.most_recent(), Some(2));
        // 8 behind the most recent is too old; 7 behind is fine.
        assert!(buf.insert(2u16.wrapping_sub(8)).is_none());
        assert!(buf.insert(2u16.wrapping_sub(7)).is_some());
        assert_eq!(buf.most_recent(), Some(2));
        // A jump larger than the capacity clears everything.
        buf.insert(100).unwrap();
        assert!(!buf.contains(65534) && !buf.contains(2));
        buf.remove(100);
        assert!(!buf.contains(100));
    }

    #[test]
    fn ack_bits_reflect_received() {
        let mut buf: SequenceBuffer<()> = SequenceBuffer::new(64);
        assert_eq!(buf.ack_bits(), None);
        for s in [65534u16, 65535, 1, 3] {
            buf.insert(s).unwrap();
        }
        let (ack, bits) = buf.ack_bits().unwrap();
        assert_eq!(ack, 3);
        // bit 0 -> 2 (missing), bit 1 -> 1, bit 2 -> 0 (missing), bit 3 -> 65535, bit 4 -> 65534
        assert_eq!(bits, 0b11010);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn diff_is_antisymmetric_and_consistent(a: u16, b: u16) {
            let d = sequence_diff(a, b);
            prop_assert!((-32768..=32767).contains(&d));
            prop_assert_eq!(a.wrapping_sub(b), d as i16 as u16);
            prop_assert!(!(sequence_greater_than(a, b) && sequence_greater_than(b, a)));
            prop_assert_eq!(sequence_greater_than(a, b), sequence_less_than(b, a));
            if a != b && a.wrapping_sub(b) != 32768 {
                prop_assert!(sequence_greater_than(a, b) ^ sequence_greater_than(b, a));
            }
        }

        #[test]
        fn forward_steps_are_newer_across_wraparound(a: u16, k in 1u16..32768) {
            let b = a.wrapping_add(k);
            prop_assert!(sequence_greater_than(b, a));
            prop_assert!(sequence_less_than(a, b));
            prop_assert_eq!(sequence_diff(b, a), i32::from(k));
        }

        #[test]
        fn buffer_keeps_exactly_the_recent_window(start: u16, steps in proptest::collection::vec(1u16..20, 1..200)) {
            let mut buf: SequenceBuffer<u16> = SequenceBuffer::new(32);
            let mut inserted = Vec::new();
            let mut s = start;
            for step in steps {
                s = s.wrapping_add(step);
                *buf.insert(s).unwrap() = s;
                inserted.push(s);
            }
            let recent = buf.most_recent().unwrap();
            prop_assert_eq!(recent, s);
            for back in 0..40u16 {
                let q = recent.wrapping_sub(back);
                let expected = back < 32 && inserted.contains(&q);
                prop_assert_eq!(buf.contains(q), expected);
                if expected {
                    prop_assert_eq!(buf.get(q), Some(&q));
                }
            }
        }
    }
}
