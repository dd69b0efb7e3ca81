//! Parties: created, joined by code and left; the queue reads them when a party
//! queues.

use sqlx::Row as _;

use super::{Conn, Pool};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::check_id;
use crate::queue::Party;

/// The party `account_id` is in, read on `db`.
pub(crate) async fn party_of(
    conn: &mut Conn,
    account_id: i64,
) -> Result<Option<Party>, StoreError> {
    let row = sqlx::query(
        "SELECT p.party_id, p.code, p.leader FROM parties p \
         JOIN party_members m ON m.party_id = p.party_id WHERE m.account_id = $1",
    )
    .bind(account_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let party_id: String = row.try_get(0)?;
    let members = sqlx::query(
        "SELECT account_id FROM party_members WHERE party_id = $1 ORDER BY joined_ms, account_id",
    )
    .bind(&party_id)
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(|r| r.try_get(0))
    .collect::<Result<Vec<i64>, _>>()?;
    Ok(Some(Party {
        party_id,
        code: row.try_get(1)?,
        leader: row.try_get(2)?,
        members,
    }))
}

/// Creates a party led by `account_id` (who must be in none).
pub(crate) async fn party_create(
    conn: &mut Conn,
    account_id: i64,
    party_id: &str,
    code: &str,
) -> Result<Party, StoreError> {
    check_id("party_id", party_id)?;
    check_id("code", code)?;
    if party_of(&mut *conn, account_id).await?.is_some() {
        return Err(StoreError::Conflict {
            what: "already in a party",
        });
    }
    let now = now_ms();
    sqlx::query("INSERT INTO parties (party_id, code, leader, created_ms) VALUES ($1, $2, $3, $4)")
        .bind(party_id)
        .bind(code)
        .bind(account_id)
        .bind(now)
        .execute(&mut *conn)
        .await
        .map_err(|e| StoreError::unique_as_conflict(e, "party code taken"))?;
    sqlx::query("INSERT INTO party_members (account_id, party_id, joined_ms) VALUES ($1, $2, $3)")
        .bind(account_id)
        .bind(party_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    Ok(Party {
        party_id: party_id.to_owned(),
        code: code.to_owned(),
        leader: account_id,
        members: vec![account_id],
    })
}

/// Adds `account_id` to the party with `code` (at most `max_size` members).
pub(crate) async fn party_join(
    conn: &mut Conn,
    account_id: i64,
    code: &str,
    max_size: i64,
) -> Result<Party, StoreError> {
    check_id("code", code)?;
    let row = sqlx::query("SELECT party_id FROM parties WHERE code = $1")
        .bind(code)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound { what: "party" })?;
    let party_id: String = row.try_get(0)?;
    if let Some(current) = party_of(&mut *conn, account_id).await? {
        if current.party_id == party_id {
            return Ok(current);
        }
        return Err(StoreError::Conflict {
            what: "already in a party",
        });
    }
    let size: i64 = sqlx::query("SELECT COUNT(*) FROM party_members WHERE party_id = $1")
        .bind(&party_id)
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?;
    if size >= max_size {
        return Err(StoreError::Conflict {
            what: "the party is full",
        });
    }
    sqlx::query("INSERT INTO party_members (account_id, party_id, joined_ms) VALUES ($1, $2, $3)")
        .bind(account_id)
        .bind(&party_id)
        .bind(now_ms())
        .execute(&mut *conn)
        .await?;
    party_of(&mut *conn, account_id)
        .await?
        .ok_or(StoreError::NotFound { what: "party" })
}

/// Takes `account_id` out of its party: the next member leads if it led, the
/// party goes when its last member leaves. `false`: it was in none.
pub(crate) async fn party_leave(conn: &mut Conn, account_id: i64) -> Result<bool, StoreError> {
    let Some(party) = party_of(&mut *conn, account_id).await? else {
        return Ok(false);
    };
    sqlx::query("DELETE FROM party_members WHERE account_id = $1")
        .bind(account_id)
        .execute(&mut *conn)
        .await?;
    match party.members.iter().find(|&&m| m != account_id) {
        None => {
            sqlx::query("DELETE FROM parties WHERE party_id = $1")
                .bind(&party.party_id)
                .execute(&mut *conn)
                .await?;
        }
        Some(&next) if party.leader == account_id => {
            sqlx::query("UPDATE parties SET leader = $2 WHERE party_id = $1")
                .bind(&party.party_id)
                .bind(next)
                .execute(&mut *conn)
                .await?;
        }
        Some(_) => {}
    }
    Ok(true)
}

/// The party `account_id` is in (pool read).
pub(crate) async fn party(pool: &Pool, account_id: i64) -> Result<Option<Party>, StoreError> {
    let mut conn = pool.acquire().await?;
    party_of(&mut conn, account_id).await
}
