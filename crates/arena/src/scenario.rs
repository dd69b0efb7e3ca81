//! Scenario presets for benchmarks and tests, and [`BotMatch`], a match
//! whose every player is a [`Bot`].
//!
//! - `5v5`: `dust_corners`, 10 players, 128 Hz.
//! - `plaza100`: `plaza`, 100 players who all see each other, 128 Hz.
//! - `plaza100_30hz`: the same at 30 Hz.
//! - `plaza25`, `plaza50`, `plaza200`, `plaza400`: the plaza with that many
//!   players ([`Scenario::plaza`]), for how cost grows with the crowd.
//!
//! ```
//! use hightick_arena::scenario::Scenario;
//!
//! let mut m = Scenario::five_v_five().bot_match(1)?;
//! for _ in 0..16 {
//!     let report = m.step(); // bots' commands, the tick, ten snapshots
//!     assert_eq!(report.snapshots, 10);
//!     m.drain_events();
//! }
//! // After the buy phase the bots run out to fight.
//! while m.game.game().clock().phase != hightick_arena::game::Phase::Combat {
//!     m.step();
//!     m.drain_events();
//! }
//! let before = m.game.game().world_hash();
//! m.step();
//! assert_ne!(before, m.game.game().world_hash());
//! # Ok::<(), hightick_arena::game::SetupError>(())
//! ```

use hightick_engine::replication::{ChangeDetection, ChangedTicks};
use hightick_engine::runtime::TickReport;
use hightick_engine::{Match, MatchConfig, PlayerId};
use hightick_telemetry::Frame;

use crate::bot::{Bot, BotStyle};
use crate::game::{Arena, ArenaConfig, SetupError};

/// The plaza's crowd sizes and their preset names (`plaza100` is the one
/// the side-by-side figures use; the others are for how cost grows).
pub const PLAZA_SIZES: [(u16, &str); 5] = [
    (25, "plaza25"),
    (50, "plaza50"),
    (100, "plaza100"),
    (200, "plaza200"),
    (400, "plaza400"),
];

/// A preset: the map and rules, the match sizing, and how many bots play.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Preset name.
    pub name: &'static str,
    /// Players (all bots in a [`BotMatch`]).
    pub players: u16,
    /// The engine's sizing and rate.
    pub match_config: MatchConfig,
    /// The arena's rules (the map among them).
    pub arena: ArenaConfig,
    /// How the bots play.
    pub bots: BotStyle,
}

impl Scenario {
    /// Preset names, for error messages.
    pub const NAMES: &'static str =
        "5v5, plaza100, plaza100_30hz, plaza25, plaza50, plaza200, plaza400";

    /// `5v5`: dust_corners, 10 players, 128 Hz.
    pub fn five_v_five() -> Self {
        Self {
            name: "5v5",
            players: 10,
            match_config: MatchConfig {
                tick_rate_hz: 128,
                max_players: 10,
                max_entities: 32,
                ..MatchConfig::default()
            },
            arena: ArenaConfig::default(),
            bots: BotStyle::default(),
        }
    }

    /// `plaza100`: the plaza, 100 players all in view of each other, at
    /// `tick_rate_hz`. Snapshots are capped so a client gets at most about
    /// 85 KB/s at 128 Hz; the priority accumulator shares the budget.
    pub fn plaza100(tick_rate_hz: u32) -> Self {
        let mut s = Self::plaza(100, tick_rate_hz).expect("100 is a plaza size");
        if tick_rate_hz < 100 {
            s.name = "plaza100_30hz";
        }
        s
    }

    /// The plaza with `players` players (one of [`PLAZA_SIZES`]), at
    /// `tick_rate_hz`, named `plaza<players>`: the same map, rules, budget
    /// and bots as `plaza100`, for how cost grows with the crowd.
    pub fn plaza(players: u16, tick_rate_hz: u32) -> Option<Self> {
        let &(_, name) = PLAZA_SIZES.iter().find(|(n, _)| *n == players)?;
        let budget = if tick_rate_hz >= 100 { 640 } else { 896 };
        Some(Self {
            name,
            players,
            match_config: MatchConfig {
                tick_rate_hz,
                max_players: players,
                // A body and a wallet each, rounded up to a whole word of
                // interest bits.
                max_entities: (players * 2).next_multiple_of(64).max(256),
                snapshot_budget_bytes: budget,
                sent_entry_pool: u32::from(players) * 164,
                ..MatchConfig::default()
            },
            arena: ArenaConfig {
                map: "plaza".to_owned(),
                buy_ticks: tick_rate_hz * 3,
                combat_ticks: tick_rate_hz * 90,
                round_end_ticks: tick_rate_hz * 2,
                ..ArenaConfig::default()
            },
            // Crowds shoot less straight: slower to react, wider error.
            bots: BotStyle {
                reaction_ticks: tick_rate_hz / 2,
                aim_error: 0.08,
                latency_ticks: tick_rate_hz / 32,
                strafe_while_shooting: true,
            },
        })
    }

    /// The preset called `name`.
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "5v5" => Some(Self::five_v_five()),
            "plaza100" => Some(Self::plaza100(128)),
            "plaza100_30hz" => Some(Self::plaza100(30)),
            _ => PLAZA_SIZES
                .iter()
                .find(|(_, n)| *n == name)
                .and_then(|&(players, _)| Self::plaza(players, 128)),
        }
    }

    /// A match of this scenario with push replication, every player a bot.
    pub fn bot_match(&self, seed: u64) -> Result<BotMatch<ChangedTicks>, SetupError> {
        self.bot_match_with(seed, ChangedTicks)
    }

    /// A match of this scenario whose writer uses `detection`.
    pub fn bot_match_with<D: ChangeDetection>(
        &self,
        seed: u64,
        detection: D,
    ) -> Result<BotMatch<D>, SetupError> {
        let arena = Arena::new(self.arena.clone(), &self.match_config, seed)?;
        let mut game = Match::with_detection(self.match_config.clone(), arena, detection)?;
        let mut bots = Vec::with_capacity(usize::from(self.players));
        for _ in 0..self.players {
            let player = game.join()?;
            bots.push(Bot::new(player, seed, self.bots));
        }
        Ok(BotMatch { game, bots })
    }
}

/// A match played by bots, sans IO: each step gives every bot's command to
/// the match and runs one tick (snapshots included).
#[derive(Debug)]
pub struct BotMatch<D: ChangeDetection = ChangedTicks> {
    /// The match.
    pub game: Match<Arena, D>,
    bots: Vec<Bot>,
}

impl<D: ChangeDetection> BotMatch<D> {
    /// The players, one per bot.
    pub fn players(&self) -> impl Iterator<Item = PlayerId> + '_ {
        self.bots.iter().map(Bot::player)
    }

    /// Hands every bot's command for the next tick to the match.
    pub fn feed_bots(&mut self) {
        let next = self.game.tick_number() + 1;
        for bot in &mut self.bots {
            let cmd = bot.command(self.game.game(), next);
            // A refused command (a player who left) is the bot's loss only.
            let _ = self.game.receive_command(bot.player(), &cmd);
        }
    }

    /// Feeds the bots and runs one tick.
    pub fn step(&mut self) -> TickReport {
        self.feed_bots();
        self.game.tick()
    }

    /// [`step`](Self::step) with scopes recorded in `frame`.
    pub fn step_in(&mut self, frame: &Frame<'_>) -> TickReport {
        self.feed_bots();
        self.game.tick_in(frame)
    }

    /// Drops the reliable events queued for every player (a host without
    /// clients would otherwise let them pile up).
    pub fn drain_events(&mut self) {
        for i in 0..self.bots.len() {
            let p = self.bots[i].player();
            while self.game.pop_event(p).is_some() {}
        }
    }
}
