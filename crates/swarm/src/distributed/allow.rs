//! Where an agent may send load: the allow-list it was started with
//! (`--allow-target`). Every target of a scenario it is handed, as the
//! address it resolved to, and every game server a `play_match` step's
//! connect token names, must be on it; otherwise the agent refuses the run
//! (or the match) before a single byte goes there.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::error::SwarmError;
use crate::scenario::TargetSpec;

/// One entry: a network, or one host name (or address) and port.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// `10.0.0.0/8`, `::1/128`, or a bare address (a network of one).
    Network {
        /// The network's address (host bits zero).
        base: IpAddr,
        /// Its prefix length.
        prefix: u8,
    },
    /// `gateway.hightick.svc:8080`, `[::1]:8080`: a target with exactly
    /// this host (as written in its URL, case aside) and port.
    HostPort {
        /// The host, lower case, without brackets.
        host: String,
        /// The port.
        port: u16,
    },
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Network { base, prefix } => write!(f, "{base}/{prefix}"),
            Self::HostPort { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Self::HostPort { host, port } => write!(f, "{host}:{port}"),
        }
    }
}

/// The networks and `host:port`s an agent may send load to. The default
/// is loopback only (`127.0.0.0/8`, `::1/128`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<Entry>,
}

impl Default for AllowList {
    fn default() -> Self {
        Self::loopback()
    }
}

impl fmt::Display for AllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// Bits of an address, as a number to mask.
fn bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

/// The mask of the first `prefix` of `width` bits.
fn mask(prefix: u8, width: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        (u128::MAX << (128 - u32::from(prefix))) >> (128 - u32::from(width))
    }
}

fn network(ip: IpAddr, prefix: u8, text: &str) -> Result<Entry, String> {
    let (value, width) = bits(ip);
    if prefix > width {
        return Err(format!(
            "`{text}`: a prefix of {prefix} bits on a {width}-bit address"
        ));
    }
    let m = mask(prefix, width);
    if value & !m != 0 {
        return Err(format!(
            "`{text}`: host bits are set (did you mean {}/{prefix}?)",
            from_bits(value & m, width)
        ));
    }
    Ok(Entry::Network { base: ip, prefix })
}

fn from_bits(value: u128, width: u8) -> IpAddr {
    if width == 32 {
        IpAddr::V4(Ipv4Addr::from(value as u32))
    } else {
        IpAddr::V6(Ipv6Addr::from(value))
    }
}

impl AllowList {
    /// Loopback only.
    pub fn loopback() -> Self {
        Self {
            entries: vec![
                Entry::Network {
                    base: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
                    prefix: 8,
                },
                Entry::Network {
                    base: IpAddr::V6(Ipv6Addr::LOCALHOST),
                    prefix: 128,
                },
            ],
        }
    }

    /// Anywhere (a local run, where whoever runs it chose the targets).
    pub fn anywhere() -> Self {
        Self {
            entries: vec![
                Entry::Network {
                    base: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                    prefix: 0,
                },
                Entry::Network {
                    base: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                    prefix: 0,
                },
            ],
        }
    }

    /// Reads entries as `--allow-target` takes them: `10.0.0.0/8`,
    /// `::1/128`, `192.0.2.7` (one address), `host:port`, `[::1]:8080`.
    /// The error names the entry at fault.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, SwarmError> {
        let mut out = Vec::with_capacity(entries.len());
        for text in entries {
            out.push(Self::entry(text.as_ref().trim()).map_err(SwarmError::AllowList)?);
        }
        if out.is_empty() {
            return Err(SwarmError::AllowList(
                "an empty allow-list (leave it out for loopback only)".to_owned(),
            ));
        }
        Ok(Self { entries: out })
    }

    fn entry(text: &str) -> Result<Entry, String> {
        if let Some((addr, prefix)) = text.split_once('/') {
            let ip: IpAddr = addr
                .parse()
                .map_err(|e| format!("`{text}`: `{addr}` is not an IP address: {e}"))?;
            let prefix: u8 = prefix
                .parse()
                .map_err(|e| format!("`{text}`: prefix `{prefix}`: {e}"))?;
            return network(ip, prefix, text);
        }
        if let Ok(ip) = text.parse::<IpAddr>() {
            let (_, width) = bits(ip);
            return network(ip, width, text);
        }
        if let Ok(addr) = text.parse::<SocketAddr>() {
            return Ok(Entry::HostPort {
                host: addr.ip().to_string(),
                port: addr.port(),
            });
        }
        let (host, port) = text.rsplit_once(':').ok_or_else(|| {
            format!("`{text}`: expected a network (10.0.0.0/8), an address, or host:port")
        })?;
        let port: u16 = port
            .parse()
            .map_err(|e| format!("`{text}`: port `{port}`: {e}"))?;
        if host.is_empty() || host.contains(['/', '[', ']', ' ', '@']) {
            return Err(format!("`{text}`: `{host}` is not a host name"));
        }
        Ok(Entry::HostPort {
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    /// Whether a target at `host` (as its URL names it) and `port`, which
    /// resolved to `addr`, may receive load.
    pub fn allows(&self, host: &str, port: u16, addr: SocketAddr) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let ip = addr.ip().to_canonical();
        self.entries.iter().any(|e| match e {
            Entry::Network { base, prefix } => {
                let (want, width) = bits(*base);
                let (have, have_width) = bits(ip);
                width == have_width && have & mask(*prefix, width) == want
            }
            Entry::HostPort { host: h, port: p } => {
                *p == port && (h.eq_ignore_ascii_case(host) || h == &ip.to_string())
            }
        })
    }

    /// Whether a game server at `addr` (from a connect token) may receive load.
    pub fn allows_addr(&self, addr: SocketAddr) -> bool {
        self.allows(&addr.ip().to_string(), addr.port(), addr)
    }

    /// Every target URL (with `addrs`, what each resolved to, URL by URL
    /// in target order) is allowed, or the error names the first that is not.
    pub fn check_targets(
        &self,
        targets: &[TargetSpec],
        addrs: &[SocketAddr],
    ) -> Result<(), SwarmError> {
        let urls = targets
            .iter()
            .flat_map(|t| t.urls.iter().map(move |u| (t, u)));
        for ((t, u), addr) in urls.zip(addrs) {
            if !self.allows(&u.host, u.port, *addr) {
                return Err(SwarmError::TargetRefused {
                    target: t.name.clone(),
                    url: u.url.clone(),
                    addr: *addr,
                    allowed: self.to_string(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_default_is_loopback_only() {
        let a = AllowList::default();
        assert!(a.allows("localhost", 80, at("127.0.0.1:80")));
        assert!(a.allows("127.9.9.9", 1, at("127.9.9.9:1")));
        assert!(a.allows("::1", 80, at("[::1]:80")));
        assert!(a.allows_addr(at("[::ffff:127.0.0.1]:80")), "v4-mapped");
        assert!(!a.allows("example.com", 80, at("93.184.216.34:80")));
        assert!(
            !a.allows("localhost", 80, at("10.0.0.1:80")),
            "names do not count, addresses do"
        );
        assert!(!a.allows_addr(at("[::2]:80")));
        assert_eq!(a.to_string(), "127.0.0.0/8, ::1/128");
    }

    #[test]
    fn networks_addresses_and_host_ports() {
        let a = AllowList::parse(&[
            "10.0.0.0/8",
            "192.0.2.7",
            "fd00::/8",
            "Gateway.hightick.svc:8080",
            "[2001:db8::1]:9000",
        ])
        .unwrap();
        assert!(a.allows_addr(at("10.200.3.4:7777")));
        assert!(!a.allows_addr(at("11.0.0.1:7777")));
        assert!(a.allows_addr(at("192.0.2.7:1")));
        assert!(!a.allows_addr(at("192.0.2.8:1")));
        assert!(a.allows_addr(at("[fd12::5]:1")));
        assert!(a.allows("gateway.hightick.svc", 8080, at("172.16.0.9:8080")));
        assert!(!a.allows("gateway.hightick.svc", 8081, at("172.16.0.9:8081")));
        assert!(!a.allows("evil.example", 8080, at("172.16.0.9:8080")));
        assert!(a.allows_addr(at("[2001:db8::1]:9000")));
        assert!(!a.allows_addr(at("[2001:db8::1]:9001")));
        assert!(
            !a.allows_addr(at("127.0.0.1:80")),
            "an explicit list replaces loopback"
        );
        assert_eq!(
            a.to_string(),
            "10.0.0.0/8, 192.0.2.7/32, fd00::/8, gateway.hightick.svc:8080, [2001:db8::1]:9000"
        );
        let any = AllowList::anywhere();
        assert!(any.allows_addr(at("8.8.8.8:53")) && any.allows_addr(at("[2001::1]:1")));
        assert!(
            AllowList::parse(&["0.0.0.0/0"])
                .unwrap()
                .allows_addr(at("1.2.3.4:5"))
        );
    }

    #[test]
    fn every_url_of_a_target_is_checked() {
        let t = TargetSpec::parse_list(
            "gateway",
            &["http://127.0.0.1:8080", "http://gateway-b.example:8081"],
        )
        .unwrap();
        let a = AllowList::default();
        let local = [at("127.0.0.1:8080"), at("127.0.0.1:8081")];
        assert!(a.check_targets(std::slice::from_ref(&t), &local).is_ok());
        let err = a
            .check_targets(&[t], &[at("127.0.0.1:8080"), at("10.1.2.3:8081")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("http://gateway-b.example:8081"), "{err}");
        assert!(!err.contains("127.0.0.1:8080,"), "{err}");
    }

    #[test]
    fn bad_entries_are_named() {
        for (bad, says) in [
            ("10.0.0.1/8", "host bits"),
            ("10.0.0.0/33", "33 bits"),
            ("10.0.0/8", "not an IP"),
            ("gateway", "host:port"),
            ("gateway:http", "port"),
            ("http://x:80", "not an IP"),
            ("gate way:80", "host name"),
            ("::1/129", "129 bits"),
        ] {
            let err = AllowList::parse(&[bad]).unwrap_err().to_string();
            assert!(err.contains(bad) && err.contains(says), "{bad}: {err}");
        }
        assert!(AllowList::parse::<&str>(&[]).is_err());
    }
}
