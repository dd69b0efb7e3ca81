//! Whether the host may tell Agones it is healthy: only when every worker's
//! own loop has moved since the last ping. Each worker bumps its beat count
//! when its loop starts and once a second after
//! (`crate::placement::WorkerLoad::beats`); a hung worker's count stands
//! still, so the pings stop and Agones marks the GameServer Unhealthy after
//! its `health.failureThreshold` missed periods. A worker that drained and
//! left its loop stops beating without being hung: it no longer counts.

/// One worker's beat count and whether it has left its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Beat {
    pub count: u64,
    pub stopped: bool,
}

/// The beat counts at the last ping. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Progress {
    at_last_ping: Vec<u64>,
}

impl Progress {
    /// No ping yet.
    pub(crate) fn new(workers: usize) -> Self {
        Self {
            at_last_ping: vec![0; workers],
        }
    }

    /// Every worker's loop has started.
    pub(crate) fn warm(beats: &[Beat]) -> bool {
        beats.iter().all(|b| b.count > 0 || b.stopped)
    }

    /// Whether a health ping is honest now: every worker still running has
    /// beaten since the last ping. When it is, the beats are taken as the
    /// new reference (the caller pings).
    pub(crate) fn ping_due(&mut self, beats: &[Beat]) -> bool {
        let moved = beats
            .iter()
            .zip(&self.at_last_ping)
            .all(|(b, &then)| b.stopped || b.count > then);
        if moved {
            for (then, b) in self.at_last_ping.iter_mut().zip(beats) {
                *then = b.count;
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beats(counts: &[u64]) -> Vec<Beat> {
        counts
            .iter()
            .map(|&count| Beat {
                count,
                stopped: false,
            })
            .collect()
    }

    #[test]
    fn warm_once_every_loop_has_started() {
        assert!(!Progress::warm(&beats(&[1, 0])));
        assert!(Progress::warm(&beats(&[1, 3])));
    }

    #[test]
    fn pings_follow_every_workers_beats() {
        let mut p = Progress::new(2);
        assert!(p.ping_due(&beats(&[1, 1])));
        // Nobody moved: no ping.
        assert!(!p.ping_due(&beats(&[1, 1])));
        assert!(p.ping_due(&beats(&[2, 2])));
    }

    #[test]
    fn one_hung_worker_stops_the_pings() {
        let mut p = Progress::new(2);
        assert!(p.ping_due(&beats(&[1, 1])));
        for second in 2..10 {
            assert!(!p.ping_due(&beats(&[second, 1])), "second {second}");
        }
        // It comes back: pings again.
        assert!(p.ping_due(&beats(&[10, 2])));
    }

    #[test]
    fn a_drained_worker_no_longer_counts() {
        let mut p = Progress::new(2);
        assert!(p.ping_due(&beats(&[1, 1])));
        let mut b = beats(&[2, 1]);
        b[1].stopped = true;
        assert!(p.ping_due(&b));
        assert!(Progress::warm(&b));
    }
}
