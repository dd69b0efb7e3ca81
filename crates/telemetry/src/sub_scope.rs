//! Sub-scopes: static names under a subsystem (`movement/collide`), each given
//! a small id so frame records can keep their time in a flat array.
//!
//! Lookups on the hot path hash the name's address (a `&'static str` literal
//! has one), so finding a known sub-scope costs a multiply and a compare. A
//! name seen for the first time takes a slow path that compares contents, so
//! two literals with the same text share one id. All storage is reserved when
//! the registry is built: registering never allocates.

use std::cell::Cell;

use crate::error::TelemetryError;
use crate::subsystem::Subsystem;

/// The id of a registered sub-scope: its position in the registry, `0..capacity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubScopeId(u16);

impl SubScopeId {
    /// The position of this sub-scope in frame records' sub-scope arrays.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    #[cfg(test)]
    pub(crate) fn for_tests(index: u16) -> Self {
        Self(index)
    }
}

/// Most sub-scopes a registry can hold (ids are `u16`, one value is reserved).
pub const MAX_SUB_SCOPES: usize = u16::MAX as usize;

/// A sub-scope's subsystem and name.
type Name = (Subsystem, &'static str);

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Address of the name's bytes; 0 marks an empty slot.
    addr: usize,
    len: usize,
    subsystem: u8,
    id: u16,
}

const EMPTY: Slot = Slot {
    addr: 0,
    len: 0,
    subsystem: 0,
    id: 0,
};

/// The sub-scopes a recorder knows, with interior mutability so a scope opened
/// through a shared frame reference can register a new name.
#[derive(Debug)]
pub(crate) struct SubScopeRegistry {
    names: Box<[Cell<Option<Name>>]>,
    len: Cell<usize>,
    slots: Box<[Cell<Slot>]>,
    slot_mask: usize,
    /// Scopes whose name found no room (registry or address table full).
    overflow: Cell<u64>,
}

impl SubScopeRegistry {
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.min(MAX_SUB_SCOPES);
        // Several literals may share one name, so leave room for more
        // addresses than names, and keep the table sparse for short probes.
        let table = (capacity * 4).next_power_of_two().max(16);
        Self {
            names: (0..capacity).map(|_| Cell::new(None)).collect(),
            len: Cell::new(0),
            slots: (0..table).map(|_| Cell::new(EMPTY)).collect(),
            slot_mask: table - 1,
            overflow: Cell::new(0),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.names.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.len.get()
    }

    pub(crate) fn overflow(&self) -> u64 {
        self.overflow.get()
    }

    /// The subsystem and name of a registered id.
    pub(crate) fn name(&self, id: SubScopeId) -> Option<Name> {
        self.names.get(id.index()).and_then(Cell::get)
    }

    /// Every registered sub-scope, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (SubScopeId, Subsystem, &'static str)> + '_ {
        self.names[..self.len.get()]
            .iter()
            .enumerate()
            .filter_map(|(i, name)| name.get().map(|(s, n)| (SubScopeId(i as u16), s, n)))
    }

    /// Registers `name` under `subsystem` (or finds it) and returns its id.
    pub(crate) fn register(
        &self,
        subsystem: Subsystem,
        name: &'static str,
    ) -> Result<SubScopeId, TelemetryError> {
        if name.is_empty() {
            return Err(TelemetryError::EmptySubScopeName);
        }
        self.find_or_insert(subsystem, name)
            .ok_or(TelemetryError::SubScopesFull {
                capacity: self.capacity(),
            })
    }

    /// The id for `(subsystem, name)`, registering it on first sight; `None`
    /// for the empty name or when there is no room left (counted).
    #[inline]
    pub(crate) fn lookup(&self, subsystem: Subsystem, name: &'static str) -> Option<SubScopeId> {
        if name.is_empty() {
            return None;
        }
        let addr = name.as_ptr() as usize;
        let mut i = self.slot_of(addr, subsystem);
        // The table is never full of names we look for: each probe either
        // hits, or meets an empty slot and falls to the slow path.
        for _ in 0..self.slots.len() {
            let slot = self.slots[i].get();
            if slot.addr == addr && slot.len == name.len() && slot.subsystem == subsystem as u8 {
                return Some(SubScopeId(slot.id));
            }
            if slot.addr == 0 {
                break;
            }
            i = (i + 1) & self.slot_mask;
        }
        self.lookup_slow(subsystem, name)
    }

    #[cold]
    #[inline(never)]
    fn lookup_slow(&self, subsystem: Subsystem, name: &'static str) -> Option<SubScopeId> {
        let found = self.find_or_insert(subsystem, name);
        if found.is_none() {
            self.overflow.set(self.overflow.get() + 1);
        }
        found
    }

    fn find_or_insert(&self, subsystem: Subsystem, name: &'static str) -> Option<SubScopeId> {
        let known = (0..self.len.get())
            .find(|&i| self.names[i].get() == Some((subsystem, name)))
            .map(|i| SubScopeId(i as u16));
        let id = match known {
            Some(id) => id,
            None => {
                let next = self.len.get();
                if next >= self.names.len() {
                    return None;
                }
                self.names[next].set(Some((subsystem, name)));
                self.len.set(next + 1);
                SubScopeId(next as u16)
            }
        };
        self.remember_address(subsystem, name, id);
        Some(id)
    }

    /// Records the name's address for fast lookups. If the table has no free
    /// slot the id still works, through the slow path.
    fn remember_address(&self, subsystem: Subsystem, name: &'static str, id: SubScopeId) {
        let addr = name.as_ptr() as usize;
        let mut i = self.slot_of(addr, subsystem);
        for _ in 0..self.slots.len() {
            let slot = self.slots[i].get();
            if slot.addr == 0 {
                self.slots[i].set(Slot {
                    addr,
                    len: name.len(),
                    subsystem: subsystem as u8,
                    id: id.0,
                });
                return;
            }
            if slot.addr == addr && slot.len == name.len() && slot.subsystem == subsystem as u8 {
                return;
            }
            i = (i + 1) & self.slot_mask;
        }
    }

    #[inline(always)]
    fn slot_of(&self, addr: usize, subsystem: Subsystem) -> usize {
        let key = (addr as u64) ^ ((subsystem as u64) << 59);
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.slot_mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_gets_the_same_id_even_from_different_literals() {
        let reg = SubScopeRegistry::new(4);
        let owned: &'static str = String::from("collide").leak();
        let a = reg.lookup(Subsystem::Movement, "collide").unwrap();
        let b = reg.lookup(Subsystem::Movement, owned).unwrap();
        assert_eq!(a, b);
        assert_eq!(reg.len(), 1);
        assert_eq!(reg.name(a), Some((Subsystem::Movement, "collide")));
    }

    #[test]
    fn the_same_name_under_another_subsystem_is_another_sub_scope() {
        let reg = SubScopeRegistry::new(4);
        let a = reg.lookup(Subsystem::Movement, "step").unwrap();
        let b = reg.lookup(Subsystem::Physics, "step").unwrap();
        assert_ne!(a, b);
        assert_eq!(reg.lookup(Subsystem::Physics, "step"), Some(b));
    }

    #[test]
    fn empty_names_are_no_sub_scope() {
        let reg = SubScopeRegistry::new(4);
        assert_eq!(reg.lookup(Subsystem::Fow, ""), None);
        assert!(matches!(
            reg.register(Subsystem::Fow, ""),
            Err(TelemetryError::EmptySubScopeName)
        ));
        assert_eq!(reg.overflow(), 0);
    }

    #[test]
    fn a_full_registry_counts_overflow_and_keeps_known_names() {
        let reg = SubScopeRegistry::new(2);
        let a = reg.register(Subsystem::Fow, "a").unwrap();
        reg.register(Subsystem::Fow, "b").unwrap();
        assert!(matches!(
            reg.register(Subsystem::Fow, "c"),
            Err(TelemetryError::SubScopesFull { capacity: 2 })
        ));
        assert_eq!(reg.lookup(Subsystem::Fow, "c"), None);
        assert_eq!(reg.overflow(), 1);
        assert_eq!(reg.lookup(Subsystem::Fow, "a"), Some(a));
    }

    #[test]
    fn many_names_all_resolve_to_their_own_ids() {
        let reg = SubScopeRegistry::new(200);
        let names: Vec<&'static str> = (0..200).map(|i| format!("n{i}").leak() as &str).collect();
        let ids: Vec<_> = names
            .iter()
            .map(|n| reg.lookup(Subsystem::Other, n).unwrap())
            .collect();
        for (n, id) in names.iter().zip(&ids) {
            assert_eq!(reg.lookup(Subsystem::Other, n), Some(*id));
            assert_eq!(reg.name(*id), Some((Subsystem::Other, *n)));
        }
        assert_eq!(reg.len(), 200);
    }
}
