//! Sessions: created at login, read on every authenticated request, revoked one by one
//! or all of an account's.

use sqlx::Row as _;

use super::{Conn, Pool};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::{Session, check_id, invalid};

pub(crate) async fn create_session(
    conn: &mut Conn,
    token_id: &str,
    account_id: i64,
    expires_at_ms: i64,
) -> Result<Session, StoreError> {
    check_id("token_id", token_id)?;
    let now = now_ms();
    if expires_at_ms <= now {
        return Err(invalid("expires_at_ms", "must be in the future"));
    }
    sqlx::query(
        "INSERT INTO sessions (token_id, account_id, created_at_ms, expires_at_ms, revoked) \
         VALUES ($1, $2, $3, $4, FALSE)",
    )
    .bind(token_id)
    .bind(account_id)
    .bind(now)
    .bind(expires_at_ms)
    .execute(conn)
    .await
    .map_err(|e| match &e {
        sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
            StoreError::NotFound { what: "account" }
        }
        _ => StoreError::unique_as_conflict(e, "session token id taken"),
    })?;
    Ok(Session {
        token_id: token_id.to_owned(),
        account_id,
        created_at_ms: now,
        expires_at_ms,
        revoked: false,
    })
}

pub(crate) async fn session(pool: &Pool, token_id: &str) -> Result<Session, StoreError> {
    check_id("token_id", token_id)?;
    let row = sqlx::query(
        "SELECT token_id, account_id, created_at_ms, expires_at_ms, revoked FROM sessions \
         WHERE token_id = $1",
    )
    .bind(token_id)
    .fetch_optional(pool)
    .await?
    .ok_or(StoreError::NotFound { what: "session" })?;
    Ok(Session {
        token_id: row.try_get(0)?,
        account_id: row.try_get(1)?,
        created_at_ms: row.try_get(2)?,
        expires_at_ms: row.try_get(3)?,
        revoked: row.try_get(4)?,
    })
}

pub(crate) async fn revoke_session(conn: &mut Conn, token_id: &str) -> Result<(), StoreError> {
    check_id("token_id", token_id)?;
    let done = sqlx::query("UPDATE sessions SET revoked = TRUE WHERE token_id = $1")
        .bind(token_id)
        .execute(conn)
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound { what: "session" });
    }
    Ok(())
}

pub(crate) async fn revoke_sessions_of(
    conn: &mut Conn,
    account_id: i64,
) -> Result<u64, StoreError> {
    let done =
        sqlx::query("UPDATE sessions SET revoked = TRUE WHERE account_id = $1 AND revoked = FALSE")
            .bind(account_id)
            .execute(conn)
            .await?;
    Ok(done.rows_affected())
}
