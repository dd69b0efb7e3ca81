//! The scenario's `link` key: all or some virtual players play their
//! matches behind an emulated link (`hightick_netem`), in this process.
//!
//! ```toml
//! link = "wifi"                # every player, a built-in link or a profile file
//! # or
//! [link]
//! profile = "mobile"           # lan, wifi, mobile, bad, or a profile file (.toml)
//! share = 0.5                  # share of the players behind it, spread evenly by player id
//! seed = 1                     # the proxy's decisions
//! ```
//!
//! A player behind the link sends every datagram of its `play_match` steps
//! to a proxy for its server (one proxy per server address, started when a
//! token first names it, kept for the run) and takes what comes back as
//! from the server; the token still names the server itself. HTTP steps
//! are not impaired. It is not a model of a shared bottleneck: each player
//! is its own flow with its own cap (see `hightick_netem`).

use std::collections::HashMap;
use std::net::SocketAddr;

use hightick_netem::{LinkProfile, Proxy, ProxyConfig};
use parking_lot::Mutex;

use crate::error::SwarmError;

/// Whether the `k`th of a run of players or seats is behind a link that
/// takes `share` (0..=1) of them, spread evenly: `share` 0.5 takes every
/// other one, 0.2 every fifth.
pub fn behind_share(share: f64, k: u64) -> bool {
    let k = k as f64;
    ((k + 1.0) * share).floor() > (k * share).floor()
}

/// A scenario's compiled `link`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkPlan {
    /// The link as written (a built-in's name or a file).
    pub link: String,
    /// Its profile.
    pub profile: LinkProfile,
    /// Share of the players behind it.
    pub share: f64,
    /// Seed of the proxies' decisions.
    pub seed: u64,
}

impl LinkPlan {
    /// Whether player `id` plays behind the link.
    pub fn behind(&self, id: u64) -> bool {
        behind_share(self.share, id)
    }
}

/// The run's proxies, one per server a player behind the link plays on.
#[derive(Debug)]
pub(crate) struct LinkProxies {
    plan: LinkPlan,
    proxies: Mutex<HashMap<SocketAddr, Proxy>>,
}

impl LinkProxies {
    pub(crate) fn new(plan: LinkPlan) -> Self {
        Self {
            plan,
            proxies: Mutex::new(HashMap::new()),
        }
    }

    /// Where player `id` sends its datagrams for `server`: `None` when it
    /// is not behind the link, else the proxy's address (started now if no
    /// player went to `server` through it before).
    pub(crate) fn via(
        &self,
        id: u64,
        server: SocketAddr,
    ) -> Result<Option<SocketAddr>, SwarmError> {
        if !self.plan.behind(id) {
            return Ok(None);
        }
        let mut proxies = self.proxies.lock();
        if let Some(p) = proxies.get(&server) {
            return Ok(Some(p.local_addr()));
        }
        let listen = SocketAddr::new(server.ip(), 0);
        let seed = self.plan.seed ^ (u64::from(server.port()) << 32);
        let proxy = Proxy::start(ProxyConfig::new(
            listen,
            server,
            self.plan.profile.clone(),
            seed,
        ))?;
        let at = proxy.local_addr();
        proxies.insert(server, proxy);
        Ok(Some(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_proxy_per_server_and_none_for_players_in_front() {
        let links = LinkProxies::new(LinkPlan {
            link: "wifi".into(),
            profile: LinkProfile::builtin("wifi").unwrap(),
            share: 0.5,
            seed: 1,
        });
        let a: SocketAddr = "127.0.0.1:40001".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:40002".parse().unwrap();
        assert_eq!(links.via(0, a).unwrap(), None);
        let first = links.via(1, a).unwrap().unwrap();
        assert_eq!(links.via(3, a).unwrap(), Some(first));
        let other = links.via(3, b).unwrap().unwrap();
        assert_ne!(first, other);
        assert!(first.ip().is_loopback());
    }
}
