//! [`Arena`]: the reference game mode, an implementation of the engine's
//! [`Game`] trait on the arena's maps, movement, poses and ray casts.
//!
//! Players join the smaller team and spawn at its spawn points. Each tick
//! their inputs drive [`move_and_slide`] (fenced to the
//! buy zone during the buy phase; a move the displacement check refuses is
//! undone), poses go into a [`LagCompensation<Pose>`] history every N ticks
//! (off during the buy phase), shots are traced against targets rewound to
//! the tick the shooter saw ([`ShotResolver`]), and the
//! round rules run: buy -> combat -> round end, first to N rounds, with money
//! per round and kill. Replicated state goes through the world's setters (so
//! only changes are sent); relevance is [`FogOfWar`]: an
//! enemy only with line of sight, teammates always, money (a separate
//! `Wallet` entity) only to the own team.
//!
//! Modules: `rules` (rounds, economy), `combat` (shots, damage), `wire`
//! (archetypes, field groups, the client's replica), `arms` (prices, weapon
//! ids), `player` ([`Fighter`]), `round` ([`RoundClock`]), `config`
//! ([`ArenaConfig`]).

mod arms;
mod combat;
mod config;
mod player;
mod predict;
mod round;
mod rules;
mod transform_delta;
mod wire;

use transform_delta::TransformHistory;

use glam::{Vec2, Vec3};
use hightick_engine::input::InputSource;
use hightick_engine::lag_comp::{LagCompensation, RewindLimits};
use hightick_engine::replication::{RecordTicks, ReplicationSource};
use hightick_engine::tick::{Tick, TickTime};
use hightick_engine::world::ReplicationWorld;
use hightick_engine::{EntityId, Game, InterestSet, JoinRefused, PlayerId, TickContext};
use hightick_proto::{BitWriter, InputCommand, ProtoError};

use crate::bot::{Bot, BotStyle};
use crate::event::{ArenaEvent, RoundEndReason, RoundPhase};
use crate::input::{ArenaInput, Buttons};
use hightick_telemetry::Subsystem;

use crate::rewind::{Shot, ShotResolver};
use crate::weapon::{Loadout, Slot, damage, spread_direction};
use crate::world::motion::{ArenaMotion, MoveRule, Stage, stride};
use crate::{FogOfWar, FogParams, Map, MovementParams, Pose, Team};

pub use arms::{ARMOR_POINTS, ARMOR_PRICE};
pub use config::{ArenaConfig, SetupError};
pub use player::{Fighter, Item};
pub use round::{Phase, RoundClock};
pub use transform_delta::{TransformBases, WireTransform};
pub use wire::{
    ArenaKind, ArenaReplica, MONEY, MOTION, ReplicaTransform, TRANSFORM, TransformCodec, VITALS,
    WORLD_MAX, WORLD_MIN, WireVitals,
};

/// Ticks between the motions sent to a player's client when nothing else
/// calls for one (once a second at 128 Hz). Until acknowledged a motion
/// goes again with every snapshot (push replication resends the newest
/// value), so each costs about a round trip of snapshots.
pub const MOTION_KEYFRAME_TICKS: Tick = 128;

/// What the round lets fighter `f` do with its movement during `phase`.
fn move_rule(phase: Phase, f: &Fighter, map: &Map) -> MoveRule {
    if !f.alive || matches!(phase, Phase::Waiting | Phase::MatchOver) {
        MoveRule::Still
    } else if phase == Phase::Buy && map.buy_zone(f.team).is_some() {
        MoveRule::Fenced(f.team)
    } else {
        MoveRule::Free
    }
}

/// One player's line in the [`MatchRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayerRecord {
    /// The player's slot.
    pub player: PlayerId,
    /// Its team.
    pub team: Team,
    /// Enemies it killed.
    pub kills: u32,
    /// Times it died.
    pub deaths: u32,
}

/// The result of a finished arena match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchRecord {
    /// The team that reached the rounds to win.
    pub winner: Team,
    /// Rounds won per team (index [`Team::index`]).
    pub score: [u16; 2],
    /// Rounds played.
    pub rounds: u16,
    /// Every player still in the match, in slot order.
    pub players: Vec<PlayerRecord>,
}

/// A shot asked for this tick, resolved after every player has moved.
#[derive(Debug, Clone, Copy)]
struct PendingShot {
    aim_tick: Tick,
}

/// The reference game mode. See the [module docs](self).
#[derive(Debug)]
pub struct Arena {
    stage: Stage,
    config: ArenaConfig,
    codec: TransformCodec,
    fighters: Box<[Option<Fighter>]>,
    owner: Box<[Option<PlayerId>]>,
    transforms: Box<[WireTransform]>,
    /// Each body's recent transform changes: the bases of deltas.
    transform_history: TransformHistory,
    vitals: Box<[WireVitals]>,
    /// Each body's exact motion as last sent to its owner, and its tick.
    motions: Box<[(Tick, ArenaMotion)]>,
    /// Per player: its input was repeated this tick, so its client's
    /// prediction may be wrong.
    motion_due: Box<[bool]>,
    money: Box<[u32]>,
    buy_held: Box<[bool]>,
    shots: Box<[Option<PendingShot>]>,
    visible: Box<[InterestSet]>,
    resolver: ShotResolver,
    history: LagCompensation<Pose>,
    clock: RoundClock,
    seed: u64,
    fog: FogOfWar,
    fog_input: Box<[(Team, Pose, bool)]>,
    /// Per player: where it looks on the ground plane, `(sin yaw, cos yaw)`
    /// as last published, for the replication priority.
    gaze: Box<[Vec2]>,
    shots_fired: u64,
    hits: u64,
    /// Per player: the bot playing for it while its seat is released (its
    /// client gone for the host's seat timeout), until it comes back.
    stand_ins: Box<[Option<Bot>]>,
}

impl Arena {
    /// An arena with `config`'s rules, sized by `match_config` (players,
    /// entity slots, at least two per player; tick rate; lag-compensation
    /// record interval and maximum rewind). `seed` drives weapon spread.
    pub fn new(
        config: ArenaConfig,
        match_config: &hightick_engine::MatchConfig,
        seed: u64,
    ) -> Result<Self, SetupError> {
        config.validate()?;
        let stage = Stage::builtin(&config.map)?;
        let players = usize::from(match_config.max_players);
        let entities = usize::from(match_config.max_entities);
        if entities < 2 * players {
            return Err(SetupError::Config {
                field: "max_entities",
                reason: "must be at least twice max_players",
            });
        }
        let mut history = LagCompensation::new(
            players,
            RewindLimits::new(
                match_config.tick_rate_hz,
                match_config.pose_interval_ticks,
                match_config.max_rewind_ms,
            ),
        );
        history.set_recording(false);
        let fog = FogOfWar::with_params(
            players,
            FogParams {
                reveal_margin: config.reveal_margin,
                interval: config.fow_interval_ticks,
                tick_rate_hz: match_config.tick_rate_hz,
                ..FogParams::default()
            },
        );
        Ok(Self {
            stage,
            config,
            codec: TransformCodec::world()?,
            fighters: vec![None; players].into_boxed_slice(),
            owner: vec![None; entities].into_boxed_slice(),
            transforms: vec![WireTransform::default(); entities].into_boxed_slice(),
            transform_history: TransformHistory::new(entities),
            vitals: vec![WireVitals::default(); entities].into_boxed_slice(),
            motions: vec![(0, ArenaMotion::default()); entities].into_boxed_slice(),
            motion_due: vec![false; players].into_boxed_slice(),
            money: vec![0; entities].into_boxed_slice(),
            buy_held: vec![false; players].into_boxed_slice(),
            shots: vec![None; players].into_boxed_slice(),
            visible: (0..players)
                .map(|_| InterestSet::with_capacity(entities))
                .collect(),
            resolver: ShotResolver::with_capacity(players),
            history,
            clock: RoundClock::default(),
            seed,
            fog,
            fog_input: vec![(Team::Attackers, Pose::default(), false); players].into_boxed_slice(),
            gaze: vec![Vec2::Y; players].into_boxed_slice(),
            shots_fired: 0,
            hits: 0,
            stand_ins: vec![None; players].into_boxed_slice(),
        })
    }

    /// The map in play.
    pub fn map(&self) -> &Map {
        &self.stage.map
    }

    /// What every player's movement steps on (map, tuning, limits): what a
    /// client predicting its player needs.
    pub fn stage(&self) -> &Stage {
        &self.stage
    }

    /// The movement parameters every player uses.
    pub fn movement_params(&self) -> &MovementParams {
        &self.stage.params
    }

    /// The fog of war.
    pub fn fog(&self) -> &FogOfWar {
        &self.fog
    }

    /// The rules.
    pub fn config(&self) -> &ArenaConfig {
        &self.config
    }

    /// The round clock and score.
    pub fn clock(&self) -> &RoundClock {
        &self.clock
    }

    /// Whether a bot plays for `player` (its seat was released).
    pub fn stood_in(&self, player: PlayerId) -> bool {
        self.stand_ins
            .get(usize::from(player.0))
            .is_some_and(Option::is_some)
    }

    /// The player in slot `player`, if any.
    pub fn fighter(&self, player: PlayerId) -> Option<&Fighter> {
        self.fighters.get(usize::from(player.0))?.as_ref()
    }

    /// Every player in the match, in slot order.
    pub fn fighters(&self) -> impl Iterator<Item = (PlayerId, &Fighter)> + '_ {
        self.fighters
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (PlayerId(i as u16), f)))
    }

    /// The player owning `entity`.
    pub fn owner(&self, entity: EntityId) -> Option<PlayerId> {
        *self.owner.get(usize::from(entity.0))?
    }

    /// Whether `viewer` saw `target`'s body at the end of the last tick (fog
    /// of war; teammates always).
    pub fn sees(&self, viewer: PlayerId, target: PlayerId) -> bool {
        let (Some(v), Some(t)) = (self.fighter(viewer), self.fighter(target)) else {
            return false;
        };
        v.team == t.team || self.visible[usize::from(viewer.0)].contains(t.body)
    }

    /// Shots fired and shots that hit a body, this match.
    pub fn shot_counts(&self) -> (u64, u64) {
        (self.shots_fired, self.hits)
    }

    /// The lag-compensation history.
    pub fn history(&self) -> &LagCompensation<Pose> {
        &self.history
    }

    /// A hash of the whole simulated state (FNV-1a over every player's
    /// movement, view, vitals, money and score, and the round clock): equal
    /// for equal inputs.
    pub fn world_hash(&self) -> u64 {
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        h.u64(u64::from(self.clock.round));
        h.u64(u64::from(self.clock.phase_end));
        h.u64(self.clock.phase as u64);
        h.u64(u64::from(self.clock.score[0]) << 16 | u64::from(self.clock.score[1]));
        for f in self.fighters.iter() {
            let Some(f) = f else {
                h.u64(0);
                continue;
            };
            let m = &f.movement;
            for v in [
                m.position.x,
                m.position.y,
                m.position.z,
                m.velocity.x,
                m.velocity.y,
                m.velocity.z,
                m.crouch,
                m.locomotion_phase,
                f.yaw,
                f.pitch,
            ] {
                h.u64(u64::from(v.to_bits()));
            }
            h.u64(u64::from(f.health) | u64::from(f.armor) << 8 | u64::from(f.alive) << 16);
            h.u64(u64::from(f.money) | u64::from(f.kills) << 32);
            h.u64(u64::from(f.deaths) | u64::from(f.shots) << 32);
            let w = f.loadout.active();
            h.u64(
                u64::from(w.ammo) | u64::from(w.reserve) << 16 | u64::from(w.kind().code()) << 32,
            );
        }
        h.0
    }

    /// Pushes `f`'s replicated values through the setters.
    fn publish(&mut self, world: &mut ReplicationWorld<ArenaKind>, player: PlayerId) {
        let Some(f) = self.fighters[usize::from(player.0)] else {
            return;
        };
        let p = f.movement.position;
        let t = self
            .codec
            .encode([p.x, p.y, p.z], f.yaw, f.pitch, f.movement.crouch);
        let body = usize::from(f.body.0);
        if world.set(f.body, TRANSFORM, &mut self.transforms[body], t) {
            self.transform_history.record(body, world.tick(), t);
        }
        let (sin, cos) = f.yaw.sin_cos();
        self.gaze[usize::from(player.0)] = Vec2::new(sin, cos);
        let v = WireVitals {
            health: f.health,
            armor: f.armor,
            weapon: arms::weapon_id(&f),
            alive: f.alive,
            team: f.team,
        };
        world.set(f.body, VITALS, &mut self.vitals[body], v);
        world.set(
            f.wallet,
            MONEY,
            &mut self.money[usize::from(f.wallet.0)],
            f.money,
        );
    }

    /// Sends `player`'s client its exact motion when its prediction may
    /// have gone wrong: the server repeated its input (none arrived in
    /// time), the round changed what it may do (a phase, a death), it
    /// respawned, or every [`MOTION_KEYFRAME_TICKS`] (the first one seeds the
    /// prediction). Otherwise the client, stepping the same inputs with the
    /// same code, already has it: sending it each tick would cost ~4 KB/s
    /// per client for nothing.
    fn publish_motion(
        &mut self,
        world: &mut ReplicationWorld<ArenaKind>,
        player: PlayerId,
        tick: Tick,
    ) {
        let i = usize::from(player.0);
        let Some(f) = self.fighters[i] else {
            return;
        };
        let motion = ArenaMotion {
            // The locomotion cycle is for drawing; no step reads it.
            state: crate::MoveState {
                locomotion_phase: 0.0,
                ..f.movement
            },
            yaw: f.yaw,
            rule: move_rule(self.clock.phase, &f, &self.stage.map),
            life: f.life,
        };
        let body = usize::from(f.body.0);
        let (sent_at, sent) = self.motions[body];
        let due = std::mem::take(&mut self.motion_due[i])
            || sent_at == 0
            || tick.is_multiple_of(MOTION_KEYFRAME_TICKS)
            || sent.rule != motion.rule
            || sent.life != motion.life;
        if due {
            world.set(f.body, MOTION, &mut self.motions[body], (tick, motion));
        }
    }

    fn team_size(&self, team: Team) -> usize {
        self.fighters().filter(|(_, f)| f.team == team).count()
    }

    fn spawn(&mut self, player: PlayerId, round: u16) {
        let max_health = self.config.max_health;
        let Some(f) = self.fighters[usize::from(player.0)].as_mut() else {
            return;
        };
        let point = self.stage.map.spawn_point(f.team, f.slot, u64::from(round));
        f.movement = crate::MoveState::spawned(&point);
        f.life = f.life.wrapping_add(1);
        f.yaw = point.yaw;
        f.pitch = 0.0;
        if !f.alive {
            f.armor = 0;
            f.loadout.reset();
        }
        f.health = max_health;
        f.alive = true;
    }

    fn record_poses(&mut self, tick: Tick) {
        if !(self.history.is_recording() && self.history.is_record_tick(tick)) {
            return;
        }
        for i in 0..self.fighters.len() {
            if let Some(f) = &self.fighters[i]
                && f.alive
            {
                self.history.record(PlayerId(i as u16), tick, f.pose());
            }
        }
    }

    fn fog_of_war(&mut self, tick: Tick) {
        for (i, slot) in self.fog_input.iter_mut().enumerate() {
            *slot = match &self.fighters[i] {
                Some(f) => (f.team, f.pose(), f.alive),
                None => (Team::Attackers, Pose::default(), false),
            };
        }
        self.fog.update(tick, &self.stage.map, &self.fog_input);
        for v in 0..self.fighters.len() {
            self.visible[v].clear();
            let Some(viewer) = &self.fighters[v] else {
                continue;
            };
            for (t, target) in self.fighters.iter().enumerate() {
                if let Some(target) = target
                    && target.team != viewer.team
                    && self.fog.visible(v, t)
                {
                    self.visible[v].insert(target.body);
                }
            }
        }
    }
}

struct Fnv(u64);

impl Fnv {
    fn u64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl ReplicationSource for Arena {
    type Archetype = ArenaKind;

    fn write_group(
        &self,
        entity: EntityId,
        archetype: ArenaKind,
        group: u8,
        w: &mut BitWriter,
    ) -> Result<(), ProtoError> {
        let i = usize::from(entity.0);
        match (archetype, group) {
            (ArenaKind::Player, TRANSFORM) => self.codec.write(w, &self.transforms[i]),
            (ArenaKind::Player, VITALS) => wire::write_vitals(w, &self.vitals[i]),
            (ArenaKind::Player, MOTION) => {
                let (tick, motion) = &self.motions[i];
                wire::write_motion(w, *tick, motion)
            }
            (ArenaKind::Wallet, MONEY) => wire::write_money(w, self.money[i]),
            _ => Err(ProtoError::invalid("arena field group")),
        }
    }

    fn write_group_since(
        &self,
        entity: EntityId,
        archetype: ArenaKind,
        group: u8,
        ticks: RecordTicks,
        w: &mut BitWriter,
    ) -> Result<(), ProtoError> {
        if (archetype, group) != (ArenaKind::Player, TRANSFORM) {
            return self.write_group(entity, archetype, group, w);
        }
        let i = usize::from(entity.0);
        let t = &self.transforms[i];
        let base = ticks.acked.and_then(|acked| {
            let age = ticks.snapshot.checked_sub(acked)?;
            (age <= transform_delta::MAX_BASE_AGE)
                .then(|| self.transform_history.at(i, acked))
                .flatten()
                .map(|b| (age, b))
        });
        transform_delta::write(w, t, self.codec.position_bits(), base, |w| {
            self.codec.write(w, t)
        })
    }

    fn owner(&self, entity: EntityId) -> Option<PlayerId> {
        Arena::owner(self, entity)
    }

    fn priority(&self, viewer: PlayerId, entity: EntityId) -> f32 {
        let (Some(v), Some(owner)) = (self.fighter(viewer), Arena::owner(self, entity)) else {
            return 1.0;
        };
        if owner == viewer {
            return 100.0;
        }
        let Some(t) = self.fighter(owner) else {
            return 1.0;
        };
        let to = t.position() - v.position();
        let d = to.length();
        // Near players matter more; enemies more than teammates; those the
        // viewer looks at more than those beside it, those behind it less.
        let base = if t.team == v.team { 0.5 } else { 1.0 };
        let gaze = self.gaze[usize::from(viewer.0)];
        base * 20.0 / (d + 5.0) * gaze_weight(gaze, to)
    }
}

/// Priority factor of a target in the viewer's view cone (45 degrees
/// either side of its yaw); 2 and 3 freshen what a player looks at more
/// but let the rest of the crowd go staler (docs/PERFORMANCE.md, "A crowd
/// that stays fresh").
const GAZE_IN_VIEW: f32 = 1.5;
/// Priority factor of a target in the cone behind the viewer.
const GAZE_BEHIND: f32 = 0.75;

/// How the viewer's gaze (`(sin yaw, cos yaw)`) weighs a target at
/// offset `to`: in the view cone [`GAZE_IN_VIEW`], in the cone behind
/// [`GAZE_BEHIND`], beside (or right on top) 1. Without branches: the
/// pairs come in no order a branch predictor could learn.
fn gaze_weight(gaze: Vec2, to: Vec3) -> f32 {
    let ahead = to.x * gaze.x + to.z * gaze.y;
    // Within 45 degrees of the gaze (or of behind): ahead^2 > flat^2 / 2.
    let flat2 = to.x * to.x + to.z * to.z;
    let cone = if ahead > 0.0 {
        GAZE_IN_VIEW
    } else {
        GAZE_BEHIND
    };
    if ahead * ahead * 2.0 > flat2 {
        cone
    } else {
        1.0
    }
}

impl Arena {
    /// Tells `player`'s client who it is (`Welcome`) and who else plays
    /// (`PlayerJoined` for each other player).
    fn introduce(&self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        let Some(me) = self.fighter(player) else {
            return;
        };
        ctx.send_event(
            player,
            ArenaEvent::Welcome {
                player: me.body,
                team: me.team,
            },
        );
        for (other, f) in self.fighters() {
            if other != player {
                ctx.send_event(
                    player,
                    ArenaEvent::PlayerJoined {
                        player: f.body,
                        team: f.team,
                    },
                );
            }
        }
        // Where the round stands, for a client arriving mid-phase.
        let phase = match self.clock.phase {
            Phase::Waiting => None,
            Phase::Buy => Some(RoundPhase::Buy),
            Phase::Combat => Some(RoundPhase::Live),
            Phase::RoundEnd | Phase::MatchOver => Some(RoundPhase::Over),
        };
        if let Some(phase) = phase {
            ctx.send_event(
                player,
                ArenaEvent::RoundStart {
                    round: self.clock.round.min(crate::event::MAX_ROUND),
                    phase,
                    phase_end_tick: self.clock.phase_end,
                },
            );
        }
    }
}

impl Game for Arena {
    type Input = ArenaInput;
    type Replica = ArenaReplica;
    type Event = ArenaEvent;
    type MatchResult = MatchRecord;

    fn join(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        player: PlayerId,
    ) -> Result<(), JoinRefused> {
        let i = usize::from(player.0);
        if i >= self.fighters.len() || self.fighters[i].is_some() {
            return Err(JoinRefused("slot taken"));
        }
        let team = if self.team_size(Team::Defenders) < self.team_size(Team::Attackers) {
            Team::Defenders
        } else {
            Team::Attackers
        };
        let mut slot = 0;
        while self
            .fighters()
            .any(|(_, f)| f.team == team && f.slot == slot)
        {
            slot += 1;
        }
        // The body is the player's avatar: the engine tells its client which
        // entity it steers (`hightick_avatar` in the engine clients), again on
        // each reconnect, and forgets it when the body is despawned.
        let body = ctx
            .world
            .spawn_avatar(player, ArenaKind::Player)
            .map_err(|_| JoinRefused("no entity slot"))?;
        let Ok(wallet) = ctx.world.spawn(ArenaKind::Wallet) else {
            ctx.world.despawn(body);
            return Err(JoinRefused("no entity slot"));
        };
        let point = self
            .stage
            .map
            .spawn_point(team, slot, u64::from(self.clock.round));
        // Mid-round joiners wait for the next round.
        let alive = matches!(self.clock.phase, Phase::Waiting | Phase::Buy);
        self.fighters[i] = Some(Fighter {
            body,
            wallet,
            team,
            slot,
            movement: crate::MoveState::spawned(&point),
            life: 0,
            yaw: point.yaw,
            pitch: 0.0,
            health: if alive { self.config.max_health } else { 0 },
            armor: 0,
            loadout: Loadout::starting(),
            money: self.config.start_money,
            alive,
            shots: 0,
            refused_moves: 0,
            kills: 0,
            deaths: 0,
        });
        self.owner[usize::from(body.0)] = Some(player);
        self.owner[usize::from(wallet.0)] = Some(player);
        self.buy_held[i] = false;
        self.shots[i] = None;
        self.history.clear(player);
        self.fog.invalidate();
        self.publish(ctx.world, player);
        // The newcomer learns who it is and who is already here, then
        // everyone hears of it: every player entity an event may name is
        // one the client heard of.
        self.introduce(ctx, player);
        ctx.broadcast_event(ArenaEvent::PlayerJoined { player: body, team });
        Ok(())
    }

    fn reconnect(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        // Back from a released seat: the player takes over from its bot.
        if let Some(bot) = self.stand_ins.get_mut(usize::from(player.0)) {
            *bot = None;
        }
        self.introduce(ctx, player);
    }

    /// A bot takes over: the team keeps its numbers and the round its
    /// rules, the fighter keeps its money, kills and result line, and the
    /// player gets it back if it returns ([`Game::reconnect`]). Removing
    /// the fighter instead would leave a 5v4 for the rest of the match.
    fn seat_released(&mut self, _ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        let i = usize::from(player.0);
        if let Some(bot) = self.stand_ins.get_mut(i) {
            *bot = Some(Bot::new(player, self.seed ^ 0x5EA7, BotStyle::default()));
        }
    }

    fn leave(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        let i = usize::from(player.0);
        let Some(f) = self.fighters.get_mut(i).and_then(Option::take) else {
            return;
        };
        for e in [f.body, f.wallet] {
            self.owner[usize::from(e.0)] = None;
            ctx.world.despawn(e);
        }
        self.shots[i] = None;
        self.stand_ins[i] = None;
        self.history.clear(player);
        for seen in self.visible.iter_mut() {
            seen.remove(f.body);
        }
    }

    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        player: PlayerId,
        command: &InputCommand<ArenaInput>,
        source: InputSource,
    ) {
        let i = usize::from(player.0);
        let stand_in = self.stand_ins[i].take().map(|mut bot| {
            let command = bot.command(&*self, ctx.tick());
            self.stand_ins[i] = Some(bot);
            command
        });
        let command = stand_in.as_ref().unwrap_or(command);
        let phase = self.clock.phase;
        let buying = command.payload.buttons.contains(Buttons::BUY);
        if phase == Phase::Buy && buying && !self.buy_held[i] {
            let _s = ctx.scope(Subsystem::Gameplay, "purchase");
            self.buy(ctx, player, command.payload.weapon_slot);
        }
        self.buy_held[i] = buying;
        let Some(f) = self.fighters[i].as_mut() else {
            return;
        };
        if !f.alive || matches!(phase, Phase::Waiting | Phase::MatchOver) {
            return;
        }
        // Pitch: any finite view wraps; anything else keeps the old one (the
        // stride below takes the yaw the same way).
        if command.payload.yaw.is_finite() && command.payload.pitch.is_finite() {
            f.pitch = crate::clamp_pitch(command.payload.pitch);
        }
        {
            let _s = ctx.scope(Subsystem::Equippable, "select");
            match command.payload.weapon_slot {
                1 => {
                    f.loadout.select(Slot::Secondary);
                }
                2 => {
                    f.loadout.select(Slot::Primary);
                }
                _ => {}
            }
            if command.payload.buttons.contains(Buttons::RELOAD) {
                f.loadout
                    .active_mut()
                    .start_reload(ctx.tick(), ctx.tick_rate_hz());
            }
        }
        {
            let _s = ctx.scope(Subsystem::Movement, "move_and_slide");
            let rule = move_rule(phase, f, &self.stage.map);
            let step = stride(
                &self.stage,
                rule,
                &mut f.movement,
                &mut f.yaw,
                &command.payload,
                ctx.dt(),
            );
            if step.is_some_and(|s| s.refused) {
                f.refused_moves += 1;
            }
            if step.is_some() && source == InputSource::Repeated {
                self.motion_due[i] = true;
            }
        }
        if phase == Phase::Combat && command.payload.buttons.contains(Buttons::FIRE) {
            let _s = ctx.scope(Subsystem::Equippable, "trigger");
            if f.loadout.try_fire(ctx.tick(), ctx.tick_rate_hz()) {
                f.shots = f.shots.wrapping_add(1);
                self.shots[i] = Some(PendingShot {
                    aim_tick: command.aim_tick,
                });
            }
        }
        let _s = ctx.scope(Subsystem::Replication, "setters");
        self.publish(ctx.world, player);
    }

    fn tick(&mut self, ctx: &mut TickContext<'_, Self>) {
        let tick = ctx.tick();
        {
            let _s = ctx.scope(Subsystem::Animation, "record_poses");
            self.record_poses(tick);
        }
        {
            let _s = ctx.scope(Subsystem::Equippable, "resolve_shots");
            self.resolve_shots(ctx);
        }
        {
            let _s = ctx.scope(Subsystem::Gameplay, "round_rules");
            self.round_rules(ctx);
        }
        {
            // After the round's rules: a phase that changed this tick
            // changes what the next step allows.
            let _s = ctx.scope(Subsystem::Replication, "motions");
            for i in 0..self.fighters.len() {
                self.publish_motion(ctx.world, PlayerId(i as u16), tick);
            }
        }
        let _s = ctx.scope(Subsystem::Fow, "line_of_sight");
        self.fog_of_war(tick);
    }

    fn relevance(
        &mut self,
        viewer: PlayerId,
        _world: &ReplicationWorld<ArenaKind>,
        relevant: &mut InterestSet,
    ) {
        let v = usize::from(viewer.0);
        let Some(me) = self.fighters.get(v).and_then(|f| f.as_ref()) else {
            return;
        };
        for f in self.fighters.iter().flatten() {
            if f.team == me.team {
                relevant.insert(f.body);
                relevant.insert(f.wallet);
            }
        }
        relevant.union_with(&self.visible[v]);
    }

    fn result(&self) -> Option<MatchRecord> {
        if self.clock.phase != Phase::MatchOver {
            return None;
        }
        Some(MatchRecord {
            winner: self.clock.last_winner?,
            score: self.clock.score,
            rounds: self.clock.round,
            players: self
                .fighters()
                .map(|(player, f)| PlayerRecord {
                    player,
                    team: f.team,
                    kills: f.kills,
                    deaths: f.deaths,
                })
                .collect(),
        })
    }
}

/// The feet-plane direction from `from` to `to` as a yaw (0 along +z).
pub fn yaw_towards(from: Vec3, to: Vec3) -> f32 {
    let d = Vec2::new(to.x - from.x, to.z - from.z);
    d.x.atan2(d.y)
}

#[cfg(test)]
mod gaze_tests {
    use super::*;
    use std::f32::consts::FRAC_PI_2;

    #[test]
    fn the_gaze_weighs_ahead_beside_and_behind() {
        // Yaw 0 looks along +z, yaw pi/2 along +x.
        let gaze = |yaw: f32| Vec2::new(yaw.sin(), yaw.cos());
        let w = |yaw, x, z| gaze_weight(gaze(yaw), Vec3::new(x, 3.0, z));
        assert_eq!(w(0.0, 0.5, 10.0), GAZE_IN_VIEW);
        assert_eq!(w(0.0, 10.0, 1.0), 1.0);
        assert_eq!(w(0.0, -1.0, -10.0), GAZE_BEHIND);
        assert_eq!(w(FRAC_PI_2, 10.0, 1.0), GAZE_IN_VIEW);
        assert_eq!(gaze_weight(gaze(FRAC_PI_2), Vec3::ZERO), 1.0);
        // The cone's edge, either side.
        assert_eq!(w(0.0, 0.99, 1.0), GAZE_IN_VIEW);
        assert_eq!(w(0.0, 1.01, 1.0), 1.0);
    }
}
