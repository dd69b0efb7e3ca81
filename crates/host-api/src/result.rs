//! A finished match's result: what a host writes to its results file and
//! its outbox, and posts to its gateway (`POST /v1/results`, idempotent by
//! match id). The gateway turns it into the store's row in one place.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A player's outcome in a finished match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Won.
    Win,
    /// Lost.
    Loss,
    /// Neither.
    Draw,
}

impl Outcome {
    /// Its name on the wire and in the store: `win`, `loss` or `draw`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Loss => "loss",
            Outcome::Draw => "draw",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Text that names no outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnOutcome;

impl fmt::Display for NotAnOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("expected win, loss or draw")
    }
}

impl std::error::Error for NotAnOutcome {}

impl FromStr for Outcome {
    type Err = NotAnOutcome;

    fn from_str(s: &str) -> Result<Self, NotAnOutcome> {
        match s {
            "win" => Ok(Outcome::Win),
            "loss" => Ok(Outcome::Loss),
            "draw" => Ok(Outcome::Draw),
            _ => Err(NotAnOutcome),
        }
    }
}

/// One player's line of a [`MatchResult`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PlayerResult {
    /// The account: the client id its connect token carried.
    pub account_id: u64,
    /// Team or side, as the game numbers them.
    pub team: i64,
    /// The game's score for the player.
    pub score: i64,
    /// Win, loss or draw.
    pub outcome: Outcome,
    /// Currency granted; absent: the gateway's reward policy for the outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<i64>,
    /// The game's counters for the player (`kills`, `deaths`...): in the
    /// host's results file; not posted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, i64>,
}

/// A finished (or abandoned) match. Its idempotency key is `match_id`. The
/// host's results file has every field; what it posts to the gateway
/// ([`MatchResult::for_gateway`]) leaves out what the gateway does not
/// store, so a gateway of an older release takes it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MatchResult {
    /// The gateway's match id (the idempotency key of the result).
    pub match_id: String,
    /// The mode played.
    pub mode: String,
    /// Every seated player, each at most once.
    pub players: Vec<PlayerResult>,
    /// The match ended before its result (no one connected for the host's
    /// seat timeout, or a drain ran out): every outcome is a draw and every
    /// reward defaults to 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abandoned: bool,
    /// The game (`arena`, `tag`): in the results file; not posted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub game: String,
    /// The map or preset played: in the results file; not posted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub map: String,
    /// Ticks simulated: in the results file; not posted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ticks: u32,
    /// The winning team or player as the game names it; absent: a draw or
    /// abandoned. In the results file; not posted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// The game's match-wide figures (`rounds`...): in the results file;
    /// not posted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub summary: BTreeMap<String, i64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl MatchResult {
    /// What the gateway stores of it: the id, mode, players' outcomes,
    /// scores and rewards, and whether it was abandoned.
    pub fn for_gateway(&self) -> Self {
        Self {
            match_id: self.match_id.clone(),
            mode: self.mode.clone(),
            players: self
                .players
                .iter()
                .map(|p| PlayerResult {
                    stats: BTreeMap::new(),
                    ..p.clone()
                })
                .collect(),
            abandoned: self.abandoned,
            game: String::new(),
            map: String::new(),
            ticks: 0,
            winner: None,
            summary: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> MatchResult {
        MatchResult {
            match_id: "m-1".into(),
            mode: "5v5".into(),
            players: vec![PlayerResult {
                account_id: 7,
                team: 1,
                score: 3,
                outcome: Outcome::Win,
                reward: None,
                stats: BTreeMap::from([("kills".to_owned(), 3)]),
            }],
            abandoned: false,
            game: "arena".into(),
            map: "plaza".into(),
            ticks: 900,
            winner: Some("attackers".into()),
            summary: BTreeMap::from([("rounds".to_owned(), 2)]),
        }
    }

    #[test]
    fn the_gateway_gets_the_body_it_always_took() {
        let text = serde_json::to_string(&result().for_gateway()).unwrap();
        assert_eq!(
            text,
            r#"{"match_id":"m-1","mode":"5v5","players":[{"account_id":7,"team":1,"score":3,"outcome":"win"}]}"#
        );
    }

    #[test]
    fn the_file_line_round_trips() {
        let text = serde_json::to_string(&result()).unwrap();
        let back: MatchResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back, result());
        assert!(text.contains(r#""winner":"attackers""#), "{text}");
    }

    #[test]
    fn outcomes_read_back_from_their_names() {
        for o in [Outcome::Win, Outcome::Loss, Outcome::Draw] {
            assert_eq!(o.as_str().parse::<Outcome>(), Ok(o));
        }
        assert_eq!("tie".parse::<Outcome>(), Err(NotAnOutcome));
    }
}
