//! The matchmaking queue of a rehearsal, worked out: players arrive as the
//! rehearsal brought them (a stampede, then a trickle), log in, queue for a
//! match, play it, spend the time between matches, and queue again, until
//! the rehearsal ends. The hosts hold a fixed number of matches at once;
//! players beyond them wait in the queue for a match to end, and a seat is
//! free to the matchmaker only once the host's heartbeat says so.
//!
//! Deterministic and sans-IO: every player takes the mean of each time (no
//! dice), the matchmaker runs a pass every interval and seats the oldest
//! tickets first, and a wait is counted when its ticket is answered before
//! the end (as the rehearsal counts them: a ticket still waiting at the end
//! has no wait yet). So it predicts the wait's mean and median well and its
//! tail only as far as the queue makes it (matches of one length make no
//! spread of their own).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use hightick_swarm::scenario::Stampede;
use hightick_swarm::scenario::arrivals::arrival_offset;
use serde::Serialize;

/// What the model is worked from: the rehearsal's shape, times in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueModel {
    /// Players in all.
    pub players: u64,
    /// Seconds over which they arrived.
    pub ramp_up_s: f64,
    /// Share of them in the stampede (0: even arrivals), and its seconds.
    pub stampede: Option<(f64, f64)>,
    /// Seconds from the start to the end: tickets answered later are not counted.
    pub run_s: f64,
    /// Seconds from arriving to the first ticket (the login).
    pub login_s: f64,
    /// Players per match.
    pub players_per_match: u32,
    /// Matches the hosts hold at once (`None`: as many as needed).
    pub matches_at_once: Option<u64>,
    /// Seconds a match holds its seat on a host.
    pub match_s: f64,
    /// Seconds from a match's end to its players' next tickets.
    pub between_matches_s: f64,
    /// Seconds between matchmaking passes.
    pub pass_s: f64,
    /// Seconds from a match's end until the matchmaker counts its seat free.
    pub seat_free_lag_s: f64,
}

/// What the model predicts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueueOutcome {
    /// Tickets answered before the end.
    pub tickets_answered: u64,
    /// Players still waiting for a match at the end.
    pub waiting_at_end: u64,
    /// Mean wait of the tickets answered, seconds.
    pub wait_mean_s: f64,
    /// Their median wait, seconds.
    pub wait_p50_s: f64,
    /// Their 99th percentile, seconds.
    pub wait_p99_s: f64,
    /// Most matches running at once.
    pub matches_running_peak: u64,
    /// Whether a pass ever found a match's worth of players waiting and no
    /// room on the hosts: the capacity queue was in play.
    pub capacity_bound: bool,
}

/// Nearest-rank quantile `q` of sorted `v` (0 when empty).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A time in seconds as whole microseconds (exact ordering in the heaps).
fn micros(s: f64) -> u64 {
    (s.max(0.0) * 1e6).round() as u64
}

/// Takes the heap's times up to `now` (µs), soonest first.
fn due(heap: &mut BinaryHeap<Reverse<u64>>, now: u64) -> Vec<f64> {
    let mut out = Vec::new();
    while let Some(&Reverse(at)) = heap.peek()
        && at <= now
    {
        heap.pop();
        out.push(at as f64 / 1e6);
    }
    out
}

impl QueueModel {
    /// When each player's first ticket comes, in order.
    fn first_tickets(&self) -> Vec<f64> {
        let stampede = self.stampede.map(|(share, within_s)| Stampede {
            share,
            within: Duration::from_secs_f64(within_s),
        });
        let ramp_up = Duration::from_secs_f64(self.ramp_up_s);
        (0..self.players)
            .map(|id| {
                arrival_offset(id, self.players, ramp_up, stampede.as_ref()).as_secs_f64()
                    + self.login_s
            })
            .collect()
    }

    /// The queue, pass by pass, from the start to the end.
    pub fn run(&self) -> QueueOutcome {
        let per_match = u64::from(self.players_per_match.max(1));
        let pass = self.pass_s.max(1e-3);
        // Tickets not yet in the queue, soonest first.
        let mut coming: BinaryHeap<Reverse<u64>> = self
            .first_tickets()
            .into_iter()
            .map(|t| Reverse(micros(t)))
            .collect();
        let mut queue: VecDeque<f64> = VecDeque::new();
        // Matches holding a seat as the matchmaker sees it (until their end
        // plus the lag), and as the hosts run them (until their end).
        let mut held: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
        let mut running: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
        let mut waits = Vec::new();
        let mut out = QueueOutcome::default();
        let mut n = 0u64;
        loop {
            let t = n as f64 * pass;
            if t > self.run_s {
                break;
            }
            n += 1;
            let now = micros(t);
            queue.extend(due(&mut coming, now));
            due(&mut held, now);
            due(&mut running, now);
            let wanted = queue.len() as u64 / per_match;
            let room = self
                .matches_at_once
                .map_or(wanted, |c| c.saturating_sub(held.len() as u64));
            if wanted > room {
                out.capacity_bound = true;
            }
            for _ in 0..wanted.min(room) {
                let end = t + self.match_s;
                held.push(Reverse(micros(end + self.seat_free_lag_s)));
                running.push(Reverse(micros(end)));
                for _ in 0..per_match {
                    let joined = queue.pop_front().unwrap_or(t);
                    waits.push(t - joined);
                    coming.push(Reverse(micros(end + self.between_matches_s)));
                }
            }
            out.matches_running_peak = out.matches_running_peak.max(running.len() as u64);
        }
        out.waiting_at_end = queue.len() as u64;
        out.tickets_answered = waits.len() as u64;
        if !waits.is_empty() {
            out.wait_mean_s = waits.iter().sum::<f64>() / waits.len() as f64;
        }
        waits.sort_by(f64::total_cmp);
        out.wait_p50_s = quantile(&waits, 0.5);
        out.wait_p99_s = quantile(&waits, 0.99);
        out
    }

    /// Players a second the hosts' seats turn over when full: matches at
    /// once x players per match / (match length + the seat's lag).
    pub fn turnover_per_s(&self) -> Option<f64> {
        self.matches_at_once.map(|c| {
            c as f64 * f64::from(self.players_per_match)
                / (self.match_s + self.seat_free_lag_s).max(1e-9)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 players at once, 10 a match, 20 s matches, back 5 s after, a
    /// pass every second, seats free at once.
    fn model(matches_at_once: Option<u64>) -> QueueModel {
        QueueModel {
            players: 100,
            ramp_up_s: 0.0,
            stampede: None,
            run_s: 100.0,
            login_s: 0.0,
            players_per_match: 10,
            matches_at_once,
            match_s: 20.0,
            between_matches_s: 5.0,
            pass_s: 1.0,
            seat_free_lag_s: 0.0,
        }
    }

    #[test]
    fn with_room_for_everyone_nobody_waits_past_a_pass() {
        let out = model(None).run();
        assert!(!out.capacity_bound);
        assert_eq!(out.wait_p99_s, 0.0, "all arrive at a pass");
        assert_eq!(out.matches_running_peak, 10);
        // Rounds at 0, 25, 50, 75 and 100 s (the end counts): 5 x 100.
        assert_eq!(out.tickets_answered, 500);
        assert_eq!(out.waiting_at_end, 0);
    }

    #[test]
    fn players_beyond_capacity_wait_for_matches_to_end() {
        let out = model(Some(2)).run();
        assert!(out.capacity_bound);
        assert_eq!(out.matches_running_peak, 2);
        // Two matches (20 players) every 20 s: the first five batches from
        // the stampede wait 0, 20, 40, 60 and 80 s; the first batch is back
        // at 25 s and seated at 100 s (75 s).
        assert_eq!(out.tickets_answered, 6 * 20);
        assert!(
            (out.wait_mean_s - (200.0 + 75.0) / 6.0).abs() < 1e-9,
            "{out:?}"
        );
        assert_eq!(out.wait_p50_s, 40.0);
        assert_eq!(out.wait_p99_s, 80.0);
        // Back at 45, 65 and 85 s, still waiting at 100 s.
        assert_eq!(out.waiting_at_end, 60);
        assert!((model(Some(2)).turnover_per_s().unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_seat_is_free_only_once_the_matchmaker_hears_of_it() {
        let late = QueueModel {
            seat_free_lag_s: 1.0,
            ..model(Some(2))
        }
        .run();
        // Batches at 0, 21, 42, 63, 84 s; the first one back (25 s) is
        // seated at 105 s, past the end.
        assert_eq!(late.wait_p50_s, 42.0);
        assert_eq!(late.tickets_answered, 100);
        assert!((late.wait_mean_s - 42.0).abs() < 1e-9, "{late:?}");
    }

    #[test]
    fn a_stampede_then_a_trickle_arrive_as_the_swarm_brings_them() {
        let m = QueueModel {
            ramp_up_s: 10.0,
            stampede: Some((0.5, 1.0)),
            login_s: 0.5,
            ..model(None)
        };
        let first = m.first_tickets();
        assert_eq!(first[0], 0.5);
        assert!(first[49] < 1.5, "half within the first second");
        assert!(first[99] > 9.0 && first[99] <= 10.5);
    }
}
