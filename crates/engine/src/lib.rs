//! The tick runtime of one hightick match: the [`Game`] trait a game mode
//! implements, the fixed-step [`Match`] that runs it, push replication
//! ([`replication`]), interest sets ([`InterestSet`]) and the
//! lag-compensation history ([`lag_comp`]).
//!
//! What it is for. A [`Match`] owns a game, its [`ReplicationWorld`](world::ReplicationWorld)
//! (which entities exist and when each field group last changed) and, per
//! player, an input buffer keyed by tick, a relevance set, a reliable event
//! queue and a snapshot buffer. Each [`Match::tick`] feeds every player's
//! input for the tick to [`Game::input`], runs [`Game::tick`], asks
//! [`Game::relevance`] what each client may see, and writes each client's
//! snapshot: every field group changed since the tick the client last
//! acknowledged for that entity, within a byte budget, most urgent first.
//! Everything is allocated when the match is created; a steady-state tick
//! allocates nothing (`tests/zero_alloc.rs` guards it).
//!
//! A game declares its input, events and replicated state once with the
//! derives re-exported here ([`Wire`], [`ReliableEvent`], [`InputPayload`],
//! [`Replicated`]; crate `hightick-derive`): the server's writer and the
//! client's reader come from the same declaration.
//!
//! Around the rules, a game tells the host what it offers ([`HostedGame`]:
//! its modes, match settings and the result hook) and, to be load-tested,
//! how a virtual player plays it ([`BotGame`]).
//!
//! What it is not. It reads no clock and touches no socket: the host decides
//! when a tick is due ([`tick::FixedStep`]) and sends the datagrams. One
//! packet per client per tick carries the snapshot and the events, through
//! the client's connection on `hightick-net`'s secure layer: the host calls
//! [`Match::transmit_tick`] (queued, written, sealed, its sequence recorded)
//! and feeds the connection's delivery notifications back with
//! [`Match::absorb_deliveries`] ([`endpoint`]). That is the one send path,
//! the server's and the tests' and benchmarks'; underneath it,
//! [`Match::queue_tick`], [`Match::packet_sent`] and [`Match::on_delivery`]
//! serve a host with a transport of its own. It holds no game rules:
//! movement, weapons, fog of war and poses belong to the game (the
//! reference one is `hightick-arena`).
//!
//! A toy game where every player owns a counter that its input moves:
//!
//! ```
//! use hightick_engine::input::InputSource;
//! use hightick_engine::replication::{ClientWorld, PacketFate, Replica, ReplicationSource};
//! use hightick_engine::world::{Archetype, GroupMask, ReplicationWorld};
//! use hightick_engine::{EntityId, Game, InterestSet, JoinRefused, Match, MatchConfig, PlayerId, TickContext};
//! use hightick_proto::{BitReader, BitWriter, InputCommand, ProtoError};
//!
//! #[derive(Debug, Clone, Copy, PartialEq, Eq)]
//! struct Counter; // the only archetype: one field group, the count
//! impl Archetype for Counter {
//!     fn wire_id(self) -> u8 { 0 }
//!     fn from_wire_id(id: u8) -> Option<Self> { (id == 0).then_some(Counter) }
//!     fn groups(self) -> GroupMask { GroupMask::first(1) }
//! }
//!
//! #[derive(Default)]
//! struct Counters { counts: Vec<i32>, owned: Vec<Option<EntityId>> }
//!
//! impl ReplicationSource for Counters {
//!     type Archetype = Counter;
//!     fn write_group(&self, e: EntityId, _: Counter, _group: u8, w: &mut BitWriter) -> Result<(), ProtoError> {
//!         w.write_signed_varint(self.counts[usize::from(e.0)])
//!     }
//! }
//!
//! impl Game for Counters {
//!     type Input = i8;       // how far to move the counter this tick
//!     type Event = ();       // no reliable events
//!     type Replica = Count;  // the client's copy, below
//!     type MatchResult = ();
//!     fn join(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) -> Result<(), JoinRefused> {
//!         let e = ctx.world.spawn(Counter).map_err(|_| JoinRefused("full"))?;
//!         self.owned[usize::from(p.0)] = Some(e);
//!         Ok(())
//!     }
//!     fn leave(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) {
//!         if let Some(e) = self.owned[usize::from(p.0)].take() { ctx.world.despawn(e); }
//!     }
//!     fn input(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId, cmd: &InputCommand<i8>, _: InputSource) {
//!         if let Some(e) = self.owned[usize::from(p.0)] {
//!             let next = self.counts[usize::from(e.0)] + i32::from(cmd.payload);
//!             // The setter stamps group 0 as changed (only if the value differs).
//!             ctx.world.set(e, 0, &mut self.counts[usize::from(e.0)], next);
//!         }
//!     }
//!     fn tick(&mut self, _ctx: &mut TickContext<'_, Self>) {}
//!     fn relevance(&mut self, _viewer: PlayerId, world: &ReplicationWorld<Counter>, relevant: &mut InterestSet) {
//!         relevant.copy_from(world.alive()); // no fog of war here
//!     }
//!     fn result(&self) -> Option<()> { None }
//! }
//!
//! // The client's copy of a counter.
//! #[derive(Default, Debug)]
//! struct Count(i32);
//! impl Replica for Count {
//!     type Archetype = Counter;
//!     fn read_group(&mut self, _: Counter, _group: u8, r: &mut BitReader) -> Result<(), ProtoError> {
//!         self.0 = r.read_signed_varint()?;
//!         Ok(())
//!     }
//! }
//!
//! let config = MatchConfig { max_players: 2, max_entities: 8, ..MatchConfig::default() };
//! let game = Counters { counts: vec![0; 8], owned: vec![None; 2] };
//! let mut m = Match::new(config, game)?;
//! let alice = m.join()?;
//! let mut client = ClientWorld::<Count>::new(8);
//!
//! for tick in 1..=3 {
//!     m.receive_command(alice, &InputCommand::new(tick, tick, 5))?;
//!     m.tick();
//!     // The host sends the snapshot in packet `tick`, which arrives and is acked.
//!     client.apply(m.snapshot(alice))?;
//!     m.packet_sent(alice, tick as u16);
//!     m.on_delivery(alice, tick as u16, PacketFate::Acked);
//! }
//! let mine = m.game().owned[0].unwrap();
//! assert_eq!(client.get(mine).unwrap().state.0, 15);
//! # Ok::<(), hightick_engine::EngineError>(())
//! ```

#![warn(missing_docs)]

pub mod bot;
pub mod config;
pub mod endpoint;
pub mod error;
pub mod events;
pub mod game;
pub mod input;
pub mod interest;
pub mod lag_comp;
pub mod mode;
mod player;
pub mod prediction;
pub mod prelude;
pub mod replication;
pub mod runtime;
pub mod schema;
pub mod tick;
pub mod world;

#[cfg(test)]
mod test_support;

pub use bot::{Bot, BotGame, NewBot};
pub use config::MatchConfig;
pub use error::EngineError;
pub use game::{Game, JoinRefused, TickContext};
pub use hightick_proto::EntityId;
pub use interest::InterestSet;
pub use mode::{HostedGame, MatchReport, MatchStatus, Mode, Outcome, PlayerReport};
pub use player::PlayerId;
pub use prediction::Predict;
pub use runtime::{MIN_SNAPSHOT_BUDGET_BYTES, Match};

// A game's wire vocabulary, declared once: each trait beside its derive
// (`hightick-derive`), as serde pairs `Serialize` with its derive.
pub use events::ReliableEvent;
pub use hightick_derive::{
    Archetype, InputPayload, ReliableEvent, Replicated, ReplicationSource, Wire,
};
pub use hightick_proto::{InputPayload, Wire};
pub use replication::{FieldGroups, ReplicationSource};
pub use world::Archetype;

/// What the derives' expanded code names; not an API.
#[doc(hidden)]
pub mod __derive {
    pub use crate::events::{MAX_EVENT_KINDS, ReliableEvent};
    pub use crate::replication::{FieldGroups, Replica, ReplicaTable, ReplicationSource};
    pub use crate::schema::ArchetypeSchema;
    pub use crate::world::{Archetype, GroupMask, MAX_GROUPS, ReplicationWorld};
    pub use hightick_proto::EntityId;
    pub use hightick_proto::message::{read_entity_id, write_entity_id};
    pub use hightick_proto::wire::{array, int, schema};
    pub use hightick_proto::{BitReader, BitWriter, InputPayload, ProtoError, Wire, quantize};
}
