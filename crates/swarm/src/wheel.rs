//! [`TimerWheel`]: when each sleeping virtual player wakes, for hundreds of
//! thousands of them, without a tokio timer each.
//!
//! A hashed timing wheel: time is cut into ticks (1 ms by default), each
//! tick hashes to one of a power-of-two number of slots, and a slot holds
//! the keys due in any tick that hashes there (a key due a whole turn later
//! waits for the cursor to come round again). Scheduling is O(1), firing is
//! O(keys in the slots passed). A key is never fired early: its deadline is
//! rounded up to the next tick. Slot vectors keep their capacity, so once a
//! run is warm, scheduling does not allocate.

use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
struct Entry {
    tick: u64,
    key: u32,
}

/// A hashed timing wheel of `u32` keys. See the [module docs](self).
#[derive(Debug)]
pub struct TimerWheel {
    origin: Instant,
    tick_ns: u64,
    slots: Vec<Vec<Entry>>,
    mask: u64,
    /// The next tick to fire.
    cursor: u64,
    /// Keys scheduled for a tick already passed: fired by the next advance.
    overdue: Vec<u32>,
    len: usize,
}

impl TimerWheel {
    /// A wheel starting at `origin` with ticks of `tick` and at least
    /// `slots` slots (rounded up to a power of two).
    pub fn new(origin: Instant, tick: Duration, slots: usize) -> Self {
        let n = slots.max(2).next_power_of_two();
        Self {
            origin,
            tick_ns: (tick.as_nanos() as u64).max(1),
            slots: (0..n).map(|_| Vec::new()).collect(),
            mask: n as u64 - 1,
            cursor: 0,
            overdue: Vec::new(),
            len: 0,
        }
    }

    /// Keys waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn tick_at_or_after(&self, at: Instant) -> u64 {
        let ns = at.saturating_duration_since(self.origin).as_nanos() as u64;
        ns.div_ceil(self.tick_ns)
    }

    fn tick_of(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.origin).as_nanos() as u64 / self.tick_ns
    }

    /// The instant tick `tick` begins.
    fn instant_of(&self, tick: u64) -> Instant {
        self.origin + Duration::from_nanos(tick.saturating_mul(self.tick_ns))
    }

    /// Wakes `key` at `at` (or at the next advance, if `at` has passed).
    pub fn schedule(&mut self, at: Instant, key: u32) {
        let tick = self.tick_at_or_after(at);
        if tick < self.cursor {
            self.overdue.push(key);
        } else {
            self.slots[(tick & self.mask) as usize].push(Entry { tick, key });
        }
        self.len += 1;
    }

    /// Moves every key due by `now` into `due` (appending).
    pub fn advance(&mut self, now: Instant, due: &mut Vec<u32>) {
        let last = self.tick_of(now);
        self.len -= self.overdue.len();
        due.append(&mut self.overdue);
        if self.is_empty() {
            self.cursor = self.cursor.max(last + 1);
            return;
        }
        // Never walk more than one turn: after that every slot has been seen.
        let turn_end = self.cursor + self.mask;
        while self.cursor <= last {
            let cursor = if self.cursor > turn_end {
                last
            } else {
                self.cursor
            };
            let slot = &mut self.slots[(cursor & self.mask) as usize];
            let mut i = 0;
            while i < slot.len() {
                if slot[i].tick <= cursor {
                    due.push(slot.swap_remove(i).key);
                    self.len -= 1;
                } else {
                    i += 1;
                }
            }
            if self.cursor > turn_end {
                // Walked a whole turn: every slot has released what was due
                // by `turn_end`; sweep the rest by deadline in one pass.
                self.sweep(last, due);
                self.cursor = last + 1;
                break;
            }
            self.cursor += 1;
        }
    }

    fn sweep(&mut self, last: u64, due: &mut Vec<u32>) {
        for slot in &mut self.slots {
            let mut i = 0;
            while i < slot.len() {
                if slot[i].tick <= last {
                    due.push(slot.swap_remove(i).key);
                    self.len -= 1;
                } else {
                    i += 1;
                }
            }
        }
    }

    /// When the next tick with work begins, looking at most one turn ahead
    /// (`None`: empty). Used to sleep instead of polling.
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.is_empty() {
            return None;
        }
        if !self.overdue.is_empty() {
            return Some(self.instant_of(self.cursor.saturating_sub(1)));
        }
        let mut earliest = u64::MAX;
        for offset in 0..=self.mask {
            let tick = self.cursor + offset;
            let slot = &self.slots[(tick & self.mask) as usize];
            if let Some(t) = slot.iter().map(|e| e.tick).min() {
                earliest = earliest.min(t);
                if t <= tick {
                    break;
                }
            }
        }
        Some(self.instant_of(earliest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn fires_at_the_deadline_never_before() {
        let t0 = Instant::now();
        let mut w = TimerWheel::new(t0, MS, 8);
        w.schedule(t0 + 5 * MS, 1);
        w.schedule(t0 + Duration::from_micros(5_500), 2);
        w.schedule(t0 + 20 * MS, 3); // more than a turn away
        let mut due = Vec::new();
        w.advance(t0 + 4 * MS, &mut due);
        assert!(due.is_empty());
        w.advance(t0 + 5 * MS, &mut due);
        assert_eq!(due, [1]);
        w.advance(t0 + 6 * MS, &mut due);
        assert_eq!(due, [1, 2]);
        w.advance(t0 + 19 * MS, &mut due);
        assert_eq!(due, [1, 2]);
        assert_eq!(w.next_deadline(), Some(t0 + 20 * MS));
        w.advance(t0 + 20 * MS, &mut due);
        assert_eq!(due, [1, 2, 3]);
        assert!(w.is_empty() && w.next_deadline().is_none());
    }

    #[test]
    fn a_past_deadline_fires_on_the_next_advance() {
        let t0 = Instant::now();
        let mut w = TimerWheel::new(t0, MS, 16);
        let mut due = Vec::new();
        w.advance(t0 + 100 * MS, &mut due);
        w.schedule(t0, 7);
        w.advance(t0 + 100 * MS, &mut due);
        assert_eq!(due, [7]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every key fires exactly once, at or after its deadline and no
        /// later than the first advance past it, however the advances fall.
        #[test]
        fn every_key_fires_once_on_time(
            deadlines in proptest::collection::vec(0u64..5_000, 1..200),
            steps in proptest::collection::vec(1u64..900, 1..60),
            slots in 2usize..64,
        ) {
            let t0 = Instant::now();
            let mut w = TimerWheel::new(t0, MS, slots);
            for (k, d) in deadlines.iter().enumerate() {
                w.schedule(t0 + Duration::from_micros(*d * 1_000 + 300), k as u32);
            }
            let mut fired = vec![None; deadlines.len()];
            let mut now_ms = 0;
            let mut due = Vec::new();
            for s in steps.iter().cycle() {
                let before = now_ms;
                now_ms += s;
                due.clear();
                w.advance(t0 + Duration::from_millis(now_ms), &mut due);
                for &k in &due {
                    prop_assert!(fired[k as usize].is_none(), "fired twice");
                    let deadline_ms = deadlines[k as usize] + 1; // 300 us rounds up
                    prop_assert!(deadline_ms <= now_ms, "early: {} at {}", deadline_ms, now_ms);
                    prop_assert!(deadline_ms > before, "late: {} by {}", deadline_ms, before);
                    fired[k as usize] = Some(now_ms);
                }
                if w.is_empty() {
                    break;
                }
            }
            prop_assert!(fired.iter().all(Option::is_some));
        }
    }
}
