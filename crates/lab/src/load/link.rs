//! Bots behind the impairment proxy: which seats ([`LinkSpec::behind`]) and
//! the proxy itself, in this process on a thread of its own, with one
//! route per server socket the bots behind it play on.
//!
//! How the bots reach the server through it: the connect tokens are minted
//! as ever, listing the server's own address, so the server's check that a
//! token names it holds. A bot behind the link sends every datagram to the
//! proxy's route for its server instead (`UdpClient::relay_via`), and takes
//! what comes back from the proxy as coming from the server. Listing the
//! proxy in the token would not do: a client moves on to the token's next
//! address when the first does not answer, so a bot could leave the
//! impaired path unseen, and the server would have to treat the proxy's
//! address as its own.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use hightick_netem::{LinkProfile, Proxy, ProxyConfig, Route};
use hightick_swarm::Relay;
use serde::{Deserialize, Serialize};

use crate::error::LabError;

/// Which bots play behind which link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    /// A built-in link (`lan`, `wifi`, `mobile`, `bad`) or a profile file.
    pub link: String,
    /// Share of the bots behind it, 0 to 1, spread evenly over every
    /// match's seats.
    pub share: f64,
    /// The seed of the proxy's decisions.
    pub seed: u64,
}

impl LinkSpec {
    /// All bots behind `link`, seed 1.
    pub fn new(link: &str) -> Self {
        Self {
            link: link.to_owned(),
            share: 1.0,
            seed: 1,
        }
    }

    /// The link's profile, or an error naming the flag.
    pub fn profile(&self) -> Result<LinkProfile, LabError> {
        if !(0.0..=1.0).contains(&self.share) {
            return Err(LabError::config("link_share", "must be in 0..=1"));
        }
        Ok(hightick_netem::link_named(&self.link)?)
    }

    /// Whether the `seat`th bot of the run (matches in order, their seats
    /// in order) plays behind the link.
    pub fn behind(&self, seat: usize) -> bool {
        hightick_swarm::link::behind_share(self.share, seat as u64)
    }
}

/// Starts the proxy with one route per server address in `servers`,
/// returning it and the relays that send each server's bots through it.
pub(crate) fn start_proxy(
    spec: &LinkSpec,
    profile: LinkProfile,
    servers: impl IntoIterator<Item = SocketAddr>,
) -> Result<(Proxy, Vec<Relay>), LabError> {
    let servers: Vec<SocketAddr> = servers
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    let routes = servers
        .iter()
        .map(|&upstream| Route {
            listen: loopback,
            upstream,
        })
        .collect();
    let proxy = Proxy::start(ProxyConfig {
        routes,
        ..ProxyConfig::new(loopback, loopback, profile, spec.seed)
    })?;
    let relays = servers
        .iter()
        .zip(proxy.listening())
        .map(|(&server, &via)| Relay { server, via })
        .collect();
    Ok((proxy, relays))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_spreads_evenly_over_the_seats() {
        let behind = |share: f64| {
            let spec = LinkSpec {
                share,
                ..LinkSpec::new("wifi")
            };
            (0..10).filter(|&k| spec.behind(k)).collect::<Vec<_>>()
        };
        assert_eq!(behind(1.0).len(), 10);
        assert!(behind(0.0).is_empty());
        assert_eq!(behind(0.5), [1, 3, 5, 7, 9]);
        assert_eq!(behind(0.2), [4, 9]);
    }

    #[test]
    fn links_are_named_or_files_and_the_share_is_checked() {
        assert_eq!(LinkSpec::new("bad").profile().unwrap().name, "bad");
        let err = LinkSpec::new("dialup").profile().unwrap_err().to_string();
        assert!(err.contains("unknown link"), "{err}");
        let spec = LinkSpec {
            share: 1.5,
            ..LinkSpec::new("bad")
        };
        assert!(
            spec.profile()
                .unwrap_err()
                .to_string()
                .starts_with("link_share")
        );
    }
}
