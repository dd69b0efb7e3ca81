//! The [`Game`] trait a game mode implements, and the [`TickContext`] it is
//! handed every tick.

use hightick_proto::{InputCommand, InputPayload};
use hightick_telemetry::{Frame, Scope, Subsystem};

use crate::events::{EventQueue, ReliableEvent};
use crate::input::InputSource;
use crate::interest::InterestSet;
use crate::player::PlayerId;
use crate::replication::{Replica, ReplicationSource};
use crate::tick::Tick;
use crate::world::ReplicationWorld;

/// Why a game refused a player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinRefused(pub &'static str);

/// A game run by a [`Match`](crate::runtime::Match): the rules, the state, and the
/// hooks replication needs, with its own vocabulary on the wire.
///
/// Each tick the match calls [`input`](Self::input) once per connected player
/// (with the player's input for this tick, or the last one repeated), then
/// [`tick`](Self::tick), then per client [`relevance`](Self::relevance) and
/// the [`ReplicationSource`] hooks as it builds snapshots. Replicated state is
/// changed through the setters of `ctx.world`, which stamp what changed.
///
/// The associated types are the game's side of the protocol; the engine
/// carries them without knowing what they mean. A client of the game
/// (`hightick-client`, the swarm's bots) names the same game type and so
/// speaks the same messages.
pub trait Game: ReplicationSource + Sized + 'static {
    /// What a player does in one tick (sticks, buttons, a steering angle),
    /// inside the engine's envelope ([`InputCommand`]: its tick, the tick
    /// its player was viewing, the redundancy).
    type Input: InputPayload;
    /// One-off happenings sent on the reliable ordered channel.
    type Event: ReliableEvent;
    /// The client's copy of one entity: reads exactly what
    /// [`ReplicationSource::write_group`] writes.
    type Replica: Replica<Archetype = Self::Archetype> + std::fmt::Debug + Send;
    /// The record of a finished match (winner, scores, ...).
    type MatchResult;

    /// A player takes slot `player`: spawn its entities. Refusing leaves the
    /// slot free.
    fn join(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        player: PlayerId,
    ) -> Result<(), JoinRefused>;

    /// The player in slot `player` left: despawn or hand over its entities.
    /// Default: its avatar ([`ReplicationWorld::avatar`]) is despawned.
    fn leave(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        if let Some(avatar) = ctx.world.avatar(player) {
            ctx.world.despawn(avatar);
        }
    }

    /// The client of `player` came back on a new connection (or asked for a
    /// full resync): its pending events are gone, so tell it again what a
    /// newcomer learns (who else is here, the score). Its avatar is told
    /// again by the engine. Default: nothing.
    fn reconnect(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        let _ = (ctx, player);
    }

    /// The seat of `player` stays empty: its client has been gone for the
    /// host's seat timeout. The player is still in the match (its slot,
    /// entities and result line stay); the game decides what happens to it
    /// (a bot takes over, the avatar is removed...). If its client comes
    /// back after all, [`reconnect`](Self::reconnect) follows as usual.
    /// Default: nothing.
    fn seat_released(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        let _ = (ctx, player);
    }

    /// The input of `player` for this tick. The runtime has decoded it and
    /// checked its tick; checking that the move is possible is the game's
    /// job. `command.aim_tick` is the tick the player was viewing, for lag
    /// compensation.
    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        player: PlayerId,
        command: &InputCommand<Self::Input>,
        source: InputSource,
    );

    /// Advances the simulation by one tick of `ctx.dt()` seconds.
    fn tick(&mut self, ctx: &mut TickContext<'_, Self>);

    /// Fills `relevant` (cleared by the caller) with the entities `viewer`
    /// may know this tick: fog of war and distance rules are the game's.
    /// Default: every live entity, to every viewer.
    fn relevance(
        &mut self,
        viewer: PlayerId,
        world: &ReplicationWorld<Self::Archetype>,
        relevant: &mut InterestSet,
    ) {
        let _ = viewer;
        relevant.copy_from(world.alive());
    }

    /// The result once the match is over.
    fn result(&self) -> Option<Self::MatchResult>;
}

/// Whether slot `player` is marked connected.
pub(crate) fn slot_connected(connected: &[bool], player: PlayerId) -> bool {
    connected
        .get(usize::from(player.0))
        .copied()
        .unwrap_or(false)
}

/// The slots marked connected, in order.
pub(crate) fn connected_players(connected: &[bool]) -> impl Iterator<Item = PlayerId> + '_ {
    connected
        .iter()
        .enumerate()
        .filter(|(_, c)| **c)
        .map(|(i, _)| PlayerId(i as u16))
}

/// Opens telemetry scopes on the frame being recorded (object-safe, so the
/// context does not carry the recorder's lifetime).
pub(crate) trait FrameScopes {
    fn open(&self, subsystem: Subsystem, name: &'static str) -> Scope<'_>;
}

impl FrameScopes for Frame<'_> {
    fn open(&self, subsystem: Subsystem, name: &'static str) -> Scope<'_> {
        self.scope(subsystem, name)
    }
}

/// What a game sees during one tick: the tick number and step, the
/// replicated world, per-client event queues and telemetry scopes.
pub struct TickContext<'a, G: Game> {
    tick: Tick,
    tick_rate_hz: u32,
    /// The replicated entity table: spawn, despawn, and the setters that
    /// stamp changed field groups.
    pub world: &'a mut ReplicationWorld<G::Archetype>,
    events: &'a mut [EventQueue<G::Event>],
    connected: &'a [bool],
    frame: Option<&'a dyn FrameScopes>,
}

impl<G: Game> std::fmt::Debug for TickContext<'_, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickContext")
            .field("tick", &self.tick)
            .field("tick_rate_hz", &self.tick_rate_hz)
            .finish_non_exhaustive()
    }
}

impl<'a, G: Game> TickContext<'a, G> {
    pub(crate) fn new(
        tick: Tick,
        tick_rate_hz: u32,
        world: &'a mut ReplicationWorld<G::Archetype>,
        events: &'a mut [EventQueue<G::Event>],
        connected: &'a [bool],
        frame: Option<&'a dyn FrameScopes>,
    ) -> Self {
        Self {
            tick,
            tick_rate_hz,
            world,
            events,
            connected,
            frame,
        }
    }

    /// The tick being simulated.
    pub fn tick(&self) -> Tick {
        self.tick
    }

    /// Seconds per tick.
    pub fn dt(&self) -> f32 {
        1.0 / self.tick_rate_hz.max(1) as f32
    }

    /// Ticks per second.
    pub fn tick_rate_hz(&self) -> u32 {
        self.tick_rate_hz
    }

    /// Whether a player is connected in `player`'s slot.
    pub fn is_connected(&self, player: PlayerId) -> bool {
        slot_connected(self.connected, player)
    }

    /// The connected players, in slot order.
    pub fn players(&self) -> impl Iterator<Item = PlayerId> + '_ {
        connected_players(self.connected)
    }

    /// Queues `event` for `player`'s reliable channel. `false` if the player
    /// is not connected or its queue is full (counted).
    pub fn send_event(&mut self, player: PlayerId, event: G::Event) -> bool {
        self.is_connected(player) && self.events[usize::from(player.0)].push(event)
    }

    /// Queues `event` for every connected player.
    pub fn broadcast_event(&mut self, event: G::Event) {
        self.send_event_where(event, |_| true);
    }

    /// Queues `event` for every connected player `to` accepts (a team, the
    /// players near something...).
    pub fn send_event_where(&mut self, event: G::Event, mut to: impl FnMut(PlayerId) -> bool) {
        for (i, queue) in self.events.iter_mut().enumerate() {
            if self.connected[i] && to(PlayerId(i as u16)) {
                queue.push(event);
            }
        }
    }

    /// Opens a telemetry scope charged to `subsystem` and sub-scope `name`
    /// when the tick is being recorded; keep it in a `let _s` binding.
    pub fn scope(&self, subsystem: Subsystem, name: &'static str) -> Option<Scope<'a>> {
        self.frame.map(|f| f.open(subsystem, name))
    }
}
