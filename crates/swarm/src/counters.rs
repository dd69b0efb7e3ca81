//! [`BotCounters`]: what one match bot saw, and [`LiveCounters`], the
//! fleet-wide sums readable while the fleet runs.

use std::sync::atomic::{AtomicU64, Ordering};

use hightick_engine::events::MAX_EVENT_KINDS;

/// Event kinds counted: one slot per kind the game names
/// (`ReliableEvent::KINDS`).
pub const EVENT_KINDS: usize = MAX_EVENT_KINDS;

/// Counters of one bot (or, summed, of a fleet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BotCounters {
    /// Bots that completed the handshake.
    pub connected: u64,
    /// Bots whose connection ended before the run did.
    pub disconnected: u64,
    /// Snapshots applied.
    pub snapshots: u64,
    /// Messages that failed to decode.
    pub decode_errors: u64,
    /// Inconsistencies found (undecodable snapshots, and what the game's
    /// bot found contradictory).
    pub desyncs: u64,
    /// Resync requests sent.
    pub resyncs_requested: u64,
    /// Events received, by kind (`ReliableEvent::kind`).
    pub events: [u64; EVENT_KINDS],
    /// Datagram bytes received.
    pub bytes_in: u64,
    /// Datagram bytes sent.
    pub bytes_out: u64,
    /// Datagrams received.
    pub packets_in: u64,
    /// Datagrams sent.
    pub packets_out: u64,
    /// Snapshots the client dropped whole (waiting for a full resync, or
    /// too old). Counted at the end of a bot's run, not live.
    pub snapshots_dropped: u64,
    /// Full-resync snapshots applied. At the end only, not live.
    pub full_resyncs: u64,
    /// Reliable events the client dropped because its queue was full. At
    /// the end only, not live.
    pub events_dropped: u64,
    /// Bots that learnt their match is over. At the end only, not live.
    pub matches_over: u64,
    /// Bots the server told which entity they steer (their avatar). At the
    /// end only, not live.
    pub with_avatar: u64,
}

impl BotCounters {
    /// Counts one event of kind `kind` (kinds past [`EVENT_KINDS`] are not
    /// counted by kind).
    pub fn count_event(&mut self, kind: usize) {
        if let Some(n) = self.events.get_mut(kind) {
            *n += 1;
        }
    }

    /// Events of the kind called `name` among `kinds` (the game's
    /// `ReliableEvent::KINDS`); 0 for a name the game does not have.
    pub fn events_named(&self, kinds: &[&str], name: &str) -> u64 {
        kinds
            .iter()
            .position(|k| *k == name)
            .and_then(|i| self.events.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// All events seen.
    pub fn total_events(&self) -> u64 {
        self.events.iter().sum()
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &BotCounters) {
        self.connected += other.connected;
        self.disconnected += other.disconnected;
        self.snapshots += other.snapshots;
        self.decode_errors += other.decode_errors;
        self.desyncs += other.desyncs;
        self.resyncs_requested += other.resyncs_requested;
        for (a, b) in self.events.iter_mut().zip(other.events) {
            *a += b;
        }
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.packets_in += other.packets_in;
        self.packets_out += other.packets_out;
        self.snapshots_dropped += other.snapshots_dropped;
        self.full_resyncs += other.full_resyncs;
        self.events_dropped += other.events_dropped;
        self.matches_over += other.matches_over;
        self.with_avatar += other.with_avatar;
    }
}

/// Fleet-wide counters that bots add their progress to as they run.
#[derive(Debug, Default)]
pub struct LiveCounters {
    connected: AtomicU64,
    disconnected: AtomicU64,
    snapshots: AtomicU64,
    decode_errors: AtomicU64,
    desyncs: AtomicU64,
    resyncs_requested: AtomicU64,
    events: [AtomicU64; EVENT_KINDS],
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    packets_in: AtomicU64,
    packets_out: AtomicU64,
}

impl LiveCounters {
    /// Adds the growth from `before` to `after` of one bot's counters.
    pub fn advance(&self, before: &BotCounters, after: &BotCounters) {
        let add = |a: &AtomicU64, old: u64, new: u64| {
            if new > old {
                a.fetch_add(new - old, Ordering::Relaxed);
            }
        };
        add(&self.connected, before.connected, after.connected);
        add(&self.disconnected, before.disconnected, after.disconnected);
        add(&self.snapshots, before.snapshots, after.snapshots);
        add(
            &self.decode_errors,
            before.decode_errors,
            after.decode_errors,
        );
        add(&self.desyncs, before.desyncs, after.desyncs);
        add(
            &self.resyncs_requested,
            before.resyncs_requested,
            after.resyncs_requested,
        );
        for (i, a) in self.events.iter().enumerate() {
            add(a, before.events[i], after.events[i]);
        }
        add(&self.bytes_in, before.bytes_in, after.bytes_in);
        add(&self.bytes_out, before.bytes_out, after.bytes_out);
        add(&self.packets_in, before.packets_in, after.packets_in);
        add(&self.packets_out, before.packets_out, after.packets_out);
    }

    /// The sums so far.
    pub fn read(&self) -> BotCounters {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut events = [0; EVENT_KINDS];
        for (e, a) in events.iter_mut().zip(&self.events) {
            *e = get(a);
        }
        BotCounters {
            connected: get(&self.connected),
            disconnected: get(&self.disconnected),
            snapshots: get(&self.snapshots),
            decode_errors: get(&self.decode_errors),
            desyncs: get(&self.desyncs),
            resyncs_requested: get(&self.resyncs_requested),
            events,
            bytes_in: get(&self.bytes_in),
            bytes_out: get(&self.bytes_out),
            packets_in: get(&self.packets_in),
            packets_out: get(&self.packets_out),
            ..BotCounters::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_counters_add_only_the_growth() {
        let live = LiveCounters::default();
        let mut a = BotCounters::default();
        let b0 = a;
        a.snapshots = 10;
        a.count_event(7);
        live.advance(&b0, &a);
        let b1 = a;
        a.snapshots = 15;
        live.advance(&b1, &a);
        live.advance(&a, &a);
        let read = live.read();
        assert_eq!(read.snapshots, 15);
        let kinds = ["a", "b", "c", "d", "e", "f", "g", "match_end"];
        assert_eq!(read.events_named(&kinds, "match_end"), 1);
        assert_eq!(read.events_named(&kinds, "kill"), 0);
        let mut sum = BotCounters::default();
        sum.add(&read);
        sum.add(&read);
        assert_eq!((sum.snapshots, sum.total_events()), (30, 2));
    }
}
