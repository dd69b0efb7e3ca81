//! The matchmaking queue of a rehearsal, worked out: players arrive as the
//! rehearsal brought them (a stampede, then a trickle), log in, queue for a
//! match, play it, spend the time between matches, and queue again, until
//! the rehearsal ends. The hosts hold a fixed number of matches at once;
//! players beyond them wait in the queue for a match to end, and a seat is
//! free to the matchmaker only once the host's heartbeat says so.
//!
//! Who gets a freed seat is not the oldest ticket alone: a matchmaker pass
//! forms every match the queue holds, each anchored on the oldest ticket
//! left but filled with the tickets nearest its rating (new ones among
//! them), allocates the oldest matches first (the gateway's
//! `parallel_allocations`, 64, at once), and several gateways' passes claim
//! disjoint tickets. The model has no ratings; it works out two ends: the
//! tickets of the oldest matches alike ([`SeatOrder::Race`]: a pass with
//! room for `r` of the `n` matches allocated at once seats the share
//! `r / n` of each of their tickets; when fewer than `n` matches wait, any
//! ticket alike) and the oldest tickets first ([`SeatOrder::Oldest`]).
//! How many wait, and so the mean wait of every ticket (those still
//! waiting at the end counting their wait so far), is the same either way
//! (Little's law); the waits of the tickets answered before the end are
//! not.
//!
//! Deterministic and sans-IO: a fluid of players (shares, not dice), each
//! taking the mean of each time, and a pass every interval. Its tail is the
//! queue's alone (matches of one length make no spread of their own).

use std::collections::VecDeque;
use std::time::Duration;

use hightick_swarm::scenario::Stampede;
use hightick_swarm::scenario::arrivals::arrival_offset;
use serde::Serialize;

/// Which waiting tickets a freed seat goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatOrder {
    /// The oldest tickets first.
    Oldest,
    /// The tickets of the oldest `matches` matches formed alike (a match is
    /// filled by rating, not age).
    Race {
        /// Matches allocated at once.
        matches: u64,
    },
}

impl SeatOrder {
    /// The players a pass seating `seated` of `waiting` draws them from:
    /// the oldest that many.
    fn pool(self, waiting: f64, seated: f64, per_match: f64) -> f64 {
        match self {
            SeatOrder::Oldest => seated,
            SeatOrder::Race { matches } => waiting.min((matches as f64 * per_match).max(seated)),
        }
    }
}

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
    /// Mean wait of every ticket, seconds, a ticket still waiting at the end
    /// counting its wait so far (the same in either seat order).
    pub wait_all_mean_s: f64,
    /// Mean players waiting over the run (the same in either seat order).
    pub queued_mean: f64,
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

/// Players (a share of them) whose tickets joined the queue at one moment.
#[derive(Debug, Clone, Copy)]
struct Tickets {
    joined_s: f64,
    players: f64,
}

/// The wait at quantile `q` of `waits` (wait, players), sorted by wait.
fn quantile(waits: &[(f64, f64)], total: f64, q: f64) -> f64 {
    let mut seen = 0.0;
    for &(wait, players) in waits {
        seen += players;
        if seen >= q * total - 1e-9 {
            return wait;
        }
    }
    waits.last().map_or(0.0, |w| w.0)
}

/// Takes the times up to `t` off the front of `times` (kept in order).
fn take_due(times: &mut VecDeque<f64>, t: f64) {
    while times.front().is_some_and(|&at| at <= t + 1e-9) {
        times.pop_front();
    }
}

/// Seats `seated` players at `t`, the same share of each of the oldest
/// `pool` players of `queue` (in joining order), adding their waits to
/// `waits`; the rest stay.
fn seat(queue: &mut Vec<Tickets>, seated: f64, pool: f64, t: f64, waits: &mut Vec<(f64, f64)>) {
    let share = seated / pool.max(1e-9);
    let mut left = pool;
    for q in queue.iter_mut() {
        if left <= 1e-9 {
            break;
        }
        let in_pool = q.players.min(left);
        left -= in_pool;
        let taken = in_pool * share;
        waits.push((t - q.joined_s, taken));
        q.players -= taken;
    }
    queue.retain(|q| q.players > 1e-9);
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

    /// The queue, pass by pass, from the start to the end, freed seats
    /// going to tickets in `order`.
    pub fn run(&self, order: SeatOrder) -> QueueOutcome {
        let per_match = f64::from(self.players_per_match.max(1));
        let pass = self.pass_s.max(1e-3);
        // Tickets to come, soonest first: the first ones, and the players of
        // each match formed coming back (formed in order, so back in order).
        let mut first: VecDeque<f64> = self.first_tickets().into();
        let mut back: VecDeque<Tickets> = VecDeque::new();
        // Waiting, in joining order: a pass adds only tickets newer than
        // every one waiting.
        let mut queue: Vec<Tickets> = Vec::new();
        // Matches holding a seat as the matchmaker sees it (until their end
        // plus the lag), and as the hosts run them (until their end).
        let mut held: VecDeque<f64> = VecDeque::new();
        let mut running: VecDeque<f64> = VecDeque::new();
        let mut waits: Vec<(f64, f64)> = Vec::new();
        let mut out = QueueOutcome::default();
        let mut n = 0u64;
        loop {
            let t = n as f64 * pass;
            if t > self.run_s + 1e-9 {
                break;
            }
            n += 1;
            loop {
                let next_first = first.front().copied().filter(|&at| at <= t + 1e-9);
                let next_back = back.front().copied().filter(|b| b.joined_s <= t + 1e-9);
                match (next_first, next_back) {
                    (Some(at), b) if b.is_none_or(|b| at <= b.joined_s) => {
                        first.pop_front();
                        queue.push(Tickets {
                            joined_s: at,
                            players: 1.0,
                        });
                    }
                    (_, Some(b)) => {
                        back.pop_front();
                        queue.push(b);
                    }
                    _ => break,
                }
            }
            take_due(&mut held, t);
            take_due(&mut running, t);
            let waiting: f64 = queue.iter().map(|q| q.players).sum();
            let wanted = (waiting / per_match + 1e-9).floor();
            let room = self
                .matches_at_once
                .map_or(wanted, |c| c.saturating_sub(held.len() as u64) as f64);
            if wanted > room {
                out.capacity_bound = true;
            }
            let formed = wanted.min(room);
            if formed >= 1.0 {
                let seated = formed * per_match;
                let pool = order.pool(waiting, seated, per_match);
                seat(&mut queue, seated, pool, t, &mut waits);
                let end = t + self.match_s;
                for _ in 0..formed as u64 {
                    held.push_back(end + self.seat_free_lag_s);
                    running.push_back(end);
                }
                back.push_back(Tickets {
                    joined_s: end + self.between_matches_s,
                    players: seated,
                });
            }
            out.matches_running_peak = out.matches_running_peak.max(running.len() as u64);
        }
        let still: f64 = queue.iter().map(|q| q.players).sum();
        let answered: f64 = waits.iter().map(|w| w.1).sum();
        let waited = waits.iter().map(|(w, p)| w * p).sum::<f64>()
            + queue
                .iter()
                .map(|q| (self.run_s - q.joined_s).max(0.0) * q.players)
                .sum::<f64>();
        out.waiting_at_end = still.round() as u64;
        out.tickets_answered = answered.round() as u64;
        if answered + still > 0.0 {
            out.wait_all_mean_s = waited / (answered + still);
        }
        out.queued_mean = waited / self.run_s.max(1e-9);
        if answered > 0.0 {
            out.wait_mean_s = waits.iter().map(|(w, p)| w * p).sum::<f64>() / answered;
        }
        waits.sort_by(|a, b| a.0.total_cmp(&b.0));
        out.wait_p50_s = quantile(&waits, answered, 0.5);
        out.wait_p99_s = quantile(&waits, answered, 0.99);
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
        for order in [SeatOrder::Oldest, SeatOrder::Race { matches: 64 }] {
            let out = model(None).run(order);
            assert!(!out.capacity_bound);
            assert_eq!(out.wait_p99_s, 0.0, "all arrive at a pass");
            assert_eq!(out.matches_running_peak, 10);
            // Rounds at 0, 25, 50, 75 and 100 s (the end counts): 5 x 100.
            assert_eq!(out.tickets_answered, 500);
            assert_eq!(out.waiting_at_end, 0);
            assert_eq!(out.wait_all_mean_s, 0.0);
        }
    }

    #[test]
    fn oldest_first_beyond_capacity_players_wait_in_turn_for_matches_to_end() {
        let out = model(Some(2)).run(SeatOrder::Oldest);
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
        // Back at 45, 65 and 85 s, still waiting at 100 s: 55, 35 and 15 s.
        assert_eq!(out.waiting_at_end, 60);
        let all = (20.0 * (200.0 + 75.0) + 20.0 * (55.0 + 35.0 + 15.0)) / 180.0;
        assert!((out.wait_all_mean_s - all).abs() < 1e-9, "{out:?}");
        assert!((out.queued_mean - all * 180.0 / 100.0).abs() < 1e-9);
        assert!((model(Some(2)).turnover_per_s().unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn seats_raced_for_answer_younger_tickets_but_as_many_wait() {
        // Fewer than 64 matches wait: every ticket races alike.
        let out = model(Some(2)).run(SeatOrder::Race { matches: 64 });
        let oldest = model(Some(2)).run(SeatOrder::Oldest);
        // 20 seats every 20 s from 0 s; the seated are back 25 s later. At
        // 0 and 20 s only the first tickets wait (0 s and 20 s); at 40 s
        // the 80 waiting are 60 first tickets and 20 back from 25 s, and a
        // quarter of each is seated (40 s and 15 s), and so on to 100 s.
        let waited = 20.0 * 0.0
            + 20.0 * 20.0
            + (15.0 * 40.0 + 5.0 * 15.0)
            + (11.25 * 60.0 + 3.75 * 35.0 + 5.0 * 15.0)
            + (8.4375 * 80.0 + 2.8125 * 55.0 + 3.75 * 35.0 + 5.0 * 15.0)
            + (6.328125 * 100.0 + 2.109375 * 75.0 + 2.8125 * 55.0 + 3.75 * 35.0 + 5.0 * 15.0);
        assert_eq!(out.tickets_answered, 120);
        assert!((out.wait_mean_s - waited / 120.0).abs() < 1e-9, "{out:?}");
        assert!(out.wait_mean_s < oldest.wait_mean_s);
        assert!(out.wait_p50_s > 15.0 && out.wait_p50_s <= 20.0, "{out:?}");
        assert_eq!(out.wait_p99_s, 100.0, "a first ticket seated at the end");
        assert_eq!(out.waiting_at_end, oldest.waiting_at_end);
        assert!((out.wait_all_mean_s - oldest.wait_all_mean_s).abs() < 1e-9);
        assert!((out.queued_mean - oldest.queued_mean).abs() < 1e-9);
    }

    #[test]
    fn a_race_of_as_many_matches_as_there_are_seats_is_oldest_first() {
        let oldest = model(Some(2)).run(SeatOrder::Oldest);
        assert_eq!(model(Some(2)).run(SeatOrder::Race { matches: 2 }), oldest);
        // 4 matches (40 players) race for 2 seats: younger tickets win some.
        let four = model(Some(2)).run(SeatOrder::Race { matches: 4 });
        assert!(four.wait_mean_s < oldest.wait_mean_s);
        assert!((four.wait_all_mean_s - oldest.wait_all_mean_s).abs() < 1e-9);
    }

    #[test]
    fn a_seat_is_free_only_once_the_matchmaker_hears_of_it() {
        let late = QueueModel {
            seat_free_lag_s: 1.0,
            ..model(Some(2))
        }
        .run(SeatOrder::Oldest);
        // Batches at 0, 21, 42, 63, 84 s; the first one back (25 s) would
        // be seated at 105 s, past the end.
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
