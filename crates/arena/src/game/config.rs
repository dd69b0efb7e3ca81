//! [`ArenaConfig`]: the rules of one arena match (round lengths, economy,
//! fog of war), with defaults and validation that names the field at fault.

use serde::Deserialize;

use hightick_proto::ProtoError;

use crate::MapError;

/// Why an arena could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The map failed to load.
    #[error(transparent)]
    Map(#[from] MapError),
    /// A config field is out of range.
    #[error("arena config: {field} {reason}")]
    Config {
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The config file does not parse.
    #[error("arena config: {0}")]
    ConfigParse(String),
    /// The engine refused the match set-up.
    #[error(transparent)]
    Engine(#[from] hightick_engine::EngineError),
    /// The wire codec could not be built.
    #[error("arena wire codec: {0}")]
    Codec(#[from] ProtoError),
}

/// The rules of an arena match. Durations are in ticks of the match's rate.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArenaConfig {
    /// Built-in map name (`dust_corners`, `plaza`).
    pub map: String,
    /// Rounds a team must win to win the match (first to N).
    pub rounds_to_win: u16,
    /// Ticks of the buy phase (players fenced to their buy zone).
    pub buy_ticks: u32,
    /// Ticks of the combat phase; when it runs out the defenders win.
    pub combat_ticks: u32,
    /// Ticks between a round's end and the next buy phase.
    pub round_end_ticks: u32,
    /// Money every player starts the match with.
    pub start_money: u32,
    /// Money for killing an enemy.
    pub kill_reward: u32,
    /// Money each player of the round's winners gets.
    pub win_reward: u32,
    /// Money each player of the round's losers gets.
    pub loss_reward: u32,
    /// Most money a player may hold.
    pub max_money: u32,
    /// Fog-of-war reveal margin around a target's body, metres.
    pub reveal_margin: f32,
    /// Hit points at spawn.
    pub max_health: u8,
    /// Each viewer's fog of war is fully re-evaluated every this many
    /// ticks, viewers staggered ([`FogParams::interval`](crate::FogParams));
    /// cached answers in between are reused only when provably still right.
    pub fow_interval_ticks: u32,
}

impl Default for ArenaConfig {
    fn default() -> Self {
        Self {
            map: "dust_corners".to_owned(),
            rounds_to_win: 3,
            buy_ticks: 128 * 3,
            combat_ticks: 128 * 60,
            round_end_ticks: 128 * 2,
            start_money: 800,
            kill_reward: 300,
            win_reward: 3250,
            loss_reward: 1900,
            max_money: 16_000,
            reveal_margin: 0.3,
            max_health: 100,
            fow_interval_ticks: 4,
        }
    }
}

fn check(ok: bool, field: &'static str, reason: &'static str) -> Result<(), SetupError> {
    if ok {
        Ok(())
    } else {
        Err(SetupError::Config { field, reason })
    }
}

impl ArenaConfig {
    /// Checks every field; the error names the first field at fault.
    pub fn validate(&self) -> Result<(), SetupError> {
        check(
            self.rounds_to_win >= 1,
            "rounds_to_win",
            "must be at least 1",
        )?;
        check(self.buy_ticks >= 1, "buy_ticks", "must be at least 1")?;
        check(self.combat_ticks >= 1, "combat_ticks", "must be at least 1")?;
        check(
            self.round_end_ticks >= 1,
            "round_end_ticks",
            "must be at least 1",
        )?;
        check(
            self.max_money <= crate::event::MAX_MONEY,
            "max_money",
            "must fit the wire (at most 1048575)",
        )?;
        check(
            self.start_money <= self.max_money,
            "start_money",
            "must be at most max_money",
        )?;
        check(
            self.reveal_margin.is_finite() && (0.0..=5.0).contains(&self.reveal_margin),
            "reveal_margin",
            "must be 0..=5 metres",
        )?;
        check(self.max_health >= 1, "max_health", "must be at least 1")?;
        check(
            (1..=8).contains(&self.fow_interval_ticks),
            "fow_interval_ticks",
            "must be 1..=8",
        )?;
        Ok(())
    }

    /// Parses a TOML document (missing fields take defaults) and validates it.
    pub fn from_toml(text: &str) -> Result<Self, SetupError> {
        let config: Self =
            toml::from_str(text).map_err(|e| SetupError::ConfigParse(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_fields_are_named() {
        assert!(ArenaConfig::default().validate().is_ok());
        let err = ArenaConfig::from_toml("rounds_to_win = 0").unwrap_err();
        assert!(err.to_string().contains("rounds_to_win"), "{err}");
        let err = ArenaConfig::from_toml("start_money = 20000").unwrap_err();
        assert!(err.to_string().contains("start_money"), "{err}");
        assert!(ArenaConfig::from_toml("bogus = 1").is_err());
    }
}
