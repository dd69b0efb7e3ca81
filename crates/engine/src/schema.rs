//! [`GameSchema`]: a game's whole wire vocabulary as data (its input, its
//! events, its archetypes and their replicated state, each field with its
//! encoding), gathered from what the derives describe, with a hash that a
//! client and a server compare when they connect. `<game> schema` prints
//! it as JSON; bindings for other languages are generated from it.
//!
//! Hand-written codecs describe nothing: their part is `null` and the hash
//! cannot see a change in them ([`GameSchema::complete`] says whether
//! every part is described).

use std::hash::Hasher;

use hightick_proto::wire::TypeSchema;
use serde::Serialize;

use crate::events::ReliableEvent;
use crate::game::Game;
use crate::mode::HostedGame;
use crate::replication::Replica;
use crate::world::Archetype;
use hightick_proto::InputPayload;

/// One kind of replicated entity: its name, the id Enter records carry and
/// the name of the state it carries (described in
/// [`GameSchema::replica`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArchetypeSchema {
    /// The archetype (`Runner`, or an enum's variant).
    pub name: &'static str,
    /// Its wire id.
    pub wire_id: u8,
    /// The Rust type of its replicated state (`RunnerState`).
    pub state: &'static str,
}

/// A game's wire vocabulary and its hash.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GameSchema {
    /// The game's name (`HostedGame::NAME`).
    pub game: &'static str,
    /// What the hash covers (in the JSON, beside `game`).
    #[serde(flatten)]
    pub wire: WireSchema,
    /// [`wire_hash`] in 16 hex digits, for people and tools.
    pub hash: String,
}

impl GameSchema {
    /// The schema of game `G`, from what its types' derives describe.
    pub fn of<G: HostedGame>() -> Self {
        let wire = WireSchema::of::<G>();
        Self {
            game: G::NAME,
            hash: format!("{:016x}", wire.hash()),
            wire,
        }
    }

    /// Whether every part is described (no hand-written codec), so the
    /// hash covers the whole vocabulary.
    pub fn complete(&self) -> bool {
        let w = &self.wire;
        w.input.is_some() && w.event.is_some() && w.archetypes.is_some() && w.replica.is_some()
    }
}

/// The hash a client and a server of game `G` compare when they connect:
/// a 64-bit FNV-1a hash of the JSON form of the engine's version and the
/// described parts of the schema (not the game's name: two games that
/// read each other's bytes the same may talk). The same declarations give
/// the same hash on every machine and build.
pub fn wire_hash<G: Game>() -> u64 {
    WireSchema::of::<G>().hash()
}

/// What a client and a server must agree on: the engine's version and the
/// game's described vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WireSchema {
    /// The engine's version: its messages around the game's are part of
    /// what both sides must agree on.
    pub engine: &'static str,
    /// What a player sends each tick.
    pub input: Option<&'static TypeSchema>,
    /// The reliable events; an enum's variant names, in snake case, are
    /// the kinds.
    pub event: Option<&'static TypeSchema>,
    /// The kinds of replicated entities.
    pub archetypes: Option<&'static [ArchetypeSchema]>,
    /// The replicated state (the client's view), with each field's group.
    pub replica: Option<&'static TypeSchema>,
}

impl WireSchema {
    /// The parts game `G`'s types describe.
    pub fn of<G: Game>() -> Self {
        Self {
            engine: env!("CARGO_PKG_VERSION"),
            input: <G::Input as InputPayload>::SCHEMA,
            event: <G::Event as ReliableEvent>::SCHEMA,
            archetypes: <G::Archetype as Archetype>::SCHEMA,
            replica: <G::Replica as Replica>::SCHEMA,
        }
    }

    /// The 64-bit FNV-1a hash of its JSON form ([`wire_hash`]).
    pub fn hash(&self) -> u64 {
        let json = serde_json::to_vec(self).expect("a schema is plain data");
        let mut hasher = fnv::FnvHasher::default();
        hasher.write(&json);
        hasher.finish()
    }
}
