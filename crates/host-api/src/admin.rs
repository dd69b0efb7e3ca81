//! The host's admin API: what creates a match (`POST /v1/matches`) and how
//! the host lists one (`GET /v1/matches`, and the create's answer).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// Rates a match may run at, in Hz (a host refuses others).
pub const TICK_RATES_HZ: std::ops::RangeInclusive<u32> = 1..=256;

/// `POST /v1/matches` body: the host's fields, and the game's own settings
/// beside them (`map`, `rounds_to_win`... for the arena), which the game
/// reads and checks (an unknown field is refused by name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMatch {
    /// One of the game's modes (`5v5`, `plaza100`... for the arena).
    pub mode: String,
    /// The client ids (from their connect tokens) of the players, in seat order.
    pub roster: Vec<u64>,
    /// The match's id everywhere (its results, its listing): the gateway's
    /// allocation id. 1 to 64 of `A-Z a-z 0-9 . _ -`; default: one the host
    /// mints, unique across hosts and restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
    /// Seed of the match's randomness (default: drawn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Simulation rate in Hz (default: the mode's), 1 to 256. The match's
    /// tick period, phase stagger, late-tick accounting and its tick-counted
    /// rules follow it; its per-tick budgets stay the mode's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_rate_hz: Option<u32>,
    /// The game's settings for this match (every other field of the body).
    #[serde(flatten)]
    pub settings: serde_json::Map<String, serde_json::Value>,
}

impl CreateMatch {
    /// A request for `mode` with `roster` and every option at its default.
    pub fn new(mode: &str, roster: Vec<u64>) -> Self {
        Self {
            mode: mode.to_owned(),
            roster,
            match_id: None,
            seed: None,
            tick_rate_hz: None,
            settings: serde_json::Map::new(),
        }
    }

    /// Sets one of the game's settings (`map`, `rounds_to_win`...).
    pub fn with(mut self, setting: &str, value: impl Into<serde_json::Value>) -> Self {
        self.settings.insert(setting.to_owned(), value.into());
        self
    }
}

/// One hosted match, as `GET /v1/matches` lists it and `POST` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchInfo {
    /// The match id (the gateway's allocation id, or one the host minted).
    pub id: String,
    /// The game (`arena`, `tag`).
    #[serde(default)]
    pub game: String,
    /// The game's mode.
    pub mode: String,
    /// The map or preset it plays on.
    pub map: String,
    /// The address clients connect to (goes in their tokens).
    pub address: SocketAddr,
    /// The worker hosting it.
    pub worker: usize,
    /// Simulation rate.
    pub tick_rate_hz: u32,
    /// Current tick.
    pub tick: u32,
    /// Seats.
    pub players: usize,
    /// Seats whose client is connected now.
    pub connected: usize,
    /// The game's phase (`waiting`, `buy`, `combat`... for the arena).
    pub phase: String,
    /// Round, lap or wave number (0 when the game has none).
    pub round: u32,
    /// Scores per team or per player, as the game counts them.
    pub score: Vec<i64>,
    /// Whether a result is in.
    pub finished: bool,
    /// Input commands stored for simulation, all seats.
    pub inputs_accepted: u64,
    /// Input commands that arrived after their tick was simulated.
    pub inputs_late: u64,
    /// Input commands too far ahead of the match.
    pub inputs_too_early: u64,
    /// Seat-ticks simulated without a fresh input (the last one repeated).
    pub inputs_missing: u64,
    /// How long after its deadline a tick started, on average, microseconds
    /// (waking late, and waiting for the matches ahead of it in its phase
    /// group).
    #[serde(default)]
    pub start_lag_mean_us: f64,
}

impl MatchInfo {
    /// The listing of a match that is only known by its id and address:
    /// every other field at its zero value (what a stand-in host answers a
    /// create-match with, in tests and benches).
    pub fn new(id: &str, address: SocketAddr) -> Self {
        Self {
            id: id.to_owned(),
            game: String::new(),
            mode: String::new(),
            map: String::new(),
            address,
            worker: 0,
            tick_rate_hz: 0,
            tick: 0,
            players: 0,
            connected: 0,
            phase: String::new(),
            round: 0,
            score: Vec::new(),
            finished: false,
            inputs_accepted: 0,
            inputs_late: 0,
            inputs_too_early: 0,
            inputs_missing: 0,
            start_lag_mean_us: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_games_settings_ride_beside_the_hosts_fields() {
        let request: CreateMatch =
            serde_json::from_str(r#"{"mode":"5v5","roster":[1],"seed":3,"map":"plaza"}"#).unwrap();
        assert_eq!(request.seed, Some(3));
        assert_eq!(
            request.settings.get("map"),
            Some(&serde_json::json!("plaza"))
        );
        let again = CreateMatch::new("5v5", vec![1]).with("map", "plaza");
        let text = serde_json::to_string(&again).unwrap();
        assert_eq!(text, r#"{"mode":"5v5","roster":[1],"map":"plaza"}"#);
    }
}
