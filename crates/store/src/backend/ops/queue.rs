//! The shared matchmaking queue: tickets join, cancel, are claimed by one matchmaker
//! pass at a time, released or recorded as matches, and swept when old.

use sqlx::{QueryBuilder, Row as _};

use super::{CLAIM_LOCK, Conn, Db, Pool, Row};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::check_id;
use crate::queue::{
    LiveMatch, NewMatch, NewTicket, QueueTicket, TicketState, check_ticket, join_ids, join_seats,
    parse_ids, parse_seats,
};

/// Rows bound in one multi-row statement.
const RECORD_CHUNK: usize = 500;

macro_rules! select_ticket {
    ($where:literal) => {
        concat!(
            "SELECT ticket, mode, members, rating, region, joined_ms, state, match_id, team, \
             settled_ms FROM mm_tickets ",
            $where
        )
    };
}

fn ticket_from(row: &Row) -> Result<QueueTicket, StoreError> {
    let members: String = row.try_get(2)?;
    let state: String = row.try_get(6)?;
    Ok(QueueTicket {
        ticket: row.try_get(0)?,
        mode: row.try_get(1)?,
        members: parse_ids("mm_tickets.members", &members)?,
        rating: row.try_get(3)?,
        region: row.try_get(4)?,
        joined_ms: row.try_get(5)?,
        state: TicketState::parse(&state)?,
        match_id: row.try_get(7)?,
        team: row.try_get::<Option<i32>, _>(8)?.map(i64::from),
        settled_ms: row.try_get(9)?,
    })
}

fn live_match_from(row: &Row) -> Result<LiveMatch, StoreError> {
    let seats: String = row.try_get(4)?;
    Ok(LiveMatch {
        match_id: row.try_get(0)?,
        mode: row.try_get(1)?,
        address: row.try_get(2)?,
        region: row.try_get(3)?,
        seats: parse_seats(&seats)?,
        formed_ms: row.try_get(5)?,
        over_ms: row.try_get(6)?,
    })
}

/// The live ticket (queued or forming) an account is on, read on `conn`.
async fn live_ticket_of(conn: &mut Conn, account_id: i64) -> Result<Option<String>, StoreError> {
    let row = sqlx::query(
        "SELECT m.ticket FROM mm_members m JOIN mm_tickets t ON t.ticket = m.ticket \
         WHERE m.account_id = $1 AND t.state <> 'matched'",
    )
    .bind(account_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}

/// Queues `t`. A solo player already waiting gets their live ticket back
/// (`false`: not new); a party with a member waiting is a conflict.
pub(crate) async fn queue_join(
    conn: &mut Conn,
    t: &NewTicket,
) -> Result<(String, bool), StoreError> {
    check_ticket(t)?;
    for &account in &t.members {
        if let Some(live) = live_ticket_of(conn, account).await? {
            if t.members.len() == 1 {
                return Ok((live, false));
            }
            return Err(StoreError::Conflict {
                what: "a party member is already queued",
            });
        }
    }
    let now = now_ms();
    sqlx::query(
        "INSERT INTO mm_tickets (ticket, mode, members, size, rating, region, joined_ms, state) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued')",
    )
    .bind(&t.ticket)
    .bind(&t.mode)
    .bind(join_ids(&t.members))
    .bind(i32::try_from(t.members.len()).unwrap_or(i32::MAX))
    .bind(t.rating)
    .bind(&t.region)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(|e| StoreError::unique_as_conflict(e, "ticket id taken"))?;
    for &account in &t.members {
        sqlx::query(
            "INSERT INTO mm_members (account_id, ticket) VALUES ($1, $2) \
             ON CONFLICT (account_id) DO UPDATE SET ticket = excluded.ticket",
        )
        .bind(account)
        .bind(&t.ticket)
        .execute(&mut *conn)
        .await?;
    }
    Ok((t.ticket.clone(), true))
}

/// Takes `ticket` out of the queue if `account_id` is on it and it is still
/// queued: `Ok(Some(members))`; `Ok(None)`: no such ticket of that account;
/// a ticket being matched or matched is a conflict.
pub(crate) async fn queue_cancel(
    conn: &mut Conn,
    account_id: i64,
    ticket: &str,
) -> Result<Option<Vec<i64>>, StoreError> {
    let row = sqlx::query(select_ticket!(
        "WHERE ticket = $1 AND ticket IN (SELECT ticket FROM mm_members WHERE account_id = $2)"
    ))
    .bind(ticket)
    .bind(account_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(t) = row.as_ref().map(ticket_from).transpose()? else {
        return Ok(None);
    };
    if t.state != TicketState::Queued {
        return Err(StoreError::Conflict {
            what: "the ticket is no longer waiting",
        });
    }
    sqlx::query("DELETE FROM mm_members WHERE ticket = $1")
        .bind(ticket)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM mm_tickets WHERE ticket = $1")
        .bind(ticket)
        .execute(&mut *conn)
        .await?;
    Ok(Some(t.members))
}

/// Claims up to `limit` of `mode`'s oldest waiting tickets for one matchmaker
/// pass (state 'forming'); tickets another pass claimed before `stale_before_ms`
/// (its gateway died) are waiting again first. On PostgreSQL rows another pass
/// holds are skipped (`FOR UPDATE SKIP LOCKED`); on SQLite the one writer runs
/// claims one after another. Oldest first.
pub(crate) async fn queue_claim(
    conn: &mut Conn,
    mode: &str,
    limit: i64,
    stale_before_ms: i64,
    claim_id: &str,
) -> Result<Vec<QueueTicket>, StoreError> {
    check_id("mode", mode)?;
    check_id("claim_id", claim_id)?;
    let now = now_ms();
    sqlx::query(
        "UPDATE mm_tickets SET state = 'queued', claimed_ms = NULL, claimed_by = NULL \
         WHERE mode = $1 AND state = 'forming' AND claimed_ms < $2",
    )
    .bind(mode)
    .bind(stale_before_ms)
    .execute(&mut *conn)
    .await?;
    let mut q = QueryBuilder::<Db>::new("UPDATE mm_tickets SET state = 'forming', claimed_ms = ");
    q.push_bind(now);
    q.push(", claimed_by = ");
    q.push_bind(claim_id);
    q.push(" WHERE ticket IN (SELECT ticket FROM mm_tickets WHERE mode = ");
    q.push_bind(mode);
    q.push(" AND state = 'queued' ORDER BY joined_ms LIMIT ");
    q.push_bind(limit);
    q.push(CLAIM_LOCK);
    q.push(
        ") RETURNING ticket, mode, members, rating, region, joined_ms, state, match_id, team, \
         settled_ms",
    );
    let rows = q.build().fetch_all(&mut *conn).await?;
    let mut out = rows
        .iter()
        .map(ticket_from)
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| (a.joined_ms, &a.ticket).cmp(&(b.joined_ms, &b.ticket)));
    Ok(out)
}

/// Puts the tickets of claim `claim_id` that formed no match back in the
/// queue (their place by join time is kept); returns how many.
pub(crate) async fn queue_release(conn: &mut Conn, claim_id: &str) -> Result<u64, StoreError> {
    let done = sqlx::query(
        "UPDATE mm_tickets SET state = 'queued', claimed_ms = NULL, claimed_by = NULL \
         WHERE claimed_by = $1 AND state = 'forming'",
    )
    .bind(claim_id)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected())
}

/// Records allocated matches and marks their tickets matched, a few hundred
/// rows per statement.
pub(crate) async fn queue_record(conn: &mut Conn, matches: &[NewMatch]) -> Result<(), StoreError> {
    let now = now_ms();
    for chunk in matches.chunks(RECORD_CHUNK) {
        let seats: Vec<String> = chunk.iter().map(|m| join_seats(&m.seats)).collect();
        let mut q = QueryBuilder::<Db>::new(
            "INSERT INTO mm_matches (match_id, mode, address, region, seats, formed_ms) ",
        );
        q.push_values(chunk.iter().zip(&seats), |mut row, (m, seats)| {
            row.push_bind(&m.match_id)
                .push_bind(&m.mode)
                .push_bind(&m.address)
                .push_bind(&m.region)
                .push_bind(seats)
                .push_bind(now);
        });
        q.build()
            .execute(&mut *conn)
            .await
            .map_err(|e| StoreError::unique_as_conflict(e, "match id taken"))?;
    }
    let tickets: Vec<(&str, &str, i32)> = matches
        .iter()
        .flat_map(|m| {
            m.tickets.iter().map(|(t, team)| {
                (
                    t.as_str(),
                    m.match_id.as_str(),
                    i32::try_from(*team).unwrap_or(0),
                )
            })
        })
        .collect();
    for chunk in tickets.chunks(RECORD_CHUNK) {
        let mut q =
            QueryBuilder::<Db>::new("UPDATE mm_tickets SET state = 'matched', settled_ms = ");
        q.push_bind(now);
        q.push(", match_id = v.column2, team = v.column3 FROM (");
        q.push_values(chunk, |mut row, (ticket, match_id, team)| {
            row.push_bind(*ticket).push_bind(*match_id).push_bind(*team);
        });
        q.push(") AS v WHERE mm_tickets.ticket = v.column1");
        q.build().execute(&mut *conn).await?;
    }
    Ok(())
}

/// The ticket `ticket`.
pub(crate) async fn queue_ticket(
    pool: &Pool,
    ticket: &str,
) -> Result<Option<QueueTicket>, StoreError> {
    let row = sqlx::query(select_ticket!("WHERE ticket = $1"))
        .bind(ticket)
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(ticket_from).transpose()
}

/// The ticket `account_id` is on (its latest: a live one, or its last match's).
pub(crate) async fn queue_ticket_of(
    pool: &Pool,
    account_id: i64,
) -> Result<Option<QueueTicket>, StoreError> {
    let row = sqlx::query(select_ticket!(
        "WHERE ticket = (SELECT ticket FROM mm_members WHERE account_id = $1)"
    ))
    .bind(account_id)
    .fetch_optional(pool)
    .await?;
    row.as_ref().map(ticket_from).transpose()
}

/// Every waiting ticket (queued or forming), by mode and then join time: one
/// read from which a gateway computes every position.
pub(crate) async fn queue_waiting(pool: &Pool) -> Result<Vec<QueueTicket>, StoreError> {
    let rows = sqlx::query(select_ticket!(
        "WHERE state IN ('queued', 'forming') ORDER BY mode, joined_ms, ticket"
    ))
    .fetch_all(pool)
    .await?;
    rows.iter().map(ticket_from).collect()
}

/// Tickets matched at or after `since_ms`.
pub(crate) async fn queue_matched_since(
    pool: &Pool,
    since_ms: i64,
) -> Result<Vec<QueueTicket>, StoreError> {
    let rows = sqlx::query(select_ticket!(
        "WHERE state = 'matched' AND settled_ms >= $1 ORDER BY settled_ms"
    ))
    .bind(since_ms)
    .fetch_all(pool)
    .await?;
    rows.iter().map(ticket_from).collect()
}

/// Match `match_id`, over or not.
pub(crate) async fn live_match(
    pool: &Pool,
    match_id: &str,
) -> Result<Option<LiveMatch>, StoreError> {
    let row = sqlx::query(
        "SELECT match_id, mode, address, region, seats, formed_ms, over_ms FROM mm_matches \
         WHERE match_id = $1",
    )
    .bind(match_id)
    .fetch_optional(pool)
    .await?;
    row.as_ref().map(live_match_from).transpose()
}

/// Match `match_id`'s result is in: no rejoins from now on.
pub(crate) async fn match_over(conn: &mut Conn, match_id: &str) -> Result<bool, StoreError> {
    let done =
        sqlx::query("UPDATE mm_matches SET over_ms = $2 WHERE match_id = $1 AND over_ms IS NULL")
            .bind(match_id)
            .bind(now_ms())
            .execute(&mut *conn)
            .await?;
    Ok(done.rows_affected() == 1)
}

/// Forgets tickets matched before `tickets_before_ms` and matches formed before
/// `matches_before_ms`; returns how many rows went.
pub(crate) async fn queue_sweep(
    conn: &mut Conn,
    tickets_before_ms: i64,
    matches_before_ms: i64,
) -> Result<u64, StoreError> {
    let members = sqlx::query(
        "DELETE FROM mm_members WHERE ticket IN \
         (SELECT ticket FROM mm_tickets WHERE state = 'matched' AND settled_ms < $1)",
    )
    .bind(tickets_before_ms)
    .execute(&mut *conn)
    .await?;
    let tickets = sqlx::query("DELETE FROM mm_tickets WHERE state = 'matched' AND settled_ms < $1")
        .bind(tickets_before_ms)
        .execute(&mut *conn)
        .await?;
    let matches = sqlx::query("DELETE FROM mm_matches WHERE formed_ms < $1")
        .bind(matches_before_ms)
        .execute(&mut *conn)
        .await?;
    Ok(members.rows_affected() + tickets.rows_affected() + matches.rows_affected())
}
