//! Everything a game's crate names, in one import:
//! `use hightick_engine::prelude::*;`. The traits a game implements
//! ([`Game`], [`HostedGame`], [`BotGame`], [`Bot`]) with what their hooks
//! take and return, and the derives that declare its wire vocabulary
//! (each beside its trait, as serde pairs `Serialize` with its derive).

pub use crate::bot::{Bot, BotGame, NewBot};
pub use crate::config::MatchConfig;
pub use crate::game::{Game, JoinRefused, TickContext};
pub use crate::input::InputSource;
pub use crate::interest::InterestSet;
pub use crate::mode::{HostedGame, MatchReport, MatchStatus, Mode, Outcome, PlayerReport};
pub use crate::player::PlayerId;
pub use crate::replication::ClientWorld;
pub use crate::tick::Tick;
pub use crate::world::ReplicationWorld;
pub use crate::{Archetype, InputPayload, ReliableEvent, Replicated, ReplicationSource, Wire};
pub use hightick_proto::{EntityId, InputCommand};
