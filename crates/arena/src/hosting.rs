//! The arena as a host serves it ([`HostedGame`]): its modes are the
//! [`Scenario`] presets, a create-match request may override the map, the
//! rounds to win and the phase lengths ([`ArenaSettings`]), and a finished
//! match reports each player's outcome, kills and deaths.

use hightick_engine::mode::{
    HostedGame, MatchReport, MatchStatus, Mode, Outcome, PlayerReport, TICK_RATES_HZ,
};
use hightick_engine::{MatchConfig, PlayerId};
use serde::{Deserialize, Serialize};

use crate::Team;
use crate::game::{Arena, MatchRecord, Phase};
use crate::scenario::Scenario;

/// The arena's modes (the [`Scenario`] presets).
pub const MODES: &[Mode] = &[
    Mode {
        name: "5v5",
        players: 10,
        tick_rate_hz: 128,
        summary: "dust_corners, two teams of five, rounds with a buy phase",
    },
    Mode {
        name: "plaza100",
        players: 100,
        tick_rate_hz: 128,
        summary: "plaza, 100 players all in view of each other",
    },
    Mode {
        name: "plaza100_30hz",
        players: 100,
        tick_rate_hz: 30,
        summary: "plaza100 at 30 Hz",
    },
    Mode {
        name: "plaza25",
        players: 25,
        tick_rate_hz: 128,
        summary: "plaza100's map and rules with 25 players",
    },
    Mode {
        name: "plaza50",
        players: 50,
        tick_rate_hz: 128,
        summary: "plaza100's map and rules with 50 players",
    },
    Mode {
        name: "plaza200",
        players: 200,
        tick_rate_hz: 128,
        summary: "plaza100's map and rules with 200 players",
    },
    Mode {
        name: "plaza400",
        players: 400,
        tick_rate_hz: 128,
        summary: "plaza100's map and rules with 400 players",
    },
];

/// The most rounds a team may need to win: a match then plays at most
/// `2 * 500 - 1` rounds, within the round numbers events carry
/// ([`crate::event::MAX_ROUND`], 10 bits). Long enough for a soak to keep a
/// match running for hours.
pub const MAX_ROUNDS_TO_WIN: u16 = 500;

/// What a create-match request may change of an arena mode. Every field is
/// optional; unknown fields are refused by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArenaSettings {
    /// Map override (default: the preset's map).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map: Option<String>,
    /// Rounds a team must win, 1 to [`MAX_ROUNDS_TO_WIN`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds_to_win: Option<u16>,
    /// Seconds of the buy phase, 0.1 to 600.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buy_seconds: Option<f64>,
    /// Seconds of the combat phase, 1 to 3600.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub combat_seconds: Option<f64>,
}

impl ArenaSettings {
    /// The preset of `mode` with these settings, at `rate_hz`: the rate
    /// first, since the rules' seconds are converted to ticks at it.
    pub fn scenario(&self, mode: &Mode, rate_hz: u32) -> Result<Scenario, String> {
        let mut scenario = Scenario::by_name(mode.name)
            .ok_or_else(|| format!("mode: unknown `{}` (known: {})", mode.name, Scenario::NAMES))?;
        if let Some(map) = &self.map {
            scenario.arena.map = map.clone();
        }
        at_rate(&mut scenario, rate_hz)?;
        self.apply_rules(&mut scenario)?;
        Ok(scenario)
    }

    fn apply_rules(&self, scenario: &mut Scenario) -> Result<(), String> {
        let rate = f64::from(scenario.match_config.tick_rate_hz);
        let seconds = |field: &str, value: f64, low: f64, high: f64| {
            if (low..=high).contains(&value) {
                Ok((value * rate).round() as u32)
            } else {
                Err(format!("{field}: must be between {low} and {high} seconds"))
            }
        };
        if let Some(rounds) = self.rounds_to_win {
            if !(1..=MAX_ROUNDS_TO_WIN).contains(&rounds) {
                return Err(format!(
                    "rounds_to_win: must be between 1 and {MAX_ROUNDS_TO_WIN}"
                ));
            }
            scenario.arena.rounds_to_win = rounds;
        }
        if let Some(s) = self.buy_seconds {
            scenario.arena.buy_ticks = seconds("buy_seconds", s, 0.1, 600.0)?;
        }
        if let Some(s) = self.combat_seconds {
            scenario.arena.combat_ticks = seconds("combat_seconds", s, 1.0, 3600.0)?;
        }
        Ok(())
    }
}

/// `scenario` rerun at `rate_hz`: phase lengths rescaled (at least one tick
/// each) and the bots' reaction and latency with them (same seconds), the
/// name kept (and so its per-tick budgets). An error names the
/// field when the rate is out of [`TICK_RATES_HZ`].
pub fn at_rate(scenario: &mut Scenario, rate_hz: u32) -> Result<(), String> {
    if !TICK_RATES_HZ.contains(&rate_hz) {
        return Err(format!(
            "tick_rate_hz: must be between {} and {} (got {rate_hz})",
            TICK_RATES_HZ.start(),
            TICK_RATES_HZ.end()
        ));
    }
    let old = scenario.match_config.tick_rate_hz.max(1);
    if old == rate_hz {
        return Ok(());
    }
    let rescale = |ticks: u32| -> u32 {
        let scaled = u64::from(ticks) * u64::from(rate_hz) / u64::from(old);
        u32::try_from(scaled).unwrap_or(u32::MAX).max(1)
    };
    scenario.match_config.tick_rate_hz = rate_hz;
    scenario.arena.buy_ticks = rescale(scenario.arena.buy_ticks);
    scenario.arena.combat_ticks = rescale(scenario.arena.combat_ticks);
    scenario.arena.round_end_ticks = rescale(scenario.arena.round_end_ticks);
    scenario.bots.reaction_ticks = rescale(scenario.bots.reaction_ticks);
    let latency = u64::from(scenario.bots.latency_ticks) * u64::from(rate_hz) / u64::from(old);
    scenario.bots.latency_ticks = u32::try_from(latency).unwrap_or(u32::MAX);
    Ok(())
}

/// The API name of a round phase.
pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Waiting => "waiting",
        Phase::Buy => "buy",
        Phase::Combat => "combat",
        Phase::RoundEnd => "round_end",
        Phase::MatchOver => "match_over",
    }
}

impl HostedGame for Arena {
    const NAME: &'static str = "arena";
    type Settings = ArenaSettings;

    /// Two rounds to win, 5 s to buy, 30 s of combat: a match of a minute
    /// or two.
    fn short_settings(_mode: &Mode) -> ArenaSettings {
        ArenaSettings {
            rounds_to_win: Some(2),
            buy_seconds: Some(5.0),
            combat_seconds: Some(30.0),
            ..ArenaSettings::default()
        }
    }

    const MODES: &'static [Mode] = MODES;

    fn create(
        mode: &Mode,
        settings: &ArenaSettings,
        tick_rate_hz: u32,
        seed: u64,
    ) -> Result<(MatchConfig, Self), String> {
        let scenario = settings.scenario(mode, tick_rate_hz)?;
        let arena = Arena::new(scenario.arena.clone(), &scenario.match_config, seed)
            .map_err(|e| e.to_string())?;
        Ok((scenario.match_config, arena))
    }

    fn map_name(mode: &Mode, settings: &ArenaSettings) -> String {
        match &settings.map {
            Some(map) => map.clone(),
            None => Scenario::by_name(mode.name).map_or_else(String::new, |s| s.arena.map),
        }
    }

    fn status(&self) -> MatchStatus {
        let clock = self.clock();
        MatchStatus {
            phase: phase_name(clock.phase),
            round: u32::from(clock.round),
            score: clock.score.iter().map(|&s| i64::from(s)).collect(),
        }
    }

    fn report(&self, result: Option<&MatchRecord>, players: &[PlayerId]) -> MatchReport {
        let clock = self.clock();
        let winner = result.map(|r| r.winner);
        let outcome = |team: Option<Team>| match (winner, team) {
            (Some(w), Some(t)) if w == t => Outcome::Win,
            (Some(_), Some(_)) => Outcome::Loss,
            _ => Outcome::Draw,
        };
        MatchReport {
            winner: winner.map(|w| w.name().to_owned()),
            summary: vec![
                ("rounds", i64::from(clock.round)),
                ("score_attackers", i64::from(clock.score[0])),
                ("score_defenders", i64::from(clock.score[1])),
            ],
            players: players
                .iter()
                .map(|&player| {
                    let fighter = self.fighter(player);
                    let team = fighter.map(|f| f.team);
                    let kills = fighter.map_or(0, |f| i64::from(f.kills));
                    let deaths = fighter.map_or(0, |f| i64::from(f.deaths));
                    PlayerReport {
                        player,
                        team: team.map_or(0, |t| t.index() as u8),
                        outcome: outcome(team),
                        score: kills,
                        stats: vec![("kills", kills), ("deaths", deaths)],
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(name: &str) -> &'static Mode {
        Arena::mode(name).unwrap()
    }

    #[test]
    fn every_mode_is_a_preset_with_its_players_and_rate() {
        for m in MODES {
            let s = Scenario::by_name(m.name).unwrap();
            assert_eq!(
                (s.players, s.match_config.tick_rate_hz),
                (m.players, m.tick_rate_hz)
            );
        }
    }

    #[test]
    fn a_preset_at_half_rate_keeps_its_seconds_and_its_name() {
        let mut s = Scenario::plaza100(128);
        let before = s.clone();
        at_rate(&mut s, 64).unwrap();
        assert_eq!(s.name, "plaza100");
        assert_eq!(s.match_config.tick_rate_hz, 64);
        assert_eq!(s.arena.buy_ticks * 2, before.arena.buy_ticks);
        assert_eq!(s.arena.combat_ticks * 2, before.arena.combat_ticks);
        assert_eq!(s.arena.round_end_ticks * 2, before.arena.round_end_ticks);
        assert_eq!(s.bots.reaction_ticks * 2, before.bots.reaction_ticks);
        assert_eq!(s.bots.latency_ticks * 2, before.bots.latency_ticks);
        assert_eq!(s.players, before.players);
    }

    #[test]
    fn the_same_rate_changes_nothing() {
        let mut s = Scenario::five_v_five();
        at_rate(&mut s, 128).unwrap();
        assert_eq!(s, Scenario::five_v_five());
    }

    #[test]
    fn phases_keep_at_least_one_tick() {
        let mut s = Scenario::five_v_five();
        s.arena.round_end_ticks = 1;
        at_rate(&mut s, 1).unwrap();
        assert_eq!(s.arena.round_end_ticks, 1);
        assert!(s.arena.buy_ticks >= 1);
    }

    #[test]
    fn rates_out_of_range_name_the_field() {
        for bad in [0, 257, 10_000] {
            let mut s = Scenario::five_v_five();
            let e = at_rate(&mut s, bad).unwrap_err();
            assert!(e.starts_with("tick_rate_hz:"), "{e}");
            assert_eq!(s, Scenario::five_v_five());
        }
    }

    #[test]
    fn settings_override_the_preset_and_bad_ones_name_the_field() {
        let settings = ArenaSettings {
            map: Some("plaza".to_owned()),
            rounds_to_win: Some(2),
            buy_seconds: Some(1.0),
            combat_seconds: None,
        };
        let s = settings.scenario(mode("5v5"), 64).unwrap();
        assert_eq!(s.arena.map, "plaza");
        assert_eq!(s.arena.rounds_to_win, 2);
        assert_eq!(s.arena.buy_ticks, 64);
        assert_eq!(Arena::map_name(mode("5v5"), &settings), "plaza");
        assert_eq!(
            Arena::map_name(mode("5v5"), &ArenaSettings::default()),
            "dust_corners"
        );
        let bad = ArenaSettings {
            rounds_to_win: Some(MAX_ROUNDS_TO_WIN + 1),
            ..ArenaSettings::default()
        };
        assert!(
            bad.scenario(mode("5v5"), 128)
                .unwrap_err()
                .starts_with("rounds_to_win:")
        );
        let bad = ArenaSettings {
            combat_seconds: Some(0.5),
            ..ArenaSettings::default()
        };
        assert!(
            bad.scenario(mode("5v5"), 128)
                .unwrap_err()
                .starts_with("combat_seconds:")
        );
    }

    #[test]
    fn an_unfinished_match_reports_draws_with_the_stats_so_far() {
        let (config, arena) =
            Arena::create(mode("5v5"), &ArenaSettings::default(), 128, 1).unwrap();
        assert_eq!(config.max_players, 10);
        let mut m = hightick_engine::Match::new(config, arena).unwrap();
        let players: Vec<PlayerId> = (0..4).map(|_| m.join().unwrap()).collect();
        let report = m.game().report(None, &players);
        assert_eq!(report.winner, None);
        assert_eq!(report.players.len(), 4);
        assert!(report.players.iter().all(|p| p.outcome == Outcome::Draw));
        assert_eq!(report.players[0].stats, vec![("kills", 0), ("deaths", 0)]);
        // Teams alternate as players join: both are represented.
        assert!(report.players.iter().any(|p| p.team == 0));
        assert!(report.players.iter().any(|p| p.team == 1));
    }

    #[test]
    fn unknown_settings_are_refused_by_name() {
        let e = toml::from_str::<ArenaSettings>("mapp = \"plaza\"").unwrap_err();
        assert!(e.to_string().contains("mapp"), "{e}");
    }
}
