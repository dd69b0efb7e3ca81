//! Accounts: guest (one per device, found or created, one at a time or in batches) and
//! named, each created with its profile and stats rows.

use sqlx::{QueryBuilder, Row as _};

use super::{Conn, Db, Pool, Row};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::{Account, GuestLogin, INITIAL_RATING, Session, check_id, check_name, invalid};

macro_rules! select_account {
    ($where:literal) => {
        concat!(
            "SELECT id, device_id, name, password_hash, balance, created_at_ms FROM accounts ",
            $where
        )
    };
}

pub(super) fn account_from(row: &Row) -> Result<Account, StoreError> {
    Ok(Account {
        id: row.try_get(0)?,
        device_id: row.try_get(1)?,
        name: row.try_get(2)?,
        password_hash: row.try_get(3)?,
        balance: row.try_get(4)?,
        created_at_ms: row.try_get(5)?,
    })
}

/// Creates the profile and stats rows every new account gets.
async fn init_player(
    conn: &mut Conn,
    id: i64,
    display_name: &str,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO profiles (account_id, display_name, xp, updated_at_ms) VALUES ($1, $2, 0, $3)",
    )
    .bind(id)
    .bind(display_name)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    sqlx::query("INSERT INTO player_stats (account_id, rating, updated_at_ms) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(INITIAL_RATING)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

pub(crate) async fn account<'e>(
    db: impl sqlx::Executor<'e, Database = Db>,
    id: i64,
) -> Result<Account, StoreError> {
    let row = sqlx::query(select_account!("WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?;
    account_from(&row.ok_or(StoreError::NotFound { what: "account" })?)
}

pub(crate) async fn account_by_name(pool: &Pool, name: &str) -> Result<Account, StoreError> {
    check_name("name", name)?;
    let row = sqlx::query(select_account!("WHERE name = $1"))
        .bind(name)
        .fetch_optional(pool)
        .await?;
    account_from(&row.ok_or(StoreError::NotFound { what: "account" })?)
}

pub(crate) async fn find_guest(
    pool: &Pool,
    device_id: &str,
) -> Result<Option<Account>, StoreError> {
    check_id("device_id", device_id)?;
    let row = sqlx::query(select_account!("WHERE device_id = $1"))
        .bind(device_id)
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(account_from).transpose()
}

/// The guest account of `device_id`, created (with its profile and stats) if no
/// account has it yet.
pub(crate) async fn guest_account(conn: &mut Conn, device_id: &str) -> Result<Account, StoreError> {
    check_id("device_id", device_id)?;
    let now = now_ms();
    let inserted = sqlx::query(
        "INSERT INTO accounts (device_id, balance, created_at_ms) VALUES ($1, 0, $2) \
         ON CONFLICT (device_id) DO NOTHING RETURNING id",
    )
    .bind(device_id)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(row) = inserted {
        let id: i64 = row.try_get(0)?;
        init_player(conn, id, &format!("Guest{id}"), now).await?;
    }
    // Inserted now, or by an earlier write (on PostgreSQL, by a concurrent one
    // that committed while this insert waited on its row).
    let row = sqlx::query(select_account!("WHERE device_id = $1"))
        .bind(device_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound { what: "account" })?;
    account_from(&row)
}

/// Many guest logins in five multi-row statements: each device's account is found
/// or created (with its profile and stats) and each login gets a new session.
/// Devices are inserted in sorted order so concurrent batches lock rows in one
/// order. All or nothing (the caller rolls back on `Err`).
pub(crate) async fn guest_logins(
    conn: &mut Conn,
    logins: &[GuestLogin],
) -> Result<Vec<Session>, StoreError> {
    let now = now_ms();
    for login in logins {
        login.validate(now)?;
    }
    if logins.is_empty() {
        return Ok(Vec::new());
    }
    if logins.len() > 1000 {
        return Err(invalid("logins", "at most 1000 in one batch"));
    }
    let mut devices: Vec<&str> = logins.iter().map(|l| l.device_id.as_str()).collect();
    devices.sort_unstable();
    devices.dedup();

    let mut q =
        QueryBuilder::<Db>::new("INSERT INTO accounts (device_id, balance, created_at_ms) ");
    q.push_values(&devices, |mut row, device| {
        row.push_bind(*device).push_bind(0i64).push_bind(now);
    });
    q.push(" ON CONFLICT (device_id) DO NOTHING RETURNING id");
    let mut created = Vec::new();
    for row in q.build().fetch_all(&mut *conn).await? {
        created.push(row.try_get::<i64, _>(0)?);
    }
    if !created.is_empty() {
        created.sort_unstable();
        let names: Vec<String> = created.iter().map(|id| format!("Guest{id}")).collect();
        let mut q = QueryBuilder::<Db>::new(
            "INSERT INTO profiles (account_id, display_name, xp, updated_at_ms) ",
        );
        q.push_values(created.iter().zip(&names), |mut row, (id, name)| {
            row.push_bind(*id)
                .push_bind(name.as_str())
                .push_bind(0i64)
                .push_bind(now);
        });
        q.build().execute(&mut *conn).await?;
        let mut q = QueryBuilder::<Db>::new(
            "INSERT INTO player_stats (account_id, rating, updated_at_ms) ",
        );
        q.push_values(&created, |mut row, id| {
            row.push_bind(*id).push_bind(INITIAL_RATING).push_bind(now);
        });
        q.build().execute(&mut *conn).await?;
    }

    let mut q = QueryBuilder::<Db>::new("SELECT device_id, id FROM accounts WHERE device_id IN (");
    let mut list = q.separated(", ");
    for device in &devices {
        list.push_bind(*device);
    }
    q.push(")");
    let mut ids: Vec<(String, i64)> = Vec::with_capacity(devices.len());
    for row in q.build().fetch_all(&mut *conn).await? {
        ids.push((row.try_get(0)?, row.try_get(1)?));
    }
    ids.sort_unstable();
    let mut account_ids = Vec::with_capacity(logins.len());
    for login in logins {
        let i = ids
            .binary_search_by(|(d, _)| d.as_str().cmp(login.device_id.as_str()))
            .map_err(|_| StoreError::NotFound { what: "account" })?;
        account_ids.push(ids[i].1);
    }

    let mut q = QueryBuilder::<Db>::new(
        "INSERT INTO sessions (token_id, account_id, created_at_ms, expires_at_ms, revoked) ",
    );
    q.push_values(logins.iter().zip(&account_ids), |mut row, (login, id)| {
        row.push_bind(login.token_id.as_str())
            .push_bind(*id)
            .push_bind(now)
            .push_bind(login.expires_at_ms)
            .push_bind(false);
    });
    q.build()
        .execute(&mut *conn)
        .await
        .map_err(|e| StoreError::unique_as_conflict(e, "session token id taken"))?;
    Ok(logins
        .iter()
        .zip(account_ids)
        .map(|(login, account_id)| Session {
            token_id: login.token_id.clone(),
            account_id,
            created_at_ms: now,
            expires_at_ms: login.expires_at_ms,
            revoked: false,
        })
        .collect())
}

pub(crate) async fn create_named_account(
    conn: &mut Conn,
    name: &str,
    password_hash: &str,
) -> Result<Account, StoreError> {
    check_name("name", name)?;
    if password_hash.is_empty() || password_hash.len() > 512 {
        return Err(invalid("password_hash", "must be 1..=512 bytes"));
    }
    let now = now_ms();
    let row = sqlx::query(
        "INSERT INTO accounts (name, password_hash, balance, created_at_ms) VALUES ($1, $2, 0, $3) \
         RETURNING id",
    )
    .bind(name)
    .bind(password_hash)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| StoreError::unique_as_conflict(e, "account name taken"))?;
    let id: i64 = row.try_get(0)?;
    init_player(conn, id, name, now).await?;
    account(conn, id).await
}
