//! What an arena bot knows, client side: [`Knowledge`] gathered from events
//! (who am I, the phase, the round, what I bought) and [`BotSight`], the
//! arena bot's [`BotView`] over the client's replicated world.

use glam::Vec3;
use hightick_engine::replication::ClientWorld;
use hightick_engine::{EntityId, PlayerId};

use crate::bot::{BotSelf, BotView};
use crate::event::{ArenaEvent, RoundPhase};
use crate::game::{ArenaKind, ArenaReplica, Phase};
use crate::{Map, MovementParams, Team, WeaponKind};

/// What the events told a client. See the [module docs](self).
#[derive(Debug)]
pub struct Knowledge {
    map: Map,
    params: MovementParams,
    me: Option<EntityId>,
    team: Option<Team>,
    phase: Phase,
    round: u16,
    match_over: bool,
}

impl Knowledge {
    /// Knowledge of a match on `map`, before any event.
    pub fn new(map: Map) -> Self {
        Self {
            map,
            params: MovementParams::default(),
            me: None,
            team: None,
            phase: Phase::Waiting,
            round: 0,
            match_over: false,
        }
    }

    /// The client's own body, once welcomed.
    pub fn me(&self) -> Option<EntityId> {
        self.me
    }

    /// The client's team, once welcomed.
    pub fn team(&self) -> Option<Team> {
        self.team
    }

    /// Whether a `MatchEnd` arrived.
    pub fn match_over(&self) -> bool {
        self.match_over
    }

    /// Learns from one event.
    pub fn observe(&mut self, event: &ArenaEvent) {
        match *event {
            ArenaEvent::Welcome { player, team } => {
                self.me = Some(player);
                self.team = Some(team);
            }
            ArenaEvent::RoundStart { round, phase, .. } => {
                self.round = round;
                self.phase = match phase {
                    RoundPhase::Warmup => Phase::Waiting,
                    RoundPhase::Buy => Phase::Buy,
                    RoundPhase::Live => Phase::Combat,
                    RoundPhase::Over => Phase::RoundEnd,
                };
            }
            ArenaEvent::RoundEnd { .. } => self.phase = Phase::RoundEnd,
            ArenaEvent::MatchEnd { .. } => {
                self.phase = Phase::MatchOver;
                self.match_over = true;
            }
            _ => {}
        }
    }

    /// The bot's view of `world` with this knowledge.
    pub fn sight<'a>(&'a self, world: &'a ClientWorld<ArenaReplica>) -> BotSight<'a> {
        BotSight {
            knowledge: self,
            world,
        }
    }
}

/// A [`BotView`] over a client's world and [`Knowledge`].
#[derive(Debug, Clone, Copy)]
pub struct BotSight<'a> {
    knowledge: &'a Knowledge,
    world: &'a ClientWorld<ArenaReplica>,
}

impl BotSight<'_> {
    fn my_team(&self) -> Option<Team> {
        let me = self.knowledge.me?;
        let vitals = self.world.get(me)?.state.vitals;
        vitals.map(|v| v.team).or(self.knowledge.team)
    }
}

impl BotView for BotSight<'_> {
    fn me(&self, _player: PlayerId) -> Option<BotSelf> {
        let me = self.knowledge.me?;
        let body = self.world.get(me)?;
        let (t, v) = (body.state.transform?, body.state.vitals?);
        let position = Vec3::from_array(t.position);
        // Its place in the team: teammates with a lower entity id.
        let slot = self
            .world
            .iter()
            .filter(|e| e.entity.0 < me.0 && e.archetype == ArenaKind::Player)
            .filter(|e| e.state.vitals.is_some_and(|o| o.team == v.team))
            .count();
        Some(BotSelf {
            team: v.team,
            slot,
            position,
            eye: position + Vec3::Y * self.knowledge.params.eye_height(t.crouch),
            yaw: t.yaw,
            pitch: t.pitch,
            alive: v.alive,
            // The client does not know which wallet is its own; the server
            // refuses what cannot be paid for.
            money: u32::MAX,
            armor: v.armor,
            has_primary: v.weapon == WeaponKind::Rifle.code(),
        })
    }

    fn phase(&self) -> Phase {
        self.knowledge.phase
    }

    fn round(&self) -> u16 {
        self.knowledge.round
    }

    fn for_each_enemy(&self, _player: PlayerId, each: &mut dyn FnMut(EntityId, Vec3)) {
        let Some(team) = self.my_team() else {
            return;
        };
        for e in self.world.iter() {
            if e.archetype != ArenaKind::Player {
                continue;
            }
            if let (Some(t), Some(v)) = (e.state.transform, e.state.vitals)
                && v.team != team
                && v.alive
            {
                each(e.entity, Vec3::from_array(t.position));
            }
        }
    }

    fn map(&self) -> &Map {
        &self.knowledge.map
    }
}
