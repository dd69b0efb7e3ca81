//! Which worker a new match goes to.
//!
//! [`Placement::Spread`] (the default) gives a new match to the worker with
//! the fewest matches. [`Placement::Pack`] fills the first worker with room until
//! its measured busy share would pass `pack_until`, then the next: at low and
//! middling load the matches share few threads, which wake less often, and
//! the other cores stay idle (for other processes, or asleep). The price is
//! tick-time variance: a tick drains its worker's socket for every match on
//! it. On the demo (docs/PERFORMANCE.md) packing measured level within the
//! host's noise in games per core and 15% worse in p99 tick time. A
//! worker's share is what its thread took of a core over the last second
//! (its own CPU clock, so everything it does counts), and a match's cost is
//! that share divided by the matches it hosted meanwhile. Until any worker
//! has measured one, a match is assumed to cost [`UNMEASURED_MATCH_SHARE`].
//! When every worker would pass the limit, the match goes to the worker with
//! the fewest matches.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How new matches are spread over the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// The worker with the fewest matches.
    #[default]
    Spread,
    /// The first worker with room until it is `pack_until` busy, then the next.
    Pack,
}

impl std::str::FromStr for Placement {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pack" => Ok(Self::Pack),
            "spread" => Ok(Self::Spread),
            other => Err(format!("unknown placement {other:?} (pack or spread)")),
        }
    }
}

/// The share of a core a match is assumed to take before any worker has
/// measured one: about twice a 5v5 match at 128 Hz on a 2-core VM.
pub const UNMEASURED_MATCH_SHARE: f64 = 0.05;

/// What a worker publishes about its load; read without asking it.
#[derive(Debug, Default)]
pub(crate) struct WorkerLoad {
    /// Matches hosted now.
    pub matches: AtomicUsize,
    /// Thousandths of a core the worker's thread used over the last second.
    pub busy_permille: AtomicU32,
    /// Matches hosted at the end of that second.
    pub measured_matches: AtomicUsize,
    /// Bumped by the worker's own loop when it starts and once a second
    /// after: a worker whose count stands still is hung (the Agones health
    /// pings follow it, `crate::agones`).
    pub beats: AtomicU64,
    /// Set when the worker has drained and left its loop (its beats stop
    /// without it being hung).
    pub stopped: AtomicBool,
    /// Passes of the worker's loop (each follows a wake-up): an idle worker's
    /// stands still between commands.
    pub wakeups: AtomicU64,
}

/// One worker's load as placement sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LoadView {
    pub matches: usize,
    pub max_matches: usize,
    /// Share of a core, 0..=1 (more on a clock that runs fast).
    pub busy: f64,
    pub measured_matches: usize,
}

impl LoadView {
    pub(crate) fn of(load: &WorkerLoad, max_matches: usize) -> Self {
        Self {
            matches: load.matches.load(Ordering::Relaxed),
            max_matches,
            busy: f64::from(load.busy_permille.load(Ordering::Relaxed)) / 1000.0,
            measured_matches: load.measured_matches.load(Ordering::Relaxed),
        }
    }

    fn has_room(&self) -> bool {
        self.matches < self.max_matches
    }

    /// The measured share of a core per match, if this worker has one.
    fn match_share(&self) -> Option<f64> {
        (self.measured_matches > 0).then(|| self.busy / self.measured_matches as f64)
    }
}

/// The worker for a new match, or `None` when every worker is full.
pub(crate) fn choose(loads: &[LoadView], placement: Placement, pack_until: f64) -> Option<usize> {
    let fewest = || {
        loads
            .iter()
            .enumerate()
            .filter(|(_, w)| w.has_room())
            .min_by_key(|(_, w)| w.matches)
            .map(|(i, _)| i)
    };
    if placement == Placement::Spread {
        return fewest();
    }
    // A match's cost: the worker's own measure, else the host's mean, else
    // the assumption.
    let (busy, measured) = loads
        .iter()
        .filter(|w| w.measured_matches > 0)
        .fold((0.0, 0), |(b, n), w| (b + w.busy, n + w.measured_matches));
    let host_share = if measured > 0 {
        busy / measured as f64
    } else {
        UNMEASURED_MATCH_SHARE
    };
    loads
        .iter()
        .position(|w| {
            let share = w.match_share().unwrap_or(host_share);
            w.has_room() && share * (w.matches + 1) as f64 <= pack_until
        })
        .or_else(fewest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(max_matches: usize) -> LoadView {
        LoadView {
            matches: 0,
            max_matches,
            busy: 0.0,
            measured_matches: 0,
        }
    }

    fn measured(matches: usize, busy: f64) -> LoadView {
        LoadView {
            matches,
            max_matches: 64,
            busy,
            measured_matches: matches,
        }
    }

    /// Places `n` matches one after another on a host nobody has measured.
    fn burst(n: usize, workers: usize, placement: Placement) -> Vec<usize> {
        let mut loads = vec![idle(64); workers];
        (0..n)
            .map(|_| {
                let i = choose(&loads, placement, 0.5).unwrap();
                loads[i].matches += 1;
                i
            })
            .collect()
    }

    #[test]
    fn packing_fills_the_first_worker_up_to_the_assumed_cost() {
        // 0.05 per match: ten fit under 0.5, the eleventh goes to the next.
        let placed = burst(12, 2, Placement::Pack);
        assert_eq!(placed, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    }

    #[test]
    fn placements_parse_by_name() {
        assert_eq!("pack".parse(), Ok(Placement::Pack));
        assert_eq!("spread".parse(), Ok(Placement::Spread));
        let err = "packed".parse::<Placement>().unwrap_err();
        assert!(err.contains("pack or spread"), "{err}");
    }

    #[test]
    fn spreading_alternates() {
        assert_eq!(burst(4, 2, Placement::Spread), [0, 1, 0, 1]);
    }

    #[test]
    fn a_measured_cost_replaces_the_assumption() {
        // Worker 0: 4 matches took 0.4 of a core, so a fifth would pass 0.45.
        let loads = [measured(4, 0.4), idle(64)];
        assert_eq!(choose(&loads, Placement::Pack, 0.45), Some(1));
        assert_eq!(choose(&loads, Placement::Pack, 0.5), Some(0));
        // An unmeasured worker borrows the host's measure: 0.1 per match,
        // so worker 1 takes four before passing 0.45.
        let loads = [measured(4, 0.4), idle(64)];
        let mut loads = loads.to_vec();
        let mut placed = Vec::new();
        for _ in 0..6 {
            let i = choose(&loads, Placement::Pack, 0.45).unwrap();
            loads[i].matches += 1;
            placed.push(i);
        }
        assert_eq!(placed[..4], [1, 1, 1, 1]);
    }

    #[test]
    fn when_every_worker_would_pass_the_limit_the_fewest_gets_it() {
        let loads = [measured(6, 0.9), measured(5, 0.8)];
        assert_eq!(choose(&loads, Placement::Pack, 0.5), Some(1));
    }

    #[test]
    fn full_workers_are_skipped_and_a_full_host_has_none() {
        let full = LoadView {
            matches: 2,
            max_matches: 2,
            busy: 0.0,
            measured_matches: 0,
        };
        assert_eq!(choose(&[full, idle(2)], Placement::Pack, 0.5), Some(1));
        assert_eq!(choose(&[full, idle(2)], Placement::Spread, 0.5), Some(1));
        assert_eq!(choose(&[full, full], Placement::Pack, 0.5), None);
        assert_eq!(choose(&[full, full], Placement::Spread, 0.5), None);
    }
}
