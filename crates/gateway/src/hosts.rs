//! Server hosts the gateway may allocate matches on: listed in the config
//! (always eligible) or registered over the API with a heartbeat (eligible
//! while the heartbeat is fresh), each with a capacity in matches. A match is
//! allocated with the host's admin API, `POST /v1/matches`
//! (`{"mode", "roster"}` -> `201 {"id", "address", ...}`).

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};

/// Longest an allocation call may take.
const ALLOCATE_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest admin answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// One host as the registry sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostEntry {
    /// Its admin API address (the registry's key).
    pub admin: SocketAddr,
    /// Matches it may be given at once.
    pub capacity: usize,
    /// Matches it runs (its last report plus those allocated since).
    pub active: usize,
    /// Seconds since its last heartbeat (`None`: from the config).
    pub last_seen_s: Option<f64>,
}

#[derive(Debug, Clone)]
struct Host {
    admin: SocketAddr,
    capacity: usize,
    active: usize,
    last_seen: Option<Instant>,
}

/// The host registry.
#[derive(Debug)]
pub struct Hosts {
    hosts: Mutex<Vec<Host>>,
    timeout: Duration,
}

impl Hosts {
    /// A registry holding the configured `fixed` hosts; registered ones expire
    /// `timeout` after their last heartbeat.
    pub fn new(fixed: &[(SocketAddr, usize)], timeout: Duration) -> Self {
        let hosts = fixed
            .iter()
            .map(|&(admin, capacity)| Host {
                admin,
                capacity,
                active: 0,
                last_seen: None,
            })
            .collect();
        Self {
            hosts: Mutex::new(hosts),
            timeout,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Host>> {
        self.hosts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a host or refreshes its heartbeat and load.
    pub fn heartbeat(&self, admin: SocketAddr, capacity: usize, active: usize, now: Instant) {
        let mut hosts = self.lock();
        if let Some(h) = hosts.iter_mut().find(|h| h.admin == admin) {
            h.capacity = capacity;
            h.active = active;
            if h.last_seen.is_some() {
                h.last_seen = Some(now);
            }
        } else {
            hosts.push(Host {
                admin,
                capacity,
                active,
                last_seen: Some(now),
            });
        }
    }

    /// Eligible hosts with room, most free capacity first.
    pub fn candidates(&self, now: Instant) -> Vec<SocketAddr> {
        let mut hosts = self.lock();
        hosts.retain(|h| {
            h.last_seen
                .is_none_or(|t| now.saturating_duration_since(t) < self.timeout * 4)
        });
        let mut eligible: Vec<&Host> = hosts
            .iter()
            .filter(|h| {
                h.active < h.capacity
                    && h.last_seen
                        .is_none_or(|t| now.saturating_duration_since(t) < self.timeout)
            })
            .collect();
        eligible.sort_by_key(|h| std::cmp::Reverse(h.capacity - h.active));
        eligible.iter().map(|h| h.admin).collect()
    }

    /// Counts a match allocated on `admin`.
    pub fn allocated(&self, admin: SocketAddr) {
        if let Some(h) = self.lock().iter_mut().find(|h| h.admin == admin) {
            h.active += 1;
        }
    }

    /// Marks `admin` full until its next heartbeat (it refused a match).
    pub fn full(&self, admin: SocketAddr) {
        if let Some(h) = self.lock().iter_mut().find(|h| h.admin == admin) {
            h.active = h.capacity;
        }
    }

    /// Every host, for the API.
    pub fn list(&self, now: Instant) -> Vec<HostEntry> {
        self.lock()
            .iter()
            .map(|h| HostEntry {
                admin: h.admin,
                capacity: h.capacity,
                active: h.active,
                last_seen_s: h
                    .last_seen
                    .map(|t| now.saturating_duration_since(t).as_secs_f64()),
            })
            .collect()
    }
}

/// What the gateway asks a host for.
#[derive(Debug, Serialize)]
struct CreateMatch<'a> {
    mode: &'a str,
    roster: &'a [u64],
}

/// The part of a host's answer the gateway uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Allocated {
    /// The host's match id.
    pub id: u64,
    /// Where the clients connect.
    pub address: SocketAddr,
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocateError {
    /// The host answered 503 (full or draining): try another.
    #[error("host {0} is full or draining")]
    Full(SocketAddr),
    /// Anything else (unreachable, refused the request, malformed answer).
    #[error("host {host}: {reason}")]
    Failed {
        /// The host.
        host: SocketAddr,
        /// Why.
        reason: String,
    },
}

/// Calls hosts' admin APIs over pooled HTTP/1.1 connections.
#[derive(Debug, Clone)]
pub struct HostClient {
    http: Client<HttpConnector, Full<Bytes>>,
}

impl Default for HostClient {
    fn default() -> Self {
        Self {
            http: Client::builder(TokioExecutor::new()).build_http(),
        }
    }
}

impl HostClient {
    /// Asks `host` to create a `mode` match seating `roster`.
    pub async fn allocate(
        &self,
        host: SocketAddr,
        mode: &str,
        roster: &[u64],
    ) -> Result<Allocated, AllocateError> {
        let failed = |reason: String| AllocateError::Failed { host, reason };
        let body =
            serde_json::to_vec(&CreateMatch { mode, roster }).map_err(|e| failed(e.to_string()))?;
        let request = hyper::Request::post(format!("http://{host}/v1/matches"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| failed(e.to_string()))?;
        let call = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|e| failed(e.to_string()))?;
            let status = response.status();
            let bytes = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| failed(e.to_string()))?
                .to_bytes();
            Ok::<_, AllocateError>((status, bytes))
        };
        let (status, bytes) = tokio::time::timeout(ALLOCATE_TIMEOUT, call)
            .await
            .map_err(|_| failed("timed out".to_owned()))??;
        if status == hyper::StatusCode::SERVICE_UNAVAILABLE {
            return Err(AllocateError::Full(host));
        }
        if status != hyper::StatusCode::CREATED {
            return Err(failed(format!(
                "answered {status}: {}",
                String::from_utf8_lossy(&bytes)
            )));
        }
        serde_json::from_slice(&bytes).map_err(|e| failed(format!("malformed answer: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn the_freest_fresh_host_comes_first() {
        let t0 = Instant::now();
        let hosts = Hosts::new(&[(addr(1), 2)], Duration::from_secs(10));
        hosts.heartbeat(addr(2), 8, 1, t0);
        hosts.heartbeat(addr(3), 4, 4, t0);
        assert_eq!(hosts.candidates(t0), vec![addr(2), addr(1)]);
        hosts.allocated(addr(1));
        hosts.allocated(addr(1));
        assert_eq!(hosts.candidates(t0), vec![addr(2)]);
        // A silent registered host is skipped, a configured one never expires.
        let later = t0 + Duration::from_secs(11);
        assert!(hosts.candidates(later).is_empty());
        hosts.heartbeat(addr(1), 2, 0, later);
        assert_eq!(hosts.candidates(later), vec![addr(1)]);
        assert_eq!(hosts.list(later).len(), 3);
        // Long silent hosts are forgotten.
        assert_eq!(
            hosts.candidates(t0 + Duration::from_secs(60)),
            vec![addr(1)]
        );
        assert_eq!(hosts.list(t0).len(), 1);
    }

    #[test]
    fn a_full_host_waits_for_its_next_heartbeat() {
        let t0 = Instant::now();
        let hosts = Hosts::new(&[], Duration::from_secs(10));
        hosts.heartbeat(addr(5), 3, 0, t0);
        hosts.full(addr(5));
        assert!(hosts.candidates(t0).is_empty());
        hosts.heartbeat(addr(5), 3, 1, t0);
        assert_eq!(hosts.candidates(t0), vec![addr(5)]);
    }

    #[tokio::test]
    async fn an_unreachable_host_is_an_error_value() {
        // Port 9 on loopback: nothing listens.
        let err = HostClient::default()
            .allocate(addr(9), "5v5", &[1, 2])
            .await
            .unwrap_err();
        assert!(matches!(err, AllocateError::Failed { .. }), "{err}");
    }
}
