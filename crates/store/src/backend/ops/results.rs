//! Match results: idempotent by match id, applied in groups of multi-row statements
//! (players' lines, stats, Elo ratings in order, rewards).

use sqlx::{QueryBuilder, Row as _};

use super::{Conn, Db, RATING_LOCK};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::{MAX_BALANCE, MatchRecorded, MatchResult, Outcome};

/// Most player rows one multi-row statement carries (8 binds each: far below
/// SQLite's 32766 and PostgreSQL's 65535 bind limits). One match always fits.
const MAX_ROWS: usize = 1024;

/// Stores match results (with their players' stats, ratings and rewards) inside the
/// caller's transaction, pushing one [`MatchRecorded`] per match onto `out`, in
/// order. A match id seen before (in the database or earlier in `matches`) changes
/// nothing. Matches are applied in groups of up to [`MAX_ROWS`] player rows, each
/// group in six statements whatever its size (multi-row statements of bound values).
pub(super) async fn apply_matches(
    conn: &mut Conn,
    matches: &[&MatchResult],
    now: i64,
    out: &mut Vec<MatchRecorded>,
) -> Result<(), StoreError> {
    for m in matches {
        m.validate()?;
    }
    let mut start = 0;
    while start < matches.len() {
        let (mut end, mut rows) = (start, 0);
        while end < matches.len() && (end == start || rows + matches[end].players.len() <= MAX_ROWS)
        {
            rows += matches[end].players.len();
            end += 1;
        }
        apply_match_group(conn, &matches[start..end], now, out).await?;
        start = end;
    }
    Ok(())
}

/// Per-player sums over one group of matches.
#[derive(Clone, Copy, Default)]
struct Tally {
    matches: i64,
    wins: i64,
    losses: i64,
    draws: i64,
    score: i64,
    reward: i64,
}

/// One player's line of a match: the match, the player's index in it, and the
/// rating before and after.
type RatedLine<'a> = (&'a MatchResult, usize, f64, f64);

/// Stores one group of matches: claims their ids, rates the new ones in order, and
/// writes their player lines, stats and rewards.
async fn apply_match_group(
    conn: &mut Conn,
    group: &[&MatchResult],
    now: i64,
    out: &mut Vec<MatchRecorded>,
) -> Result<(), StoreError> {
    let fresh = claim_match_ids(conn, group, now, out).await?;
    if fresh.is_empty() {
        return Ok(());
    }
    let (ids, mut current) = read_ratings(conn, &fresh).await?;
    let (tally, lines) = rate_in_order(&fresh, &ids, &mut current);
    insert_match_players(conn, &lines).await?;
    update_player_stats(conn, &current, &tally, now).await?;
    pay_match_rewards(conn, &current, &tally, &lines, now).await
}

/// Claims the group's match ids, pushing one [`MatchRecorded`] per match onto
/// `out`, and returns the matches whose ids were new.
async fn claim_match_ids<'a>(
    conn: &mut Conn,
    group: &[&'a MatchResult],
    now: i64,
    out: &mut Vec<MatchRecorded>,
) -> Result<Vec<&'a MatchResult>, StoreError> {
    // Claim the match ids; the ones returned are new.
    let mut q =
        QueryBuilder::<Db>::new("INSERT INTO match_results (match_id, mode, recorded_at_ms) ");
    q.push_values(group, |mut row, m| {
        row.push_bind(m.match_id.as_str())
            .push_bind(m.mode.as_str())
            .push_bind(now);
    });
    q.push(" ON CONFLICT (match_id) DO NOTHING RETURNING match_id");
    let mut claimed = Vec::new();
    for row in q.build().fetch_all(&mut *conn).await? {
        claimed.push(row.try_get::<String, _>(0)?);
    }
    let mut fresh: Vec<&MatchResult> = Vec::with_capacity(claimed.len());
    for m in group {
        match claimed.iter().position(|id| *id == m.match_id) {
            Some(i) => {
                claimed.swap_remove(i);
                fresh.push(m);
                out.push(MatchRecorded::Recorded);
            }
            None => out.push(MatchRecorded::AlreadyRecorded),
        }
    }
    Ok(fresh)
}

/// Reads (and on PostgreSQL locks) the ratings of every player of `fresh`, returning
/// the sorted account ids and the `(account_id, rating)` pairs in the same order.
async fn read_ratings(
    conn: &mut Conn,
    fresh: &[&MatchResult],
) -> Result<(Vec<i64>, Vec<(i64, f64)>), StoreError> {
    // Ratings before, read (and on PostgreSQL locked) in account order so that
    // concurrent groups sharing players cannot deadlock.
    let mut ids: Vec<i64> = fresh
        .iter()
        .flat_map(|m| m.players.iter().map(|p| p.account_id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut q = QueryBuilder::<Db>::new(
        "SELECT account_id, rating FROM player_stats WHERE account_id IN (",
    );
    let mut list = q.separated(", ");
    for id in &ids {
        list.push_bind(*id);
    }
    q.push(") ORDER BY account_id");
    q.push(RATING_LOCK);
    let mut current: Vec<(i64, f64)> = Vec::with_capacity(ids.len());
    for row in q.build().fetch_all(&mut *conn).await? {
        current.push((row.try_get(0)?, row.try_get(1)?));
    }
    if current.len() != ids.len() {
        return Err(StoreError::NotFound { what: "account" });
    }
    Ok((ids, current))
}

/// Rates the matches in order in memory, updating `current`, and returns each
/// player's tally and every player line with its ratings before and after.
fn rate_in_order<'a>(
    fresh: &[&'a MatchResult],
    ids: &[i64],
    current: &mut [(i64, f64)],
) -> (Vec<Tally>, Vec<RatedLine<'a>>) {
    // `current` holds exactly `ids`, in the same (sorted) order.
    let slot = |id: i64| ids.binary_search(&id).unwrap_or(0);

    // Apply the matches in order in memory: a player in two matches of the group is
    // rated by the first, then the second.
    let mut tally = vec![Tally::default(); ids.len()];
    let mut lines: Vec<RatedLine<'a>> = Vec::new();
    let mut before = Vec::new();
    for m in fresh {
        before.clear();
        before.extend(m.players.iter().map(|p| current[slot(p.account_id)].1));
        let after = m.rate(&before);
        for (i, p) in m.players.iter().enumerate() {
            let k = slot(p.account_id);
            current[k].1 = after[i];
            let t = &mut tally[k];
            t.matches += 1;
            match p.outcome {
                Outcome::Win => t.wins += 1,
                Outcome::Loss => t.losses += 1,
                Outcome::Draw => t.draws += 1,
            }
            t.score += p.score;
            t.reward += p.reward;
            lines.push((m, i, before[i], after[i]));
        }
    }
    (tally, lines)
}

/// Inserts one `match_players` row per player line.
async fn insert_match_players(conn: &mut Conn, lines: &[RatedLine<'_>]) -> Result<(), StoreError> {
    let mut q = QueryBuilder::<Db>::new(
        "INSERT INTO match_players (match_id, account_id, team, score, outcome, reward, \
         rating_before, rating_after) ",
    );
    q.push_values(lines, |mut row, &(m, i, rating_before, rating_after)| {
        let p = &m.players[i];
        row.push_bind(m.match_id.as_str())
            .push_bind(p.account_id)
            .push_bind(p.team)
            .push_bind(p.score)
            .push_bind(p.outcome.as_str())
            .push_bind(p.reward)
            .push_bind(rating_before)
            .push_bind(rating_after);
    });
    q.build().execute(&mut *conn).await?;
    Ok(())
}

/// Adds each player's tally to their `player_stats` row and sets their new rating.
async fn update_player_stats(
    conn: &mut Conn,
    current: &[(i64, f64)],
    tally: &[Tally],
    now: i64,
) -> Result<(), StoreError> {
    // VALUES columns are column1, column2, ... in both SQLite and PostgreSQL.
    let mut q = QueryBuilder::<Db>::new(
        "UPDATE player_stats SET matches_played = matches_played + v.column2, \
         wins = wins + v.column3, losses = losses + v.column4, draws = draws + v.column5, \
         score_total = score_total + v.column6, rating = v.column7, updated_at_ms = v.column8 FROM (",
    );
    q.push_values(current.iter().zip(tally), |mut row, (&(id, rating), t)| {
        row.push_bind(id)
            .push_bind(t.matches)
            .push_bind(t.wins)
            .push_bind(t.losses)
            .push_bind(t.draws)
            .push_bind(t.score)
            .push_bind(rating)
            .push_bind(now);
    });
    q.push(") AS v WHERE player_stats.account_id = v.column1");
    q.build().execute(&mut *conn).await?;
    Ok(())
}

/// Credits each rewarded player's balance (failing if one would exceed
/// [`MAX_BALANCE`]) and writes one ledger row per rewarded player line.
async fn pay_match_rewards(
    conn: &mut Conn,
    current: &[(i64, f64)],
    tally: &[Tally],
    lines: &[RatedLine<'_>],
    now: i64,
) -> Result<(), StoreError> {
    let rewarded = tally.iter().filter(|t| t.reward > 0).count();
    if rewarded > 0 {
        let mut q =
            QueryBuilder::<Db>::new("UPDATE accounts SET balance = balance + v.column2 FROM (");
        q.push_values(
            current.iter().zip(tally).filter(|(_, t)| t.reward > 0),
            |mut row, (&(id, _), t)| {
                row.push_bind(id).push_bind(t.reward);
            },
        );
        q.push(") AS v WHERE accounts.id = v.column1 AND accounts.balance + v.column2 <= ");
        q.push_bind(MAX_BALANCE);
        let done = q.build().execute(&mut *conn).await?;
        if done.rows_affected() != rewarded as u64 {
            return Err(StoreError::Conflict {
                what: "balance would exceed its maximum",
            });
        }
        let mut q = QueryBuilder::<Db>::new(
            "INSERT INTO ledger (account_id, delta, reason, reference, created_at_ms) ",
        );
        q.push_values(
            lines.iter().filter(|(m, i, _, _)| m.players[*i].reward > 0),
            |mut row, &(m, i, _, _)| {
                row.push_bind(m.players[i].account_id)
                    .push_bind(m.players[i].reward)
                    .push_bind("match_reward")
                    .push_bind(m.match_id.as_str())
                    .push_bind(now);
            },
        );
        q.build().execute(&mut *conn).await?;
    }
    Ok(())
}

pub(crate) async fn record_match(
    conn: &mut Conn,
    m: &MatchResult,
) -> Result<MatchRecorded, StoreError> {
    m.validate()?;
    let mut out = Vec::with_capacity(1);
    apply_matches(conn, &[m], now_ms(), &mut out).await?;
    Ok(out
        .first()
        .copied()
        .unwrap_or(MatchRecorded::AlreadyRecorded))
}
