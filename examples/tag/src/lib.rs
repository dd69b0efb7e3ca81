//! Tag, a small custom game on hightick: copy it to start your own.
//!
//! One runner is "it" and runs a little faster; touching another runner
//! passes "it" on. A player scores a point for every tick it is not "it".
//! Each client sees the runners within 15 m and always the one who is "it"
//! ([`Game::relevance`]). A match lasts a minute.
//!
//! What a game writes, all in this file:
//! - its wire vocabulary, declared once with the engine's derives (no
//!   hand-written bit codec): the input ([`Stick`]), the reliable events
//!   ([`TagEvent`]) and a runner's replicated state ([`RunnerState`], the
//!   server's copy and the client's);
//! - the state and rules ([`Tag`]: [`Game`]), and what the host needs
//!   ([`HostedGame`]: modes and how a match is made);
//! - a bot that plays from what its client receives ([`TagBot`]).
//!
//! In return `src/main.rs` is four lines and serves, plays, load-tests and
//! sweeps it: `cargo run --release -p hightick-example-tag -- demo`.

use hightick_engine::prelude::*;
use serde::{Deserialize, Serialize};

/// The field is `-HALF_FIELD..=HALF_FIELD` centimetres on both axes.
pub const HALF_FIELD: i32 = 2_000;
const SPEED_CM_S: f32 = 500.0;
const TAG_REACH_CM: i32 = 100;
const VIEW_RADIUS_CM: i32 = 1_500;

/// The only kind of entity: a runner, carrying a [`RunnerState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Archetype)]
#[archetype(groups = RunnerState)]
pub struct Runner;

/// A runner's replicated state, the server's and the client's copy alike:
/// field group 0 is the position, group 1 the "it" flag. A client receives
/// a group again only when it changed since the tick it acknowledged.
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

/// A runner's input for one tick: a stick, `-127..=127` on each axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, InputPayload)]
pub struct Stick {
    /// Left/right, back/forward.
    pub x: i8,
    pub z: i8,
}

/// What the game tells its clients reliably; its kinds are `tagged` and
/// `over`. (Which runner is a client's own, the engine tells it:
/// [`ReplicationWorld::spawn_avatar`], [`ClientWorld::mine`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, ReliableEvent)]
pub enum TagEvent {
    /// To everyone: "it" changed hands, from `by` to `now_it`.
    Tagged { by: EntityId, now_it: EntityId },
    /// To everyone: the match is over (the swarm's bots stop on it).
    #[event(ends_match)]
    Over,
}

/// What a create-match request may change: the match's length.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagSettings {
    /// Seconds a match lasts, 1 to 3600 (default 60).
    pub seconds: Option<u32>,
}

/// The server's game state: the runners by entity slot (what the writer
/// replicates) and each player's points.
#[derive(Debug, Default, ReplicationSource)]
pub struct Tag {
    #[replicas]
    runners: Vec<RunnerState>,
    score: Vec<u32>,
    it_since: Tick,
    previous_it: Option<EntityId>,
    end_tick: Tick,
    now: Tick,
}

impl Tag {
    fn runner(&self, e: EntityId) -> &RunnerState {
        &self.runners[usize::from(e.0)]
    }

    fn the_it(&self, world: &ReplicationWorld<Runner>) -> Option<EntityId> {
        world.alive().iter().find(|e| self.runner(*e).it)
    }
}

impl Game for Tag {
    type Input = Stick;
    type Event = TagEvent;
    type Replica = RunnerState;
    type MatchResult = Vec<u32>;

    fn join(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) -> Result<(), JoinRefused> {
        let first = self.the_it(ctx.world).is_none();
        // The player's avatar: the engine tells its client which it is, and
        // despawns it when the player leaves (the default `leave`).
        let e = ctx
            .world
            .spawn_avatar(p, Runner)
            .map_err(|_| JoinRefused("full"))?;
        // Spread the runners on a circle; the first one in is "it".
        let angle = f32::from(p.0) * std::f32::consts::TAU / self.score.len().max(1) as f32;
        let spot = [(angle.cos() * 1000.0) as i32, (angle.sin() * 1000.0) as i32];
        let runner = &mut self.runners[usize::from(e.0)];
        runner.set_position(ctx.world, e, spot);
        runner.set_it(ctx.world, e, first);
        Ok(())
    }

    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        p: PlayerId,
        cmd: &InputCommand<Stick>,
        _: InputSource,
    ) {
        let Some(e) = ctx.world.avatar(p).filter(|_| self.now < self.end_tick) else {
            return;
        };
        let runner = &mut self.runners[usize::from(e.0)];
        let step = SPEED_CM_S * if runner.it { 1.25 } else { 1.0 } * ctx.dt() / 127.0;
        let [x, z] = runner.position;
        let moved = |at: i32, axis: i8| {
            (at + (f32::from(axis) * step) as i32).clamp(-HALF_FIELD, HALF_FIELD)
        };
        let to = [moved(x, cmd.payload.x), moved(z, cmd.payload.z)];
        runner.set_position(ctx.world, e, to);
    }

    fn tick(&mut self, ctx: &mut TickContext<'_, Self>) {
        self.now = ctx.tick();
        if self.now == self.end_tick {
            ctx.broadcast_event(TagEvent::Over);
        }
        let Some(it) = self.the_it(ctx.world).filter(|_| self.now < self.end_tick) else {
            return;
        };
        for p in ctx.players() {
            if ctx.world.avatar(p).is_some_and(|e| e != it) {
                self.score[usize::from(p.0)] += 1;
            }
        }
        // A new "it" cannot tag for a second (and never straight back).
        if self.now < self.it_since + ctx.tick_rate_hz() {
            return;
        }
        let [ix, iz] = self.runner(it).position;
        let caught = ctx.world.alive().iter().find(|e| {
            let [x, z] = self.runner(*e).position;
            *e != it
                && Some(*e) != self.previous_it
                && (x - ix).abs().max((z - iz).abs()) <= TAG_REACH_CM
        });
        if let Some(now_it) = caught {
            self.runners[usize::from(it.0)].set_it(ctx.world, it, false);
            self.runners[usize::from(now_it.0)].set_it(ctx.world, now_it, true);
            (self.it_since, self.previous_it) = (self.now, Some(it));
            ctx.broadcast_event(TagEvent::Tagged { by: it, now_it });
        }
    }

    fn relevance(
        &mut self,
        viewer: PlayerId,
        world: &ReplicationWorld<Runner>,
        relevant: &mut InterestSet,
    ) {
        let Some(me) = world.avatar(viewer) else {
            return;
        };
        let [mx, mz] = self.runner(me).position;
        for e in world.alive().iter() {
            let ([x, z], it) = (self.runner(e).position, self.runner(e).it);
            if it || (x - mx).pow(2) + (z - mz).pow(2) <= VIEW_RADIUS_CM.pow(2) {
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
    /// A name, players, rate and a line for listings.
    const MODES: &'static [Mode] = &[
        Mode::new("tag", 6, 128, "six runners, one minute"),
        Mode::new("tag_crowd", 24, 64, "24 runners at 64 Hz"),
    ];
    type Settings = TagSettings;

    fn create(
        mode: &Mode,
        settings: &TagSettings,
        hz: u32,
        _seed: u64,
    ) -> Result<(MatchConfig, Self), String> {
        let seconds = settings.seconds.unwrap_or(60);
        if !(1..=3600).contains(&seconds) {
            return Err("seconds: must be between 1 and 3600".to_owned());
        }
        // Two spare slots: a runner who left keeps its id a while.
        let (players, entities) = (mode.players, mode.players + 2);
        let tag = Tag {
            runners: vec![RunnerState::default(); usize::from(entities)],
            score: vec![0; usize::from(players)],
            end_tick: seconds * hz,
            ..Tag::default()
        };
        Ok((MatchConfig::sized(hz, players, entities), tag))
    }

    fn short_settings(_mode: &Mode) -> TagSettings {
        TagSettings { seconds: Some(30) }
    }

    /// The points so far, by player slot: the result line's scores, and
    /// the most points wins (the default report).
    fn status(&self) -> MatchStatus {
        let over = self.now >= self.end_tick;
        MatchStatus::scored(if over { "over" } else { "running" }, &self.score)
    }
}

/// A bot decides from its own client's view and events: "it" chases the
/// nearest runner it sees (but the one who just tagged it), and sweeps the
/// field when it sees none; everyone else runs from "it".
#[derive(Debug, Default)]
pub struct TagBot {
    /// The last tag seen: who tagged whom.
    last_tag: Option<(EntityId, EntityId)>,
}

impl Bot<Tag> for TagBot {
    fn observe(&mut self, event: &TagEvent) -> bool {
        if let TagEvent::Tagged { by, now_it } = *event {
            self.last_tag = Some((by, now_it));
        }
        true
    }

    fn check_world(&mut self, world: &ClientWorld<RunnerState>) -> u64 {
        // At most one runner in sight is "it"; two would mean a stale copy.
        u64::from(world.iter().filter(|r| r.state.it).count() > 1)
    }

    fn command(&mut self, view: &ClientWorld<RunnerState>, tick: Tick) -> InputCommand<Stick> {
        let mut cmd = InputCommand::new(tick, view.server_tick(), Stick::default());
        let Some(mine) = view.mine() else {
            return cmd;
        };
        // Who tagged this bot, if it is "it": that runner cannot be tagged
        // straight back.
        let tagged_by = self.last_tag.filter(|t| t.1 == mine.entity).map(|t| t.0);
        let ([mx, mz], it) = (mine.state.position, mine.state.it);
        let target = view
            .iter()
            .filter(|r| {
                r.entity != mine.entity && Some(r.entity) != tagged_by && (it || r.state.it)
            })
            .min_by_key(|r| (r.state.position[0] - mx).pow(2) + (r.state.position[1] - mz).pow(2));
        // A slow circle round the field (a lap in about 16 s at 128 Hz).
        let wander = (tick as f32 * 0.003).sin_cos();
        let (goal, sign) = match target {
            Some(t) => (t.state.position, if it { 1.0 } else { -1.0 }),
            None if it => (
                [(wander.0 * 1500.0) as i32, (wander.1 * 1500.0) as i32],
                1.0,
            ),
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
}

impl BotGame for Tag {
    type Bot = TagBot;
}

/// `docs/GUIDE.md`, compiled: its Rust blocks are this crate's doc-tests, so
/// the guide builds with today's hightick or CI fails.
#[doc = include_str!("../../../docs/GUIDE.md")]
mod guide {}
