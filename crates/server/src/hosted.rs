//! [`HostedMatch`]: one match of a game on a worker — the engine's
//! [`Match`], its frame recorder, its seats (which client holds which
//! player) and its schedule — and its result, in the contract's shape
//! ([`MatchResult`]) that the results file, the outbox and the gateway take.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hightick_engine::mode::{HostedGame, Mode};
use hightick_engine::{Match, PlayerId};
use hightick_telemetry::{FrameRecorder, ModeBudget, RecorderConfig};

use crate::adapt::LinkAdapter;
use crate::phase::{Membership, next_on_grid};
use hightick_host_api::{MatchInfo, MatchResult, PlayerResult};

/// Who holds one player of a match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Seat {
    /// The client id its connect token must carry.
    pub client_id: u64,
    /// The player in the match.
    pub player: PlayerId,
    /// The net slot of its connection, while connected.
    pub slot: Option<usize>,
    /// Connections so far (a second one is a reconnect).
    pub connects: u32,
    /// Since when it has been empty (its client gone, or not yet come).
    pub empty_since: Option<Instant>,
    /// Released through the game's hook after the seat timeout (until its
    /// client comes back).
    pub released: bool,
    /// Its send share, by its link ([`crate::adapt`]); fresh on each connect.
    pub link: LinkAdapter,
}

/// What [`HostedMatch::check_seats`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SeatCheck {
    /// Seats released now.
    pub released: usize,
    /// No client connected for the seat timeout: the match is abandoned.
    pub abandoned: bool,
}

/// One match on a worker.
#[derive(Debug)]
pub(crate) struct HostedMatch<G: HostedGame> {
    pub id: String,
    pub mode: &'static str,
    pub map: String,
    pub game: Match<G>,
    /// Its frame telemetry (moved out while a tick runs).
    pub recorder: Option<FrameRecorder>,
    pub seats: Vec<Seat>,
    /// Its phase group on the worker (it shares the group's deadlines).
    pub phase: Membership,
    /// When the next tick is due.
    pub deadline: Instant,
    pub period: Duration,
    /// Ticks that started more than a period late.
    pub late_starts: u64,
    /// Ticks started, and how late after their deadlines in all.
    started: u64,
    start_lag: Duration,
    /// When the result came in.
    pub finished_at: Option<Instant>,
}

impl<G: HostedGame> HostedMatch<G> {
    /// A match of `mode` with `settings` at `rate_hz` seating `roster`, in
    /// phase group `phase`, first tick due at `first_deadline`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: String,
        mode: &'static Mode,
        settings: &G::Settings,
        rate_hz: u32,
        roster: &[u64],
        seed: u64,
        budget: ModeBudget,
        phase: Membership,
        first_deadline: Instant,
    ) -> Result<Self, String> {
        let (config, state) = G::create(mode, settings, rate_hz, seed)?;
        let mut game = Match::new(config, state).map_err(|e| e.to_string())?;
        let mut seats = Vec::with_capacity(roster.len());
        for &client_id in roster {
            let player = game.join().map_err(|e| e.to_string())?;
            // Nobody is connected yet: the first connect is a reconnect
            // (a full state, the game's introductions).
            game.link_lost(player).map_err(|e| e.to_string())?;
            seats.push(Seat {
                client_id,
                player,
                slot: None,
                connects: 0,
                empty_since: Some(first_deadline),
                released: false,
                link: LinkAdapter::default(),
            });
        }
        let rate = game.config().tick_rate_hz;
        let recorder = FrameRecorder::new(
            RecorderConfig {
                tick_rate_hz: f64::from(rate),
                ..RecorderConfig::default()
            },
            budget,
        )
        .map_err(|e| e.to_string())?;
        Ok(Self {
            id,
            mode: mode.name,
            map: G::map_name(mode, settings),
            game,
            recorder: Some(recorder),
            seats,
            phase,
            deadline: first_deadline,
            period: crate::tick_rate::period(rate),
            late_starts: 0,
            started: 0,
            start_lag: Duration::ZERO,
            finished_at: None,
        })
    }

    /// Seats whose client is connected.
    pub(crate) fn connected(&self) -> usize {
        self.seats.iter().filter(|s| s.slot.is_some()).count()
    }

    /// The client of the seat holding `player` connected on net slot
    /// `slot`: a full state and the game's reconnect hook
    /// follow (whether first connect or a comeback, and after a release:
    /// the game hands the player back).
    pub(crate) fn seat_connected(&mut self, player: PlayerId, slot: usize) -> bool {
        let Some(seat) = self.seats.iter_mut().find(|s| s.player == player) else {
            return false;
        };
        seat.slot = Some(slot);
        seat.connects += 1;
        seat.empty_since = None;
        seat.released = false;
        seat.link = LinkAdapter::default();
        let full = self.game.config().snapshot_budget_bytes;
        let _ = self.game.set_snapshot_budget(player, full);
        let _ = self.game.reconnect(player);
        true
    }

    /// The connection on net slot `slot` of the seat holding `player` is
    /// gone (a replaced connection's seat already holds the new slot and
    /// stays as it is).
    pub(crate) fn seat_lost(&mut self, player: PlayerId, slot: usize, now: Instant) {
        let Some(seat) = self.seats.iter_mut().find(|s| s.player == player) else {
            return;
        };
        if seat.slot != Some(slot) {
            return;
        }
        seat.slot = None;
        seat.empty_since = Some(now);
        let _ = self.game.link_lost(player);
    }

    /// Releases every seat empty for `timeout` (the game's
    /// `seat_released` hook), and says whether the match is abandoned: no
    /// client connected, the last one gone (or none ever come) `timeout` ago.
    /// A finished match is left alone.
    pub(crate) fn check_seats(&mut self, now: Instant, timeout: Duration) -> SeatCheck {
        let mut check = SeatCheck::default();
        if self.finished_at.is_some() {
            return check;
        }
        let overdue = |since: Option<Instant>| {
            since.is_some_and(|at| now.saturating_duration_since(at) >= timeout)
        };
        for seat in &mut self.seats {
            if !seat.released && overdue(seat.empty_since) {
                seat.released = true;
                check.released += 1;
                let _ = self.game.release_seat(seat.player);
            }
        }
        check.abandoned = self.seats.iter().all(|s| overdue(s.empty_since));
        check
    }

    /// Moves the deadline one period on from a tick that started at `now`;
    /// a match more than four periods behind skips ahead instead of
    /// bursting ticks to catch up, to the first deadline of its phase after
    /// `now` (so it keeps sharing its group's wake-ups).
    pub(crate) fn advance_deadline(&mut self, now: Instant) {
        let lateness = now.saturating_duration_since(self.deadline);
        self.started += 1;
        self.start_lag += lateness;
        if lateness > self.period {
            self.late_starts += 1;
        }
        if lateness > self.period * 4 {
            self.deadline = next_on_grid(self.deadline, self.period, now + Duration::from_nanos(1));
        } else {
            self.deadline += self.period;
        }
    }

    /// Forgets late starts and start lag so far (a stats reset, e.g. after
    /// a warm-up).
    pub(crate) fn reset_start_counters(&mut self) {
        self.late_starts = 0;
        self.started = 0;
        self.start_lag = Duration::ZERO;
    }

    /// What `GET /v1/matches` shows of it.
    pub(crate) fn info(&self, worker: usize, address: SocketAddr) -> MatchInfo {
        let status = self.game.game().status();
        let inputs = self
            .seats
            .iter()
            .filter_map(|s| self.game.input_stats(s.player))
            .fold([0u64; 4], |a, i| {
                [
                    a[0] + i.accepted,
                    a[1] + i.late,
                    a[2] + i.too_early,
                    a[3] + i.missing,
                ]
            });
        MatchInfo {
            id: self.id.clone(),
            game: G::NAME.to_owned(),
            mode: self.mode.to_owned(),
            map: self.map.clone(),
            address,
            worker,
            tick_rate_hz: self.game.config().tick_rate_hz,
            tick: self.game.tick_number(),
            players: self.seats.len(),
            connected: self.connected(),
            phase: status.phase.to_owned(),
            round: status.round,
            score: status.score,
            finished: self.finished_at.is_some(),
            inputs_accepted: inputs[0],
            inputs_late: inputs[1],
            inputs_too_early: inputs[2],
            inputs_missing: inputs[3],
            start_lag_mean_us: if self.started == 0 {
                0.0
            } else {
                self.start_lag.as_secs_f64() * 1e6 / self.started as f64
            },
        }
    }

    /// The match's result as it stands: the game's report of its result
    /// (or of the stats so far, when abandoned: every outcome a draw), with
    /// each seat's client id as its account.
    pub(crate) fn result(&self) -> MatchResult {
        let result = self.game.result();
        let players: Vec<PlayerId> = self.seats.iter().map(|s| s.player).collect();
        let report = self.game.game().report(result.as_ref(), &players);
        let client_of = |player: PlayerId| {
            self.seats
                .iter()
                .find(|s| s.player == player)
                .map_or(0, |s| s.client_id)
        };
        let named = |pairs: Vec<(&'static str, i64)>| {
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<BTreeMap<_, _>>()
        };
        MatchResult {
            match_id: self.id.clone(),
            mode: self.mode.to_owned(),
            players: report
                .players
                .into_iter()
                .map(|p| PlayerResult {
                    account_id: client_of(p.player),
                    team: i64::from(p.team),
                    score: p.score,
                    outcome: p.outcome,
                    reward: None,
                    stats: named(p.stats),
                })
                .collect(),
            abandoned: result.is_none(),
            game: G::NAME.to_owned(),
            map: self.map.clone(),
            ticks: self.game.tick_number(),
            winner: report.winner,
            summary: named(report.summary),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_arena::game::Arena;
    use hightick_arena::hosting::ArenaSettings;

    fn mode(name: &str) -> &'static Mode {
        Arena::mode(name).unwrap()
    }

    const ALONE: Membership = Membership {
        group: 0,
        cost: Duration::from_nanos(1),
    };

    /// A match of `mode` at `rate_hz` seating `roster`, alone in its phase,
    /// first tick due at `start`.
    fn hosted(mode_name: &str, rate_hz: u32, roster: &[u64], start: Instant) -> HostedMatch<Arena> {
        HostedMatch::<Arena>::new(
            "m-1".to_owned(),
            mode(mode_name),
            &ArenaSettings::default(),
            rate_hz,
            roster,
            7,
            ModeBudget::unlimited(),
            ALONE,
            start,
        )
        .unwrap()
    }

    #[test]
    fn a_match_far_behind_skips_ahead_and_counts_the_late_start() {
        let start = Instant::now();
        let mut m = hosted("5v5", 128, &[1, 2], start);
        m.advance_deadline(start);
        assert_eq!(m.deadline, start + m.period);
        assert_eq!(m.late_starts, 0);
        let late = m.deadline + m.period * 10;
        m.advance_deadline(late);
        assert_eq!(m.late_starts, 1);
        assert_eq!(m.deadline, late + m.period);
        // On time, then ten periods late: five periods on average.
        let info = m.info(0, "127.0.0.1:1".parse().unwrap());
        assert_eq!(info.start_lag_mean_us, 5.0 * 7_812.5);
        m.reset_start_counters();
        let info = m.info(0, "127.0.0.1:1".parse().unwrap());
        assert_eq!((m.late_starts, info.start_lag_mean_us), (0, 0.0));
        // Late by a fraction of a period more: it skips to its own phase's
        // next deadline, not to now + period.
        let on_phase = m.deadline;
        let late = on_phase + m.period * 7 + m.period / 3;
        m.advance_deadline(late);
        assert_eq!(m.late_starts, 1);
        assert_eq!(m.deadline, on_phase + m.period * 8);
        assert_eq!(m.seats.len(), 2);
        assert_eq!(m.info(0, "127.0.0.1:1".parse().unwrap()).players, 2);
    }

    #[test]
    fn empty_seats_are_released_and_a_match_nobody_plays_is_abandoned() {
        let start = Instant::now();
        let timeout = Duration::from_secs(30);
        let mut m = hosted("5v5", 128, &[1, 2], start);
        let (a, b) = (m.seats[0].player, m.seats[1].player);
        assert!(m.seat_connected(a, 0));
        let check = m.check_seats(start + timeout, timeout);
        assert_eq!(
            check,
            SeatCheck {
                released: 1,
                abandoned: false
            },
            "b never came: its seat is released, a plays on"
        );
        assert!(m.seats[1].released && !m.seats[0].released);
        // a's link dies; a replaced connection (another slot) changes nothing.
        m.seat_lost(a, 5, start + timeout);
        assert_eq!(m.seats[0].slot, Some(0));
        let gone = start + timeout * 2;
        m.seat_lost(a, 0, gone);
        assert_eq!(m.check_seats(gone, timeout), SeatCheck::default());
        // b comes back after its release, then leaves again.
        assert!(m.seat_connected(b, 1));
        assert!(!m.seats[1].released);
        m.seat_lost(b, 1, gone);
        let later = gone + timeout;
        assert_eq!(
            m.check_seats(later, timeout),
            SeatCheck {
                released: 2,
                abandoned: true
            }
        );
        assert_eq!(m.check_seats(later, timeout).released, 0, "released once");
        assert!(m.result().abandoned);
        m.finished_at = Some(later);
        assert_eq!(m.check_seats(later, timeout), SeatCheck::default());
    }

    #[test]
    fn a_match_at_its_own_rate_ticks_at_its_own_period() {
        let start = Instant::now();
        let mut m = hosted("plaza100", 64, &[1], start);
        assert_eq!(m.period, Duration::from_nanos(15_625_000));
        assert_eq!(m.mode, "plaza100");
        assert_eq!(m.info(0, "127.0.0.1:1".parse().unwrap()).tick_rate_hz, 64);
        m.advance_deadline(start);
        assert_eq!(m.deadline, start + Duration::from_nanos(15_625_000));
        // Late by more than its own period (not a 128 Hz one) counts.
        m.advance_deadline(m.deadline + Duration::from_millis(10));
        assert_eq!(m.late_starts, 0);
        m.advance_deadline(m.deadline + Duration::from_millis(20));
        assert_eq!(m.late_starts, 1);
    }
}
