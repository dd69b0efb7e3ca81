//! The match bots: real UDP clients of a game playing its own bot, apart
//! from the HTTP load generator at the crate's root. A [`MatchBot`] is one
//! (`match_bot`), a [`Fleet`] many on tokio (`fleet`; a group of bots whose
//! servers are on loopback shares one socket, `shared_socket`), a scenario's
//! `play_match` step plays one to the end of its match (`play`), and the
//! scenario's `link` key puts some of them behind an emulated link
//! (`link`).

pub(crate) mod fleet;
pub mod link;
pub(crate) mod match_bot;
pub(crate) mod play;
pub(crate) mod shared_socket;

pub use fleet::{BotTarget, Fleet, FleetConfig, FleetReport, Relay, run_fleet};
pub use match_bot::{MatchBot, MatchBotConfig, mode_and_settings};
pub use play::{MatchPlayer, MatchTicket, play_match};
