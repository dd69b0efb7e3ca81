//! hightick-client: the client side of a hightick match, as a library.
//!
//! What it is for: [`GameClient`] is a sans-IO client core over
//! `hightick-net`'s secure [`Client`](hightick_net::Client). It connects
//! with a connect token, sends input commands with 4-deep redundancy on the
//! unreliable channel ([`GameClient::send_input`]), applies the snapshots the
//! server sends into a [`ClientWorld`](hightick_engine::replication::ClientWorld)
//! ([`GameClient::world`]) with an interpolation buffer per entity
//! ([`GameClient::interpolated`]), decodes the reliable events
//! ([`GameClient::poll_event`]), asks for a full resync when a snapshot does
//! not apply, and counts everything ([`GameClient::stats`]); a
//! [`QualityProbe`] measures what a player would see (snapshot age,
//! interpolation error). After set-up a
//! steady-state tick allocates nothing. [`UdpClient`] drives a core over a
//! UDP socket it drains once per wake-up (tokio's timer, no reactor
//! registration: arriving datagrams wake nobody).
//!
//! What it is not: it holds no game rules and no game-specific code: it is
//! generic over the game (`G: hightick_engine::Game`), whose input, event
//! and replica types it speaks; match bots live in `hightick-swarm`. The
//! core reads no clock and touches no socket (quinn-proto style:
//! `handle_datagram(now, from, bytes)`, `poll_transmit(now, buf)`,
//! `poll_timeout()`, `handle_timeout(now)`).
//!
//! A client of the arena (any `Game` works the same way):
//!
//! ```
//! use std::time::Instant;
//! use hightick_arena::game::Arena;
//! use hightick_arena::input::ArenaInput;
//! use hightick_client::GameClient;
//! use hightick_net::{ConnectToken, Key, TokenParams};
//! use hightick_proto::InputCommand;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = "127.0.0.1:40000".parse()?;
//! let token = ConnectToken::generate(
//!     &TokenParams {
//!         protocol_id: hightick_proto::PROTOCOL_ID,
//!         client_id: 7,
//!         create_unix: 1_700_000_000,
//!         expire_unix: 1_700_000_030,
//!         timeout_seconds: 5,
//!         server_addresses: &[server],
//!         user_data: &[],
//!     },
//!     &Key::generate(&mut rand::rng()),
//!     &mut rand::rng(),
//! )?;
//! let now = Instant::now();
//! let mut client = GameClient::<Arena>::new(token, now)?;
//! client.track_positions(|body| body.transform.map(|t| t.position));
//! // The first datagram is a connection request for the server.
//! let mut buf = [0u8; hightick_net::wire::MAX_PACKET_BYTES];
//! let t = client.poll_transmit(now, &mut buf).unwrap();
//! assert_eq!(t.destination, server);
//! // Inputs are kept for redundancy even before the connection is up.
//! let input = InputCommand::new(1, 0, ArenaInput { move_y: 127, ..ArenaInput::default() });
//! assert!(client.send_input(input).is_err());
//! assert_eq!(client.stats().packets_out, 1);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod core;
mod driver;
mod error;
pub mod interpolation;
pub mod prediction;
pub mod quality;
mod stats;

pub use crate::core::{GameClient, GameClientConfig, PositionOf};
pub use driver::UdpClient;
pub use error::{ClientError, Refusal};
pub use interpolation::Interpolation;
pub use prediction::{PredictionConfig, PredictionStats, Predictor};
pub use quality::{Quality, QualityProbe};
pub use stats::ClientStats;
