//! The bodies the meta, ops and servers routes answer with: each handler
//! builds one of these, and the OpenAPI document takes its schema from the
//! same type.

use serde::Serialize;
use utoipa::ToSchema;

use hightick_store::{
    InventoryItem, LeaderboardEntry, MatchHistoryEntry, PlayerCard, Profile as StoredProfile,
    PurchaseReceipt,
};

/// `GET /healthz`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    /// Always `ok`.
    pub status: &'static str,
    /// Seconds since the gateway started.
    pub uptime_s: f64,
}

/// A player's lifetime numbers.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Stats {
    pub matches_played: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
    pub score_total: i64,
    pub rating: f64,
}

/// `GET /v1/me/profile`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Profile {
    pub account_id: i64,
    /// A guest (device) account rather than a named one.
    pub guest: bool,
    /// The login name (named accounts).
    pub name: Option<String>,
    pub display_name: String,
    pub xp: i64,
    pub balance: i64,
    pub stats: Stats,
}

impl From<PlayerCard> for Profile {
    fn from(card: PlayerCard) -> Self {
        let (account, profile, stats) = (card.account, card.profile, card.stats);
        Self {
            account_id: account.id,
            guest: account.device_id.is_some(),
            name: account.name,
            display_name: profile.display_name,
            xp: profile.xp,
            balance: account.balance,
            stats: Stats {
                matches_played: stats.matches_played,
                wins: stats.wins,
                losses: stats.losses,
                draws: stats.draws,
                score_total: stats.score_total,
                rating: stats.rating,
            },
        }
    }
}

/// `PUT /v1/me/profile`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProfileName {
    pub account_id: i64,
    pub display_name: String,
    pub xp: i64,
}

impl From<StoredProfile> for ProfileName {
    fn from(p: StoredProfile) -> Self {
        Self {
            account_id: p.account_id,
            display_name: p.display_name,
            xp: p.xp,
        }
    }
}

/// One item held.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Held {
    pub item_id: String,
    pub quantity: i64,
}

/// `GET /v1/me/inventory`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Inventory {
    pub balance: i64,
    pub items: Vec<Held>,
}

impl Inventory {
    pub(crate) fn new(balance: i64, items: Vec<InventoryItem>) -> Self {
        let items = items
            .into_iter()
            .map(|i| Held {
                item_id: i.item_id,
                quantity: i.quantity,
            })
            .collect();
        Self { balance, items }
    }
}

/// One item the shop sells.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Price {
    pub item_id: String,
    pub price: i64,
}

/// `GET /v1/shop`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Catalog {
    pub items: Vec<Price>,
}

/// `POST /v1/me/purchases`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Receipt {
    pub idempotency_key: String,
    pub item_id: String,
    pub quantity: i64,
    pub cost: i64,
    pub balance_after: i64,
    /// A retry with the same key: nothing was charged again.
    pub replayed: bool,
}

impl From<PurchaseReceipt> for Receipt {
    fn from(r: PurchaseReceipt) -> Self {
        Self {
            idempotency_key: r.idempotency_key,
            item_id: r.item_id,
            quantity: r.quantity,
            cost: r.cost,
            balance_after: r.balance_after,
            replayed: r.replayed,
        }
    }
}

/// One finished match of the caller's.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HistoryLine {
    pub match_id: String,
    pub mode: String,
    pub recorded_at_ms: i64,
    pub team: i64,
    pub score: i64,
    /// `win`, `loss` or `draw`.
    pub outcome: &'static str,
    pub reward: i64,
    pub rating_before: f64,
    pub rating_after: f64,
}

impl From<&MatchHistoryEntry> for HistoryLine {
    fn from(m: &MatchHistoryEntry) -> Self {
        Self {
            match_id: m.match_id.clone(),
            mode: m.mode.clone(),
            recorded_at_ms: m.recorded_at_ms,
            team: m.team,
            score: m.score,
            outcome: m.outcome.as_str(),
            reward: m.reward,
            rating_before: m.rating_before,
            rating_after: m.rating_after,
        }
    }
}

/// `GET /v1/me/matches`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MatchHistory {
    pub matches: Vec<HistoryLine>,
}

/// One leaderboard line.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LeaderboardLine {
    pub rank: i64,
    pub account_id: i64,
    pub display_name: String,
    pub rating: f64,
    pub matches_played: i64,
}

impl From<&LeaderboardEntry> for LeaderboardLine {
    fn from(e: &LeaderboardEntry) -> Self {
        Self {
            rank: e.rank,
            account_id: e.account_id,
            display_name: e.display_name.clone(),
            rating: e.rating,
            matches_played: e.matches_played,
        }
    }
}

/// `GET /v1/leaderboard`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Leaderboard {
    /// The top 100 by rating.
    pub top: Vec<LeaderboardLine>,
    /// The caller's line (none before a first match).
    pub me: Option<LeaderboardLine>,
}

/// `POST /v1/hosts`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Registered {
    pub registered: bool,
    /// Seconds within which the next heartbeat must come.
    pub heartbeat_within_s: u64,
}

/// `GET /v1/hosts`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HostList {
    pub hosts: Vec<crate::hosts::HostEntry>,
}

/// `POST /v1/results`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Recorded {
    pub match_id: String,
    /// False when this match id was recorded before (a retry).
    pub recorded: bool,
}

/// `POST /v1/auth/logout`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Revoked {
    pub revoked: bool,
}

/// `DELETE /v1/matchmaking/tickets/{ticket}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Cancelled {
    pub cancelled: bool,
}

/// A party (`/v1/parties` routes).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PartyBody {
    pub party_id: String,
    /// What friends join it by.
    pub code: String,
    /// The account that may queue it.
    pub leader: i64,
    /// Members in joining order, the leader among them.
    pub members: Vec<i64>,
}

impl From<hightick_store::Party> for PartyBody {
    fn from(party: hightick_store::Party) -> Self {
        Self {
            party_id: party.party_id,
            code: party.code,
            leader: party.leader,
            members: party.members,
        }
    }
}

/// `POST /v1/parties/leave`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Left {
    pub left: bool,
}

/// A login waiting in the queue (`202`).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LoginQueued {
    /// `queued`, or `working` once an auth worker has it.
    pub status: &'static str,
    pub ticket: String,
    /// Logins ahead of it (0 once working); only ever falls.
    pub position: u64,
    pub estimate_ms: u64,
    /// Where to poll it.
    pub poll: String,
}
