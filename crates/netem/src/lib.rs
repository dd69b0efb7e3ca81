//! Network impairment in user space, for testing games on the links players
//! really have (this kernel has no `netem` qdisc, so it cannot live in `tc`).
//!
//! Two parts:
//! - a sans-IO core, [`Emulator`]: per flow and direction a [`Lane`] decides
//!   each datagram's fate (scheduled outages, random and bursty
//!   Gilbert–Elliott loss, a bandwidth cap with a tail-drop queue, latency
//!   plus jitter that keeps order, reordering, duplication) from a seeded
//!   ChaCha generator, so the same seed and inputs give the same decisions;
//!   a [`DelayLine`] hands datagrams back when they are due;
//! - [`Proxy`], the core on real UDP sockets on a thread of its own: one
//!   upstream socket per client source address (the server sees distinct
//!   clients), a bounded number of flows, idle ones forgotten, and its own
//!   CPU time measured apart.
//!
//! Links are [`LinkProfile`]s: the built-ins `lan`, `wifi`, `mobile` and
//! `bad` ([`LinkProfile::builtin`]) or a TOML file ([`profile_file`]).
//!
//! It is not a network simulator: there is no congestion between flows, no
//! path MTU, and the bandwidth cap belongs to each flow (each client's own
//! access link). It changes no byte of what it forwards.
//!
//! ```no_run
//! use hightick_netem::{LinkProfile, Proxy, ProxyConfig};
//!
//! let proxy = Proxy::start(ProxyConfig::new(
//!     "127.0.0.1:0".parse().unwrap(),
//!     "127.0.0.1:7777".parse().unwrap(),
//!     LinkProfile::builtin("mobile").unwrap(),
//!     1,
//! ))
//! .unwrap();
//! println!("clients send to {}", proxy.local_addr());
//! let report = proxy.stop().unwrap();
//! println!("{} ns of CPU per datagram", report.ns_per_datagram);
//! ```

mod delay_line;
mod emulator;
mod error;
mod flows;
mod lane;
mod profile;
pub mod profile_file;
mod proxy;
mod stats;

pub use delay_line::{DelayLine, MAX_DATAGRAM, Release};
pub use emulator::{Emulator, EmulatorReport, Limits};
pub use error::NetemError;
pub use flows::{FlowId, FlowKey, FlowTable};
pub use lane::{Decision, DropReason, Lane};
pub use profile::{
    BUILTIN, Direction, DirectionProfile, GilbertElliott, LinkProfile, Outage, RateLimit,
};
pub use proxy::{DEFAULT_SLICE, Proxy, ProxyConfig, ProxyReport, Route};
pub use stats::{DirectionCounters, DirectionReport};

/// The link called `name` if it is a built-in, else the profile file at
/// that path: what `--link` takes.
pub fn link_named(name: &str) -> Result<LinkProfile, NetemError> {
    if BUILTIN.contains(&name) {
        LinkProfile::builtin(name)
    } else if name.ends_with(".toml") || name.contains('/') {
        profile_file::load(std::path::Path::new(name))
    } else {
        LinkProfile::builtin(name)
    }
}
