//! Server hosts the gateway may allocate matches on: listed in the config
//! (always eligible) or registered over the API with a heartbeat (eligible
//! while the heartbeat is fresh and the host is not draining), each with a
//! capacity in matches. A registered host is known by its host id, which it
//! keeps across restarts. A match is allocated with the host's admin API,
//! `POST /v1/matches` (`{"mode", "roster", "match_id", ...settings}` ->
//! `201 {"id", "address", ...}`): the gateway's match id is the match's id on
//! the host too.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connect, HttpConnector};
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};

/// Longest an allocation call may take.
const ALLOCATE_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest admin answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// How long a host that refused a match as full is passed over, unless a
/// heartbeat says otherwise first. A configured host never heartbeats, so
/// without this expiry one refusal would remove it until restart.
pub const FULL_BACKOFF: Duration = Duration::from_secs(5);

/// One host as the registry sees it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct HostEntry {
    /// What it last said of itself (with the matches allocated since).
    #[serde(flatten)]
    #[schema(inline)]
    pub report: HostReport,
    /// Seconds since its last heartbeat (`None`: from the config).
    pub last_seen_s: Option<f64>,
}

/// What a heartbeat says of its host. A configured host's id is its admin
/// address, and its region and game are empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct HostReport {
    /// Its stable id (the registry's key).
    pub host_id: String,
    /// Its admin API address.
    #[schema(value_type = String)]
    pub admin: SocketAddr,
    /// Matches it may be given at once.
    pub capacity: usize,
    /// Matches it runs (and finished ones whose result is not yet written).
    pub active: usize,
    /// Whether it is draining.
    pub draining: bool,
    /// Its region tag.
    pub region: String,
    /// The game it serves.
    pub game: String,
}

#[derive(Debug, Clone)]
struct Host {
    report: HostReport,
    last_seen: Option<Instant>,
    /// Passed over until then: it refused a match as full.
    full_until: Option<Instant>,
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
                report: HostReport {
                    host_id: admin.to_string(),
                    admin,
                    capacity,
                    active: 0,
                    draining: false,
                    region: String::new(),
                    game: String::new(),
                },
                last_seen: None,
                full_until: None,
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

    /// Registers a host or refreshes its heartbeat, load and state. A host
    /// id seen before keeps its entry (a restarted host may come back on
    /// another admin address); a configured host stays configured.
    pub fn heartbeat(&self, report: HostReport, now: Instant) {
        let mut hosts = self.lock();
        let known = hosts.iter_mut().find(|h| {
            h.report.host_id == report.host_id
                || (h.last_seen.is_none() && h.report.admin == report.admin)
        });
        match known {
            Some(h) => {
                let configured = h.last_seen.is_none();
                h.report = report;
                h.full_until = None;
                if configured {
                    h.report.host_id = h.report.admin.to_string();
                } else {
                    h.last_seen = Some(now);
                }
            }
            None => hosts.push(Host {
                report,
                last_seen: Some(now),
                full_until: None,
            }),
        }
    }

    /// Eligible hosts with room, most free capacity first.
    pub fn candidates(&self, now: Instant) -> Vec<SocketAddr> {
        self.candidates_in(now, "", false)
    }

    /// Eligible hosts with room: those tagged `region` first (only those
    /// when `only`), each group most free capacity first. `""`: any region.
    pub fn candidates_in(&self, now: Instant, region: &str, only: bool) -> Vec<SocketAddr> {
        let mut hosts = self.lock();
        hosts.retain(|h| {
            h.last_seen
                .is_none_or(|t| now.saturating_duration_since(t) < self.timeout * 4)
        });
        let mut eligible: Vec<&HostReport> = hosts
            .iter()
            .filter(|h| {
                h.report.active < h.report.capacity
                    && !h.report.draining
                    && h.full_until.is_none_or(|until| now >= until)
                    && h.last_seen
                        .is_none_or(|t| now.saturating_duration_since(t) < self.timeout)
            })
            .map(|h| &h.report)
            .collect();
        if only && !region.is_empty() {
            eligible.retain(|h| h.region == region);
        }
        eligible.sort_by_key(|h| {
            (
                !region.is_empty() && h.region != region,
                std::cmp::Reverse(h.capacity - h.active),
            )
        });
        eligible.iter().map(|h| h.admin).collect()
    }

    /// Counts a match allocated on `admin`.
    pub fn allocated(&self, admin: SocketAddr) {
        if let Some(h) = self.lock().iter_mut().find(|h| h.report.admin == admin) {
            h.report.active += 1;
        }
    }

    /// Passes `admin` over (it refused a match as full) for
    /// [`FULL_BACKOFF`] from now, or until its next heartbeat if sooner.
    pub fn full(&self, admin: SocketAddr) {
        self.full_at(admin, Instant::now());
    }

    /// [`Self::full`] at `now`.
    pub fn full_at(&self, admin: SocketAddr, now: Instant) {
        if let Some(h) = self.lock().iter_mut().find(|h| h.report.admin == admin) {
            h.full_until = Some(now + FULL_BACKOFF);
        }
    }

    /// Every host, for the API.
    pub fn list(&self, now: Instant) -> Vec<HostEntry> {
        self.lock()
            .iter()
            .map(|h| HostEntry {
                report: h.report.clone(),
                last_seen_s: h
                    .last_seen
                    .map(|t| now.saturating_duration_since(t).as_secs_f64()),
            })
            .collect()
    }
}

/// What the gateway asks a host for: the mode's settings sit beside the
/// host's own fields, as the host's create-match body has them.
#[derive(Debug, Serialize)]
struct CreateMatch<'a> {
    mode: &'a str,
    roster: &'a [u64],
    match_id: &'a str,
    #[serde(flatten)]
    settings: &'a serde_json::Map<String, serde_json::Value>,
}

/// One match to allocate.
#[derive(Debug, Clone, Copy)]
pub struct MatchRequest<'a> {
    /// The gateway's match id, which the host takes as its own.
    pub match_id: &'a str,
    /// The mode.
    pub mode: &'a str,
    /// Account ids, in seat order.
    pub roster: &'a [u64],
    /// The mode's match settings from the gateway's config.
    pub settings: &'a serde_json::Map<String, serde_json::Value>,
}

/// The part of a host's answer the gateway uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Allocated {
    /// The host's match id (the one the gateway gave it).
    pub id: String,
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
    /// The Agones allocator has no GameServer with room (it answered 429).
    #[error("the Agones allocator has no GameServer with room")]
    NoGameServer,
    /// The Agones allocator failed, refused the request, or answered what
    /// the gateway cannot use.
    #[error("Agones allocator: {0}")]
    Allocator(String),
}

/// Sends `request` on `http` and reads the answer (at most 64 KiB) within
/// `timeout`: its status and body, or why not.
pub(crate) async fn exchange<C: Connect + Clone + Send + Sync + 'static>(
    http: &Client<C, Full<Bytes>>,
    request: hyper::Request<Full<Bytes>>,
    timeout: Duration,
) -> Result<(hyper::StatusCode, Bytes), String> {
    let call = async {
        let response = http.request(request).await.map_err(|e| {
            // The cause chain says what failed (refused, TLS handshake...).
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                text = format!("{text}: {cause}");
                source = cause.source();
            }
            text
        })?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, bytes))
    };
    tokio::time::timeout(timeout, call)
        .await
        .map_err(|_| "timed out".to_owned())?
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
    /// Asks `host` to create the match `request` describes.
    pub async fn allocate(
        &self,
        host: SocketAddr,
        request: MatchRequest<'_>,
    ) -> Result<Allocated, AllocateError> {
        let failed = |reason: String| AllocateError::Failed { host, reason };
        let body = serde_json::to_vec(&CreateMatch {
            mode: request.mode,
            roster: request.roster,
            match_id: request.match_id,
            settings: request.settings,
        })
        .map_err(|e| failed(e.to_string()))?;
        let match_id = request.match_id;
        let request = hyper::Request::post(format!("http://{host}/v1/matches"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| failed(e.to_string()))?;
        let (status, bytes) = exchange(&self.http, request, ALLOCATE_TIMEOUT)
            .await
            .map_err(failed)?;
        if status == hyper::StatusCode::SERVICE_UNAVAILABLE {
            return Err(AllocateError::Full(host));
        }
        if status != hyper::StatusCode::CREATED {
            return Err(failed(format!(
                "answered {status}: {}",
                String::from_utf8_lossy(&bytes)
            )));
        }
        let allocated: Allocated =
            serde_json::from_slice(&bytes).map_err(|e| failed(format!("malformed answer: {e}")))?;
        if allocated.id != match_id {
            return Err(failed(format!(
                "answered match id `{}` for `{match_id}`",
                allocated.id
            )));
        }
        Ok(allocated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn report(port: u16, capacity: usize, active: usize) -> HostReport {
        HostReport {
            host_id: format!("host-{port}"),
            admin: addr(port),
            capacity,
            active,
            draining: false,
            region: "local".to_owned(),
            game: "arena".to_owned(),
        }
    }

    #[test]
    fn the_freest_fresh_host_comes_first() {
        let t0 = Instant::now();
        let hosts = Hosts::new(&[(addr(1), 2)], Duration::from_secs(10));
        hosts.heartbeat(report(2, 8, 1), t0);
        hosts.heartbeat(report(3, 4, 4), t0);
        assert_eq!(hosts.candidates(t0), vec![addr(2), addr(1)]);
        hosts.allocated(addr(1));
        hosts.allocated(addr(1));
        assert_eq!(hosts.candidates(t0), vec![addr(2)]);
        // A silent registered host is skipped, a configured one never expires.
        let later = t0 + Duration::from_secs(11);
        assert!(hosts.candidates(later).is_empty());
        hosts.heartbeat(report(1, 2, 0), later);
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
    fn a_full_host_waits_for_its_next_heartbeat_or_the_backoff() {
        let t0 = Instant::now();
        let hosts = Hosts::new(&[], Duration::from_secs(10));
        hosts.heartbeat(report(5, 3, 0), t0);
        hosts.full_at(addr(5), t0);
        assert!(hosts.candidates(t0).is_empty());
        hosts.heartbeat(report(5, 3, 1), t0);
        assert_eq!(hosts.candidates(t0), vec![addr(5)]);
        hosts.full_at(addr(5), t0);
        assert_eq!(hosts.candidates(t0 + FULL_BACKOFF), vec![addr(5)]);
    }

    #[test]
    fn a_configured_host_that_refused_once_comes_back_after_the_backoff() {
        // A configured host never heartbeats: the full mark must expire.
        let t0 = Instant::now();
        let hosts = Hosts::new(&[(addr(7), 4)], Duration::from_secs(10));
        hosts.full_at(addr(7), t0);
        assert!(hosts.candidates(t0).is_empty());
        assert!(hosts.candidates(t0 + FULL_BACKOFF / 2).is_empty());
        assert_eq!(hosts.candidates(t0 + FULL_BACKOFF), vec![addr(7)]);
        // Its count of matches was not touched by the refusal.
        assert_eq!(hosts.list(t0)[0].report.active, 0);
    }

    #[test]
    fn a_draining_host_gets_nothing_and_a_restarted_one_keeps_its_entry() {
        let t0 = Instant::now();
        let hosts = Hosts::new(&[], Duration::from_secs(10));
        let mut r = report(5, 3, 0);
        hosts.heartbeat(r.clone(), t0);
        r.draining = true;
        hosts.heartbeat(r.clone(), t0);
        assert!(hosts.candidates(t0).is_empty());
        // The same host id back on another admin port: one entry, moved.
        r.draining = false;
        r.admin = addr(6);
        hosts.heartbeat(r, t0);
        assert_eq!(hosts.candidates(t0), vec![addr(6)]);
        assert_eq!(hosts.list(t0).len(), 1);
    }

    #[tokio::test]
    async fn an_unreachable_host_is_an_error_value() {
        // Port 9 on loopback: nothing listens.
        let settings = serde_json::Map::new();
        let request = MatchRequest {
            match_id: "m-1",
            mode: "5v5",
            roster: &[1, 2],
            settings: &settings,
        };
        let err = HostClient::default()
            .allocate(addr(9), request)
            .await
            .unwrap_err();
        assert!(matches!(err, AllocateError::Failed { .. }), "{err}");
    }
}
