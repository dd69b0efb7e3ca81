//! The arena bot as a client plays it ([`ArenaBot`], the arena's
//! [`Bot`](hightick_engine::Bot)): the scripted [`Bot`](crate::bot::Bot)
//! deciding from what the client knows ([`Knowledge`] of the events,
//! [`BotSight`] of the replicated world), and the arena's consistency checks
//! ([`Consistency`]): an event naming an entity never heard of, or an enemy
//! whose vitals say dead yet who moves, is a desync.

mod consistency;
mod knowledge;

pub use consistency::Consistency;
pub use knowledge::{BotSight, Knowledge};

use hightick_engine::mode::{HostedGame, Mode};
use hightick_engine::replication::ClientWorld;
use hightick_engine::tick::Tick;
use hightick_engine::{BotGame, NewBot, PlayerId};
use hightick_proto::InputCommand;

use crate::Map;
use crate::bot::Bot;
use crate::event::ArenaEvent;
use crate::game::{Arena, ArenaReplica};
use crate::hosting::ArenaSettings;
use crate::input::ArenaInput;

/// One arena bot on the client side. See the [module docs](self).
#[derive(Debug)]
pub struct ArenaBot {
    knowledge: Knowledge,
    bot: Bot,
    consistency: Consistency,
}

impl ArenaBot {
    /// The `index`th bot of a fleet playing on `map` with the scripted
    /// behaviour `bot`, for a world of `entities` slots.
    pub fn new(map: Map, bot: Bot, entities: usize) -> Self {
        Self {
            knowledge: Knowledge::new(map),
            bot,
            consistency: Consistency::new(entities),
        }
    }

    /// What the events told it.
    pub fn knowledge(&self) -> &Knowledge {
        &self.knowledge
    }

    /// Its consistency checks (counts by kind).
    pub fn consistency(&self) -> &Consistency {
        &self.consistency
    }
}

impl hightick_engine::Bot<Arena> for ArenaBot {
    fn observe(&mut self, event: &ArenaEvent) -> bool {
        let consistent = self.consistency.check_event(event);
        self.knowledge.observe(event);
        consistent
    }

    fn check_world(&mut self, world: &ClientWorld<ArenaReplica>) -> u64 {
        self.consistency.check_world(world, self.knowledge.team())
    }

    fn command(
        &mut self,
        world: &ClientWorld<ArenaReplica>,
        tick: Tick,
    ) -> InputCommand<ArenaInput> {
        self.bot.command(&self.knowledge.sight(world), tick)
    }

    fn match_over(&self) -> bool {
        self.knowledge.match_over()
    }
}

impl NewBot<Arena> for ArenaBot {
    fn new_bot(
        mode: &Mode,
        settings: &ArenaSettings,
        tick_rate_hz: u32,
        index: u16,
        seed: u64,
    ) -> Result<ArenaBot, String> {
        let scenario = settings.scenario(mode, tick_rate_hz)?;
        let map = Map::builtin(&Arena::map_name(mode, settings)).map_err(|e| e.to_string())?;
        let bot = Bot::new(PlayerId(index), seed, scenario.bots);
        Ok(ArenaBot::new(
            map,
            bot,
            usize::from(scenario.match_config.max_entities),
        ))
    }
}

impl BotGame for Arena {
    type Bot = ArenaBot;

    fn replica_position(replica: &ArenaReplica) -> Option<[f32; 3]> {
        replica.transform.map(|t| t.position)
    }
}
