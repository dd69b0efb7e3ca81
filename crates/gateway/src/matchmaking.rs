//! Matchmaking shared by every gateway on one store: the queue lives in the
//! store (`hightick_store`'s `queue_*`), so any number of gateway replicas
//! form matches from one pool, and any of them answers a poll, a push or a
//! rejoin.
//!
//! Each gateway runs a pass about twice a second (sooner after a join): per
//! mode it claims a batch of the oldest waiting tickets (PostgreSQL:
//! `FOR UPDATE SKIP LOCKED`, so passes of several gateways claim disjoint
//! tickets; SQLite: the one writer runs claims one after another), forms
//! matches by the [`rules`](crate::queue::rules) (rating window widening with
//! the wait, parties on one team, region preference), allocates them on hosts
//! many at a time (the registered hosts as the store's registry has them, read
//! once per pass, with the pass's allocations written back: see
//! [`crate::hosts`]), records the matches and their seats in one transaction and
//! puts the rest back. When no host can take a match its tickets go back with
//! their place; nobody gets an error for it.
//!
//! After a pass the gateway reads the waiting queue once (every position)
//! and the tickets matched since its last look (its own and other gateways'),
//! pushes `match_found` to the players it holds sockets for, and wakes its
//! long polls: a poll is a lookup in that snapshot, not a scan of the queue.
//! A connect token is minted by whichever gateway answers (they share the
//! hosts' key).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use hightick_net::{ConnectToken, Key, TokenParams};
use hightick_store::clock::now_ms;
use hightick_store::{
    INITIAL_RATING, LiveMatch, NewMatch, NewTicket, QueueTicket, Seat, Store, StoreError,
    TicketState,
};
use hightick_telemetry::prometheus::durations::DurationHistogram;
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use crate::agones::AgonesAllocator;
use crate::config::ModeConfig;
use crate::hosts::{AllocateError, Allocated, HostClient, Hosts, MatchRequest};
use crate::push::{Hub, event};
use crate::queue::rules::{self, MatchRules, Waiting};
use crate::queue::view::View;

/// Longest between two passes.
const PASS_EVERY: Duration = Duration::from_millis(500);
/// A claim older than this belongs to a gateway that died: its tickets wait again.
const CLAIM_STALE_MS: i64 = 30_000;
/// Matched tickets a refresh re-reads before its watermark (commits land
/// out of `settled_ms` order across gateways).
const MATCHED_SLACK_MS: i64 = 5_000;
/// How often old tickets and matches, and long silent hosts, are swept from
/// the store.
const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// How long a match formed is kept for rejoins when no result comes for it.
const LIVE_MATCH_MAX_AGE_MS: i64 = 6 * 3600 * 1000;

/// A found match, as one player's ticket holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assignment {
    /// The match id: the gateway's, which the host takes as its own and
    /// reports the result under.
    pub match_id: String,
    /// Mode.
    pub mode: String,
    /// Where to connect.
    pub address: SocketAddr,
    /// The 2048-byte connect token, base64.
    pub connect_token: String,
    /// When the token stops being accepted, unix seconds.
    pub token_expires_unix: u64,
    /// Every player's account id, in seat order.
    pub roster: Vec<i64>,
    /// The player's team (seat `i` is on team `i % teams`).
    pub team: i64,
}

/// Where a matchmaking ticket stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchStatus {
    /// Waiting for players.
    Queued {
        /// 1 = first in its mode's queue (players ahead, plus one).
        position: usize,
        /// Players queued in the mode.
        waiting: usize,
        /// Players a match needs.
        needed: usize,
    },
    /// A match is being allocated for it.
    Forming,
    /// Found.
    Matched(Assignment),
}

impl MatchStatus {
    /// The ticket route's JSON body for `ticket` in this state (the push
    /// channel sends the same body).
    pub fn body(&self, ticket: &str) -> Value {
        match self {
            Self::Queued {
                position,
                waiting,
                needed,
            } => json!({
                "status": "queued",
                "ticket": ticket,
                "position": position,
                "waiting": waiting,
                "needed": needed,
            }),
            Self::Forming => json!({ "status": "forming", "ticket": ticket }),
            Self::Matched(a) => json!({
                "status": "matched",
                "ticket": ticket,
                "match": a,
            }),
        }
    }
}

/// One queued player's place, as [`Matchmaker::queued_positions`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedPosition {
    /// Its account.
    pub account_id: i64,
    /// The ticket.
    pub ticket: String,
    /// Its state (always [`MatchStatus::Queued`]).
    pub status: MatchStatus,
}

/// Why a join, cancel or status was refused.
#[derive(Debug, thiserror::Error)]
pub enum MatchmakingError {
    /// No such queue.
    #[error("unknown mode")]
    UnknownMode,
    /// The ticket is being allocated or already matched.
    #[error("the ticket is no longer waiting")]
    NotWaiting,
    /// A party rule refused it.
    #[error("party: {0}")]
    Party(&'static str),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a rejoin was refused.
#[derive(Debug, thiserror::Error)]
pub enum RejoinError {
    /// No such match running: unknown, or its result is in.
    #[error("no such match running")]
    NoMatch,
    /// The account holds no seat in that match.
    #[error("the account holds no seat in that match")]
    NotInMatch,
    /// The token could not be made.
    #[error("no connect token could be made")]
    Token,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where the matchmaker allocates matches.
#[derive(Debug, Clone)]
pub enum Allocation {
    /// On the gateway's own host registry (configured and registered hosts,
    /// through their admin API).
    Hosts(Arc<Hosts>),
    /// Through the Agones allocator service ([`crate::agones`]).
    Agones(Box<AgonesAllocator>),
}

/// Token settings of a matchmaker.
#[derive(Debug, Clone)]
pub struct TokenSettings {
    /// The key shared with hosts.
    pub key: Key,
    /// Token lifetime, seconds.
    pub ttl_s: u64,
    /// Connection silence timeout, seconds.
    pub connect_timeout_s: u32,
}

#[derive(Debug, Clone)]
struct ModeSpec {
    players: usize,
    teams: usize,
    settings: serde_json::Map<String, Value>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    modes: HashMap<String, ModeSpec>,
    rules: MatchRules,
    view: Mutex<View>,
    /// Minted tokens by (ticket, account), so repeated polls see one token.
    assignments: Mutex<HashMap<(String, i64), Assignment>>,
    allocation: Allocation,
    client: HostClient,
    token_key: Key,
    token_ttl_s: u64,
    connect_timeout_s: i32,
    ticket_ttl: Duration,
    wake: Notify,
    /// Bumped after every refresh of the view (long polls wait on it).
    refreshed: watch::Sender<u64>,
    formed: AtomicU64,
    failed_allocations: AtomicU64,
    /// Time from joining a queue to a match found, per player matched here.
    wait: DurationHistogram,
    /// Where found matches and cancels are pushed.
    hub: Arc<Hub>,
}

/// The matchmaker. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Matchmaker {
    inner: Arc<Inner>,
}

/// A handle that does not keep the matchmaker alive.
#[derive(Debug, Clone)]
pub struct WeakMatchmaker(std::sync::Weak<Inner>);

impl WeakMatchmaker {
    /// The matchmaker, while it lives.
    pub fn upgrade(&self) -> Option<Matchmaker> {
        self.0.upgrade().map(|inner| Matchmaker { inner })
    }
}

fn random_id(prefix: &str, bytes: usize) -> String {
    let mut id = vec![0u8; bytes];
    rand::fill(&mut id[..]);
    format!("{prefix}{}", hex::encode(id))
}

/// What one matchmaker needs besides its modes.
#[derive(Debug, Clone)]
pub struct MatchmakerParts {
    /// The shared store.
    pub store: Store,
    /// Where matches are allocated.
    pub allocation: Allocation,
    /// Connect tokens.
    pub tokens: TokenSettings,
    /// How long a matched ticket is kept for its players to collect.
    pub ticket_ttl: Duration,
    /// The matching rules.
    pub rules: MatchRules,
    /// Where found matches and cancels are pushed.
    pub hub: Arc<Hub>,
    /// The bearer the hosts' admin APIs take (the server secret).
    pub host_admin_secret: Option<String>,
}

impl Matchmaker {
    /// Queues for `modes` on `parts.store`. Starts its pass on the current
    /// tokio runtime.
    pub fn start(modes: &[ModeConfig], parts: MatchmakerParts) -> Self {
        let rules = parts.rules;
        let inner = Arc::new(Inner {
            store: parts.store,
            modes: modes
                .iter()
                .map(|m| {
                    let spec = ModeSpec {
                        players: m.players,
                        teams: rules.teams_of(m.players),
                        settings: m.settings.clone(),
                    };
                    (m.name.clone(), spec)
                })
                .collect(),
            rules,
            view: Mutex::new(View::default()),
            assignments: Mutex::new(HashMap::new()),
            allocation: parts.allocation,
            client: HostClient::new(parts.host_admin_secret),
            token_key: parts.tokens.key,
            token_ttl_s: parts.tokens.ttl_s,
            connect_timeout_s: i32::try_from(parts.tokens.connect_timeout_s).unwrap_or(i32::MAX),
            ticket_ttl: parts.ticket_ttl,
            wake: Notify::new(),
            refreshed: watch::channel(0).0,
            formed: AtomicU64::new(0),
            failed_allocations: AtomicU64::new(0),
            wait: DurationHistogram::default(),
            hub: parts.hub,
        });
        tokio::spawn(run_passes(Arc::downgrade(&inner)));
        Self { inner }
    }

    /// Players a match of `mode` has and the most one party may bring.
    pub fn party_limit(&self, mode: &str) -> Option<usize> {
        let spec = self.inner.modes.get(mode)?;
        Some((spec.players / spec.teams).min(self.inner.rules.max_party_size))
    }

    /// Puts `account_id` in the `mode` queue preferring hosts in `region`
    /// (`""`: any); an account already waiting gets its existing ticket back.
    pub async fn join(
        &self,
        account_id: i64,
        mode: &str,
        region: &str,
    ) -> Result<String, MatchmakingError> {
        self.join_members(vec![account_id], mode, region).await
    }

    /// Queues `account_id`'s party (it must lead it) as one ticket: its
    /// players land on one team.
    pub async fn join_party(
        &self,
        account_id: i64,
        mode: &str,
        region: &str,
    ) -> Result<String, MatchmakingError> {
        let limit = self
            .party_limit(mode)
            .ok_or(MatchmakingError::UnknownMode)?;
        let party = self
            .inner
            .store
            .party(account_id)
            .await?
            .ok_or(MatchmakingError::Party("not in a party"))?;
        if party.leader != account_id {
            return Err(MatchmakingError::Party("only the leader queues the party"));
        }
        if party.members.len() > limit {
            return Err(MatchmakingError::Party("the party is larger than a team"));
        }
        self.join_members(party.members, mode, region)
            .await
            .map_err(|e| match e {
                MatchmakingError::Store(StoreError::Conflict { .. }) => {
                    MatchmakingError::Party("a member is already queued")
                }
                other => other,
            })
    }

    async fn join_members(
        &self,
        members: Vec<i64>,
        mode: &str,
        region: &str,
    ) -> Result<String, MatchmakingError> {
        if !self.inner.modes.contains_key(mode) {
            return Err(MatchmakingError::UnknownMode);
        }
        let mut total = 0.0;
        for &account in &members {
            total += match self.inner.store.player_stats(account).await {
                Ok(stats) => stats.rating,
                Err(StoreError::NotFound { .. }) => INITIAL_RATING,
                Err(e) => return Err(e.into()),
            };
        }
        let rating = (total / members.len().max(1) as f64).round() as i64;
        let ticket = NewTicket {
            ticket: random_id("", 16),
            mode: mode.to_owned(),
            members,
            rating,
            region: region.to_owned(),
        };
        let (id, new) = self.inner.store.queue_join(&ticket).await?;
        if new {
            // In the view at once, behind everyone in it (the next refresh
            // has it from the store).
            let mut view = self.inner.view.lock();
            let waiting = view.waiting.entry(ticket.mode.clone()).or_insert(0);
            let position = *waiting + 1;
            *waiting += ticket.members.len();
            view.places.insert(
                id.clone(),
                crate::queue::view::Place {
                    mode: ticket.mode,
                    members: ticket.members,
                    position,
                    forming: false,
                },
            );
        }
        self.inner.wake.notify_one();
        Ok(id)
    }

    /// The status of `ticket` if `account_id` is on it.
    pub async fn status(
        &self,
        account_id: i64,
        ticket: &str,
    ) -> Result<Option<MatchStatus>, MatchmakingError> {
        if let Some(s) = self.inner.status_from_view(account_id, ticket) {
            return Ok(Some(s));
        }
        let Some(t) = self.inner.store.queue_ticket(ticket).await? else {
            return Ok(None);
        };
        if !t.members.contains(&account_id) {
            return Ok(None);
        }
        self.inner.status_of_stored(account_id, &t).await
    }

    /// Like [`Self::status`], waiting up to `wait` for a match.
    pub async fn wait(
        &self,
        account_id: i64,
        ticket: &str,
        wait: Duration,
    ) -> Result<Option<MatchStatus>, MatchmakingError> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut refreshed = self.inner.refreshed.subscribe();
        loop {
            let status = self.status(account_id, ticket).await?;
            if !matches!(
                status,
                Some(MatchStatus::Queued { .. } | MatchStatus::Forming)
            ) {
                return Ok(status);
            }
            if tokio::time::timeout_at(deadline, refreshed.changed())
                .await
                .is_err()
            {
                return Ok(status);
            }
        }
    }

    /// Leaves the queue (a party's ticket: every member leaves). `Ok(false)`:
    /// no such ticket of this account.
    pub async fn cancel(&self, account_id: i64, ticket: &str) -> Result<bool, MatchmakingError> {
        let members = match self.inner.store.queue_cancel(account_id, ticket).await {
            Ok(Some(members)) => members,
            Ok(None) => return Ok(false),
            Err(StoreError::Conflict { .. }) => return Err(MatchmakingError::NotWaiting),
            Err(e) => return Err(e.into()),
        };
        self.inner.view.lock().places.remove(ticket);
        let body = json!({ "ticket": ticket });
        for account in members {
            let text = event::render("match_cancelled", body.clone(), now_ms());
            self.inner.hub.publish(account, text);
        }
        Ok(true)
    }

    /// A fresh connect token for `account_id`'s seat in running match
    /// `match_id`, to the same host (and so the same match and seat): a
    /// player whose connection died rejoins from any address, through any
    /// gateway, without a new matchmaking round.
    pub async fn rejoin(&self, account_id: i64, match_id: &str) -> Result<Assignment, RejoinError> {
        let live = self
            .inner
            .store
            .live_match(match_id)
            .await?
            .filter(|m| m.over_ms.is_none())
            .ok_or(RejoinError::NoMatch)?;
        self.inner
            .assignment(account_id, &live)
            .ok_or(RejoinError::Token)?
            .ok_or(RejoinError::NotInMatch)
    }

    /// Match `match_id`'s result is in: no rejoins from now on.
    pub async fn match_over(&self, match_id: &str) -> Result<(), StoreError> {
        self.inner.store.match_over(match_id).await?;
        self.inner.view.lock().matches.remove(match_id);
        Ok(())
    }

    /// The account's latest ticket and where it stands, if it has one.
    pub async fn current(
        &self,
        account_id: i64,
    ) -> Result<Option<(String, MatchStatus)>, MatchmakingError> {
        let Some(t) = self.inner.store.queue_ticket_of(account_id).await? else {
            return Ok(None);
        };
        let status = match self.inner.status_from_view(account_id, &t.ticket) {
            Some(s) => Some(s),
            None => self.inner.status_of_stored(account_id, &t).await?,
        };
        Ok(status.map(|s| (t.ticket, s)))
    }

    /// Every queued player with its position, from the last snapshot.
    pub fn queued_positions(&self) -> Vec<QueuedPosition> {
        let view = self.inner.view.lock();
        let mut out = Vec::with_capacity(view.places.len());
        for (ticket, place) in &view.places {
            if place.forming {
                continue;
            }
            let status = MatchStatus::Queued {
                position: place.position,
                waiting: view.waiting.get(&place.mode).copied().unwrap_or(0),
                needed: self.inner.modes.get(&place.mode).map_or(0, |m| m.players),
            };
            for &account_id in &place.members {
                out.push(QueuedPosition {
                    account_id,
                    ticket: ticket.clone(),
                    status: status.clone(),
                });
            }
        }
        out
    }

    /// A handle that does not keep the matchmaker alive.
    pub fn downgrade(&self) -> WeakMatchmaker {
        WeakMatchmaker(Arc::downgrade(&self.inner))
    }

    /// Players waiting, all modes (last snapshot).
    pub fn queued(&self) -> usize {
        self.inner.view.lock().waiting.values().sum()
    }

    /// Matches formed by this gateway since start.
    pub fn formed(&self) -> u64 {
        self.inner.formed.load(Ordering::Relaxed)
    }

    /// Allocation attempts no host accepted.
    pub fn failed_allocations(&self) -> u64 {
        self.inner.failed_allocations.load(Ordering::Relaxed)
    }

    /// Time from joining a queue to a match found, per player matched here.
    pub fn wait_times(&self) -> &DurationHistogram {
        &self.inner.wait
    }

    /// Runs one pass now (claim, form, allocate, record, refresh); returns
    /// the matches this gateway formed in it. For benches and tests; the
    /// background pass runs on its own.
    pub async fn pass_now(&self) -> Result<usize, StoreError> {
        self.inner.pass().await
    }
}

/// A match the rules formed: its tickets (id, players, team).
struct Group {
    mode: String,
    tickets: Vec<(String, Vec<i64>, usize)>,
    region: String,
    region_only: bool,
}

impl Inner {
    /// The host registry, when matches are allocated on it.
    fn registry(&self) -> Option<&Hosts> {
        match &self.allocation {
            Allocation::Hosts(hosts) => Some(hosts),
            Allocation::Agones(_) => None,
        }
    }

    fn status_from_view(&self, account_id: i64, ticket: &str) -> Option<MatchStatus> {
        let view = self.view.lock();
        if let Some(m) = view.matched.get(ticket) {
            if !m.members.contains(&account_id) {
                return None;
            }
            let live = view.matches.get(&m.match_id)?.clone();
            drop(view);
            return self
                .cached_assignment(ticket, account_id, &live)
                .map(MatchStatus::Matched);
        }
        let place = view.places.get(ticket)?;
        if !place.members.contains(&account_id) {
            return None;
        }
        Some(if place.forming {
            MatchStatus::Forming
        } else {
            MatchStatus::Queued {
                position: place.position,
                waiting: view.waiting.get(&place.mode).copied().unwrap_or(0),
                needed: self.modes.get(&place.mode).map_or(0, |m| m.players),
            }
        })
    }

    async fn status_of_stored(
        &self,
        account_id: i64,
        t: &QueueTicket,
    ) -> Result<Option<MatchStatus>, MatchmakingError> {
        Ok(match t.state {
            TicketState::Forming => Some(MatchStatus::Forming),
            TicketState::Queued => {
                // Joined since the last snapshot: behind everyone in it.
                let waiting = self.view.lock().waiting.get(&t.mode).copied().unwrap_or(0);
                Some(MatchStatus::Queued {
                    position: waiting + 1,
                    waiting: waiting + t.members.len(),
                    needed: self.modes.get(&t.mode).map_or(0, |m| m.players),
                })
            }
            TicketState::Matched => {
                let Some(match_id) = &t.match_id else {
                    return Ok(None);
                };
                let Some(live) = self.store.live_match(match_id).await? else {
                    return Ok(None);
                };
                self.view
                    .lock()
                    .matches
                    .insert(match_id.clone(), live.clone());
                self.cached_assignment(&t.ticket, account_id, &live)
                    .map(MatchStatus::Matched)
            }
        })
    }

    /// The player's assignment in `live`, minted once per ticket and kept.
    fn cached_assignment(
        &self,
        ticket: &str,
        account_id: i64,
        live: &LiveMatch,
    ) -> Option<Assignment> {
        let key = (ticket.to_owned(), account_id);
        if let Some(a) = self.assignments.lock().get(&key) {
            return Some(a.clone());
        }
        let a = self.assignment(account_id, live)??;
        self.assignments.lock().insert(key, a.clone());
        Some(a)
    }

    /// A fresh assignment for `account_id` in `live`: `None` if no token
    /// could be made, `Some(None)` if it holds no seat there.
    fn assignment(&self, account_id: i64, live: &LiveMatch) -> Option<Option<Assignment>> {
        let Some(seat) = live.seats.iter().find(|s| s.account_id == account_id) else {
            return Some(None);
        };
        let address: SocketAddr = live.address.parse().ok()?;
        let (connect_token, token_expires_unix) =
            self.token(account_id as u64, address, &live.match_id)?;
        Some(Some(Assignment {
            match_id: live.match_id.clone(),
            mode: live.mode.clone(),
            address,
            connect_token,
            token_expires_unix,
            roster: live.seats.iter().map(|s| s.account_id).collect(),
            team: seat.team,
        }))
    }

    fn token(&self, client_id: u64, address: SocketAddr, match_id: &str) -> Option<(String, u64)> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
        let expire = now + self.token_ttl_s;
        let token = ConnectToken::generate(
            &TokenParams {
                protocol_id: hightick_proto::PROTOCOL_ID,
                client_id,
                create_unix: now,
                expire_unix: expire,
                timeout_seconds: self.connect_timeout_s,
                server_addresses: &[address],
                user_data: match_id.as_bytes(),
            },
            &self.token_key,
            &mut rand::rng(),
        )
        .ok()?;
        Some((
            base64::engine::general_purpose::STANDARD.encode(token.encode()),
            expire,
        ))
    }

    async fn allocate(
        &self,
        request: MatchRequest<'_>,
        region: &str,
        region_only: bool,
    ) -> Option<Allocated> {
        let hosts = match &self.allocation {
            Allocation::Agones(agones) => return agones.allocate(request).await.ok(),
            Allocation::Hosts(hosts) => hosts,
        };
        for host in hosts.candidates_in(now_ms(), region, region_only) {
            // The room is taken before the host is asked, so the groups in
            // flight together never ask for more than the hosts have, and
            // the oldest (started first) hold it.
            if !hosts.reserve(host) {
                continue;
            }
            match self.client.allocate(host, request).await {
                Ok(allocated) => return Some(allocated),
                Err(AllocateError::Full(_)) => {
                    hosts.release(host);
                    hosts.full(host);
                }
                Err(_) => hosts.release(host),
            }
        }
        None
    }

    /// Allocates one formed match; its record if a host took it.
    async fn allocate_group(&self, group: Group) -> Option<NewMatch> {
        let spec = self.modes.get(&group.mode)?;
        let mut teams: Vec<Vec<i64>> = vec![Vec::new(); spec.teams];
        for (_, members, team) in &group.tickets {
            teams[*team].extend(members);
        }
        // Seat i is on team i % teams: interleave the teams' players.
        let mut seats = Vec::with_capacity(spec.players);
        for slot in 0..spec.players.div_ceil(spec.teams) {
            for (team, members) in teams.iter().enumerate() {
                if let Some(&account_id) = members.get(slot) {
                    seats.push(Seat {
                        account_id,
                        team: team as i64,
                    });
                }
            }
        }
        let roster: Vec<u64> = seats.iter().map(|s| s.account_id as u64).collect();
        let match_id = random_id("m-", 12);
        let request = MatchRequest {
            match_id: &match_id,
            mode: &group.mode,
            roster: &roster,
            settings: &spec.settings,
        };
        let Some(allocated) = self
            .allocate(request, &group.region, group.region_only)
            .await
        else {
            self.failed_allocations.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        Some(NewMatch {
            match_id,
            mode: group.mode,
            address: allocated.address.to_string(),
            region: group.region,
            seats,
            tickets: group
                .tickets
                .into_iter()
                .map(|(ticket, _, team)| (ticket, team as i64))
                .collect(),
        })
    }

    /// One pass: per mode claim, form, allocate, record, release; then
    /// refresh the view. Returns the matches formed here.
    async fn pass(&self) -> Result<usize, StoreError> {
        let mut formed_here = 0;
        for (mode, spec) in &self.modes {
            // Not a match's worth waiting (by the last refresh and the joins
            // here since): nothing to claim.
            let waiting = self.view.lock().waiting.get(mode).copied().unwrap_or(0);
            if waiting < spec.players {
                continue;
            }
            formed_here += self.pass_mode(mode, spec).await?;
        }
        self.refresh().await?;
        Ok(formed_here)
    }

    async fn pass_mode(&self, mode: &str, spec: &ModeSpec) -> Result<usize, StoreError> {
        let now = now_ms();
        let claim_id = random_id("c-", 8);
        let limit = i64::try_from(self.rules.claim_batch).unwrap_or(i64::MAX);
        let claimed = self
            .store
            .queue_claim(mode, limit, now - CLAIM_STALE_MS, &claim_id)
            .await?;
        if claimed.is_empty() {
            return Ok(0);
        }

        let waiting: Vec<Waiting> = claimed
            .iter()
            .map(|t| Waiting {
                size: t.members.len(),
                rating: t.rating,
                region: t.region.clone(),
                waited_ms: now - t.joined_ms,
            })
            .collect();
        let mut groups = rules::form(&waiting, spec.players, spec.teams, &self.rules)
            .into_iter()
            .map(|f| Group {
                mode: mode.to_owned(),
                tickets: f
                    .tickets
                    .iter()
                    .map(|&(i, team)| (claimed[i].ticket.clone(), claimed[i].members.clone(), team))
                    .collect(),
                region: f.region,
                region_only: f.region_only,
            });
        // The hosts as every gateway last told the store (on failure, as
        // this one last read them: a host that cannot take a match says so).
        if let Some(hosts) = self.registry()
            && let Err(e) = hosts.refresh(now).await
        {
            eprintln!("matchmaking: reading the host registry: {e}");
        }
        // Many allocations at once (one at a time, 19,000 one-player matches
        // took 7.6 s).
        let mut records = Vec::new();
        let mut pending = FuturesUnordered::new();
        loop {
            while pending.len() < self.rules.parallel_allocations {
                let Some(g) = groups.next() else { break };
                pending.push(self.allocate_group(g));
            }
            match pending.next().await {
                Some(record) => records.extend(record),
                None => break,
            }
        }

        // What this pass did to the hosts' room, for the other gateways.
        if let Some(hosts) = self.registry()
            && let Err(e) = hosts.tally().await
        {
            eprintln!("matchmaking: writing the host registry: {e}");
        }
        if !records.is_empty() {
            self.store.queue_record(&records).await?;
        }
        self.store.queue_release(&claim_id).await?;
        let joined: HashMap<&str, i64> = claimed
            .iter()
            .map(|t| (t.ticket.as_str(), t.joined_ms))
            .collect();
        let done = now_ms();
        for m in &records {
            for (ticket, _) in &m.tickets {
                let waited = done - joined.get(ticket.as_str()).copied().unwrap_or(done);
                self.wait
                    .record(Duration::from_millis(u64::try_from(waited).unwrap_or(0)));
            }
        }
        self.formed
            .fetch_add(records.len() as u64, Ordering::Relaxed);
        let mut view = self.view.lock();
        for m in records.iter() {
            view.matches.insert(
                m.match_id.clone(),
                LiveMatch {
                    match_id: m.match_id.clone(),
                    mode: m.mode.clone(),
                    address: m.address.clone(),
                    region: m.region.clone(),
                    seats: m.seats.clone(),
                    formed_ms: done,
                    over_ms: None,
                },
            );
        }
        Ok(records.len())
    }

    /// Rebuilds the view: every position, the tickets matched since the last
    /// look (pushing `match_found` for them), and wakes the long polls.
    async fn refresh(&self) -> Result<(), StoreError> {
        let waiting = self.store.queue_waiting().await?;
        let since = self.view.lock().watermark_ms - MATCHED_SLACK_MS;
        let matched = self.store.queue_matched_since(since).await?;
        let new = {
            let mut view = self.view.lock();
            view.set_waiting(&waiting);
            view.add_matched(matched)
        };
        for (ticket, m) in new {
            let cached = self.view.lock().matches.get(&m.match_id).cloned();
            let live = match cached {
                Some(live) => live,
                None => match self.store.live_match(&m.match_id).await? {
                    Some(live) => {
                        self.view
                            .lock()
                            .matches
                            .insert(m.match_id.clone(), live.clone());
                        live
                    }
                    None => continue,
                },
            };
            for &account in &m.members {
                if let Some(a) = self.cached_assignment(&ticket, account, &live) {
                    let body = MatchStatus::Matched(a).body(&ticket);
                    self.hub
                        .publish(account, event::render("match_found", body, now_ms()));
                }
            }
        }
        self.refreshed.send_modify(|n| *n += 1);
        Ok(())
    }

    async fn sweep(&self) -> Result<(), StoreError> {
        let now = now_ms();
        let ttl_ms = i64::try_from(self.ticket_ttl.as_millis()).unwrap_or(i64::MAX);
        self.store
            .queue_sweep(now - ttl_ms, now - LIVE_MATCH_MAX_AGE_MS)
            .await?;
        {
            let mut view = self.view.lock();
            view.prune(now - ttl_ms);
            self.assignments
                .lock()
                .retain(|(ticket, _), _| view.matched.contains_key(ticket));
        }
        if let Some(hosts) = self.registry() {
            hosts.forget_silent(now).await?;
        }
        Ok(())
    }
}

async fn run_passes(weak: std::sync::Weak<Inner>) {
    let mut last_sweep = Instant::now();
    loop {
        let Some(inner) = weak.upgrade() else { return };
        if let Err(e) = inner.pass().await {
            eprintln!("matchmaking pass: {e}");
        }
        if last_sweep.elapsed() >= SWEEP_EVERY {
            last_sweep = Instant::now();
            if let Err(e) = inner.sweep().await {
                eprintln!("matchmaking sweep: {e}");
            }
        }
        // Joins wake it early; joins during a pass leave one wake-up, so a
        // stampede of joins runs one pass after another, not one per join.
        let _ = tokio::time::timeout(PASS_EVERY, inner.wake.notified()).await;
    }
}
