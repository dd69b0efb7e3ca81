//! The records the store reads and writes, and the validation of caller input.

use crate::error::StoreError;

/// Longest accepted text id (device id, item id, match id, idempotency key, token id).
pub const MAX_ID_LEN: usize = 128;
/// Longest accepted display name / account name.
pub const MAX_NAME_LEN: usize = 64;
/// Largest single currency amount (grant, reward or purchase cost).
pub const MAX_AMOUNT: i64 = 1_000_000_000_000;
/// Largest quantity in one purchase.
pub const MAX_QUANTITY: i64 = 1_000_000;
/// Rating every player starts with.
pub const INITIAL_RATING: f64 = 1000.0;
/// Elo K factor.
pub const RATING_K: f64 = 32.0;
/// Largest in-game score magnitude accepted in a match result.
pub const MAX_SCORE: i64 = 1_000_000_000;
/// Most players accepted in one match result.
pub(crate) const MAX_MATCH_PLAYERS: usize = 128;

/// An account: a guest (device id) or a named account with a password hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    /// Primary key.
    pub id: i64,
    /// Set for guest accounts.
    pub device_id: Option<String>,
    /// Set for named accounts.
    pub name: Option<String>,
    /// argon2id PHC string, set for named accounts.
    pub password_hash: Option<String>,
    /// Currency balance (never negative).
    pub balance: i64,
    /// Creation time, unix milliseconds.
    pub created_at_ms: i64,
}

/// A session token record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The token's id (the gateway signs tokens; the store keeps ids for revocation).
    pub token_id: String,
    /// Owner.
    pub account_id: i64,
    /// Creation time, unix milliseconds.
    pub created_at_ms: i64,
    /// Expiry, unix milliseconds.
    pub expires_at_ms: i64,
    /// Revoked sessions are never valid again.
    pub revoked: bool,
}

impl Session {
    /// True when neither revoked nor expired at `now_ms`.
    pub fn is_valid_at(&self, now_ms: i64) -> bool {
        !self.revoked && now_ms < self.expires_at_ms
    }
}

/// One guest login for [`crate::Store::guest_logins`]: the device's account
/// (created on first use) gets a session with this token id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestLogin {
    /// The device id.
    pub device_id: String,
    /// The new session's token id.
    pub token_id: String,
    /// The session's expiry, unix milliseconds (in the future).
    pub expires_at_ms: i64,
}

impl GuestLogin {
    /// Checks every field against `now_ms`.
    pub fn validate(&self, now_ms: i64) -> Result<(), StoreError> {
        check_id("device_id", &self.device_id)?;
        check_id("token_id", &self.token_id)?;
        if self.expires_at_ms <= now_ms {
            return Err(invalid("expires_at_ms", "must be in the future"));
        }
        Ok(())
    }
}

/// A player's profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Owner.
    pub account_id: i64,
    /// Shown to other players.
    pub display_name: String,
    /// Progress points.
    pub xp: i64,
}

/// One stack of items in an inventory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryItem {
    /// Item id.
    pub item_id: String,
    /// How many.
    pub quantity: i64,
}

/// One currency ledger entry; a balance equals the sum of its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    /// Entry id (increasing).
    pub id: i64,
    /// Signed change.
    pub delta: i64,
    /// "grant", "purchase", "match_reward".
    pub reason: String,
    /// Grant reference, idempotency key or match id.
    pub reference: String,
    /// Time, unix milliseconds.
    pub created_at_ms: i64,
}

/// A purchase request: spend `quantity * unit_price` and grant `quantity` of `item_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurchaseRequest {
    /// Buyer.
    pub account_id: i64,
    /// Client-chosen key; a retry with the same key returns the first receipt.
    pub idempotency_key: String,
    /// What is bought.
    pub item_id: String,
    /// How many (1..=MAX_QUANTITY).
    pub quantity: i64,
    /// Price of one (0..=MAX_AMOUNT).
    pub unit_price: i64,
}

impl PurchaseRequest {
    /// Checks every field; returns the total cost.
    pub fn validate(&self) -> Result<i64, StoreError> {
        check_id("idempotency_key", &self.idempotency_key)?;
        check_id("item_id", &self.item_id)?;
        if !(1..=MAX_QUANTITY).contains(&self.quantity) {
            return Err(invalid("quantity", "must be 1..=1000000"));
        }
        if !(0..=MAX_AMOUNT).contains(&self.unit_price) {
            return Err(invalid("unit_price", "must be 0..=1e12"));
        }
        match self.quantity.checked_mul(self.unit_price) {
            Some(cost) if cost <= MAX_AMOUNT => Ok(cost),
            _ => Err(invalid("quantity", "total cost exceeds 1e12")),
        }
    }
}

/// The result of a purchase (the first one, when replayed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurchaseReceipt {
    /// Buyer.
    pub account_id: i64,
    /// The request's key.
    pub idempotency_key: String,
    /// What was bought.
    pub item_id: String,
    /// How many.
    pub quantity: i64,
    /// Total charged.
    pub cost: i64,
    /// Balance right after this purchase committed.
    pub balance_after: i64,
    /// True when this call was a retry answered from the first result.
    pub replayed: bool,
}

/// How a player's match ended: the contract's outcome (the store keeps its
/// name, `win`, `loss` or `draw`).
pub use hightick_host_api::Outcome;

/// Reads an outcome's stored name back.
pub(crate) fn parse_outcome(s: &str) -> Result<Outcome, StoreError> {
    s.parse()
        .map_err(|_| invalid("outcome", "expected win, loss or draw"))
}

/// What an outcome counts for in a rating update.
fn actual_score(outcome: Outcome) -> f64 {
    match outcome {
        Outcome::Win => 1.0,
        Outcome::Loss => 0.0,
        Outcome::Draw => 0.5,
    }
}

/// One player's line in a match result.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchPlayer {
    /// The player.
    pub account_id: i64,
    /// Team number; players on other teams are the opponents for rating.
    pub team: i64,
    /// In-game score.
    pub score: i64,
    /// Result.
    pub outcome: Outcome,
    /// Currency credited for this match (0..=MAX_AMOUNT).
    pub reward: i64,
}

/// A finished match as a server reports it. Idempotent by `match_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchResult {
    /// Unique id chosen by the allocator.
    pub match_id: String,
    /// Game mode.
    pub mode: String,
    /// Every player, each at most once.
    pub players: Vec<MatchPlayer>,
}

impl MatchResult {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), StoreError> {
        check_id("match_id", &self.match_id)?;
        check_id("mode", &self.mode)?;
        if self.players.is_empty() || self.players.len() > MAX_MATCH_PLAYERS {
            return Err(invalid("players", "must hold 1..=128 players"));
        }
        for (i, p) in self.players.iter().enumerate() {
            if !(0..=MAX_AMOUNT).contains(&p.reward) {
                return Err(invalid("reward", "must be 0..=1e12"));
            }
            if !(-MAX_SCORE..=MAX_SCORE).contains(&p.score) {
                return Err(invalid("score", "must be within +-1e9"));
            }
            if self.players[..i]
                .iter()
                .any(|q| q.account_id == p.account_id)
            {
                return Err(invalid("players", "an account appears twice"));
            }
        }
        Ok(())
    }

    /// New ratings, in `players` order, given the ratings before (team-average Elo:
    /// each player's expected score is against the mean rating of everyone not on
    /// their team; a match with one team changes nothing).
    pub fn rate(&self, before: &[f64]) -> Vec<f64> {
        self.players
            .iter()
            .zip(before)
            .map(|(p, &mine)| {
                let (sum, n) = self
                    .players
                    .iter()
                    .zip(before)
                    .filter(|(q, _)| q.team != p.team)
                    .fold((0.0, 0u32), |(s, n), (_, &r)| (s + r, n + 1));
                if n == 0 {
                    return mine;
                }
                let (team_sum, team_n) = self
                    .players
                    .iter()
                    .zip(before)
                    .filter(|(q, _)| q.team == p.team)
                    .fold((0.0, 0u32), |(s, n), (_, &r)| (s + r, n + 1));
                let team_mean = team_sum / f64::from(team_n);
                let opp_mean = sum / f64::from(n);
                let expected = 1.0 / (1.0 + 10f64.powf((opp_mean - team_mean) / 400.0));
                mine + RATING_K * (actual_score(p.outcome) - expected)
            })
            .collect()
    }
}

/// Whether [`crate::Store::record_match`] wrote anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchRecorded {
    /// First time this match id was seen: stats, rating and rewards applied.
    Recorded,
    /// The match id was already stored; nothing changed.
    AlreadyRecorded,
}

/// One line of a player's match history.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchHistoryEntry {
    /// The match.
    pub match_id: String,
    /// Game mode.
    pub mode: String,
    /// When it was stored, unix milliseconds.
    pub recorded_at_ms: i64,
    /// Team.
    pub team: i64,
    /// Score.
    pub score: i64,
    /// Result.
    pub outcome: Outcome,
    /// Currency credited.
    pub reward: i64,
    /// Rating before.
    pub rating_before: f64,
    /// Rating after.
    pub rating_after: f64,
}

/// A player's totals and rating.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerStats {
    /// The player.
    pub account_id: i64,
    /// Matches recorded.
    pub matches_played: i64,
    /// Wins.
    pub wins: i64,
    /// Losses.
    pub losses: i64,
    /// Draws.
    pub draws: i64,
    /// Sum of scores.
    pub score_total: i64,
    /// Elo rating.
    pub rating: f64,
}

/// What a player's own profile screen shows: account, profile and stats, read
/// together in one statement.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerCard {
    /// The account (balance included).
    pub account: Account,
    /// The profile.
    pub profile: Profile,
    /// Totals and rating.
    pub stats: PlayerStats,
}

/// One leaderboard line. Rank is competition ranking: 1 + number of players with a
/// strictly higher rating (ties share a rank). Only players with a recorded match count.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderboardEntry {
    /// 1-based rank.
    pub rank: i64,
    /// The player.
    pub account_id: i64,
    /// Profile display name.
    pub display_name: String,
    /// Rating.
    pub rating: f64,
    /// Matches recorded.
    pub matches_played: i64,
}

pub(crate) fn invalid(field: &'static str, reason: &'static str) -> StoreError {
    StoreError::InvalidInput { field, reason }
}

/// Text of 1..=`max` bytes without control characters; anything else (quotes,
/// semicolons, SQL keywords) is plain data.
fn check_text(
    field: &'static str,
    value: &str,
    max: usize,
    len_reason: &'static str,
) -> Result<(), StoreError> {
    if value.is_empty() || value.len() > max {
        return Err(invalid(field, len_reason));
    }
    if value.chars().any(char::is_control) {
        return Err(invalid(field, "must not contain control characters"));
    }
    Ok(())
}

/// Ids: 1..=MAX_ID_LEN bytes, no control characters.
pub(crate) fn check_id(field: &'static str, value: &str) -> Result<(), StoreError> {
    check_text(field, value, MAX_ID_LEN, "must be 1..=128 bytes")
}

/// Names: 1..=MAX_NAME_LEN bytes, no control characters.
pub(crate) fn check_name(field: &'static str, value: &str) -> Result<(), StoreError> {
    check_text(field, value, MAX_NAME_LEN, "must be 1..=64 bytes")
}

/// Largest balance an account may hold.
pub(crate) const MAX_BALANCE: i64 = 1_000_000_000_000_000;
/// Largest `limit` a listing accepts.
const MAX_LIMIT: i64 = 1000;

/// A listing's `limit`: 1..=[`MAX_LIMIT`].
pub(crate) fn check_limit(limit: i64) -> Result<(), StoreError> {
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(invalid("limit", "must be 1..=1000"));
    }
    Ok(())
}

pub(crate) fn check_amount(field: &'static str, value: i64) -> Result<(), StoreError> {
    if !(1..=MAX_AMOUNT).contains(&value) {
        return Err(invalid(field, "must be 1..=1e12"));
    }
    Ok(())
}

/// A write the batching writer accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Idempotent by match id, like [`Store::record_match`](crate::store::Store::record_match).
    MatchResult(MatchResult),
    /// Adds progress points to a profile.
    Progress {
        /// The player.
        account_id: i64,
        /// Points to add (1..=1e12).
        xp: i64,
    },
}

/// What a committed write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteAck {
    /// The match result was stored, or had been already.
    Match(MatchRecorded),
    /// The profile's progress total after the write.
    Progress {
        /// New total.
        xp: i64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(account_id: i64, team: i64, outcome: Outcome) -> MatchPlayer {
        MatchPlayer {
            account_id,
            team,
            score: 0,
            outcome,
            reward: 0,
        }
    }

    #[test]
    fn equal_teams_move_by_half_k() {
        let m = MatchResult {
            match_id: "m".into(),
            mode: "5v5".into(),
            players: vec![player(1, 0, Outcome::Win), player(2, 1, Outcome::Loss)],
        };
        let after = m.rate(&[1000.0, 1000.0]);
        assert_eq!(after, vec![1016.0, 984.0]);
    }

    #[test]
    fn one_team_changes_nothing() {
        let m = MatchResult {
            match_id: "m".into(),
            mode: "solo".into(),
            players: vec![player(1, 0, Outcome::Win)],
        };
        assert_eq!(m.rate(&[1200.0]), vec![1200.0]);
    }

    #[test]
    fn purchase_validation_names_the_field() {
        let mut r = PurchaseRequest {
            account_id: 1,
            idempotency_key: "k".into(),
            item_id: "sword".into(),
            quantity: 2,
            unit_price: 5,
        };
        assert_eq!(r.validate().unwrap(), 10);
        r.quantity = -1;
        assert!(matches!(
            r.validate(),
            Err(StoreError::InvalidInput {
                field: "quantity",
                ..
            })
        ));
        r.quantity = MAX_QUANTITY;
        r.unit_price = MAX_AMOUNT;
        assert!(matches!(
            r.validate(),
            Err(StoreError::InvalidInput {
                field: "quantity",
                ..
            })
        ));
        r.quantity = 1;
        r.idempotency_key = String::new();
        assert!(matches!(
            r.validate(),
            Err(StoreError::InvalidInput {
                field: "idempotency_key",
                ..
            })
        ));
    }

    #[test]
    fn duplicate_players_are_rejected() {
        let m = MatchResult {
            match_id: "m".into(),
            mode: "x".into(),
            players: vec![player(1, 0, Outcome::Win), player(1, 1, Outcome::Loss)],
        };
        assert!(matches!(
            m.validate(),
            Err(StoreError::InvalidInput {
                field: "players",
                ..
            })
        ));
    }

    #[test]
    fn out_of_range_scores_and_rewards_are_rejected() {
        let mut m = MatchResult {
            match_id: "m".into(),
            mode: "x".into(),
            players: vec![player(1, 0, Outcome::Win)],
        };
        assert!(m.validate().is_ok());
        m.players[0].score = i64::MAX;
        assert!(matches!(
            m.validate(),
            Err(StoreError::InvalidInput { field: "score", .. })
        ));
        m.players[0].score = 0;
        m.players[0].reward = -1;
        assert!(matches!(
            m.validate(),
            Err(StoreError::InvalidInput {
                field: "reward",
                ..
            })
        ));
    }
}
