//! Round phases: buy -> combat -> round end, first to N rounds.

use hightick_engine::tick::Tick;

use crate::Team;

/// Where a match is in its round cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the first tick.
    Waiting,
    /// Players buy, fenced to their buy zones; no shot can land.
    Buy,
    /// The round is played.
    Combat,
    /// The round is decided; the next starts at the phase's end.
    RoundEnd,
    /// A team reached the rounds to win.
    MatchOver,
}

/// The round clock and the score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundClock {
    /// The current phase.
    pub phase: Phase,
    /// The tick the current phase ends at.
    pub phase_end: Tick,
    /// Round number, from 1.
    pub round: u16,
    /// Rounds won per team (index [`Team::index`]).
    pub score: [u16; 2],
    /// Winner of the last decided round.
    pub last_winner: Option<Team>,
}

impl Default for RoundClock {
    fn default() -> Self {
        Self {
            phase: Phase::Waiting,
            phase_end: 0,
            round: 0,
            score: [0; 2],
            last_winner: None,
        }
    }
}

impl RoundClock {
    /// Enters `phase` at `now` for `ticks` ticks.
    pub fn enter(&mut self, phase: Phase, now: Tick, ticks: u32) {
        self.phase = phase;
        self.phase_end = now.saturating_add(ticks);
    }

    /// Whether the current phase has run out at `now`.
    pub fn expired(&self, now: Tick) -> bool {
        now >= self.phase_end
    }

    /// Records `winner` as the round's winner; returns whether it has now won
    /// the match.
    pub fn award(&mut self, winner: Team, rounds_to_win: u16) -> bool {
        self.score[winner.index()] += 1;
        self.last_winner = Some(winner);
        self.score[winner.index()] >= rounds_to_win
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_expires_and_awards() {
        let mut c = RoundClock::default();
        c.enter(Phase::Buy, 10, 5);
        assert!(!c.expired(14));
        assert!(c.expired(15));
        assert!(!c.award(Team::Defenders, 2));
        assert!(c.award(Team::Defenders, 2));
        assert_eq!(c.score, [0, 2]);
    }
}
