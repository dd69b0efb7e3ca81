//! [`Bot`]: a scripted input source for one arena player, so matches play
//! real rounds without a network or a person.
//!
//! A bot buys a rifle and armor when it can afford them, walks toward the
//! enemy spawn (wandering off when stuck), and when it sees an enemy it
//! stops, turns toward the enemy's chest with an aim error that shrinks over
//! its reaction time, and fires. It sees only what fog of war lets its
//! client see ([`Arena::sees`]) and stamps its commands with the tick whose
//! state it looked at, as a real client does. Everything it does follows
//! from its seed.
//!
//! The bot decides from a [`BotView`]: its own state, the phase, the enemies
//! it knows and the map's spawn points. [`Arena`] is one (the server-side
//! view, used by in-process scenarios); a network client builds another from
//! its replicated world and the events it received (`hightick-swarm`).

use glam::Vec3;
use hightick_engine::tick::Tick;
use hightick_engine::{EntityId, PlayerId};
use hightick_proto::InputCommand;

use crate::input::{ArenaInput, Buttons};

use crate::game::{Arena, Item, Phase, yaw_towards};
use crate::weapon::WeaponSpec;
use crate::{Map, SpawnPoint, Team};

/// What a bot knows of itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BotSelf {
    /// Its team.
    pub team: Team,
    /// Its place in the team (picks which enemy spawn point it heads to).
    pub slot: usize,
    /// Feet position.
    pub position: Vec3,
    /// Eye position.
    pub eye: Vec3,
    /// View yaw, radians.
    pub yaw: f32,
    /// View pitch, radians.
    pub pitch: f32,
    /// Alive this round.
    pub alive: bool,
    /// Money it can spend (a view that does not know says `u32::MAX`: the
    /// server refuses what cannot be paid for).
    pub money: u32,
    /// Armor points.
    pub armor: u8,
    /// Whether it carries a primary weapon.
    pub has_primary: bool,
}

/// Where a bot aims above an enemy's feet.
const CHEST_HEIGHT: f32 = 1.3;
/// How close to a patrol goal a bot turns back, metres.
const PATROL_TURN_DISTANCE: f32 = 4.0;
/// Squared metres added to an obstructed enemy's distance when choosing a target.
const OBSTRUCTED_PENALTY: f32 = 1.0e6;

/// What a [`Bot`] reads to decide: everything a client of `player` could know.
pub trait BotView {
    /// The bot's own state, if it is in the match.
    fn me(&self, player: PlayerId) -> Option<BotSelf>;
    /// The round's phase.
    fn phase(&self) -> Phase;
    /// The round number.
    fn round(&self) -> u16;
    /// Calls `each` with the body and feet position of every living enemy
    /// `player` currently knows, in a stable order.
    fn for_each_enemy(&self, player: PlayerId, each: &mut dyn FnMut(EntityId, Vec3));
    /// The map the match is played on.
    fn map(&self) -> &Map;
    /// The map's spawn points of `team`.
    fn spawn_points(&self, team: Team) -> &[SpawnPoint] {
        self.map().spawn_points(team)
    }
}

impl BotView for Arena {
    fn me(&self, player: PlayerId) -> Option<BotSelf> {
        let f = self.fighter(player)?;
        Some(BotSelf {
            team: f.team,
            slot: f.slot,
            position: f.position(),
            eye: f.pose().eye(self.movement_params()),
            yaw: f.yaw,
            pitch: f.pitch,
            alive: f.alive,
            money: f.money,
            armor: f.armor,
            has_primary: f.loadout.primary.is_some(),
        })
    }

    fn phase(&self) -> Phase {
        self.clock().phase
    }

    fn round(&self) -> u16 {
        self.clock().round
    }

    fn for_each_enemy(&self, player: PlayerId, each: &mut dyn FnMut(EntityId, Vec3)) {
        let Some(me) = self.fighter(player) else {
            return;
        };
        for (p, f) in self.fighters() {
            if f.team != me.team && f.alive && self.sees(player, p) {
                each(f.body, f.position());
            }
        }
    }

    fn map(&self) -> &Map {
        Arena::map(self)
    }
}

/// How a bot plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BotStyle {
    /// Ticks between seeing an enemy and the first shot.
    pub reaction_ticks: u32,
    /// Initial aim error (radians), shrinking to a tenth over the reaction.
    pub aim_error: f32,
    /// Ticks of latency: commands say the bot saw the state this many
    /// ticks before the previous one.
    pub latency_ticks: u32,
    /// Strafe side to side while shooting (less accurate, harder to hit)
    /// instead of holding still.
    pub strafe_while_shooting: bool,
}

impl Default for BotStyle {
    fn default() -> Self {
        Self {
            reaction_ticks: 24,
            aim_error: 0.05,
            latency_ticks: 4,
            strafe_while_shooting: false,
        }
    }
}

/// A scripted player. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Bot {
    player: PlayerId,
    style: BotStyle,
    rng: u64,
    target: Option<EntityId>,
    seen_at: Tick,
    error: (f32, f32),
    wander_until: Tick,
    wander_yaw: f32,
    check_at: Tick,
    check_position: Vec3,
    strafe: i8,
    buy_round: u16,
    buy_step: u8,
    /// Patrolling back toward its own spawn after reaching the enemy's.
    homeward: bool,
}

impl Bot {
    /// A bot playing `player`, deterministic from `seed`.
    pub fn new(player: PlayerId, seed: u64, style: BotStyle) -> Self {
        Self {
            player,
            style,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(player.0) | 1,
            target: None,
            seen_at: 0,
            error: (0.0, 0.0),
            wander_until: 0,
            wander_yaw: 0.0,
            check_at: 0,
            check_position: Vec3::ZERO,
            strafe: 127,
            buy_round: 0,
            buy_step: 0,
            homeward: false,
        }
    }

    /// The player it plays.
    pub fn player(&self) -> PlayerId {
        self.player
    }

    fn random(&mut self) -> f32 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    }

    /// The bot's command for `tick`, looking at what `view` shows as the
    /// previous tick left it.
    pub fn command<V: BotView + ?Sized>(
        &mut self,
        view: &V,
        tick: Tick,
    ) -> InputCommand<ArenaInput> {
        let aim_tick = tick.saturating_sub(1 + self.style.latency_ticks);
        InputCommand::new(tick, aim_tick, self.decide(view, tick))
    }

    fn decide<V: BotView + ?Sized>(&mut self, view: &V, tick: Tick) -> ArenaInput {
        let mut cmd = ArenaInput::default();
        let Some(me) = view.me(self.player) else {
            return cmd;
        };
        cmd.yaw = me.yaw;
        cmd.pitch = me.pitch;
        if !me.alive {
            self.target = None;
            return cmd;
        }
        match view.phase() {
            Phase::Buy => {
                self.shop(view.round(), &me, &mut cmd);
                return cmd;
            }
            Phase::Combat => {}
            _ => return cmd,
        }
        cmd.weapon_slot = 2;
        let eye = me.eye;
        // The nearest enemy the bot's client would know about, preferring
        // one in the line of fire: fog of war reveals enemies a little before
        // they clear a corner, and a shot into the wall is wasted.
        let mut best: Option<(EntityId, Vec3, f32, bool)> = None;
        let map = view.map();
        view.for_each_enemy(self.player, &mut |e, position| {
            let clear = crate::line_of_sight(map, eye, position + Vec3::Y * CHEST_HEIGHT);
            let d = position.distance_squared(me.position)
                + if clear { 0.0 } else { OBSTRUCTED_PENALTY };
            if best.is_none_or(|(_, _, bd, _)| d < bd) {
                best = Some((e, position, d, clear));
            }
        });
        match best {
            Some((_, enemy, _, false)) => {
                // Known but behind cover: close in on it.
                self.target = None;
                self.walk(Some(enemy), &me, tick, &mut cmd);
            }
            Some((e, enemy, _, true)) => {
                if self.target != Some(e) {
                    self.target = Some(e);
                    self.seen_at = tick;
                    let e = self.style.aim_error;
                    self.error = ((self.random() - 0.5) * 2.0 * e, (self.random() - 0.5) * e);
                }
                let chest = enemy + Vec3::Y * CHEST_HEIGHT;
                let to = chest - eye;
                let flat = (to.x * to.x + to.z * to.z).sqrt();
                let seen_for = tick.saturating_sub(self.seen_at);
                let settle = 1.0
                    - 0.9 * (seen_for as f32 / self.style.reaction_ticks.max(1) as f32).min(1.0);
                cmd.yaw = yaw_towards(eye, chest) + self.error.0 * settle;
                cmd.pitch = to.y.atan2(flat) + self.error.1 * settle;
                if seen_for >= self.style.reaction_ticks {
                    cmd.buttons |= Buttons::FIRE;
                }
                if self.style.strafe_while_shooting {
                    if tick.is_multiple_of(40) {
                        self.strafe = -self.strafe;
                    }
                    cmd.move_x = self.strafe;
                } else if (tick / 64 + u32::from(self.player.0)).is_multiple_of(3) {
                    // Hold still to shoot straight; crouch now and then.
                    cmd.buttons |= Buttons::CROUCH;
                }
            }
            None => {
                self.target = None;
                // Patrol: to the enemy spawn, then back home, and again.
                let goals = if self.homeward {
                    view.spawn_points(me.team)
                } else {
                    view.spawn_points(me.team.other())
                };
                let goal = goals.get(me.slot % goals.len().max(1)).map(|g| g.position);
                if goal.is_some_and(|g| g.distance(me.position) < PATROL_TURN_DISTANCE) {
                    self.homeward = !self.homeward;
                }
                self.walk(goal, &me, tick, &mut cmd);
            }
        }
        cmd
    }

    fn shop(&mut self, round: u16, me: &BotSelf, cmd: &mut ArenaInput) {
        if self.buy_round != round {
            self.buy_round = round;
            self.buy_step = 0;
            self.homeward = false;
        }
        // Press and release: a purchase happens on the press.
        let step = self.buy_step;
        self.buy_step = self.buy_step.saturating_add(1);
        let want = match step {
            0 if !me.has_primary && me.money >= WeaponSpec::RIFLE.price => Some(Item::Rifle),
            2 if me.armor == 0 => Some(Item::Armor),
            _ => None,
        };
        if let Some(item) = want {
            cmd.buttons |= Buttons::BUY;
            cmd.weapon_slot = item.slot();
        }
    }

    fn walk(&mut self, goal: Option<Vec3>, me: &BotSelf, tick: Tick, cmd: &mut ArenaInput) {
        if tick >= self.check_at {
            if self.check_at != 0 && me.position.distance(self.check_position) < 1.0 {
                self.wander_yaw = (self.random() - 0.5) * std::f32::consts::TAU;
                self.wander_until = tick + 96;
            }
            self.check_at = tick + 64;
            self.check_position = me.position;
        }
        let yaw = if tick < self.wander_until {
            self.wander_yaw
        } else {
            match goal {
                Some(goal) => yaw_towards(me.position, goal),
                None => me.yaw,
            }
        };
        if tick.is_multiple_of(48) && self.random() < 0.3 {
            self.strafe = -self.strafe;
        }
        cmd.yaw = yaw;
        cmd.pitch = 0.0;
        cmd.move_y = 127;
        cmd.move_x = if tick % 128 < 32 { self.strafe / 2 } else { 0 };
    }
}
