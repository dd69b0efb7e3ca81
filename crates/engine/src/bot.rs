//! Virtual players of a game ([`Bot`]), as the swarm drives them over the
//! real protocol; [`BotGame`], which names a game's bot; and [`NewBot`], how
//! one is made (by `Default`, unless the bot needs its match or its place in
//! the fleet).
//!
//! A bot lives on the client side: it sees what its client holds (the
//! replicated world and the reliable events) and decides each tick's input.
//! It is also the game's consistency check: what it received must hang
//! together (an event naming an entity never heard of, a dead body that
//! moves), and each contradiction it finds counts as a desync.

use std::fmt::Debug;

use hightick_proto::InputCommand;

use crate::game::Game;
use crate::mode::{HostedGame, Mode};
use crate::replication::ClientWorld;
use crate::tick::Tick;

/// One virtual player of game `G`, on the client side.
pub trait Bot<G: Game>: Send + Debug + 'static {
    /// Learns from one reliable event; `false` if the event contradicts
    /// what the bot knows (counted as a desync). Default: learns nothing.
    fn observe(&mut self, event: &G::Event) -> bool {
        let _ = event;
        true
    }

    /// Checks the world after new snapshots; returns how many
    /// contradictions it found (each counted as a desync). Default: none
    /// checked.
    fn check_world(&mut self, world: &ClientWorld<G::Replica>) -> u64 {
        let _ = world;
        0
    }

    /// The input for server tick `tick`, looking at `world`. The bot sets
    /// the envelope's `aim_tick` (the tick it acts on what it saw of).
    fn command(&mut self, world: &ClientWorld<G::Replica>, tick: Tick) -> InputCommand<G::Input>;

    /// Whether the bot learnt that its match is over, beyond the events
    /// that say so themselves ([`ReliableEvent::ends_match`]). Default: no.
    ///
    /// [`ReliableEvent::ends_match`]: crate::events::ReliableEvent::ends_match
    fn match_over(&self) -> bool {
        false
    }
}

/// How a bot of game `G` is made. A bot that is `Default` is made so, and
/// its game writes nothing; a bot that needs its match (mode, settings,
/// rate), its place in the fleet or a seed implements this itself.
pub trait NewBot<G: HostedGame>: Sized {
    /// A bot for a match of `mode` with `settings` at `tick_rate_hz`: the
    /// `index`th of its fleet (to tell bots apart), deciding from `seed`.
    fn new_bot(
        mode: &Mode,
        settings: &G::Settings,
        tick_rate_hz: u32,
        index: u16,
        seed: u64,
    ) -> Result<Self, String>;
}

impl<G: HostedGame, B: Default> NewBot<G> for B {
    fn new_bot(_: &Mode, _: &G::Settings, _: u32, _: u16, _: u64) -> Result<Self, String> {
        Ok(B::default())
    }
}

/// A game whose matches bots can play: the swarm, the demo and the lab
/// drive it through this.
pub trait BotGame: HostedGame {
    /// The game's bot: made by `Default` when it is, or by its own
    /// [`NewBot`].
    type Bot: Bot<Self> + NewBot<Self>;

    /// A bot for a match of `mode` with `settings` at `tick_rate_hz`: the
    /// `index`th of its fleet, deciding from `seed` ([`NewBot::new_bot`]).
    fn bot(
        mode: &Mode,
        settings: &Self::Settings,
        tick_rate_hz: u32,
        index: u16,
        seed: u64,
    ) -> Result<Self::Bot, String> {
        Self::Bot::new_bot(mode, settings, tick_rate_hz, index, seed)
    }

    /// Where a replica stands (metres), for the match bots' measure of
    /// interpolation error; `None` (the default) when the game does not
    /// say, and that measure is left out.
    fn replica_position(replica: &Self::Replica) -> Option<[f32; 3]> {
        let _ = replica;
        None
    }
}
