//! Reads of standings: match history, a player's card and stats, the leaderboard and one
//! player's rank.

use sqlx::Row as _;

use super::{Pool, Row, account_from, profile_from};
use crate::error::StoreError;
use crate::model::{LeaderboardEntry, MatchHistoryEntry, PlayerCard, PlayerStats, check_limit};

pub(crate) async fn match_history(
    pool: &Pool,
    account_id: i64,
    limit: i64,
) -> Result<Vec<MatchHistoryEntry>, StoreError> {
    check_limit(limit)?;
    let rows = sqlx::query(
        "SELECT r.match_id, r.mode, r.recorded_at_ms, p.team, p.score, p.outcome, p.reward, \
         p.rating_before, p.rating_after FROM match_players p \
         JOIN match_results r ON r.match_id = p.match_id WHERE p.account_id = $1 \
         ORDER BY r.recorded_at_ms DESC, r.match_id DESC LIMIT $2",
    )
    .bind(account_id)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            let outcome: String = r.try_get(5)?;
            Ok(MatchHistoryEntry {
                match_id: r.try_get(0)?,
                mode: r.try_get(1)?,
                recorded_at_ms: r.try_get(2)?,
                team: r.try_get(3)?,
                score: r.try_get(4)?,
                outcome: crate::model::parse_outcome(&outcome)?,
                reward: r.try_get(6)?,
                rating_before: r.try_get(7)?,
                rating_after: r.try_get(8)?,
            })
        })
        .collect()
}

/// Account, profile and stats in one statement (one round trip instead of three).
pub(crate) async fn player_card(pool: &Pool, account_id: i64) -> Result<PlayerCard, StoreError> {
    // Columns as `account_from`, `profile_from` and `stats_from` read them.
    let row = sqlx::query(
        "SELECT a.id, a.device_id, a.name, a.password_hash, a.balance, a.created_at_ms, \
         p.account_id, p.display_name, p.xp, \
         s.account_id, s.matches_played, s.wins, s.losses, s.draws, s.score_total, s.rating \
         FROM accounts a JOIN profiles p ON p.account_id = a.id \
         JOIN player_stats s ON s.account_id = a.id WHERE a.id = $1",
    )
    .bind(account_id)
    .fetch_optional(pool)
    .await?
    .ok_or(StoreError::NotFound { what: "account" })?;
    Ok(PlayerCard {
        account: account_from(&row)?,
        profile: profile_from(&row, 6)?,
        stats: stats_from(&row, 9)?,
    })
}

pub(crate) async fn player_stats(pool: &Pool, account_id: i64) -> Result<PlayerStats, StoreError> {
    let r = sqlx::query(
        "SELECT account_id, matches_played, wins, losses, draws, score_total, rating \
         FROM player_stats WHERE account_id = $1",
    )
    .bind(account_id)
    .fetch_optional(pool)
    .await?
    .ok_or(StoreError::NotFound {
        what: "player stats",
    })?;
    stats_from(&r, 0)
}

/// Stats from `account_id, matches_played, wins, losses, draws, score_total,
/// rating`, starting at column `at`.
fn stats_from(row: &Row, at: usize) -> Result<PlayerStats, StoreError> {
    Ok(PlayerStats {
        account_id: row.try_get(at)?,
        matches_played: row.try_get(at + 1)?,
        wins: row.try_get(at + 2)?,
        losses: row.try_get(at + 3)?,
        draws: row.try_get(at + 4)?,
        score_total: row.try_get(at + 5)?,
        rating: row.try_get(at + 6)?,
    })
}

pub(crate) async fn leaderboard(
    pool: &Pool,
    limit: i64,
) -> Result<Vec<LeaderboardEntry>, StoreError> {
    check_limit(limit)?;
    let rows = sqlx::query(
        "SELECT s.account_id, p.display_name, s.rating, s.matches_played FROM player_stats s \
         JOIN profiles p ON p.account_id = s.account_id WHERE s.matches_played > 0 \
         ORDER BY s.rating DESC, s.account_id ASC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let mut out: Vec<LeaderboardEntry> = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let mut entry = leader_from(r, i as i64 + 1)?;
        if let Some(prev) = out.last().filter(|prev| prev.rating == entry.rating) {
            entry.rank = prev.rank;
        }
        out.push(entry);
    }
    Ok(out)
}

pub(crate) async fn rank(
    pool: &Pool,
    account_id: i64,
) -> Result<Option<LeaderboardEntry>, StoreError> {
    let Some(r) = sqlx::query(
        "SELECT s.account_id, p.display_name, s.rating, s.matches_played FROM player_stats s \
         JOIN profiles p ON p.account_id = s.account_id WHERE s.account_id = $1 AND s.matches_played > 0",
    )
    .bind(account_id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let rating: f64 = r.try_get(2)?;
    let better: i64 =
        sqlx::query("SELECT COUNT(*) FROM player_stats WHERE matches_played > 0 AND rating > $1")
            .bind(rating)
            .fetch_one(pool)
            .await?
            .try_get(0)?;
    Ok(Some(leader_from(&r, better + 1)?))
}

/// A leaderboard line from `account_id, display_name, rating, matches_played`.
fn leader_from(r: &Row, rank: i64) -> Result<LeaderboardEntry, StoreError> {
    Ok(LeaderboardEntry {
        rank,
        account_id: r.try_get(0)?,
        display_name: r.try_get(1)?,
        rating: r.try_get(2)?,
        matches_played: r.try_get(3)?,
    })
}
