//! The packet layer: what rides inside one connection's sealed payloads.
//!
//! What it is for: one [`PacketEndpoint`] per connection (`endpoint.rs`) ties
//! together 16-bit packet sequence numbers and acks with per-packet delivery
//! notifications ([`reliable`], [`sequence`]), a reliable ordered and an
//! unreliable [`channel`] (`channel_reliable.rs`, `channel_unreliable.rs`, their
//! byte ring `channel_ring.rs`), fragments of reliable messages up to 64 KiB
//! (`fragment.rs`), and RTT and loss estimates ([`rtt`]). Its errors,
//! [`PacketError`] and [`Malformed`], live in `error.rs` at the bottom of the
//! layer so every module here can name them.
//!
//! What it is not: it knows nothing of tokens, keys, encryption, addresses or
//! handshakes, and nothing here imports from [`crate::secure`]. It takes and
//! produces plain payload bytes; the secure layer seals them, checks replays
//! and hands opened payloads back in. It reads no clock and touches no socket.
//!
//! Inside the layer, modules depend downwards only: `error` and `sequence` at
//! the bottom; `fragment` and `rtt` on them; `channel` on `fragment`;
//! `channel_ring`, then `channel_reliable` and `channel_unreliable` on
//! `channel`; `reliable` (acks) on `channel_reliable`; `endpoint` on all of them.

pub mod channel;
mod channel_reliable;
mod channel_ring;
mod channel_unreliable;
pub mod endpoint;
mod error;
mod fragment;
pub mod reliable;
pub mod rtt;
pub mod sequence;

pub use channel::Channel;
pub use endpoint::{PacketConfig, PacketEndpoint, PacketStats, ReceivedMessage};
pub use error::{Malformed, PacketError};
pub use reliable::{Delivery, DeliveryOutcome, HEADER_LEN, PacketHeader};
