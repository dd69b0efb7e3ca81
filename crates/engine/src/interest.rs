//! Interest sets: which entities one client may know about this tick.
//!
//! An [`InterestSet`] is a fixed-capacity bitset over entity slots, sized once
//! at match creation. The game fills one per client every tick (fog of war,
//! distance, team rules); the replication writer diffs it against the previous
//! tick's set to find the entities that [enter](InterestSet::entered) and
//! [leave](InterestSet::left) relevance. Every operation works in place and
//! every iteration walks the words without allocating.

use hightick_proto::EntityId;

const WORD_BITS: usize = 64;

/// A fixed-capacity set of entities (a bitset over entity slots).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterestSet {
    words: Box<[u64]>,
    capacity: usize,
}

impl InterestSet {
    /// An empty set able to hold entity slots `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            words: vec![0; capacity.div_ceil(WORD_BITS)].into_boxed_slice(),
            capacity,
        }
    }

    /// Hints the cache to fetch the set's words (see
    /// [`hightick_net::prefetch`]).
    pub fn prefetch(&self) {
        hightick_net::prefetch::prefetch(&self.words[..]);
    }

    /// The number of entity slots the set can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Adds `entity`; returns `true` if it was not a member. An entity beyond
    /// the capacity is not added (and `false` returned).
    pub fn insert(&mut self, entity: EntityId) -> bool {
        let i = usize::from(entity.0);
        if i >= self.capacity {
            return false;
        }
        let (w, bit) = (i / WORD_BITS, 1u64 << (i % WORD_BITS));
        let added = self.words[w] & bit == 0;
        self.words[w] |= bit;
        added
    }

    /// Removes `entity`; returns `true` if it was a member.
    pub fn remove(&mut self, entity: EntityId) -> bool {
        let i = usize::from(entity.0);
        if i >= self.capacity {
            return false;
        }
        let (w, bit) = (i / WORD_BITS, 1u64 << (i % WORD_BITS));
        let removed = self.words[w] & bit != 0;
        self.words[w] &= !bit;
        removed
    }

    /// Whether `entity` is a member.
    pub fn contains(&self, entity: EntityId) -> bool {
        let i = usize::from(entity.0);
        i < self.capacity && self.words[i / WORD_BITS] & (1u64 << (i % WORD_BITS)) != 0
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Makes `self` a copy of `other` (same capacity expected; extra words of
    /// the larger set are ignored or cleared).
    pub fn copy_from(&mut self, other: &InterestSet) {
        let n = self.words.len().min(other.words.len());
        self.words[..n].copy_from_slice(&other.words[..n]);
        self.words[n..].fill(0);
    }

    /// Keeps only the members that are also in `other`.
    pub fn intersect_with(&mut self, other: &InterestSet) {
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
        }
    }

    /// Adds every member of `other`.
    pub fn union_with(&mut self, other: &InterestSet) {
        for (w, o) in self.words.iter_mut().zip(other.words.iter()) {
            *w |= o;
        }
        self.trim();
    }

    /// Adds every slot `0..capacity`.
    pub fn fill(&mut self) {
        self.words.fill(u64::MAX);
        self.trim();
    }

    fn trim(&mut self) {
        let tail = self.capacity % WORD_BITS;
        if tail != 0
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1u64 << tail) - 1;
        }
    }

    /// The members in ascending order.
    pub fn iter(&self) -> Members<'_> {
        Members::new(&self.words, None, Combine::Only)
    }

    /// Members of `self` that were not in `previous`: the entities entering
    /// relevance.
    pub fn entered<'a>(&'a self, previous: &'a InterestSet) -> Members<'a> {
        Members::new(&self.words, Some(&previous.words), Combine::AndNot)
    }

    /// Members of `previous` that are not in `self`: the entities leaving
    /// relevance.
    pub fn left<'a>(&'a self, previous: &'a InterestSet) -> Members<'a> {
        Members::new(&previous.words, Some(&self.words), Combine::AndNot)
    }

    /// Members of `self` or of `other`, without building the union.
    pub fn iter_union<'a>(&'a self, other: &'a InterestSet) -> Members<'a> {
        Members::new(&self.words, Some(&other.words), Combine::Or)
    }
}

#[derive(Debug, Clone, Copy)]
enum Combine {
    Only,
    AndNot,
    Or,
}

/// Iterator over the members of a set (or of a combination of two sets), in
/// ascending slot order. Allocation-free.
#[derive(Debug, Clone)]
pub struct Members<'a> {
    a: &'a [u64],
    b: Option<&'a [u64]>,
    combine: Combine,
    word_index: usize,
    current: u64,
}

impl<'a> Members<'a> {
    fn new(a: &'a [u64], b: Option<&'a [u64]>, combine: Combine) -> Self {
        let mut m = Self {
            a,
            b,
            combine,
            word_index: 0,
            current: 0,
        };
        m.current = m.word(0);
        m
    }

    fn word(&self, i: usize) -> u64 {
        let a = self.a.get(i).copied().unwrap_or(0);
        let b = self.b.and_then(|b| b.get(i).copied()).unwrap_or(0);
        match self.combine {
            Combine::Only => a,
            Combine::AndNot => a & !b,
            Combine::Or => a | b,
        }
    }

    fn words(&self) -> usize {
        self.a.len().max(self.b.map_or(0, <[u64]>::len))
    }
}

impl Iterator for Members<'_> {
    type Item = EntityId;

    fn next(&mut self) -> Option<EntityId> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                self.current &= self.current - 1;
                let slot = self.word_index * WORD_BITS + bit;
                return Some(EntityId(slot as u16));
            }
            self.word_index += 1;
            if self.word_index >= self.words() {
                return None;
            }
            self.current = self.word(self.word_index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn ids(it: Members<'_>) -> Vec<u16> {
        it.map(|e| e.0).collect()
    }

    #[test]
    fn insert_remove_contains_and_bounds() {
        let mut s = InterestSet::with_capacity(70);
        assert!(s.insert(EntityId(0)));
        assert!(!s.insert(EntityId(0)));
        assert!(s.insert(EntityId(69)));
        assert!(!s.insert(EntityId(70)), "beyond capacity is refused");
        assert!(s.contains(EntityId(69)) && !s.contains(EntityId(70)));
        assert_eq!(s.len(), 2);
        assert!(s.remove(EntityId(0)) && !s.remove(EntityId(0)));
        assert_eq!(ids(s.iter()), vec![69]);
        s.fill();
        assert_eq!(s.len(), 70);
        s.clear();
        assert!(s.is_empty());
    }

    #[test]
    fn enter_and_leave_diff() {
        let mut prev = InterestSet::with_capacity(200);
        let mut cur = InterestSet::with_capacity(200);
        for i in [1, 5, 64, 130] {
            prev.insert(EntityId(i));
        }
        for i in [5, 64, 65, 199] {
            cur.insert(EntityId(i));
        }
        assert_eq!(ids(cur.entered(&prev)), vec![65, 199]);
        assert_eq!(ids(cur.left(&prev)), vec![1, 130]);
        assert_eq!(ids(cur.iter_union(&prev)), vec![1, 5, 64, 65, 130, 199]);
        prev.copy_from(&cur);
        assert_eq!(cur.entered(&prev).count(), 0);
        assert_eq!(cur.left(&prev).count(), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn matches_a_btreeset(a in proptest::collection::btree_set(0u16..300, 0..80),
                              b in proptest::collection::btree_set(0u16..300, 0..80)) {
            let mut sa = InterestSet::with_capacity(300);
            let mut sb = InterestSet::with_capacity(300);
            a.iter().for_each(|&i| { sa.insert(EntityId(i)); });
            b.iter().for_each(|&i| { sb.insert(EntityId(i)); });
            let entered: Vec<u16> = a.difference(&b).copied().collect();
            let left: Vec<u16> = b.difference(&a).copied().collect();
            let union: Vec<u16> = a.union(&b).copied().collect();
            prop_assert_eq!(ids(sa.entered(&sb)), entered);
            prop_assert_eq!(ids(sa.left(&sb)), left);
            prop_assert_eq!(ids(sa.iter_union(&sb)), union);
            let mut inter = sa.clone();
            inter.intersect_with(&sb);
            let both: BTreeSet<u16> = a.intersection(&b).copied().collect();
            prop_assert_eq!(ids(inter.iter()), both.into_iter().collect::<Vec<_>>());
            prop_assert_eq!(sa.len(), a.len());
        }
    }
}
