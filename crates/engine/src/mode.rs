//! What a host needs of a game beyond its rules: the modes it registers, the
//! settings a match of each accepts, and the result hook that turns the
//! game's own result into per-player outcomes ([`HostedGame`]).
//!
//! The host (`hightick-server`), the lab and the command line are generic
//! over a `HostedGame`; they know a mode by its [`Mode`] entry and a result
//! by its [`MatchReport`], never by the game's types.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::config::MatchConfig;
use crate::game::Game;
use crate::player::PlayerId;

pub use hightick_host_api::{Outcome, TICK_RATES_HZ};

/// One registered way to play a game: what `POST /v1/matches` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// The name create-match requests, budgets and reports use (`5v5`).
    pub name: &'static str,
    /// Players per match (the roster's most).
    pub players: u16,
    /// The mode's own simulation rate (a request may ask for another).
    pub tick_rate_hz: u32,
    /// One line for listings: map or preset and what is special.
    pub summary: &'static str,
}

impl Mode {
    /// A mode: its name, players per match, tick rate and listing line.
    pub const fn new(
        name: &'static str,
        players: u16,
        tick_rate_hz: u32,
        summary: &'static str,
    ) -> Self {
        Self {
            name,
            players,
            tick_rate_hz,
            summary,
        }
    }
}

/// One player's line of a [`MatchReport`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerReport {
    /// The player's slot (the host maps it to the client, and the gateway
    /// the client to an account).
    pub player: PlayerId,
    /// The player's team (0 when the game has none).
    pub team: u8,
    /// Win, loss or draw.
    pub outcome: Outcome,
    /// The game's score for the player (ratings and rewards read the
    /// outcome; the score is for history and leaderboards).
    pub score: i64,
    /// Named counters (`kills`, `laps`...), for history and reports.
    pub stats: Vec<(&'static str, i64)>,
}

/// A finished match as the game reports it: one line per player, the shape
/// the gateway's `POST /v1/results` takes (with account ids filled in by
/// whoever knows them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatchReport {
    /// The winning team or player, named by the game (`attackers`), or
    /// `None` for a draw.
    pub winner: Option<String>,
    /// Named match-wide figures (`rounds`, `score_attackers`...).
    pub summary: Vec<(&'static str, i64)>,
    /// Every player the game knows of, in slot order.
    pub players: Vec<PlayerReport>,
}

/// Where a running match is, for `GET /v1/matches`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatchStatus {
    /// The game's phase (`buy`, `combat`, `racing`...).
    pub phase: &'static str,
    /// Round, lap or wave number (0 when the game has none).
    pub round: u32,
    /// Scores per team or per player, as the game counts them.
    pub score: Vec<i64>,
}

impl MatchStatus {
    /// A match without rounds in `phase`, with these scores (by team or
    /// player slot).
    pub fn scored<S: Copy + Into<i64>>(phase: &'static str, scores: &[S]) -> Self {
        Self {
            phase,
            round: 0,
            score: scores.iter().map(|&s| s.into()).collect(),
        }
    }
}

/// The names of `modes`, comma-separated: what an error naming an unknown
/// mode lists.
pub fn names(modes: &[Mode]) -> String {
    let names: Vec<&str> = modes.iter().map(|m| m.name).collect();
    names.join(", ")
}

/// A game the host can serve: its modes, the settings a match of each takes
/// and how a match is made of them, and the result hook.
///
/// A game registers its modes as a constant table, [`HostedGame::MODES`]:
/// ```
/// # use hightick_engine::mode::Mode;
/// const MODES: &[Mode] = &[
///     Mode::new("duel", 2, 64, "1v1 on the small map"),
///     Mode::new("ffa", 12, 64, "free for all"),
/// ];
/// assert_eq!(MODES.iter().find(|m| m.name == "ffa").map(|m| m.players), Some(12));
/// ```
pub trait HostedGame: Game + Send + Debug {
    /// The game's name in reports and result lines (`arena`, `tag`).
    const NAME: &'static str;

    /// What create-match accepts for this game beyond mode, roster, seed
    /// and tick rate: overrides of the mode's own settings (a map, round
    /// lengths...). `Default` overrides nothing. Unknown fields should be
    /// refused (`#[serde(deny_unknown_fields)]`), so a typo is an error
    /// naming it.
    type Settings: Serialize + DeserializeOwned + Default + Clone + Debug + Send + Sync + 'static;

    /// Every mode, in the order listings show them; the first is the
    /// default.
    const MODES: &'static [Mode];

    /// The mode called `name`.
    fn mode(name: &str) -> Option<&'static Mode> {
        Self::MODES.iter().find(|m| m.name == name)
    }

    /// A match of `mode` with `settings` applied, simulated at
    /// `tick_rate_hz` (the mode's own or another the request asked for),
    /// seeded with `seed`: the engine's sizing and the game. A setting out
    /// of range is an error naming it.
    fn create(
        mode: &Mode,
        settings: &Self::Settings,
        tick_rate_hz: u32,
        seed: u64,
    ) -> Result<(MatchConfig, Self), String>;

    /// Settings for short matches of `mode` (a minute or two, so a few
    /// minutes of load finish many), for `hightick stack`'s default rules,
    /// demos and tests. Default: the mode's own rules.
    fn short_settings(mode: &Mode) -> Self::Settings {
        let _ = mode;
        Self::Settings::default()
    }

    /// The map or preset a match of `mode` with `settings` plays on, for
    /// listings (`dust_corners`).
    fn map_name(mode: &Mode, settings: &Self::Settings) -> String {
        let _ = settings;
        mode.name.to_owned()
    }

    /// Where the match is, for `GET /v1/matches`.
    fn status(&self) -> MatchStatus {
        MatchStatus::default()
    }

    /// The result hook: the game's result as per-player outcomes, scores
    /// and stats. `players` are the seated slots. `result` is `None` for a
    /// match closed before it finished (a drain timed out): the report then
    /// has no winner and every outcome is a draw, with the stats so far.
    /// Default: [`MatchReport::most_points_wins`] over the per-slot scores
    /// of [`status`](Self::status).
    fn report(&self, result: Option<&Self::MatchResult>, players: &[PlayerId]) -> MatchReport {
        MatchReport::most_points_wins(&self.status().score, result.is_some(), players)
    }
}

impl MatchReport {
    /// A free-for-all's report: `scores` are by player slot (a missing one
    /// is 0). A `finished` match is won by the most points (ties share the
    /// win) and lost by the rest; an unfinished one is a draw for all.
    pub fn most_points_wins(scores: &[i64], finished: bool, players: &[PlayerId]) -> Self {
        let score = |p: PlayerId| scores.get(usize::from(p.0)).copied().unwrap_or(0);
        let best = players.iter().map(|&p| score(p)).max();
        let players = players
            .iter()
            .map(|&p| PlayerReport {
                player: p,
                team: 0,
                outcome: match best {
                    Some(b) if finished && score(p) == b => Outcome::Win,
                    _ if finished => Outcome::Loss,
                    _ => Outcome::Draw,
                },
                score: score(p),
                stats: Vec::new(),
            })
            .collect();
        Self {
            winner: None,
            summary: Vec::new(),
            players,
        }
    }

    /// A race's (or a last-one-standing game's) report: `order` is the
    /// finishing order, first place first (`None`: the match was closed
    /// before it finished, a draw for all). The first wins and is named
    /// the winner (`player N`), the rest lose; each scores `first_points`
    /// less one per place behind (at least 0) and has its place as the stat
    /// `place` (1 = won; 0 = not placed).
    pub fn by_place(order: Option<&[PlayerId]>, players: &[PlayerId], first_points: i64) -> Self {
        let place = |p: PlayerId| order.and_then(|o| o.iter().position(|&q| q == p));
        let players = players
            .iter()
            .map(|&p| PlayerReport {
                player: p,
                team: 0,
                outcome: match (order, place(p)) {
                    (None, _) => Outcome::Draw,
                    (Some(_), Some(0)) => Outcome::Win,
                    (Some(_), _) => Outcome::Loss,
                },
                score: place(p).map_or(0, |i| (first_points - i as i64).max(0)),
                stats: vec![("place", place(p).map_or(0, |i| i as i64 + 1))],
            })
            .collect();
        Self {
            winner: order
                .and_then(|o| o.first())
                .map(|p| format!("player {}", p.0)),
            summary: Vec::new(),
            players,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_points_wins_shares_ties_and_draws_an_unfinished_match() {
        let players = [PlayerId(0), PlayerId(1), PlayerId(2), PlayerId(5)];
        let scores = [3, 7, 7];
        let finished = MatchReport::most_points_wins(&scores, true, &players);
        let outcomes: Vec<_> = finished.players.iter().map(|p| p.outcome).collect();
        assert_eq!(
            outcomes,
            [Outcome::Loss, Outcome::Win, Outcome::Win, Outcome::Loss]
        );
        // Slot 5 has no score: 0.
        assert_eq!(finished.players[3].score, 0);
        let cut_short = MatchReport::most_points_wins(&scores, false, &players);
        assert!(cut_short.players.iter().all(|p| p.outcome == Outcome::Draw));
        assert_eq!(cut_short.players[1].score, 7);
    }

    #[test]
    fn by_place_wins_the_first_and_scores_down_the_order() {
        let players = [PlayerId(0), PlayerId(1), PlayerId(2)];
        let order = [PlayerId(2), PlayerId(0)];
        let report = MatchReport::by_place(Some(&order), &players, 25);
        assert_eq!(report.winner.as_deref(), Some("player 2"));
        let lines: Vec<_> = report
            .players
            .iter()
            .map(|p| (p.outcome, p.score, p.stats.clone()))
            .collect();
        assert_eq!(
            lines,
            [
                (Outcome::Loss, 24, vec![("place", 2)]),
                (Outcome::Loss, 0, vec![("place", 0)]),
                (Outcome::Win, 25, vec![("place", 1)]),
            ]
        );
        let cut_short = MatchReport::by_place(None, &players, 25);
        assert!(cut_short.winner.is_none());
        assert!(cut_short.players.iter().all(|p| p.outcome == Outcome::Draw));
    }
}
