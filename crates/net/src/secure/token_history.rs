//! Token reuse protection on a server: which address each recently seen token
//! (identified by the tag of its sealed private part) came from, and whether it
//! already served a connection that ended.
//!
//! A token seen from a second address is refused, so a captured connection
//! request cannot be replayed from elsewhere; a token whose connection ended is
//! refused, so its keys never serve two connections (which would restart the
//! packet sequences, i.e. reuse AEAD nonces). The history holds a fixed number
//! of entries, oldest replaced first; lookups are O(1) and never allocate.

use std::collections::HashMap;
use std::net::SocketAddr;

use crate::secure::crypto::MAC_BYTES;

type Mac = [u8; MAC_BYTES];

#[derive(Debug, Clone, Copy)]
struct Entry {
    mac: Mac,
    address: SocketAddr,
    spent: bool,
}

/// Why a token is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// First seen from another address.
    OtherAddress,
    /// Its connection already ended.
    Spent,
}

/// A fixed-capacity history of tokens seen.
#[derive(Debug)]
pub(crate) struct TokenHistory {
    entries: Vec<Option<Entry>>,
    index: HashMap<Mac, usize>,
    next: usize,
}

impl TokenHistory {
    /// A history remembering the last `capacity` tokens (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            entries: vec![None; capacity],
            // Twice the entries: removals leave tombstones, and the map rehashes
            // in place (no allocation) while it is at most half full.
            index: HashMap::with_capacity(capacity * 2),
            next: 0,
        }
    }

    /// Checks a token presented from `address` and records it if new.
    pub(crate) fn admit(&mut self, mac: &Mac, address: SocketAddr) -> Result<(), Reuse> {
        if let Some(&i) = self.index.get(mac)
            && let Some(e) = &self.entries[i]
        {
            return if e.spent {
                Err(Reuse::Spent)
            } else if e.address != address {
                Err(Reuse::OtherAddress)
            } else {
                Ok(())
            };
        }
        let i = self.next;
        self.next = (self.next + 1) % self.entries.len();
        if let Some(old) = self.entries[i].take() {
            self.index.remove(&old.mac);
        }
        self.entries[i] = Some(Entry {
            mac: *mac,
            address,
            spent: false,
        });
        self.index.insert(*mac, i);
        Ok(())
    }

    /// Marks a token's connection as ended: the token cannot connect again.
    pub(crate) fn spend(&mut self, mac: &Mac) {
        if let Some(&i) = self.index.get(mac)
            && let Some(e) = &mut self.entries[i]
        {
            e.spent = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], port))
    }

    #[test]
    fn same_address_passes_other_address_and_spent_do_not() {
        let mut h = TokenHistory::new(4);
        assert_eq!(h.admit(&[1; 16], addr(1)), Ok(()));
        assert_eq!(h.admit(&[1; 16], addr(1)), Ok(()));
        assert_eq!(h.admit(&[1; 16], addr(2)), Err(Reuse::OtherAddress));
        h.spend(&[1; 16]);
        assert_eq!(h.admit(&[1; 16], addr(1)), Err(Reuse::Spent));
    }

    #[test]
    fn oldest_entries_are_replaced() {
        let mut h = TokenHistory::new(2);
        h.admit(&[1; 16], addr(1)).unwrap();
        h.admit(&[2; 16], addr(1)).unwrap();
        h.admit(&[3; 16], addr(1)).unwrap();
        // Token 1 was forgotten: it is new again.
        assert_eq!(h.admit(&[1; 16], addr(9)), Ok(()));
        assert_eq!(h.admit(&[3; 16], addr(9)), Err(Reuse::OtherAddress));
        assert_eq!(h.index.len(), 2);
    }
}
