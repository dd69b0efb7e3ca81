//! Who the client is behind a load balancer: from a peer in
//! `[http] trusted_proxies`, the address in `X-Forwarded-For` (the
//! right-most one that is not itself a trusted proxy), else in `Forwarded`
//! (`for=`, the same way). A peer that is not trusted is the client, and its
//! headers are ignored: a client cannot forge its way into another's budget.

use std::net::IpAddr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The client address of a request, as the rate limits key it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// The proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// The blocks of `entries` (addresses or CIDR blocks); an entry that is
    /// neither comes back as the error.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        entries
            .iter()
            .map(|e| parse_block(e).ok_or_else(|| e.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    /// Whether `ip` is one of the trusted proxies.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client behind `peer`: `peer` itself unless it is trusted; else
    /// the right-most forwarded address that is not trusted (`peer` when
    /// every one is, or none can be read).
    pub fn client_ip(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let forwarded_for = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::to_owned)
            .collect::<Vec<_>>();
        let chain = if forwarded_for.is_empty() {
            headers
                .get_all("forwarded")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .filter_map(forwarded_for_param)
                .collect()
        } else {
            forwarded_for
        };
        chain
            .iter()
            .rev()
            .map_while(|hop| parse_hop(hop))
            .find(|ip| !self.trusts(*ip))
            .unwrap_or(peer)
    }
}

fn parse_block(entry: &str) -> Option<IpNet> {
    let entry = entry.trim();
    let net = entry
        .parse::<IpNet>()
        .ok()
        .or_else(|| entry.parse::<IpAddr>().ok().map(IpNet::from))?;
    // A block of IPv4-mapped IPv6 addresses is the IPv4 block it maps.
    match net {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => match v6.addr().to_ipv4_mapped() {
            Some(v4) => ipnet::Ipv4Net::new(v4, v6.prefix_len() - 96)
                .ok()
                .map(IpNet::V4),
            None => Some(net),
        },
        _ => Some(net),
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// One hop of a forwarding chain: `1.2.3.4`, `1.2.3.4:5678`, `[::1]`,
/// `[::1]:5678` or `::1`; `None` for anything else (`unknown`, an
/// obfuscated identifier), which ends the walk.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim().trim_matches('"');
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Some(rest) = hop.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok().map(canonical);
    }
    let (host, port) = hop.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse().ok().map(canonical)
}

/// The `for=` value of one `Forwarded` element (`for=1.2.3.4;proto=https`).
fn forwarded_for_param(element: &str) -> Option<String> {
    element.split(';').find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("for")
            .then(|| value.trim().to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(entries: &[&str]) -> TrustedProxies {
        TrustedProxies::parse(&entries.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, v.parse().unwrap());
        }
        map
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_right_most_untrusted_forwarded_address_is_the_client() {
        let p = proxies(&["10.0.0.0/8", "192.168.1.7"]);
        let h = headers(&[("x-forwarded-for", "6.6.6.6, 1.2.3.4, 10.1.1.1")]);
        // A client can put anything at the left; the proxies' own hops are
        // skipped from the right.
        assert_eq!(p.client_ip(ip("10.2.2.2"), &h), ip("1.2.3.4"));
        assert_eq!(p.client_ip(ip("192.168.1.7"), &h), ip("1.2.3.4"));
        // Two headers are one list.
        let h = headers(&[
            ("x-forwarded-for", "6.6.6.6"),
            ("x-forwarded-for", "1.2.3.4:5555"),
        ]);
        assert_eq!(p.client_ip(ip("10.2.2.2"), &h), ip("1.2.3.4"));
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let p = proxies(&["10.0.0.0/8"]);
        let h = headers(&[("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=1.2.3.4")]);
        assert_eq!(p.client_ip(ip("8.8.8.8"), &h), ip("8.8.8.8"));
        assert_eq!(proxies(&[]).client_ip(ip("10.0.0.1"), &h), ip("10.0.0.1"));
    }

    #[test]
    fn forwarded_is_read_when_x_forwarded_for_is_absent() {
        let p = proxies(&["10.0.0.0/8"]);
        let h = headers(&[(
            "forwarded",
            "for=\"[2001:db8::1]:4711\";proto=https, for=10.0.0.9",
        )]);
        assert_eq!(p.client_ip(ip("10.0.0.1"), &h), ip("2001:db8::1"));
        let h = headers(&[("forwarded", "for=unknown")]);
        assert_eq!(p.client_ip(ip("10.0.0.1"), &h), ip("10.0.0.1"));
    }

    #[test]
    fn only_proxies_and_junk_leave_the_peer() {
        let p = proxies(&["10.0.0.0/8", "::ffff:127.0.0.1/128"]);
        assert!(
            p.trusts(ip("127.0.0.1")),
            "a mapped address is its IPv4 one"
        );
        let h = headers(&[("x-forwarded-for", "10.9.9.9, 10.8.8.8")]);
        assert_eq!(p.client_ip(ip("10.0.0.1"), &h), ip("10.0.0.1"));
        let h = headers(&[("x-forwarded-for", "not-an-address")]);
        assert_eq!(p.client_ip(ip("10.0.0.1"), &h), ip("10.0.0.1"));
        assert!(TrustedProxies::parse(&["10.0.0.0/33".to_owned()]).is_err());
    }
}
