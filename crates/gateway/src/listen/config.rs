//! [`HttpConfig`]: the `[http]` table of the gateway's config.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Deadlines and caps of the HTTP connections (`[http]` in the config file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// Milliseconds a request's headers may take to arrive in full, counted
    /// from the connection's accept or from the first byte of a request on
    /// a kept-alive connection; past it the connection is closed. The main
    /// defence against clients that send their headers a byte at a time.
    pub header_timeout_ms: u64,
    /// Milliseconds a request's JSON body may take to arrive in full after
    /// its headers; past it the request is answered 408 (`field: body`).
    pub body_timeout_ms: u64,
    /// Seconds a kept-alive connection may sit between requests before it
    /// is closed.
    pub idle_timeout_s: u64,
    /// Connections open at once from one IP address; past it a new one is
    /// closed at accept. 0: no cap (the default: players behind one NAT,
    /// and tests on loopback, share an address).
    pub max_connections_per_ip: usize,
    /// The load balancers and reverse proxies in front of the gateway:
    /// addresses or CIDR blocks (`10.0.0.0/8`). From one of them, the
    /// client is the right-most address in `X-Forwarded-For` (else
    /// `Forwarded: for=`) that is not itself trusted, and the rate limits
    /// key on it; the per-IP connection cap does not count them. Forwarding
    /// headers from any other peer are ignored.
    #[schemars(example = ["10.0.0.0/8"])]
    pub trusted_proxies: Vec<String>,
    /// The access log, one JSON line per answered request with the client's
    /// address (the forwarded one behind a trusted proxy) and the peer's:
    /// a file path (appended to), `-` for standard error, or empty for
    /// none (the default). Routes are logged as templates, never with their
    /// ids or query strings.
    #[schemars(example = "/var/log/hightick/access.jsonl")]
    pub access_log: String,
    /// Connections from a trusted proxy start with a PROXY protocol header
    /// (v1 or v2), as a TCP (layer 4) load balancer sends it: the client is
    /// the address it names, the per-IP cap counts that client, and a
    /// connection from a trusted proxy without one is closed. Connections
    /// from other peers never carry one. Needs `trusted_proxies`.
    pub proxy_protocol: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            header_timeout_ms: 10_000,
            body_timeout_ms: 10_000,
            idle_timeout_s: 120,
            max_connections_per_ip: 0,
            trusted_proxies: Vec::new(),
            access_log: String::new(),
            proxy_protocol: false,
        }
    }
}

impl HttpConfig {
    /// The first field out of range: its name (under `http.`) and the rule.
    pub fn invalid_field(&self) -> Option<(&'static str, &'static str)> {
        if !(100..=600_000).contains(&self.header_timeout_ms) {
            return Some(("http.header_timeout_ms", "must be in 100..=600000"));
        }
        if !(100..=600_000).contains(&self.body_timeout_ms) {
            return Some(("http.body_timeout_ms", "must be in 100..=600000"));
        }
        if !(1..=86_400).contains(&self.idle_timeout_s) {
            return Some(("http.idle_timeout_s", "must be in 1..=86400"));
        }
        if super::TrustedProxies::parse(&self.trusted_proxies).is_err() {
            return Some((
                "http.trusted_proxies",
                "each must be an address or a CIDR block (10.0.0.0/8)",
            ));
        }
        if self.proxy_protocol && self.trusted_proxies.is_empty() {
            return Some((
                "http.proxy_protocol",
                "needs http.trusted_proxies: the proxies that send the header",
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_valid_and_each_bound_names_its_field() {
        assert_eq!(HttpConfig::default().invalid_field(), None);
        let instant_headers = HttpConfig {
            header_timeout_ms: 0,
            ..HttpConfig::default()
        };
        assert_eq!(
            instant_headers.invalid_field().map(|f| f.0),
            Some("http.header_timeout_ms")
        );
        let never_idle = HttpConfig {
            idle_timeout_s: 0,
            ..HttpConfig::default()
        };
        assert_eq!(
            never_idle.invalid_field().map(|f| f.0),
            Some("http.idle_timeout_s")
        );
    }
}
