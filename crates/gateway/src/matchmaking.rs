//! Matchmaking: one FIFO queue per mode. When a queue holds a match's worth of
//! players, the first of them become a match allocated on the host with most
//! room; each player's ticket then carries the match and a connect token
//! (sealed with the key the hosts share, the account id as client id, the
//! allocated address as the only server). When no host can take the match,
//! the players go back to the head of the queue and the allocation is tried
//! again shortly; nobody gets an error for it.
//!
//! Every change a player would poll for is also published to the push
//! [`Hub`]: a match found and a cancel at once, queue positions once a second
//! ([`crate::push::positions`] reads them with [`Matchmaker::queued_positions`]).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hightick_net::{ConnectToken, Key, TokenParams};
use hightick_telemetry::prometheus::durations::DurationHistogram;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use crate::agones::AgonesAllocator;
use crate::config::ModeConfig;
use crate::hosts::{AllocateError, Allocated, HostClient, Hosts, MatchRequest};
use crate::push::{Hub, event};

/// How often waiting groups retry allocation when no host had room.
const RETRY_EVERY: Duration = Duration::from_millis(500);
/// How long a match formed here is remembered for rejoins when no result
/// comes for it (its host died with it, say).
const LIVE_MATCH_MAX_AGE: Duration = Duration::from_secs(6 * 3600);

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
}

/// Where a matchmaking ticket stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchStatus {
    /// Waiting for players.
    Queued {
        /// 1 = first in its mode's queue.
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

/// Why a rejoin was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RejoinError {
    /// No such match running: unknown here, or its result is in.
    #[error("no such match running")]
    NoMatch,
    /// The account holds no seat in that match.
    #[error("the account holds no seat in that match")]
    NotInMatch,
    /// The token could not be made.
    #[error("no connect token could be made")]
    Token,
}

/// A match formed here and not yet over: where it runs and who plays.
#[derive(Debug, Clone)]
struct LiveMatch {
    mode: String,
    address: SocketAddr,
    roster: Vec<i64>,
    formed_at: Instant,
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

/// One queued ticket's place, as [`Matchmaker::queued_positions`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedPosition {
    /// Its account.
    pub account_id: i64,
    /// The ticket.
    pub ticket: String,
    /// Its state (always [`MatchStatus::Queued`]).
    pub status: MatchStatus,
}

/// Why a join or cancel was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchmakingError {
    /// No such queue.
    #[error("unknown mode")]
    UnknownMode,
    /// The ticket is being allocated or already matched.
    #[error("the ticket is no longer waiting")]
    NotWaiting,
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

#[derive(Debug)]
struct Ticket {
    account_id: i64,
    mode: String,
    forming: bool,
    outcome: watch::Sender<Option<Assignment>>,
    joined_at: Instant,
    finished_at: Option<Instant>,
}

#[derive(Debug, Default)]
struct State {
    queues: HashMap<String, VecDeque<String>>,
    tickets: HashMap<String, Ticket>,
    by_account: HashMap<i64, String>,
    /// Matches formed and not yet over, by match id (for rejoins).
    live: HashMap<String, LiveMatch>,
}

#[derive(Debug)]
struct Inner {
    modes: HashMap<String, usize>,
    /// Each mode's match settings, sent with its allocations.
    settings: HashMap<String, serde_json::Map<String, serde_json::Value>>,
    state: Mutex<State>,
    allocation: Allocation,
    client: HostClient,
    token_key: Key,
    token_ttl_s: u64,
    connect_timeout_s: i32,
    ticket_ttl: Duration,
    wake: Notify,
    formed: AtomicU64,
    failed_allocations: AtomicU64,
    /// Time from joining a queue to a match found, per player.
    wait: DurationHistogram,
    /// Where found matches and cancels are pushed.
    hub: Arc<Hub>,
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

fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Matchmaker {
    /// Queues for `modes` allocating through `allocation`, pushing to
    /// `hub`. Starts its task on the current tokio runtime.
    pub fn start(
        modes: &[ModeConfig],
        allocation: Allocation,
        tokens: TokenSettings,
        ticket_ttl: Duration,
        hub: Arc<Hub>,
    ) -> Self {
        let inner = Arc::new(Inner {
            modes: modes.iter().map(|m| (m.name.clone(), m.players)).collect(),
            settings: modes
                .iter()
                .map(|m| (m.name.clone(), m.settings.clone()))
                .collect(),
            state: Mutex::new(State::default()),
            allocation,
            client: HostClient::default(),
            token_key: tokens.key,
            token_ttl_s: tokens.ttl_s,
            connect_timeout_s: i32::try_from(tokens.connect_timeout_s).unwrap_or(i32::MAX),
            ticket_ttl,
            wake: Notify::new(),
            formed: AtomicU64::new(0),
            failed_allocations: AtomicU64::new(0),
            wait: DurationHistogram::default(),
            hub,
        });
        tokio::spawn(form_matches(Arc::downgrade(&inner)));
        Self { inner }
    }

    /// Puts `account_id` in the `mode` queue; an account already waiting gets
    /// its existing ticket back.
    pub fn join(&self, account_id: i64, mode: &str) -> Result<String, MatchmakingError> {
        let Some(&needed) = self.inner.modes.get(mode) else {
            return Err(MatchmakingError::UnknownMode);
        };
        let mut state = lock(&self.inner.state);
        if let Some(existing) = state.by_account.get(&account_id)
            && state
                .tickets
                .get(existing)
                .is_some_and(|t| t.finished_at.is_none())
        {
            return Ok(existing.clone());
        }
        let mut id = [0u8; 16];
        rand::fill(&mut id);
        let ticket = hex::encode(id);
        let (outcome, _) = watch::channel(None);
        state.tickets.insert(
            ticket.clone(),
            Ticket {
                account_id,
                mode: mode.to_owned(),
                forming: false,
                outcome,
                joined_at: Instant::now(),
                finished_at: None,
            },
        );
        state.by_account.insert(account_id, ticket.clone());
        let queue = state.queues.entry(mode.to_owned()).or_default();
        queue.push_back(ticket.clone());
        let full = queue.len() >= needed;
        drop(state);
        if full {
            self.inner.wake.notify_one();
        }
        Ok(ticket)
    }

    /// The status of `ticket` if it belongs to `account_id`.
    pub fn status(&self, account_id: i64, ticket: &str) -> Option<MatchStatus> {
        let state = lock(&self.inner.state);
        let t = state
            .tickets
            .get(ticket)
            .filter(|t| t.account_id == account_id)?;
        Some(self.inner.status_of(&state, ticket, t))
    }

    /// Like [`Self::status`], waiting up to `wait` for a match.
    pub async fn wait(&self, account_id: i64, ticket: &str, wait: Duration) -> Option<MatchStatus> {
        let mut outcome = {
            let state = lock(&self.inner.state);
            let t = state
                .tickets
                .get(ticket)
                .filter(|t| t.account_id == account_id)?;
            if t.finished_at.is_some() || wait.is_zero() {
                return Some(self.inner.status_of(&state, ticket, t));
            }
            t.outcome.subscribe()
        };
        let _ = tokio::time::timeout(wait, outcome.wait_for(Option::is_some)).await;
        self.status(account_id, ticket)
    }

    /// Leaves the queue. `Ok(false)`: no such ticket of this account.
    pub fn cancel(&self, account_id: i64, ticket: &str) -> Result<bool, MatchmakingError> {
        let mut state = lock(&self.inner.state);
        let Some(t) = state
            .tickets
            .get(ticket)
            .filter(|t| t.account_id == account_id)
        else {
            return Ok(false);
        };
        if t.forming || t.finished_at.is_some() {
            return Err(MatchmakingError::NotWaiting);
        }
        let mode = t.mode.clone();
        state.tickets.remove(ticket);
        state.by_account.remove(&account_id);
        if let Some(q) = state.queues.get_mut(&mode) {
            q.retain(|t| t != ticket);
        }
        drop(state);
        let body = json!({ "ticket": ticket });
        let text = event::render("match_cancelled", body, event::now_ms());
        self.inner.hub.publish(account_id, text);
        Ok(true)
    }

    /// A fresh connect token for `account_id`'s seat in running match
    /// `match_id`, to the same host (and so the same match and seat): a
    /// player whose connection died rejoins from any address without a new
    /// matchmaking round.
    pub fn rejoin(&self, account_id: i64, match_id: &str) -> Result<Assignment, RejoinError> {
        let live = lock(&self.inner.state)
            .live
            .get(match_id)
            .cloned()
            .ok_or(RejoinError::NoMatch)?;
        if !live.roster.contains(&account_id) {
            return Err(RejoinError::NotInMatch);
        }
        let (connect_token, token_expires_unix) = self
            .inner
            .token(account_id as u64, live.address, match_id)
            .ok_or(RejoinError::Token)?;
        Ok(Assignment {
            match_id: match_id.to_owned(),
            mode: live.mode,
            address: live.address,
            connect_token,
            token_expires_unix,
            roster: live.roster,
        })
    }

    /// Match `match_id`'s result is in: no rejoins from now on.
    pub fn match_over(&self, match_id: &str) {
        lock(&self.inner.state).live.remove(match_id);
    }

    /// The account's live ticket and where it stands, if it has one.
    pub fn current(&self, account_id: i64) -> Option<(String, MatchStatus)> {
        let state = lock(&self.inner.state);
        let id = state.by_account.get(&account_id)?;
        let t = state.tickets.get(id)?;
        Some((id.clone(), self.inner.status_of(&state, id, t)))
    }

    /// Every queued ticket with its position, in one pass over the queues.
    pub fn queued_positions(&self) -> Vec<QueuedPosition> {
        let state = lock(&self.inner.state);
        let mut out = Vec::with_capacity(state.queues.values().map(VecDeque::len).sum());
        for (mode, queue) in &state.queues {
            let needed = self.inner.modes.get(mode).copied().unwrap_or(0);
            for (i, id) in queue.iter().enumerate() {
                if let Some(t) = state.tickets.get(id) {
                    out.push(QueuedPosition {
                        account_id: t.account_id,
                        ticket: id.clone(),
                        status: MatchStatus::Queued {
                            position: i + 1,
                            waiting: queue.len(),
                            needed,
                        },
                    });
                }
            }
        }
        out
    }

    /// A handle that does not keep the matchmaker alive.
    pub fn downgrade(&self) -> WeakMatchmaker {
        WeakMatchmaker(Arc::downgrade(&self.inner))
    }

    /// Players waiting, all modes.
    pub fn queued(&self) -> usize {
        lock(&self.inner.state)
            .queues
            .values()
            .map(VecDeque::len)
            .sum()
    }

    /// Matches formed since start.
    pub fn formed(&self) -> u64 {
        self.inner.formed.load(Ordering::Relaxed)
    }

    /// Allocation attempts no host accepted.
    pub fn failed_allocations(&self) -> u64 {
        self.inner.failed_allocations.load(Ordering::Relaxed)
    }

    /// Time from joining a queue to a match found, per player.
    pub fn wait_times(&self) -> &DurationHistogram {
        &self.inner.wait
    }
}

impl Inner {
    fn status_of(&self, state: &State, id: &str, t: &Ticket) -> MatchStatus {
        if let Some(a) = t.outcome.borrow().clone() {
            return MatchStatus::Matched(a);
        }
        if t.forming {
            return MatchStatus::Forming;
        }
        let queue = state.queues.get(&t.mode);
        MatchStatus::Queued {
            position: queue
                .and_then(|q| q.iter().position(|x| x == id))
                .map_or(0, |p| p + 1),
            waiting: queue.map_or(0, VecDeque::len),
            needed: self.modes.get(&t.mode).copied().unwrap_or(0),
        }
    }

    /// Takes the first `needed` tickets of `mode` if there are that many.
    fn take_group(&self, mode: &str, needed: usize) -> Option<Vec<(String, i64)>> {
        let mut state = lock(&self.state);
        let queue = state.queues.get_mut(mode)?;
        if queue.len() < needed {
            return None;
        }
        let ids: Vec<String> = queue.drain(..needed).collect();
        let mut group = Vec::with_capacity(needed);
        for id in ids {
            if let Some(t) = state.tickets.get_mut(&id) {
                t.forming = true;
                group.push((id, t.account_id));
            }
        }
        Some(group)
    }

    /// Puts a group that found no host back at the head of its queue.
    fn requeue(&self, mode: &str, group: Vec<(String, i64)>) {
        let mut state = lock(&self.state);
        for (id, _) in &group {
            if let Some(t) = state.tickets.get_mut(id) {
                t.forming = false;
            }
        }
        let queue = state.queues.entry(mode.to_owned()).or_default();
        for (id, _) in group.into_iter().rev() {
            queue.push_front(id);
        }
    }

    async fn allocate(&self, request: MatchRequest<'_>) -> Option<Allocated> {
        let hosts = match &self.allocation {
            Allocation::Agones(agones) => return agones.allocate(request).await.ok(),
            Allocation::Hosts(hosts) => hosts,
        };
        for host in hosts.candidates(Instant::now()) {
            match self.client.allocate(host, request).await {
                Ok(allocated) => {
                    hosts.allocated(host);
                    return Some(allocated);
                }
                Err(AllocateError::Full(_)) => hosts.full(host),
                Err(_) => {}
            }
        }
        None
    }

    fn token(&self, client_id: u64, address: SocketAddr, match_id: &str) -> Option<(String, u64)> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
        let expire = now + self.token_ttl_s;
        let token = ConnectToken::generate(
            &TokenParams {
                protocol_id: hightick_proto_id(),
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

    async fn form(&self, mode: &str, needed: usize) -> bool {
        let Some(group) = self.take_group(mode, needed) else {
            return false;
        };
        let roster: Vec<u64> = group.iter().map(|&(_, a)| a as u64).collect();
        let mut id = [0u8; 12];
        rand::fill(&mut id);
        let match_id = format!("m-{}", hex::encode(id));
        let no_settings = serde_json::Map::new();
        let request = MatchRequest {
            match_id: &match_id,
            mode,
            roster: &roster,
            settings: self.settings.get(mode).unwrap_or(&no_settings),
        };
        let Some(allocated) = self.allocate(request).await else {
            self.failed_allocations.fetch_add(1, Ordering::Relaxed);
            self.requeue(mode, group);
            return false;
        };
        let accounts: Vec<i64> = group.iter().map(|&(_, a)| a).collect();
        let now = Instant::now();
        let mut found = Vec::with_capacity(group.len());
        let mut state = lock(&self.state);
        state.live.insert(
            match_id.clone(),
            LiveMatch {
                mode: mode.to_owned(),
                address: allocated.address,
                roster: accounts.clone(),
                formed_at: now,
            },
        );
        for (ticket, account) in &group {
            let Some((connect_token, token_expires_unix)) =
                self.token(*account as u64, allocated.address, &match_id)
            else {
                continue;
            };
            if let Some(t) = state.tickets.get_mut(ticket) {
                t.forming = false;
                t.finished_at = Some(now);
                self.wait.record(now.saturating_duration_since(t.joined_at));
                let assignment = Assignment {
                    match_id: match_id.clone(),
                    mode: mode.to_owned(),
                    address: allocated.address,
                    connect_token,
                    token_expires_unix,
                    roster: accounts.clone(),
                };
                t.outcome.send_replace(Some(assignment.clone()));
                found.push((*account, ticket, MatchStatus::Matched(assignment)));
            }
        }
        drop(state);
        for (account, ticket, status) in found {
            let text = event::render("match_found", status.body(ticket), event::now_ms());
            self.hub.publish(account, text);
        }
        self.formed.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn sweep(&self) {
        let ttl = self.ticket_ttl;
        let mut state = lock(&self.state);
        let State {
            tickets,
            by_account,
            live,
            ..
        } = &mut *state;
        live.retain(|_, m| m.formed_at.elapsed() < LIVE_MATCH_MAX_AGE);
        tickets.retain(|id, t| {
            let keep = t.finished_at.is_none_or(|at| at.elapsed() < ttl);
            if !keep && by_account.get(&t.account_id) == Some(id) {
                by_account.remove(&t.account_id);
            }
            keep
        });
    }
}

/// The protocol id tokens carry (the game's; hosts refuse others).
fn hightick_proto_id() -> u64 {
    hightick_proto::PROTOCOL_ID
}

async fn form_matches(weak: std::sync::Weak<Inner>) {
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let modes: Vec<(String, usize)> =
            inner.modes.iter().map(|(m, &n)| (m.clone(), n)).collect();
        for (mode, needed) in &modes {
            while inner.form(mode, *needed).await {}
        }
        inner.sweep();
        let _ = tokio::time::timeout(RETRY_EVERY, inner.wake.notified()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matchmaker(players: usize) -> Matchmaker {
        Matchmaker::start(
            &[ModeConfig {
                name: "duel".to_owned(),
                players,
                settings: serde_json::Map::new(),
            }],
            Allocation::Hosts(Arc::new(Hosts::new(&[], Duration::from_secs(10)))),
            TokenSettings {
                key: Key::generate(&mut rand::rng()),
                ttl_s: 30,
                connect_timeout_s: 5,
            },
            Duration::from_secs(60),
            Hub::new(&crate::push::PushConfig::default()),
        )
    }

    #[tokio::test]
    async fn joining_twice_returns_the_same_ticket_and_cancel_leaves() {
        let mm = matchmaker(3);
        let a = mm.join(1, "duel").unwrap();
        assert_eq!(mm.join(1, "duel").unwrap(), a);
        let b = mm.join(2, "duel").unwrap();
        assert_eq!(
            mm.status(2, &b),
            Some(MatchStatus::Queued {
                position: 2,
                waiting: 2,
                needed: 3
            })
        );
        // Another account cannot see or cancel it.
        assert_eq!(mm.status(1, &b), None);
        assert_eq!(mm.cancel(1, &b), Ok(false));
        assert_eq!(mm.cancel(1, &a), Ok(true));
        assert!(matches!(
            mm.status(2, &b),
            Some(MatchStatus::Queued { position: 1, .. })
        ));
        assert_eq!(mm.join(1, "nope"), Err(MatchmakingError::UnknownMode));
    }

    #[tokio::test]
    async fn without_hosts_a_full_group_waits_at_the_head_of_the_queue() {
        let mm = matchmaker(2);
        let a = mm.join(1, "duel").unwrap();
        let _b = mm.join(2, "duel").unwrap();
        let c = mm.join(3, "duel").unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let s = mm.wait(1, &a, Duration::from_millis(700)).await.unwrap();
        assert!(
            matches!(
                s,
                MatchStatus::Queued { position: 1, .. } | MatchStatus::Forming
            ),
            "{s:?}"
        );
        assert!(mm.failed_allocations() >= 1);
        assert_eq!(mm.formed(), 0);
        assert!(matches!(
            mm.status(3, &c),
            Some(MatchStatus::Queued { position: 3, .. })
        ));
    }
}
