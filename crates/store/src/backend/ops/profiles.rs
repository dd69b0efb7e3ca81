//! Profiles: display name and experience (xp), the one progress write of the batching
//! writer.

use sqlx::Row as _;

use super::{Conn, Db, Row};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::{MAX_AMOUNT, Profile, check_name, invalid};

pub(crate) async fn profile<'e>(
    db: impl sqlx::Executor<'e, Database = Db>,
    account_id: i64,
) -> Result<Profile, StoreError> {
    let row =
        sqlx::query("SELECT account_id, display_name, xp FROM profiles WHERE account_id = $1")
            .bind(account_id)
            .fetch_optional(db)
            .await?
            .ok_or(StoreError::NotFound { what: "profile" })?;
    profile_from(&row, 0)
}

/// A profile from `account_id, display_name, xp`, starting at column `at`.
pub(super) fn profile_from(row: &Row, at: usize) -> Result<Profile, StoreError> {
    Ok(Profile {
        account_id: row.try_get(at)?,
        display_name: row.try_get(at + 1)?,
        xp: row.try_get(at + 2)?,
    })
}

pub(crate) async fn set_display_name(
    conn: &mut Conn,
    account_id: i64,
    name: &str,
) -> Result<Profile, StoreError> {
    check_name("display_name", name)?;
    let done = sqlx::query(
        "UPDATE profiles SET display_name = $1, updated_at_ms = $2 WHERE account_id = $3",
    )
    .bind(name)
    .bind(now_ms())
    .bind(account_id)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound { what: "profile" });
    }
    profile(conn, account_id).await
}

pub(super) async fn apply_progress(
    conn: &mut Conn,
    account_id: i64,
    xp: i64,
    now: i64,
) -> Result<i64, StoreError> {
    if !(1..=MAX_AMOUNT).contains(&xp) {
        return Err(invalid("xp", "must be 1..=1e12"));
    }
    let row = sqlx::query(
        "UPDATE profiles SET xp = xp + $1, updated_at_ms = $2 WHERE account_id = $3 RETURNING xp",
    )
    .bind(xp)
    .bind(now)
    .bind(account_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound { what: "profile" })?;
    Ok(row.try_get(0)?)
}

pub(crate) async fn add_progress(
    conn: &mut Conn,
    account_id: i64,
    xp: i64,
) -> Result<i64, StoreError> {
    apply_progress(conn, account_id, xp, now_ms()).await
}
