//! Replay protection: netcode.io's per-connection window of the last 256 packet
//! sequences.
//!
//! A packet whose sequence is older than the newest received minus the window,
//! or that is already marked received inside the window, is a replay. The
//! window is checked before decryption (cheap rejection) and advanced only after
//! the packet authenticated, so a forged sequence cannot poison it.

/// Entries in the replay window.
pub const REPLAY_WINDOW: usize = 256;

const EMPTY: u64 = u64::MAX;

/// The replay window of one receiving direction of one connection.
#[derive(Debug, Clone)]
pub struct ReplayWindow {
    most_recent: u64,
    received: [u64; REPLAY_WINDOW],
}

impl Default for ReplayWindow {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayWindow {
    /// An empty window: nothing received yet.
    pub const fn new() -> Self {
        Self {
            most_recent: 0,
            received: [EMPTY; REPLAY_WINDOW],
        }
    }

    /// Forgets everything received.
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// Whether a packet with this sequence must be refused as a replay (or as
    /// too old to tell). The sequence `u64::MAX` is never valid: senders never
    /// get there, and it is the window's empty marker.
    pub fn is_replay(&self, sequence: u64) -> bool {
        if sequence == EMPTY {
            return true;
        }
        if sequence.saturating_add(REPLAY_WINDOW as u64) <= self.most_recent {
            return true;
        }
        let entry = self.received[(sequence % REPLAY_WINDOW as u64) as usize];
        entry != EMPTY && entry >= sequence
    }

    /// Marks `sequence` received; call only after the packet authenticated.
    pub fn accept(&mut self, sequence: u64) {
        if sequence == EMPTY {
            return;
        }
        if sequence > self.most_recent {
            self.most_recent = sequence;
        }
        self.received[(sequence % REPLAY_WINDOW as u64) as usize] = sequence;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fresh_packets_pass_and_repeats_do_not() {
        let mut w = ReplayWindow::new();
        for seq in 0..1000u64 {
            assert!(!w.is_replay(seq));
            w.accept(seq);
            assert!(w.is_replay(seq));
        }
        assert!(
            w.is_replay(999 - REPLAY_WINDOW as u64),
            "older than the window"
        );
        assert!(w.is_replay(u64::MAX));
    }

    #[test]
    fn out_of_order_inside_the_window_is_accepted_once() {
        let mut w = ReplayWindow::new();
        w.accept(100);
        assert!(!w.is_replay(90));
        w.accept(90);
        assert!(w.is_replay(90));
        assert!(!w.is_replay(91));
        // An entry overwritten by a newer sequence at the same index still refuses the old one.
        w.accept(100 + REPLAY_WINDOW as u64 - 1);
        assert!(w.is_replay(99));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever the arrival order, no sequence is accepted twice.
        #[test]
        fn no_sequence_passes_twice(seqs in proptest::collection::vec(0u64..600, 1..400)) {
            let mut w = ReplayWindow::new();
            let mut seen = std::collections::HashSet::new();
            for s in seqs {
                if !w.is_replay(s) {
                    prop_assert!(seen.insert(s), "sequence {} passed twice", s);
                    w.accept(s);
                }
            }
        }
    }
}
