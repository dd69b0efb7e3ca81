//! Reliable events: one-off happenings (a hit, a kill, a purchase) queued per
//! client and handed to the reliable ordered channel by the host.

use std::collections::VecDeque;

use hightick_proto::{BitWriter, GameEvent, MessageKind, ProtoError};

/// An event the engine can hand to the reliable channel.
pub trait ReliableEvent: Copy + std::fmt::Debug {
    /// Writes the event (without the message tag).
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError>;

    /// Writes a whole event message (the [`MessageKind::Event`] tag, then the
    /// event) into `out`; returns its length.
    fn write_message(&self, out: &mut [u8]) -> Result<usize, ProtoError> {
        let mut w = BitWriter::new(out);
        MessageKind::Event.encode(&mut w)?;
        self.encode(&mut w)?;
        Ok(w.finish())
    }
}

impl ReliableEvent for GameEvent {
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        GameEvent::encode(self, w)
    }
}

/// A bounded queue of events for one client. Full queues drop new events
/// and count them.
#[derive(Debug, Clone)]
pub struct EventQueue<E> {
    queue: VecDeque<E>,
    capacity: usize,
    dropped: u64,
}

impl<E: ReliableEvent> EventQueue<E> {
    /// A queue of up to `capacity` events, allocated now.
    pub fn new(capacity: usize) -> Self {
        Self {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            dropped: 0,
        }
    }

    /// Queues an event; `false` (and counted) if the queue is full.
    pub fn push(&mut self, event: E) -> bool {
        if self.queue.len() >= self.capacity {
            self.dropped += 1;
            return false;
        }
        self.queue.push_back(event);
        true
    }

    /// The oldest queued event.
    pub fn front(&self) -> Option<&E> {
        self.queue.front()
    }

    /// Removes and returns the oldest queued event.
    pub fn pop(&mut self) -> Option<E> {
        self.queue.pop_front()
    }

    /// Queued events.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Forgets every queued event.
    pub fn clear(&mut self) {
        self.queue.clear();
    }

    /// Events dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_proto::BitReader;
    use hightick_proto::message::RoundPhase;

    #[test]
    fn bounded_fifo_counts_drops() {
        let mut q = EventQueue::<GameEvent>::new(2);
        let ev = |round| GameEvent::RoundStart {
            round,
            phase: RoundPhase::Buy,
            phase_end_tick: 10,
        };
        assert!(q.push(ev(1)) && q.push(ev(2)));
        assert!(!q.push(ev(3)));
        assert_eq!(q.dropped(), 1);
        assert_eq!(q.pop(), Some(ev(1)));
        assert_eq!(q.front(), Some(&ev(2)));
    }

    #[test]
    fn messages_carry_the_event_tag() {
        let ev = GameEvent::RoundStart {
            round: 3,
            phase: RoundPhase::Live,
            phase_end_tick: 1234,
        };
        let mut buf = [0u8; 64];
        let n = ev.write_message(&mut buf).unwrap();
        let mut r = BitReader::new(&buf[..n]);
        assert_eq!(MessageKind::decode(&mut r).unwrap(), MessageKind::Event);
        assert_eq!(GameEvent::decode(&mut r).unwrap(), ev);
    }
}
