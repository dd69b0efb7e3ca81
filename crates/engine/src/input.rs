//! Per-player input buffering, keyed by tick.
//!
//! Clients send each input several times (an input batch carries the newest
//! command and the last few, for redundancy), ahead of the tick that will
//! simulate it. [`InputBuffer`] keeps one slot per tick in a ring: a copy of
//! an input already held is a duplicate, an input for a tick already simulated
//! is late (dropped and counted), and when the tick comes without an input the
//! last one is repeated (and the miss counted).

use crate::tick::Tick;

/// What happened to one arriving input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputArrival {
    /// Stored for its tick.
    Accepted,
    /// A redundant copy of an input already held; ignored.
    Duplicate,
    /// For a tick already simulated; dropped.
    Late,
    /// Too far ahead of the simulation to hold; dropped.
    TooEarly,
}

/// Whether the input used for a tick is the player's own for that tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    /// The input the player sent for this tick.
    Fresh,
    /// No input arrived in time: the last one is repeated.
    Repeated,
}

/// Counters of one player's input stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputStats {
    /// Inputs stored.
    pub accepted: u64,
    /// Redundant copies ignored.
    pub duplicates: u64,
    /// Inputs for ticks already simulated.
    pub late: u64,
    /// Inputs too far ahead.
    pub too_early: u64,
    /// Ticks simulated with a repeated input.
    pub missing: u64,
}

/// A ring of inputs keyed by tick, for one player. All storage is allocated
/// at creation.
#[derive(Debug, Clone)]
pub struct InputBuffer<C> {
    ticks: Box<[Tick]>,
    commands: Box<[C]>,
    last: C,
    /// The newest tick taken for simulation (0: none yet; tick 0 is never simulated).
    consumed: Tick,
    newest_received: Tick,
    stats: InputStats,
}

impl<C: Clone + Default> InputBuffer<C> {
    /// A buffer holding inputs for up to `window` ticks ahead (at least 1).
    pub fn new(window: usize) -> Self {
        let window = window.max(1);
        Self {
            ticks: vec![0; window].into_boxed_slice(),
            commands: vec![C::default(); window].into_boxed_slice(),
            last: C::default(),
            consumed: 0,
            newest_received: 0,
            stats: InputStats::default(),
        }
    }

    /// Forgets every input and counter, as for a new player in the slot. The
    /// next simulated tick is `next_tick`.
    pub fn reset(&mut self, next_tick: Tick) {
        self.ticks.fill(0);
        self.last = C::default();
        self.consumed = next_tick.saturating_sub(1);
        self.newest_received = 0;
        self.stats = InputStats::default();
    }

    fn slot(&self, tick: Tick) -> usize {
        tick as usize % self.ticks.len()
    }

    /// Hints the cache to fetch what [`Self::take`] of `tick` reads (see
    /// [`hightick_net::prefetch`]).
    pub fn prefetch(&self, tick: Tick) {
        let slot = self.slot(tick);
        hightick_net::prefetch::prefetch(&self.ticks[slot]);
        hightick_net::prefetch::prefetch(&self.commands[slot]);
    }

    /// Offers the input for `tick`.
    pub fn insert(&mut self, tick: Tick, command: &C) -> InputArrival {
        let arrival = if tick <= self.consumed {
            InputArrival::Late
        } else if u64::from(tick) > u64::from(self.consumed) + self.ticks.len() as u64 {
            InputArrival::TooEarly
        } else {
            let slot = self.slot(tick);
            if self.ticks[slot] == tick {
                InputArrival::Duplicate
            } else {
                self.ticks[slot] = tick;
                self.commands[slot].clone_from(command);
                self.newest_received = self.newest_received.max(tick);
                InputArrival::Accepted
            }
        };
        match arrival {
            InputArrival::Accepted => self.stats.accepted += 1,
            InputArrival::Duplicate => self.stats.duplicates += 1,
            InputArrival::Late => self.stats.late += 1,
            InputArrival::TooEarly => self.stats.too_early += 1,
        }
        arrival
    }

    /// Takes the input to simulate `tick` with: the player's own if it
    /// arrived, else the last one repeated. Ticks must be taken in increasing
    /// order; inputs for `tick` and earlier are late from now on.
    pub fn take(&mut self, tick: Tick) -> (&C, InputSource) {
        let slot = self.slot(tick);
        let source = if tick > self.consumed && self.ticks[slot] == tick {
            self.last.clone_from(&self.commands[slot]);
            InputSource::Fresh
        } else {
            self.stats.missing += 1;
            InputSource::Repeated
        };
        self.consumed = self.consumed.max(tick);
        (&self.last, source)
    }

    /// The newest tick an input was received for (0: none), for the snapshot
    /// header's input acknowledgement.
    pub fn newest_received(&self) -> Tick {
        self.newest_received
    }

    /// The newest tick simulated.
    pub fn consumed(&self) -> Tick {
        self.consumed
    }

    /// The counters.
    pub fn stats(&self) -> InputStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redundant_copies_are_deduplicated() {
        let mut b = InputBuffer::<u32>::new(16);
        assert_eq!(b.insert(3, &30), InputArrival::Accepted);
        assert_eq!(b.insert(3, &99), InputArrival::Duplicate);
        assert_eq!(b.insert(2, &20), InputArrival::Accepted);
        assert_eq!(b.take(1), (&0, InputSource::Repeated));
        assert_eq!(b.take(2), (&20, InputSource::Fresh));
        assert_eq!(b.take(3), (&30, InputSource::Fresh), "the first copy wins");
        let s = b.stats();
        assert_eq!((s.accepted, s.duplicates, s.missing), (2, 1, 1));
        assert_eq!(b.newest_received(), 3);
    }

    #[test]
    fn late_inputs_are_dropped_and_counted() {
        let mut b = InputBuffer::<u32>::new(8);
        b.take(1);
        b.take(2);
        assert_eq!(b.insert(2, &5), InputArrival::Late);
        assert_eq!(b.insert(1, &5), InputArrival::Late);
        assert_eq!(b.insert(3, &7), InputArrival::Accepted);
        assert_eq!(b.stats().late, 2);
        assert_eq!(b.take(3), (&7, InputSource::Fresh));
    }

    #[test]
    fn a_missing_input_repeats_the_last_one() {
        let mut b = InputBuffer::<u32>::new(8);
        b.insert(1, &11);
        b.insert(4, &44);
        assert_eq!(b.take(1), (&11, InputSource::Fresh));
        assert_eq!(b.take(2), (&11, InputSource::Repeated));
        assert_eq!(b.take(3), (&11, InputSource::Repeated));
        assert_eq!(b.take(4), (&44, InputSource::Fresh));
        assert_eq!(b.stats().missing, 2);
    }

    #[test]
    fn the_window_bounds_how_far_ahead_inputs_are_held() {
        let mut b = InputBuffer::<u32>::new(4);
        assert_eq!(b.insert(5, &1), InputArrival::TooEarly);
        assert_eq!(b.insert(4, &1), InputArrival::Accepted);
        // A stale slot from a lapped tick is never mistaken for a fresh one.
        b.insert(1, &100);
        for t in 1..=5 {
            b.take(t);
        }
        assert_eq!(
            b.take(9),
            (&1, InputSource::Repeated),
            "slot 1 holds tick 1, not 9"
        );
        assert_eq!(b.stats().too_early, 1);
        b.reset(20);
        assert_eq!(b.insert(19, &1), InputArrival::Late);
        assert_eq!(b.insert(20, &2), InputArrival::Accepted);
        assert_eq!(b.take(20), (&2, InputSource::Fresh));
    }
}
