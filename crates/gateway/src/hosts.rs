//! Server hosts the gateway may allocate matches on: listed in the config
//! (always eligible) or registered over the API with a heartbeat (eligible
//! while the heartbeat is fresh and the host is not draining), each with a
//! capacity in matches. A registered host is known by its host id, which it
//! keeps across restarts. A match is allocated with the host's admin API,
//! `POST /v1/matches` (`{"mode", "roster", "match_id", ...settings}` ->
//! `201 {"id", "address", ...}`): the gateway's match id is the match's id on
//! the host too.
//!
//! Registered hosts live in the store (`hightick_store`'s `host_*`), shared
//! by every gateway replica on it: a host may heartbeat to any replica, and
//! every replica allocates to every live host. A matchmaker pass reads them
//! once ([`Hosts::refresh`]), allocates on that picture (counting its own
//! matches and the hosts that refused one as full), and writes what it did
//! back ([`Hosts::tally`]): the other replicas' next passes count those
//! matches against the host's room and pass a full host over for
//! [`FULL_BACKOFF`], until the host's next heartbeat says what it runs.
//! Configured hosts are every gateway's own (each has the same config): a
//! configured host's heartbeat and load stay with the replica it reached.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use hightick_host_api::{CreateMatch, MatchInfo};
use hightick_store::{HostBeat, HostTally, RegisteredHost, Store, StoreError};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connect, HttpConnector};
use hyper_util::rt::TokioExecutor;
use parking_lot::{Mutex, MutexGuard};
use serde::Serialize;

/// Longest an allocation call may take.
const ALLOCATE_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest admin answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// How long a host that refused a match as full is passed over, unless a
/// heartbeat says otherwise first. A configured host never heartbeats, so
/// without this expiry one refusal would remove it until restart.
pub const FULL_BACKOFF: Duration = Duration::from_secs(5);
/// A registered host silent for this many heartbeat timeouts is forgotten
/// (until then it is listed, though given nothing).
const FORGET_AFTER_TIMEOUTS: i64 = 4;

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
    #[schema(value_type = u64)]
    pub capacity: usize,
    /// Matches it runs (and finished ones whose result is not yet written).
    #[schema(value_type = u64)]
    pub active: usize,
    /// Whether it is draining.
    pub draining: bool,
    /// Its region tag.
    pub region: String,
    /// The game it serves.
    pub game: String,
}

impl HostReport {
    fn beat(&self) -> HostBeat {
        HostBeat {
            host_id: self.host_id.clone(),
            admin: self.admin.to_string(),
            capacity: i64::try_from(self.capacity).unwrap_or(i64::MAX),
            active: i64::try_from(self.active).unwrap_or(i64::MAX),
            draining: self.draining,
            region: self.region.clone(),
            game: self.game.clone(),
        }
    }

    /// A stored host as the registry reports it: the matches allocated since
    /// its heartbeat count as active. `None`: an admin address that does not
    /// parse (never written by a gateway).
    fn of_registered(host: &RegisteredHost) -> Option<Self> {
        let count = |n: i64| usize::try_from(n).unwrap_or(0);
        Some(Self {
            host_id: host.beat.host_id.clone(),
            admin: host.beat.admin.parse().ok()?,
            capacity: count(host.beat.capacity),
            active: count(host.beat.active.saturating_add(host.allocated)),
            draining: host.beat.draining,
            region: host.beat.region.clone(),
            game: host.beat.game.clone(),
        })
    }
}

#[derive(Debug, Clone)]
struct Host {
    report: HostReport,
    /// Its last heartbeat, unix ms (`None`: from the config).
    seen_ms: Option<i64>,
    /// Passed over until then, unix ms: it refused a match as full.
    full_until_ms: Option<i64>,
    /// Matches this gateway allocated on it since the last tally.
    allocated_here: i64,
    /// It refused a match here as full since the last tally.
    refused_here: bool,
}

impl Host {
    fn registered(report: HostReport, seen_ms: i64, full_until_ms: Option<i64>) -> Self {
        Self {
            report,
            seen_ms: Some(seen_ms),
            full_until_ms,
            allocated_here: 0,
            refused_here: false,
        }
    }

    /// What this gateway did with it since the last tally, taken.
    fn take_tally(&mut self) -> Option<HostTally> {
        let seen_ms = self.seen_ms?;
        if self.allocated_here == 0 && !self.refused_here {
            return None;
        }
        let tally = HostTally {
            host_id: self.report.host_id.clone(),
            seen_ms,
            allocated: self.allocated_here,
            full_until_ms: self.full_until_ms.filter(|_| self.refused_here),
        };
        self.allocated_here = 0;
        self.refused_here = false;
        Some(tally)
    }
}

/// The host registry: the configured hosts, and the registered hosts of
/// the store as the last [`Hosts::refresh`] read them (with what this
/// gateway did since).
#[derive(Debug)]
pub struct Hosts {
    store: Store,
    hosts: Mutex<Vec<Host>>,
    timeout_ms: i64,
}

impl Hosts {
    /// A registry holding the configured `fixed` hosts and the hosts
    /// registered in `store`; registered ones are given nothing `timeout`
    /// after their last heartbeat.
    pub fn new(fixed: &[(SocketAddr, usize)], timeout: Duration, store: Store) -> Self {
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
                seen_ms: None,
                full_until_ms: None,
                allocated_here: 0,
                refused_here: false,
            })
            .collect();
        Self {
            store,
            hosts: Mutex::new(hosts),
            timeout_ms: i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Host>> {
        self.hosts.lock()
    }

    /// `f` on the host at `admin`, under the lock; `None` if none is.
    fn with_host<R>(&self, admin: SocketAddr, f: impl FnOnce(&mut Host) -> R) -> Option<R> {
        self.lock()
            .iter_mut()
            .find(|h| h.report.admin == admin)
            .map(f)
    }

    /// Oldest heartbeat a registered host may have and be listed, at `now_ms`.
    fn listed_since(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.timeout_ms.saturating_mul(FORGET_AFTER_TIMEOUTS))
    }

    /// Registers a host or refreshes its heartbeat, load and state, heard at
    /// `now_ms` (unix ms). A registered host's heartbeat goes to the store,
    /// for every gateway; a host id seen before keeps its entry (a restarted
    /// host may come back on another admin address). A configured host stays
    /// configured, and only this gateway hears it.
    pub async fn heartbeat(&self, report: HostReport, now_ms: i64) -> Result<(), StoreError> {
        {
            let mut hosts = self.lock();
            let configured = hosts.iter_mut().find(|h| {
                h.seen_ms.is_none()
                    && (h.report.admin == report.admin || h.report.host_id == report.host_id)
            });
            if let Some(h) = configured {
                h.report = HostReport {
                    host_id: report.admin.to_string(),
                    ..report
                };
                h.full_until_ms = None;
                return Ok(());
            }
        }
        self.store.host_heartbeat(&report.beat(), now_ms).await?;
        let mut hosts = self.lock();
        hosts.retain(|h| {
            h.seen_ms.is_none()
                || (h.report.host_id != report.host_id && h.report.admin != report.admin)
        });
        hosts.push(Host::registered(report, now_ms, None));
        Ok(())
    }

    /// Writes what this gateway did since the last tally (matches allocated,
    /// full refusals) to the registered hosts in the store, so the other
    /// gateways count it too.
    pub async fn tally(&self) -> Result<(), StoreError> {
        let tallies: Vec<HostTally> = self
            .lock()
            .iter_mut()
            .filter_map(Host::take_tally)
            .collect();
        if !tallies.is_empty() {
            self.store.hosts_tally(&tallies).await?;
        }
        Ok(())
    }

    /// Tallies, then reads the registered hosts heard from within the
    /// timeout before `now_ms` (unix ms): a matchmaker pass allocates on
    /// what this read.
    pub async fn refresh(&self, now_ms: i64) -> Result<(), StoreError> {
        self.tally().await?;
        let rows = self
            .store
            .hosts_registered(now_ms.saturating_sub(self.timeout_ms))
            .await?;
        let registered = rows.iter().filter_map(|row| {
            let report = HostReport::of_registered(row)?;
            Some(Host::registered(report, row.seen_ms, row.full_until_ms))
        });
        let mut hosts = self.lock();
        hosts.retain(|h| h.seen_ms.is_none());
        hosts.extend(registered);
        Ok(())
    }

    /// Forgets the registered hosts silent for four heartbeat timeouts at
    /// `now_ms`; returns how many.
    pub async fn forget_silent(&self, now_ms: i64) -> Result<u64, StoreError> {
        self.store.hosts_forget(self.listed_since(now_ms)).await
    }

    /// Eligible hosts with room at `now_ms`, most free capacity first.
    pub fn candidates(&self, now_ms: i64) -> Vec<SocketAddr> {
        self.candidates_in(now_ms, "", false)
    }

    /// Eligible hosts with room at `now_ms`: those tagged `region` first
    /// (only those when `only`), each group most free capacity first. `""`:
    /// any region.
    pub fn candidates_in(&self, now_ms: i64, region: &str, only: bool) -> Vec<SocketAddr> {
        let hosts = self.lock();
        let mut eligible: Vec<&HostReport> = hosts
            .iter()
            .filter(|h| {
                h.report.active < h.report.capacity
                    && !h.report.draining
                    && h.full_until_ms.is_none_or(|until| now_ms >= until)
                    && h.seen_ms
                        .is_none_or(|seen| now_ms.saturating_sub(seen) < self.timeout_ms)
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

    /// Takes room for one match on `admin` before it is asked for one;
    /// `false` if it has none left (matches allocated at the same time took
    /// it). A pass starts its oldest groups first, so they hold the room
    /// and a younger group finds none rather than racing them for it.
    /// [`Self::release`] gives it back if the host does not take the match.
    pub fn reserve(&self, admin: SocketAddr) -> bool {
        self.with_host(admin, |h| {
            let room = h.report.active < h.report.capacity;
            if room {
                h.report.active += 1;
                h.allocated_here += 1;
            }
            room
        })
        .unwrap_or(false)
    }

    /// Gives back room [`Self::reserve`] took on `admin`: it did not take
    /// the match.
    pub fn release(&self, admin: SocketAddr) {
        self.with_host(admin, |h| {
            h.report.active = h.report.active.saturating_sub(1);
            h.allocated_here = (h.allocated_here - 1).max(0);
        });
    }

    /// Passes `admin` over (it refused a match as full) for
    /// [`FULL_BACKOFF`] from now, or until its next heartbeat if sooner.
    pub fn full(&self, admin: SocketAddr) {
        self.full_at(admin, hightick_store::clock::now_ms());
    }

    /// [`Self::full`] at `now_ms` (unix ms).
    pub fn full_at(&self, admin: SocketAddr, now_ms: i64) {
        let backoff = i64::try_from(FULL_BACKOFF.as_millis()).unwrap_or(i64::MAX);
        self.with_host(admin, |h| {
            h.full_until_ms = Some(now_ms.saturating_add(backoff));
            h.refused_here = true;
        });
    }

    /// Every host at `now_ms`, for the API: the configured ones and those
    /// registered in the store (read now), silent ones too until forgotten.
    pub async fn list(&self, now_ms: i64) -> Result<Vec<HostEntry>, StoreError> {
        let rows = self
            .store
            .hosts_registered(self.listed_since(now_ms))
            .await?;
        let mut out: Vec<HostEntry> = self
            .lock()
            .iter()
            .filter(|h| h.seen_ms.is_none())
            .map(|h| HostEntry {
                report: h.report.clone(),
                last_seen_s: None,
            })
            .collect();
        out.extend(rows.iter().filter_map(|row| {
            Some(HostEntry {
                report: HostReport::of_registered(row)?,
                last_seen_s: Some(now_ms.saturating_sub(row.seen_ms).max(0) as f64 / 1000.0),
            })
        }));
        Ok(out)
    }
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

impl MatchRequest<'_> {
    /// The host's create-match body for it: the mode's settings beside the
    /// host's own fields.
    pub fn create_match(&self) -> CreateMatch {
        let mut body = CreateMatch::new(self.mode, self.roster.to_vec());
        body.match_id = Some(self.match_id.to_owned());
        body.settings = self.settings.clone();
        body
    }
}

/// Where an allocated match runs (from a host's answer, or the Agones
/// allocator's).
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// The bearer the hosts' admin APIs take for a create-match (the server
    /// secret the hosts share with the gateway).
    admin_secret: Option<String>,
}

impl Default for HostClient {
    fn default() -> Self {
        Self::new(None)
    }
}

impl HostClient {
    /// A client presenting `admin_secret` to the hosts (none: hosts whose
    /// admin API is open, on loopback).
    pub fn new(admin_secret: Option<String>) -> Self {
        Self {
            http: Client::builder(TokioExecutor::new()).build_http(),
            admin_secret,
        }
    }

    /// Asks `host` to create the match `request` describes.
    pub async fn allocate(
        &self,
        host: SocketAddr,
        request: MatchRequest<'_>,
    ) -> Result<Allocated, AllocateError> {
        let failed = |reason: String| AllocateError::Failed { host, reason };
        let body =
            serde_json::to_vec(&request.create_match()).map_err(|e| failed(e.to_string()))?;
        let match_id = request.match_id;
        let mut request = hyper::Request::post(format!("http://{host}/v1/matches"))
            .header("content-type", "application/json");
        if let Some(secret) = &self.admin_secret {
            request = request.header("authorization", format!("Bearer {secret}"));
        }
        let request = request
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
        let info: MatchInfo =
            serde_json::from_slice(&bytes).map_err(|e| failed(format!("malformed answer: {e}")))?;
        if info.id != match_id {
            return Err(failed(format!(
                "answered match id `{}` for `{match_id}`",
                info.id
            )));
        }
        Ok(Allocated {
            id: info.id,
            address: info.address,
        })
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

    /// Any unix ms: the registry only compares the times it is given.
    const T0: i64 = 1_000_000;
    const TIMEOUT: Duration = Duration::from_secs(10);

    async fn store() -> Store {
        Store::open("sqlite::memory:").await.unwrap()
    }

    fn ms(d: Duration) -> i64 {
        i64::try_from(d.as_millis()).unwrap()
    }

    #[tokio::test]
    async fn the_freest_fresh_host_comes_first() {
        let hosts = Hosts::new(&[(addr(1), 2)], TIMEOUT, store().await);
        hosts.heartbeat(report(2, 8, 1), T0).await.unwrap();
        hosts.heartbeat(report(3, 4, 4), T0).await.unwrap();
        assert_eq!(hosts.candidates(T0), vec![addr(2), addr(1)]);
        assert!(hosts.reserve(addr(1)) && hosts.reserve(addr(1)));
        assert!(!hosts.reserve(addr(1)), "addr(1) has room for 2");
        assert_eq!(hosts.candidates(T0), vec![addr(2)]);
        // Room given back (the host did not take the match) is room again.
        hosts.release(addr(1));
        assert_eq!(hosts.candidates(T0), vec![addr(2), addr(1)]);
        assert!(hosts.reserve(addr(1)));
        // A silent registered host is skipped, a configured one never expires.
        let later = T0 + 11_000;
        hosts.refresh(later).await.unwrap();
        assert!(hosts.candidates(later).is_empty());
        hosts.heartbeat(report(1, 2, 0), later).await.unwrap();
        assert_eq!(hosts.candidates(later), vec![addr(1)]);
        assert_eq!(hosts.list(later).await.unwrap().len(), 3);
        // Long silent hosts are forgotten.
        let much_later = T0 + 60_000;
        assert_eq!(hosts.list(much_later).await.unwrap().len(), 1);
        assert_eq!(hosts.forget_silent(much_later).await.unwrap(), 2);
        hosts.refresh(much_later).await.unwrap();
        assert_eq!(hosts.candidates(much_later), vec![addr(1)]);
        assert_eq!(hosts.list(T0).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_full_host_waits_for_its_next_heartbeat_or_the_backoff() {
        let hosts = Hosts::new(&[], TIMEOUT, store().await);
        hosts.heartbeat(report(5, 3, 0), T0).await.unwrap();
        hosts.full_at(addr(5), T0);
        assert!(hosts.candidates(T0).is_empty());
        hosts.heartbeat(report(5, 3, 1), T0).await.unwrap();
        assert_eq!(hosts.candidates(T0), vec![addr(5)]);
        hosts.full_at(addr(5), T0);
        assert_eq!(hosts.candidates(T0 + ms(FULL_BACKOFF)), vec![addr(5)]);
    }

    #[tokio::test]
    async fn a_configured_host_that_refused_once_comes_back_after_the_backoff() {
        // A configured host never heartbeats: the full mark must expire.
        let hosts = Hosts::new(&[(addr(7), 4)], TIMEOUT, store().await);
        hosts.full_at(addr(7), T0);
        assert!(hosts.candidates(T0).is_empty());
        assert!(hosts.candidates(T0 + ms(FULL_BACKOFF) / 2).is_empty());
        assert_eq!(hosts.candidates(T0 + ms(FULL_BACKOFF)), vec![addr(7)]);
        // Its count of matches was not touched by the refusal.
        assert_eq!(hosts.list(T0).await.unwrap()[0].report.active, 0);
    }

    #[tokio::test]
    async fn a_draining_host_gets_nothing_and_a_restarted_one_keeps_its_entry() {
        let hosts = Hosts::new(&[], TIMEOUT, store().await);
        let mut r = report(5, 3, 0);
        hosts.heartbeat(r.clone(), T0).await.unwrap();
        r.draining = true;
        hosts.heartbeat(r.clone(), T0).await.unwrap();
        assert!(hosts.candidates(T0).is_empty());
        // The same host id back on another admin port: one entry, moved.
        r.draining = false;
        r.admin = addr(6);
        hosts.heartbeat(r, T0).await.unwrap();
        assert_eq!(hosts.candidates(T0), vec![addr(6)]);
        hosts.refresh(T0).await.unwrap();
        assert_eq!(hosts.candidates(T0), vec![addr(6)]);
        assert_eq!(hosts.list(T0).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn two_registries_on_one_store_share_hosts_matches_and_refusals() {
        // Two gateways' registries: a host heartbeats to one only.
        let store = store().await;
        let a = Hosts::new(&[], TIMEOUT, store.clone());
        let b = Hosts::new(&[], TIMEOUT, store);
        a.heartbeat(report(5, 2, 0), T0).await.unwrap();
        a.heartbeat(report(6, 2, 0), T0).await.unwrap();
        b.refresh(T0).await.unwrap();
        assert_eq!(b.candidates(T0), vec![addr(5), addr(6)]);
        // B fills host 5 and hears host 6 refuse a match as full; A counts
        // both once B has tallied.
        assert!(b.reserve(addr(5)) && b.reserve(addr(5)));
        b.full_at(addr(6), T0);
        b.tally().await.unwrap();
        a.refresh(T0).await.unwrap();
        assert!(a.candidates(T0).is_empty());
        assert_eq!(a.list(T0).await.unwrap()[0].report.active, 2);
        assert_eq!(a.candidates(T0 + ms(FULL_BACKOFF)), vec![addr(6)]);
        // Host 5's next heartbeat (at B, say) says what it runs.
        b.heartbeat(report(5, 2, 1), T0 + 1).await.unwrap();
        a.refresh(T0 + 1).await.unwrap();
        assert_eq!(a.candidates(T0 + 1), vec![addr(5)]);
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
