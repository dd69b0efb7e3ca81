//! [`DelayLine`]: datagrams waiting for their arrival time, released in
//! time order (ties in the order they were put in). Buffers are taken from
//! a pool that grows to the most ever held and is reused after.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use crate::flows::FlowId;
use crate::profile::Direction;

/// Largest datagram the line holds.
pub const MAX_DATAGRAM: usize = 2048;

#[derive(Debug)]
struct Held {
    flow: FlowId,
    direction: Direction,
    len: usize,
    bytes: Box<[u8]>,
}

/// A datagram whose time has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Which way it goes.
    pub direction: Direction,
    /// Its length (the bytes are in the caller's buffer).
    pub len: usize,
}

/// See the [module docs](self).
#[derive(Debug)]
pub struct DelayLine {
    heap: BinaryHeap<Reverse<(Instant, u64, u32)>>,
    held: Vec<Held>,
    free: Vec<u32>,
    capacity: usize,
    sequence: u64,
}

impl DelayLine {
    /// A line holding at most `capacity` datagrams at once.
    pub fn new(capacity: usize) -> Self {
        Self {
            heap: BinaryHeap::new(),
            held: Vec::new(),
            free: Vec::new(),
            capacity: capacity.max(1),
            sequence: 0,
        }
    }

    /// Datagrams held now.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Holds `bytes` of `flow` going `direction` until `at`; `false` if the
    /// line is full or the datagram longer than [`MAX_DATAGRAM`].
    pub fn push(&mut self, at: Instant, flow: FlowId, direction: Direction, bytes: &[u8]) -> bool {
        if bytes.len() > MAX_DATAGRAM || self.heap.len() >= self.capacity {
            return false;
        }
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.held.push(Held {
                    flow,
                    direction,
                    len: 0,
                    bytes: vec![0; MAX_DATAGRAM].into_boxed_slice(),
                });
                (self.held.len() - 1) as u32
            }
        };
        let slot = &mut self.held[index as usize];
        slot.flow = flow;
        slot.direction = direction;
        slot.len = bytes.len();
        slot.bytes[..bytes.len()].copy_from_slice(bytes);
        self.heap.push(Reverse((at, self.sequence, index)));
        self.sequence += 1;
        true
    }

    /// When the next datagram is due.
    pub fn next_at(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The next datagram due at `now`, copied into `buf` (at least
    /// [`MAX_DATAGRAM`] long).
    pub fn pop_due(&mut self, now: Instant, buf: &mut [u8]) -> Option<Release> {
        let &Reverse((at, _, index)) = self.heap.peek()?;
        if at > now {
            return None;
        }
        self.heap.pop();
        self.free.push(index);
        let held = &self.held[index as usize];
        let len = held.len.min(buf.len());
        buf[..len].copy_from_slice(&held.bytes[..len]);
        Some(Release {
            flow: held.flow,
            direction: held.direction,
            len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn releases_in_time_order_then_insertion_order() {
        let t0 = Instant::now();
        let flow = FlowId::new(0, 0);
        let mut line = DelayLine::new(8);
        let ms = Duration::from_millis;
        assert!(line.push(t0 + ms(5), flow, Direction::Up, b"late"));
        assert!(line.push(t0 + ms(1), flow, Direction::Down, b"a"));
        assert!(line.push(t0 + ms(1), flow, Direction::Down, b"b"));
        let mut buf = [0u8; MAX_DATAGRAM];
        assert_eq!(line.pop_due(t0, &mut buf), None);
        assert_eq!(line.next_at(), Some(t0 + ms(1)));
        let mut got = Vec::new();
        while let Some(r) = line.pop_due(t0 + ms(10), &mut buf) {
            got.push(buf[..r.len].to_vec());
        }
        assert_eq!(got, [b"a".to_vec(), b"b".to_vec(), b"late".to_vec()]);
        assert!(line.is_empty());
    }

    #[test]
    fn a_full_line_and_a_giant_datagram_are_refused() {
        let t0 = Instant::now();
        let flow = FlowId::new(0, 0);
        let mut line = DelayLine::new(1);
        assert!(line.push(t0, flow, Direction::Up, b"x"));
        assert!(!line.push(t0, flow, Direction::Up, b"y"));
        let mut buf = [0u8; MAX_DATAGRAM];
        line.pop_due(t0, &mut buf).unwrap();
        assert!(!line.push(t0, flow, Direction::Up, &[0; MAX_DATAGRAM + 1]));
        assert!(line.push(t0, flow, Direction::Up, b"y"));
    }
}
