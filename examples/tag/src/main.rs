//! Tag, a custom game on `hightick-engine` in about two hundred lines: copy it to start
//! your own game mode.
//!
//! One runner is "it" and runs a little faster; touching another runner passes "it" on.
//! A player scores a point for every tick it is not "it". Each client sees the runners
//! within 15 m and always the one who is "it" (relevance: the engine replicates only
//! what [`Game::relevance`] lets a client see, with full state when a runner comes into
//! view). Bots play every seat, each deciding from its own replicated view, so what a
//! bot knows is exactly what a real client would know.
//!
//! Run it: `cargo run -p hightick-example-tag`. For the same match over a lossy
//! simulated link with the real packet layer, see `crates/engine/tests/net_link.rs`;
//! for a game hosted over UDP, `crates/server` runs the reference game `arena`.

use hightick_engine::events::ReliableEvent;
use hightick_engine::input::InputSource;
use hightick_engine::replication::{ClientWorld, PacketFate, Replica, ReplicationSource};
use hightick_engine::world::{Archetype, GroupMask, ReplicationWorld};
use hightick_engine::{
    EngineError, EntityId, Game, InterestSet, JoinRefused, Match, MatchConfig, PlayerId,
    TickContext,
};
use hightick_proto::{BitReader, BitWriter, InputCommand, ProtoError};

const PLAYERS: u16 = 6;
const TICK_RATE_HZ: u32 = 128;
const MATCH_SECONDS: u32 = 60;
/// The field is `-HALF_FIELD..HALF_FIELD` centimetres on both axes.
const HALF_FIELD: i32 = 2_000;
const SPEED_CM_S: f32 = 500.0;
const TAG_REACH_CM: i32 = 100;
const VIEW_RADIUS_CM: i32 = 1_500;
/// A new "it" cannot tag for this long (and never straight back: no tag-backs).
const TAG_COOLDOWN_TICKS: u32 = TICK_RATE_HZ;

/// The only archetype. Field group 0 is the position, group 1 the "it" flag: a client
/// receives a group again only when it changed since the tick it acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Runner;

impl Archetype for Runner {
    fn wire_id(self) -> u8 {
        0
    }
    fn from_wire_id(id: u8) -> Option<Self> {
        (id == 0).then_some(Runner)
    }
    fn groups(self) -> GroupMask {
        GroupMask::first(2)
    }
}

/// Sent reliably to everyone when "it" changes hands.
#[derive(Debug, Clone, Copy)]
struct Tagged {
    by: EntityId,
    now_it: EntityId,
}

impl ReliableEvent for Tagged {
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.write_u16(self.by.0)?;
        w.write_u16(self.now_it.0)
    }
}

/// The server's game state, indexed by entity (positions, flag) or player (entity, score).
#[derive(Debug, Default)]
struct Tag {
    position: Vec<[i32; 2]>,
    it: Vec<bool>,
    runner_of: Vec<Option<EntityId>>,
    score: Vec<u32>,
    it_since: u32,
    previous_it: Option<EntityId>,
}

impl Tag {
    fn new(players: usize, entities: usize) -> Self {
        Self {
            position: vec![[0, 0]; entities],
            it: vec![false; entities],
            runner_of: vec![None; players],
            score: vec![0; players],
            it_since: 0,
            previous_it: None,
        }
    }

    fn the_it(&self) -> Option<EntityId> {
        self.runner_of
            .iter()
            .flatten()
            .copied()
            .find(|e| self.it[usize::from(e.0)])
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
        let i = usize::from(e.0);
        match group {
            0 => {
                w.write_signed_varint(self.position[i][0])?;
                w.write_signed_varint(self.position[i][1])
            }
            _ => w.write_bool(self.it[i]),
        }
    }
}

impl Game for Tag {
    type Event = Tagged;
    type MatchResult = Vec<u32>;

    fn join(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) -> Result<(), JoinRefused> {
        let e = ctx
            .world
            .spawn(Runner)
            .map_err(|_| JoinRefused("the field is full"))?;
        let i = usize::from(e.0);
        // Spread the runners on a circle; the first one in is "it".
        let angle = f32::from(p.0) * std::f32::consts::TAU / f32::from(PLAYERS);
        let spot = [(angle.cos() * 1000.0) as i32, (angle.sin() * 1000.0) as i32];
        ctx.world.set(e, 0, &mut self.position[i], spot);
        let first = self.the_it().is_none();
        ctx.world.set(e, 1, &mut self.it[i], first);
        self.runner_of[usize::from(p.0)] = Some(e);
        Ok(())
    }

    fn leave(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) {
        if let Some(e) = self.runner_of[usize::from(p.0)].take() {
            ctx.world.despawn(e);
        }
    }

    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        p: PlayerId,
        cmd: &InputCommand,
        _: InputSource,
    ) {
        let Some(e) = self.runner_of[usize::from(p.0)] else {
            return;
        };
        let i = usize::from(e.0);
        let boost = if self.it[i] { 1.25 } else { 1.0 };
        let step = SPEED_CM_S * boost * ctx.dt() / 127.0;
        let [x, z] = self.position[i];
        let moved = [
            (x + (f32::from(cmd.move_x) * step) as i32).clamp(-HALF_FIELD, HALF_FIELD),
            (z + (f32::from(cmd.move_y) * step) as i32).clamp(-HALF_FIELD, HALF_FIELD),
        ];
        ctx.world.set(e, 0, &mut self.position[i], moved);
    }

    fn tick(&mut self, ctx: &mut TickContext<'_, Self>) {
        let Some(it) = self.the_it() else { return };
        for p in ctx.players().collect::<Vec<_>>() {
            match self.runner_of[usize::from(p.0)] {
                Some(e) if e != it => self.score[usize::from(p.0)] += 1,
                _ => {}
            }
        }
        if ctx.tick() < self.it_since + TAG_COOLDOWN_TICKS {
            return;
        }
        let at = self.position[usize::from(it.0)];
        let caught = self.runner_of.iter().flatten().copied().find(|e| {
            let [x, z] = self.position[usize::from(e.0)];
            *e != it
                && Some(*e) != self.previous_it
                && (x - at[0]).abs().max((z - at[1]).abs()) <= TAG_REACH_CM
        });
        if let Some(caught) = caught {
            ctx.world.set(it, 1, &mut self.it[usize::from(it.0)], false);
            ctx.world
                .set(caught, 1, &mut self.it[usize::from(caught.0)], true);
            self.it_since = ctx.tick();
            self.previous_it = Some(it);
            ctx.broadcast_event(Tagged {
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
        let [mx, mz] = self.position[usize::from(me.0)];
        for e in world.alive().iter() {
            let [x, z] = self.position[usize::from(e.0)];
            let near = (x - mx).pow(2) + (z - mz).pow(2) <= VIEW_RADIUS_CM.pow(2);
            if near || self.it[usize::from(e.0)] {
                relevant.insert(e);
            }
        }
    }

    fn result(&self) -> Option<Vec<u32>> {
        None // the host below decides when the match is over
    }
}

/// A client's copy of a runner, filled from snapshots.
#[derive(Debug, Default)]
struct RunnerView {
    position: [i32; 2],
    it: bool,
}

impl Replica for RunnerView {
    type Archetype = Runner;
    fn read_group(&mut self, _: Runner, group: u8, r: &mut BitReader) -> Result<(), ProtoError> {
        match group {
            0 => self.position = [r.read_signed_varint()?, r.read_signed_varint()?],
            _ => self.it = r.read_bool()?,
        }
        Ok(())
    }
}

/// A bot decides from its own client's view and the events it got: "it" chases the
/// nearest runner it sees except the one who just tagged it; everyone else runs from "it".
fn bot_input(
    view: &ClientWorld<RunnerView>,
    me: EntityId,
    tagged_by: Option<EntityId>,
    tick: u32,
) -> InputCommand {
    let mut cmd = InputCommand {
        tick,
        ..InputCommand::default()
    };
    let Some(mine) = view.get(me) else { return cmd };
    let [mx, mz] = mine.state.position;
    let target = view
        .iter()
        .filter(|r| r.entity != me && Some(r.entity) != tagged_by)
        .filter(|r| mine.state.it || r.state.it)
        .min_by_key(|r| (r.state.position[0] - mx).pow(2) + (r.state.position[1] - mz).pow(2));
    // With no one in sight, "it" sweeps the field in a slow circle.
    let wander = (tick as f32 / TICK_RATE_HZ as f32 * 0.3).sin_cos();
    let wander = [(wander.0 * 1500.0) as i32, (wander.1 * 1500.0) as i32];
    let (goal, sign) = match target {
        Some(t) if mine.state.it => (t.state.position, 1.0),
        Some(t) => (t.state.position, -1.0),
        None if mine.state.it => (wander, 1.0),
        None => return cmd,
    };
    let (dx, dz) = ((goal[0] - mx) as f32, (goal[1] - mz) as f32);
    let len = dx.hypot(dz).max(1.0);
    cmd.move_x = (sign * dx / len * 127.0) as i8;
    cmd.move_y = (sign * dz / len * 127.0) as i8;
    cmd
}

fn main() -> Result<(), EngineError> {
    let entities = 16;
    let config = MatchConfig {
        tick_rate_hz: TICK_RATE_HZ,
        max_players: PLAYERS,
        max_entities: entities as u16,
        ..MatchConfig::default()
    };
    let mut m = Match::new(config, Tag::new(usize::from(PLAYERS), entities))?;
    let players: Vec<PlayerId> = (0..PLAYERS).map(|_| m.join()).collect::<Result<_, _>>()?;
    let mut views: Vec<ClientWorld<RunnerView>> =
        players.iter().map(|_| ClientWorld::new(entities)).collect();
    let mut bytes = 0usize;
    let mut tagged_by: Vec<Option<EntityId>> = vec![None; usize::from(PLAYERS)];
    let mut tags = 0;

    for tick in 1..=MATCH_SECONDS * TICK_RATE_HZ {
        for (p, view) in players.iter().zip(&views) {
            let me = m.game().runner_of[usize::from(p.0)].expect("seated");
            m.receive_command(*p, &bot_input(view, me, tagged_by[usize::from(p.0)], tick))?;
        }
        m.tick();
        for (p, view) in players.iter().zip(&mut views) {
            // A real host sends this in packet `tick` and reports its fate when the
            // client's ack (or a loss timeout) comes back; here the link is perfect.
            let snapshot = m.snapshot(*p);
            bytes += snapshot.len();
            view.apply(snapshot)?;
            m.packet_sent(*p, tick as u16);
            m.on_delivery(*p, tick as u16, PacketFate::Acked);
            while let Some(Tagged { by, now_it }) = m.pop_event(*p) {
                if m.game().runner_of[usize::from(p.0)] == Some(now_it) {
                    tagged_by[usize::from(p.0)] = Some(by);
                }
                if p.0 == 0 {
                    tags += 1;
                    println!(
                        "{:6.2} s  runner {} tagged runner {}",
                        tick as f32 / TICK_RATE_HZ as f32,
                        by.0,
                        now_it.0
                    );
                }
            }
        }
    }

    println!("\n{tags} tags in {MATCH_SECONDS} s; points are ticks not spent as \"it\":");
    for (p, score) in players.iter().zip(&m.game().score) {
        println!("  player {}: {score}", p.0);
    }
    let per_client = bytes as f64 / f64::from(PLAYERS) / f64::from(MATCH_SECONDS);
    println!("snapshot bytes per client per second: {per_client:.0}");
    Ok(())
}
