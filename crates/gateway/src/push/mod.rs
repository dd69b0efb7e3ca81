//! Push to players: one WebSocket per player (`GET /v1/events`) carrying what
//! they would otherwise poll for. The sockets read the same state the polling
//! routes read (the login queue's tickets, the matchmaker's tickets); this
//! module only delivers.
//!
//! - [`Hub`]: the open sockets by account, each with a bounded queue of
//!   pushes. A publisher never waits: when a socket's queue is full its
//!   reader is too slow, and the socket is closed with a reason (never
//!   buffered without bound).
//! - [`positions`]: once a second, one pass over the matchmaking queues
//!   pushes each queued player whose position or queue length changed.
//! - [`event`]: the JSON of a push: the polling route's own body plus
//!   `type` and `at_ms` (unix milliseconds when the gateway published it, so
//!   a client on the same clock can measure event-to-client latency).
//!
//! What it is not: a second source of truth (nothing here decides a queue
//! position or a match), or a message bus between gateways.
//!
//! ```
//! use hightick_gateway::push::{Hub, PushConfig};
//! let hub = Hub::new(&PushConfig::default());
//! let mut socket = hub.subscribe(7);
//! hub.publish(7, "{\"type\":\"match_cancelled\"}".to_owned());
//! assert!(socket.try_next().is_some());
//! ```

mod config;
pub mod event;
mod hub;
pub mod positions;

pub use config::PushConfig;
pub use hub::{Hub, PushCounts, Seat, Subscription};
