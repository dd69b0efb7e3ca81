//! Tag, a small custom game on hightick: copy it to start your own.
//!
//! One runner is "it" and runs a little faster; touching another runner
//! passes "it" on. A player scores a point for every tick it is not "it".
//! Each client sees the runners within 15 m and always the one who is "it"
//! (relevance: the engine replicates only what [`Game::relevance`] lets a
//! client see, with full state when a runner comes into view). A match lasts
//! a minute.
//!
//! What a game writes, all in this file:
//! - the state and rules ([`Tag`]: [`Game`] and [`ReplicationSource`]);
//! - its wire vocabulary, declared once with the engine's derives (no
//!   hand-written bit codec): the input ([`Stick`]), the reliable events
//!   ([`TagEvent`]) and a runner's replicated state ([`RunnerState`], the
//!   server's copy and the client's);
//! - what the host needs ([`HostedGame`]: modes, settings, the result hook);
//! - a bot that plays from what its client receives ([`TagBot`], [`BotGame`]).
//!
//! In return `src/main.rs` is four lines and serves, plays, load-tests and
//! sweeps it: `cargo run --release -p hightick-example-tag -- demo`.

use hightick_engine::bot::{Bot, BotGame};
use hightick_engine::input::InputSource;
use hightick_engine::mode::{HostedGame, MatchReport, MatchStatus, Mode, Outcome, PlayerReport};
use hightick_engine::replication::{ClientWorld, ReplicationSource};
use hightick_engine::tick::Tick;
use hightick_engine::world::{Archetype, GroupMask, ReplicationWorld};
use hightick_engine::{
    EntityId, FieldGroups, Game, InputPayload, InterestSet, JoinRefused, MatchConfig, PlayerId,
    ReliableEvent, Replicated, TickContext, Wire,
};
use hightick_proto::{BitWriter, InputCommand, ProtoError};
use serde::{Deserialize, Serialize};

/// The field is `-HALF_FIELD..=HALF_FIELD` centimetres on both axes.
pub const HALF_FIELD: i32 = 2_000;
const SPEED_CM_S: f32 = 500.0;
const TAG_REACH_CM: i32 = 100;
const VIEW_RADIUS_CM: i32 = 1_500;

/// The game's modes: a name, players, rate and a line for listings.
pub const MODES: &[Mode] = &[
    Mode {
        name: "tag",
        players: 6,
        tick_rate_hz: 128,
        summary: "six runners, one minute",
    },
    Mode {
        name: "tag_crowd",
        players: 24,
        tick_rate_hz: 64,
        summary: "24 runners at 64 Hz",
    },
];

/// The only archetype, with the field groups of [`RunnerState`]: a client
/// receives a group again only when it changed since the tick it
/// acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runner;

impl Archetype for Runner {
    fn wire_id(self) -> u8 {
        0
    }
    fn from_wire_id(id: u8) -> Option<Self> {
        (id == 0).then_some(Runner)
    }
    fn groups(self) -> GroupMask {
        RunnerState::GROUPS
    }
}

/// A runner's input for one tick: a stick, `-127..=127` on each axis (a
/// byte each on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, InputPayload)]
pub struct Stick {
    /// Left/right.
    pub x: i8,
    /// Back/forward.
    pub z: i8,
}

/// What the game tells its clients reliably: on the wire the variant in 2
/// bits, then its runners' ids; its kinds are `you`, `tagged` and `over`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, ReliableEvent)]
pub enum TagEvent {
    /// To one client when it (re)connects: "you are this runner".
    You {
        /// The client's own runner.
        runner: EntityId,
    },
    /// To everyone: "it" changed hands.
    Tagged {
        /// Who was "it".
        by: EntityId,
        /// Who is "it" now.
        now_it: EntityId,
    },
    /// To everyone: the match is over.
    Over,
}

/// A runner's replicated state, the server's and the client's copy alike:
/// field group 0 is the position, group 1 the "it" flag.
#[derive(Debug, Default, Clone, Copy, PartialEq, Replicated)]
#[replicated(archetype = Runner)]
pub struct RunnerState {
    /// Centimetres, x and z, on the field (12 bits each).
    #[group(0)]
    #[wire(range = -HALF_FIELD..=HALF_FIELD)]
    pub position: [i32; 2],
    /// Whether it is "it".
    #[group(1)]
    pub it: bool,
}

/// What a create-match request may change: the match's length.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagSettings {
    /// Seconds a match lasts, 1 to 3600 (default 60).
    pub seconds: Option<u32>,
}

/// The server's game state, indexed by entity (runners) or player (runner,
/// score).
#[derive(Debug, Default)]
pub struct Tag {
    runners: Vec<RunnerState>,
    runner_of: Vec<Option<EntityId>>,
    score: Vec<u32>,
    it_since: Tick,
    previous_it: Option<EntityId>,
    /// The tick the match ends on.
    end_tick: Tick,
    /// The last tick simulated.
    now: Tick,
}

impl Tag {
    /// A field for `players` runners (`entities` slots), ending after
    /// `end_tick` ticks.
    pub fn new(players: usize, entities: usize, end_tick: Tick) -> Self {
        Self {
            runners: vec![RunnerState::default(); entities],
            runner_of: vec![None; players],
            score: vec![0; players],
            end_tick,
            ..Self::default()
        }
    }

    /// Points per player slot.
    pub fn scores(&self) -> &[u32] {
        &self.score
    }

    fn runner(&self, e: EntityId) -> &RunnerState {
        &self.runners[usize::from(e.0)]
    }

    fn the_it(&self) -> Option<EntityId> {
        self.runner_of
            .iter()
            .flatten()
            .copied()
            .find(|e| self.runner(*e).it)
    }
}

impl ReplicationSource for Tag {
    type Archetype = Runner;
    fn write_group(
        &self,
        e: EntityId,
        _: Runner,
        group: u8,
        w: &mut BitWriter,
    ) -> Result<(), ProtoError> {
        self.runner(e).write_group(group, w)
    }
}

impl Game for Tag {
    type Input = Stick;
    type Event = TagEvent;
    type Replica = RunnerState;
    type MatchResult = Vec<u32>;

    fn join(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) -> Result<(), JoinRefused> {
        let e = ctx
            .world
            .spawn(Runner)
            .map_err(|_| JoinRefused("the field is full"))?;
        let i = usize::from(e.0);
        // Spread the runners on a circle; the first one in is "it".
        let players = self.runner_of.len().max(1) as f32;
        let angle = f32::from(p.0) * std::f32::consts::TAU / players;
        let spot = [(angle.cos() * 1000.0) as i32, (angle.sin() * 1000.0) as i32];
        self.runners[i].set_position(ctx.world, e, spot);
        let first = self.the_it().is_none();
        self.runners[i].set_it(ctx.world, e, first);
        self.runner_of[usize::from(p.0)] = Some(e);
        Ok(())
    }

    fn leave(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) {
        if let Some(e) = self.runner_of[usize::from(p.0)].take() {
            ctx.world.despawn(e);
        }
    }

    fn reconnect(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) {
        if let Some(runner) = self.runner_of[usize::from(p.0)] {
            ctx.send_event(p, TagEvent::You { runner });
        }
    }

    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        p: PlayerId,
        cmd: &InputCommand<Stick>,
        _: InputSource,
    ) {
        let Some(e) = self.runner_of[usize::from(p.0)] else {
            return;
        };
        if self.now >= self.end_tick {
            return;
        }
        let i = usize::from(e.0);
        let boost = if self.runners[i].it { 1.25 } else { 1.0 };
        let step = SPEED_CM_S * boost * ctx.dt() / 127.0;
        let [x, z] = self.runners[i].position;
        let moved = [
            (x + (f32::from(cmd.payload.x) * step) as i32).clamp(-HALF_FIELD, HALF_FIELD),
            (z + (f32::from(cmd.payload.z) * step) as i32).clamp(-HALF_FIELD, HALF_FIELD),
        ];
        self.runners[i].set_position(ctx.world, e, moved);
    }

    fn tick(&mut self, ctx: &mut TickContext<'_, Self>) {
        self.now = ctx.tick();
        if self.now == self.end_tick {
            ctx.broadcast_event(TagEvent::Over);
        }
        if self.now >= self.end_tick {
            return;
        }
        let Some(it) = self.the_it() else { return };
        for (p, runner) in self.runner_of.iter().enumerate() {
            if runner.is_some_and(|e| e != it) && ctx.is_connected(PlayerId(p as u16)) {
                self.score[p] += 1;
            }
        }
        // A new "it" cannot tag for a second (and never straight back).
        if self.now < self.it_since + ctx.tick_rate_hz() {
            return;
        }
        let at = self.runner(it).position;
        let caught = self.runner_of.iter().flatten().copied().find(|e| {
            let [x, z] = self.runner(*e).position;
            *e != it
                && Some(*e) != self.previous_it
                && (x - at[0]).abs().max((z - at[1]).abs()) <= TAG_REACH_CM
        });
        if let Some(caught) = caught {
            self.runners[usize::from(it.0)].set_it(ctx.world, it, false);
            self.runners[usize::from(caught.0)].set_it(ctx.world, caught, true);
            self.it_since = self.now;
            self.previous_it = Some(it);
            ctx.broadcast_event(TagEvent::Tagged {
                by: it,
                now_it: caught,
            });
        }
    }

    fn relevance(
        &mut self,
        viewer: PlayerId,
        world: &ReplicationWorld<Runner>,
        relevant: &mut InterestSet,
    ) {
        let Some(me) = self.runner_of[usize::from(viewer.0)] else {
            return;
        };
        let [mx, mz] = self.runner(me).position;
        for e in world.alive().iter() {
            let RunnerState {
                position: [x, z],
                it,
            } = *self.runner(e);
            let near = (x - mx).pow(2) + (z - mz).pow(2) <= VIEW_RADIUS_CM.pow(2);
            if near || it {
                relevant.insert(e);
            }
        }
    }

    fn result(&self) -> Option<Vec<u32>> {
        (self.now >= self.end_tick).then(|| self.score.clone())
    }
}

impl HostedGame for Tag {
    const NAME: &'static str = "tag";
    type Settings = TagSettings;

    fn short_settings(_mode: &Mode) -> TagSettings {
        TagSettings { seconds: Some(30) }
    }

    fn modes() -> &'static [Mode] {
        MODES
    }

    fn create(
        mode: &Mode,
        settings: &TagSettings,
        tick_rate_hz: u32,
        _seed: u64,
    ) -> Result<(MatchConfig, Self), String> {
        let seconds = settings.seconds.unwrap_or(60);
        if !(1..=3600).contains(&seconds) {
            return Err("seconds: must be between 1 and 3600".to_owned());
        }
        let players = mode.players;
        let entities = usize::from(players) + 2;
        let config = MatchConfig {
            tick_rate_hz,
            max_players: players,
            max_entities: entities as u16,
            ..MatchConfig::default()
        };
        let game = Tag::new(usize::from(players), entities, seconds * tick_rate_hz);
        Ok((config, game))
    }

    fn status(&self) -> MatchStatus {
        MatchStatus {
            phase: if self.now >= self.end_tick {
                "over"
            } else {
                "running"
            },
            round: 0,
            score: self.score.iter().map(|&s| i64::from(s)).collect(),
        }
    }

    fn report(&self, result: Option<&Vec<u32>>, players: &[PlayerId]) -> MatchReport {
        let best = result.and_then(|scores| scores.iter().max().copied());
        MatchReport {
            winner: None,
            summary: vec![("ticks", i64::from(self.now))],
            players: players
                .iter()
                .map(|&p| {
                    let score = self.score.get(usize::from(p.0)).copied().unwrap_or(0);
                    PlayerReport {
                        player: p,
                        team: 0,
                        // The most points wins (ties share the win).
                        outcome: match best {
                            Some(b) if score == b => Outcome::Win,
                            Some(_) => Outcome::Loss,
                            None => Outcome::Draw,
                        },
                        score: i64::from(score),
                        stats: vec![("points", i64::from(score))],
                    }
                })
                .collect(),
        }
    }
}

/// A bot decides from its own client's view and the events it got: "it"
/// chases the nearest runner it sees except the one who just tagged it;
/// everyone else runs from "it".
#[derive(Debug, Default)]
pub struct TagBot {
    me: Option<EntityId>,
    tagged_by: Option<EntityId>,
    over: bool,
    tick_rate_hz: u32,
}

impl TagBot {
    /// A bot for a match at `tick_rate_hz`.
    pub fn new(tick_rate_hz: u32) -> Self {
        Self {
            tick_rate_hz: tick_rate_hz.max(1),
            ..Self::default()
        }
    }
}

impl Bot<Tag> for TagBot {
    fn observe(&mut self, event: &TagEvent) -> bool {
        match *event {
            TagEvent::You { runner } => self.me = Some(runner),
            TagEvent::Tagged { by, now_it } => {
                if Some(now_it) == self.me {
                    self.tagged_by = Some(by);
                }
            }
            TagEvent::Over => self.over = true,
        }
        true
    }

    fn check_world(&mut self, world: &ClientWorld<RunnerState>) -> u64 {
        // Exactly one runner is "it" among those seen, or none in sight;
        // two would mean a stale copy.
        u64::from(world.iter().filter(|r| r.state.it).count() > 1)
    }

    fn command(&mut self, view: &ClientWorld<RunnerState>, tick: Tick) -> InputCommand<Stick> {
        let aim_tick = view.server_tick();
        let mut cmd = InputCommand::new(tick, aim_tick, Stick::default());
        let Some(me) = self.me else { return cmd };
        let Some(mine) = view.get(me) else { return cmd };
        let [mx, mz] = mine.state.position;
        let target = view
            .iter()
            .filter(|r| r.entity != me && Some(r.entity) != self.tagged_by)
            .filter(|r| mine.state.it || r.state.it)
            .min_by_key(|r| (r.state.position[0] - mx).pow(2) + (r.state.position[1] - mz).pow(2));
        // With no one in sight, "it" sweeps the field in a slow circle.
        let wander = (tick as f32 / self.tick_rate_hz as f32 * 0.3).sin_cos();
        let wander = [(wander.0 * 1500.0) as i32, (wander.1 * 1500.0) as i32];
        let (goal, sign) = match target {
            Some(t) if mine.state.it => (t.state.position, 1.0),
            Some(t) => (t.state.position, -1.0),
            None if mine.state.it => (wander, 1.0),
            None => return cmd,
        };
        let (dx, dz) = ((goal[0] - mx) as f32, (goal[1] - mz) as f32);
        let len = dx.hypot(dz).max(1.0);
        cmd.payload = Stick {
            x: (sign * dx / len * 127.0) as i8,
            z: (sign * dz / len * 127.0) as i8,
        };
        cmd
    }

    fn match_over(&self) -> bool {
        self.over
    }
}

impl BotGame for Tag {
    type Bot = TagBot;

    fn bot(
        _mode: &Mode,
        _settings: &TagSettings,
        tick_rate_hz: u32,
        _index: u16,
        _seed: u64,
    ) -> Result<TagBot, String> {
        Ok(TagBot::new(tick_rate_hz))
    }
}

/// `docs/GUIDE.md`, compiled: its Rust blocks are this crate's doc-tests, so
/// the guide builds with today's hightick or CI fails.
#[doc = include_str!("../../../docs/GUIDE.md")]
mod guide {}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_engine::Match;

    #[test]
    fn a_match_ends_on_time_and_reports_every_player() {
        let mode = Tag::mode("tag").unwrap();
        let settings = TagSettings { seconds: Some(1) };
        let (config, game) = Tag::create(mode, &settings, 32, 1).unwrap();
        let mut m = Match::new(config, game).unwrap();
        let players: Vec<PlayerId> = (0..6).map(|_| m.join().unwrap()).collect();
        for _ in 0..32 {
            assert!(m.result().is_none());
            m.tick();
        }
        let result = m.result().expect("over after a second");
        let report = m.game().report(Some(&result), &players);
        assert_eq!(report.players.len(), 6);
        // The first runner was "it" the whole second: it scored least.
        assert_eq!(report.players[0].outcome, Outcome::Loss);
        assert!(report.players.iter().any(|p| p.outcome == Outcome::Win));
        let bad = TagSettings { seconds: Some(0) };
        assert!(
            Tag::create(mode, &bad, 32, 1)
                .unwrap_err()
                .starts_with("seconds")
        );
    }
}
