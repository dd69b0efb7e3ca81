//! Reliable events: one-off happenings (a hit, a kill, a purchase) queued per
//! client and handed to the reliable ordered channel by the host.

use std::collections::VecDeque;

use hightick_proto::{BitReader, BitWriter, MessageKind, ProtoError};

/// A game's one-off happening, carried on the reliable ordered channel: the
/// game owns its vocabulary and encoding, the engine queues and sends it.
pub trait ReliableEvent: Copy + std::fmt::Debug + Send + Sync + 'static {
    /// Writes the event (without the message tag). Out-of-range fields are
    /// [`ProtoError::InvalidValue`] naming the field, and nothing is written.
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError>;

    /// Reads an event written by [`encode`](Self::encode); bad input is an
    /// error, never a panic.
    fn decode(r: &mut BitReader) -> Result<Self, ProtoError>;

    /// The names of the game's kinds of event (`"kill"`, `"round_end"`),
    /// for counters and reports: at most [`MAX_EVENT_KINDS`].
    const KINDS: &'static [&'static str];

    /// This event's kind: an index into [`KINDS`](Self::KINDS).
    fn kind(&self) -> usize;

    /// What the codec writes, as data: `Some` when derived, `None` (the
    /// default) when hand-written.
    const SCHEMA: Option<&'static hightick_proto::wire::TypeSchema> = None;

    /// Whether this event tells its client the match is over (the swarm's
    /// bots then count their match as finished). The derive says so for the
    /// variants marked `#[event(ends_match)]`. Default: no event does.
    fn ends_match(&self) -> bool {
        false
    }

    /// Writes a whole event message (the [`MessageKind::Event`] tag, then the
    /// event) into `out`; returns its length.
    fn write_message(&self, out: &mut [u8]) -> Result<usize, ProtoError> {
        let mut w = BitWriter::new(out);
        MessageKind::Event.encode(&mut w)?;
        self.encode(&mut w)?;
        Ok(w.finish())
    }
}

/// Kinds of event a game may name (counters keep one slot per kind).
pub const MAX_EVENT_KINDS: usize = 16;

/// A game with no events.
impl ReliableEvent for () {
    fn encode(&self, _: &mut BitWriter) -> Result<(), ProtoError> {
        Ok(())
    }

    fn decode(_: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(())
    }

    const KINDS: &'static [&'static str] = &["none"];

    fn kind(&self) -> usize {
        0
    }
}

/// A bounded queue of events for one client.
///
/// Nothing is lost silently: when the queue is full a new event is dropped
/// and counted, and the queue is marked overflowed ([`Self::take_overflow`]);
/// the match then gives the player a full resync and the game's reconnect
/// hook tells it again what a newcomer learns. While the player's
/// connection is gone the queue is paused: events for it are not queued
/// (its reconnect clears the queue and re-introduces it anyway).
#[derive(Debug, Clone)]
pub struct EventQueue<E> {
    queue: VecDeque<E>,
    capacity: usize,
    dropped: u64,
    overflows: u64,
    overflowed: bool,
    paused: bool,
}

impl<E: ReliableEvent> EventQueue<E> {
    /// A queue of up to `capacity` events, allocated now.
    pub fn new(capacity: usize) -> Self {
        Self {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            dropped: 0,
            overflows: 0,
            overflowed: false,
            paused: false,
        }
    }

    /// Queues an event; `false` if the queue is paused, or full (the event
    /// is counted as dropped and the queue marked overflowed).
    pub fn push(&mut self, event: E) -> bool {
        if self.paused {
            return false;
        }
        if self.queue.len() >= self.capacity {
            self.dropped += 1;
            if !self.overflowed {
                self.overflowed = true;
                self.overflows += 1;
            }
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

    /// Forgets every queued event and any overflow, and takes events again.
    pub fn clear(&mut self) {
        self.queue.clear();
        self.overflowed = false;
        self.paused = false;
    }

    /// Forgets every queued event and takes none until [`Self::clear`]
    /// (the player's connection is gone).
    pub fn pause(&mut self) {
        self.clear();
        self.paused = true;
    }

    /// Whether the queue overflowed since the last call (or clear); resets
    /// the mark.
    pub fn take_overflow(&mut self) -> bool {
        std::mem::take(&mut self.overflowed)
    }

    /// Events dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Times the queue filled up (each followed by a full resync).
    pub fn overflows(&self) -> u64 {
        self.overflows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A numbered note: the smallest event.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Note(u16);

    impl ReliableEvent for Note {
        fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
            w.write_u16(self.0)
        }
        fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
            Ok(Self(r.read_u16()?))
        }
        const KINDS: &'static [&'static str] = &["note"];
        fn kind(&self) -> usize {
            0
        }
    }

    #[test]
    fn bounded_fifo_counts_drops() {
        let mut q = EventQueue::<Note>::new(2);
        assert!(q.push(Note(1)) && q.push(Note(2)));
        assert!(!q.push(Note(3)));
        assert_eq!(q.dropped(), 1);
        assert_eq!(q.pop(), Some(Note(1)));
        assert_eq!(q.front(), Some(&Note(2)));
    }

    #[test]
    fn an_overflow_is_marked_once_and_a_pause_takes_nothing() {
        let mut q = EventQueue::<Note>::new(1);
        assert!(q.push(Note(1)));
        assert!(!q.push(Note(2)) && !q.push(Note(3)));
        assert_eq!((q.dropped(), q.overflows()), (2, 1));
        assert!(q.take_overflow());
        assert!(!q.take_overflow(), "the mark is taken once");
        q.pause();
        assert!(q.is_empty());
        assert!(!q.push(Note(4)), "a paused queue takes nothing");
        assert_eq!(
            q.dropped(),
            2,
            "and counts nothing: no one is there to lose it"
        );
        q.clear();
        assert!(q.push(Note(5)));
        assert!(!q.push(Note(6)));
        assert_eq!(q.overflows(), 2);
    }

    #[test]
    fn messages_carry_the_event_tag() {
        let mut buf = [0u8; 64];
        let n = Note(1234).write_message(&mut buf).unwrap();
        let mut r = BitReader::new(&buf[..n]);
        assert_eq!(MessageKind::decode(&mut r).unwrap(), MessageKind::Event);
        assert_eq!(Note::decode(&mut r).unwrap(), Note(1234));
    }
}
