//! hightick-udp: batched UDP I/O on one socket (Linux). `recvmmsg` fills up
//! to [`BATCH`] datagrams per system call ([`ReceiveBatch`]) and `sendmmsg`
//! sends up to [`BATCH`] per call ([`SendBatch`]). Every buffer is allocated
//! when the batch is made; receiving and sending allocate nothing.
//!
//! What it is for: the host's workers read and write their sockets with it,
//! and so do match bots that share one socket per group. For those, each
//! datagram may name its own source address ([`SendBatch::commit_from`],
//! `IP_PKTINFO`), and a socket that asks for it ([`enable_destinations`])
//! learns which of its addresses each datagram was sent to
//! ([`ReceiveBatch::destination`]): one socket bound to `0.0.0.0:P` then
//! stands for many clients, `127.1.0.1:P`, `127.1.0.2:P`... on loopback.
//!
//! What it is not: it knows nothing of packets or connections
//! (`hightick-net`) and keeps no schedule; a caller decides when to read and
//! when to flush.
//!
//! The message headers point into the batch's own buffers, so they are
//! filled in just before each call (a few stores per datagram) instead of
//! once, which keeps the structs movable.
//!
//! ```
//! use hightick_udp::{ReceiveBatch, SendBatch, bind};
//!
//! let a = bind("127.0.0.1:0".parse()?)?;
//! let b = bind("127.0.0.1:0".parse()?)?;
//! let mut out = SendBatch::new();
//! out.buffer().expect("an empty batch has room")[..5].copy_from_slice(b"hello");
//! out.commit(5, b.local_addr()?);
//! assert_eq!(out.flush(&a).sent, 1);
//! let mut batch = ReceiveBatch::new();
//! while batch.receive(&b)? == 0 {
//!     std::thread::yield_now();
//! }
//! let (from, bytes) = batch.datagram(0).expect("one arrived");
//! assert_eq!((from, &bytes[..]), (a.local_addr()?, &b"hello"[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod address;
mod messages;
mod receive;
mod send;
mod socket;

pub use receive::ReceiveBatch;
pub use send::{Flushed, SendBatch};
pub use socket::{bind, bind_loopback, enable_destinations};

/// Datagrams per system call.
pub const BATCH: usize = 64;
/// Receive buffer per datagram: larger than any valid packet, so a longer
/// one is seen as truncated and dropped.
pub const RECEIVE_BYTES: usize = 2048;
/// Send buffer per datagram (the largest packet the secure layer writes).
pub const SEND_BYTES: usize = hightick_net::wire::MAX_PACKET_BYTES;

#[cfg(test)]
mod tests;
