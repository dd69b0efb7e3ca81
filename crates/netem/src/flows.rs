//! [`FlowTable`]: one flow per client source address and route (the
//! proxy's listening socket it came to), a bounded number of them, each forgotten after a while without a datagram either way. A flow
//! id carries its slot's generation, so a datagram still in flight for a
//! flow that expired is not handed to the flow that took its slot.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// What tells flows apart: the route (which of the proxy's listening
/// sockets, so which server) and the client's source address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// Index of the route.
    pub route: usize,
    /// The client's source address.
    pub client: SocketAddr,
}

impl FlowKey {
    /// `client` on route `route`.
    pub fn new(route: usize, client: SocketAddr) -> Self {
        Self { route, client }
    }
}

/// A flow: its slot and the slot's generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowId {
    slot: u32,
    generation: u32,
}

impl FlowId {
    /// The flow in `slot` at `generation`.
    pub fn new(slot: u32, generation: u32) -> Self {
        Self { slot, generation }
    }

    /// Its slot, `0..max_flows`: an index for per-flow state kept beside
    /// the table (the proxy's upstream sockets).
    pub fn slot(self) -> usize {
        self.slot as usize
    }
}

#[derive(Debug)]
struct Entry {
    key: FlowKey,
    generation: u32,
    last_seen: Instant,
}

/// See the [module docs](self).
#[derive(Debug)]
pub struct FlowTable {
    slots: Vec<Option<Entry>>,
    generations: Vec<u32>,
    by_key: HashMap<FlowKey, u32>,
    max: usize,
    idle: Duration,
}

impl FlowTable {
    /// A table of at most `max` flows, each forgotten after `idle` without
    /// a datagram.
    pub fn new(max: usize, idle: Duration) -> Self {
        Self {
            slots: Vec::new(),
            generations: Vec::new(),
            by_key: HashMap::new(),
            max: max.max(1),
            idle,
        }
    }

    /// Flows open now.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether no flow is open.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// The flow of `key`, if open.
    pub fn find(&self, key: FlowKey) -> Option<FlowId> {
        let slot = *self.by_key.get(&key)?;
        Some(FlowId::new(slot, self.generations[slot as usize]))
    }

    /// Opens a flow for `key` at `now`; `None` if the table is full.
    pub fn open(&mut self, now: Instant, key: FlowKey) -> Option<FlowId> {
        if let Some(id) = self.find(key) {
            return Some(id);
        }
        let slot = match self.slots.iter().position(Option::is_none) {
            Some(s) => s,
            None if self.slots.len() < self.max => {
                self.slots.push(None);
                self.generations.push(0);
                self.slots.len() - 1
            }
            None => return None,
        };
        self.generations[slot] = self.generations[slot].wrapping_add(1);
        let generation = self.generations[slot];
        self.slots[slot] = Some(Entry {
            key,
            generation,
            last_seen: now,
        });
        self.by_key.insert(key, slot as u32);
        Some(FlowId::new(slot as u32, generation))
    }

    /// The key of `flow`, if it is still open.
    pub fn key(&self, flow: FlowId) -> Option<FlowKey> {
        let e = self.slots.get(flow.slot())?.as_ref()?;
        (e.generation == flow.generation).then_some(e.key)
    }

    /// Notes a datagram of `flow` at `now`.
    pub fn touch(&mut self, flow: FlowId, now: Instant) {
        if let Some(Some(e)) = self.slots.get_mut(flow.slot())
            && e.generation == flow.generation
        {
            e.last_seen = now;
        }
    }

    /// Closes every flow idle at `now`, adding their ids to `closed`.
    pub fn expire(&mut self, now: Instant, closed: &mut Vec<FlowId>) {
        for (slot, entry) in self.slots.iter_mut().enumerate() {
            if let Some(e) = entry
                && now.saturating_duration_since(e.last_seen) >= self.idle
            {
                self.by_key.remove(&e.key);
                closed.push(FlowId::new(slot as u32, e.generation));
                *entry = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> FlowKey {
        FlowKey::new(0, SocketAddr::from(([127, 0, 0, 1], port)))
    }

    #[test]
    fn flows_are_bounded_expire_and_their_old_ids_go_stale() {
        let t0 = Instant::now();
        let mut t = FlowTable::new(2, Duration::from_secs(5));
        let a = t.open(t0, addr(1)).unwrap();
        assert_eq!(t.open(t0, addr(1)), Some(a));
        let b = t.open(t0, addr(2)).unwrap();
        assert_ne!(a, b);
        assert_eq!(t.open(t0, addr(3)), None);
        t.touch(b, t0 + Duration::from_secs(4));
        let mut closed = Vec::new();
        t.expire(t0 + Duration::from_secs(5), &mut closed);
        assert_eq!(closed, [a]);
        assert_eq!(t.key(a), None);
        assert_eq!(t.key(b), Some(addr(2)));
        let c = t.open(t0, addr(3)).unwrap();
        assert_eq!(c.slot(), a.slot());
        assert_ne!(c, a);
        assert_eq!(t.key(a), None);
        assert_eq!(t.len(), 2);
    }
}
