// The store's operations, written once against the names `Db`, `Pool`, `Conn`,
// `Row` and `RATING_LOCK`, and compiled once per backend by `include!` inside
// `backend::sqlite` and `backend::postgres` (see backend.rs). Every statement is a
// static string with `$n` binds; no value is ever formatted into SQL.
//
// Reads take the pool. Writes take a connection and never begin or end a
// transaction of their own: the caller runs them inside one (on SQLite, the
// writer's group transaction, each write in its own savepoint; on PostgreSQL, a
// transaction per write, see `postgres::in_transaction`) and commits them when
// they return `Ok`, or rolls them back when they return `Err`. A write's reads go
// through that same connection, so they see its own changes.

use sqlx::{QueryBuilder, Row as _};

use crate::error::StoreError;
use crate::clock::now_ms;
use crate::savepoint::{BATCH, BATCH_WRITE};
use crate::model::{
    Account, GuestLogin, INITIAL_RATING, InventoryItem, LeaderboardEntry, LedgerEntry, MAX_AMOUNT,
    MatchHistoryEntry, MatchRecorded, MatchResult, Outcome, PlayerCard, PlayerStats, Profile,
    PurchaseReceipt,
    PurchaseRequest, Session, check_amount, check_id, check_name, invalid,
};
use crate::model::{Write, WriteAck};

/// Largest balance an account may hold.
const MAX_BALANCE: i64 = 1_000_000_000_000_000;
/// Largest `limit` a listing accepts.
const MAX_LIMIT: i64 = 1000;

macro_rules! select_account {
    ($where:literal) => {
        concat!(
            "SELECT id, device_id, name, password_hash, balance, created_at_ms FROM accounts ",
            $where
        )
    };
}

fn account_from(row: &Row) -> Result<Account, StoreError> {
    Ok(Account {
        id: row.try_get(0)?,
        device_id: row.try_get(1)?,
        name: row.try_get(2)?,
        password_hash: row.try_get(3)?,
        balance: row.try_get(4)?,
        created_at_ms: row.try_get(5)?,
    })
}

fn check_limit(limit: i64) -> Result<(), StoreError> {
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(invalid("limit", "must be 1..=1000"));
    }
    Ok(())
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
fn profile_from(row: &Row, at: usize) -> Result<Profile, StoreError> {
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

pub(crate) async fn balance(pool: &Pool, account_id: i64) -> Result<i64, StoreError> {
    let row = sqlx::query("SELECT balance FROM accounts WHERE id = $1")
        .bind(account_id)
        .fetch_optional(pool)
        .await?
        .ok_or(StoreError::NotFound { what: "account" })?;
    Ok(row.try_get(0)?)
}

/// Adds `amount` to the balance and writes the ledger entry, inside the caller's transaction.
async fn credit(
    conn: &mut Conn,
    account_id: i64,
    amount: i64,
    reason: &str,
    reference: &str,
    now: i64,
) -> Result<i64, StoreError> {
    let row = sqlx::query(
        "UPDATE accounts SET balance = balance + $1 WHERE id = $2 AND balance <= $3 RETURNING balance",
    )
    .bind(amount)
    .bind(account_id)
    .bind(MAX_BALANCE - amount)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else {
        let exists = sqlx::query("SELECT 1 FROM accounts WHERE id = $1")
            .bind(account_id)
            .fetch_optional(&mut *conn)
            .await?;
        return Err(match exists {
            Some(_) => StoreError::Conflict {
                what: "balance would exceed its maximum",
            },
            None => StoreError::NotFound { what: "account" },
        });
    };
    sqlx::query(
        "INSERT INTO ledger (account_id, delta, reason, reference, created_at_ms) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(account_id)
    .bind(amount)
    .bind(reason)
    .bind(reference)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(row.try_get(0)?)
}

pub(crate) async fn grant_currency(
    conn: &mut Conn,
    account_id: i64,
    amount: i64,
    reference: &str,
) -> Result<i64, StoreError> {
    check_amount("amount", amount)?;
    check_id("reference", reference)?;
    credit(conn, account_id, amount, "grant", reference, now_ms()).await
}

pub(crate) async fn ledger(
    pool: &Pool,
    account_id: i64,
    limit: i64,
) -> Result<Vec<LedgerEntry>, StoreError> {
    check_limit(limit)?;
    let rows = sqlx::query(
        "SELECT id, delta, reason, reference, created_at_ms FROM ledger WHERE account_id = $1 \
         ORDER BY id DESC LIMIT $2",
    )
    .bind(account_id)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LedgerEntry {
                id: r.try_get(0)?,
                delta: r.try_get(1)?,
                reason: r.try_get(2)?,
                reference: r.try_get(3)?,
                created_at_ms: r.try_get(4)?,
            })
        })
        .collect()
}

pub(crate) async fn inventory(
    pool: &Pool,
    account_id: i64,
) -> Result<Vec<InventoryItem>, StoreError> {
    let rows = sqlx::query(
        "SELECT item_id, quantity FROM inventory WHERE account_id = $1 AND quantity > 0 ORDER BY item_id",
    )
    .bind(account_id)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(InventoryItem {
                item_id: r.try_get(0)?,
                quantity: r.try_get(1)?,
            })
        })
        .collect()
}

/// Claims the idempotency key, spends and grants the item. A key seen before
/// answers with its first receipt and changes nothing; a spend larger than the
/// balance is `Err` (the caller's rollback undoes the claim).
pub(crate) async fn purchase(
    conn: &mut Conn,
    req: &PurchaseRequest,
) -> Result<PurchaseReceipt, StoreError> {
    let cost = req.validate()?;
    let now = now_ms();
    // Claim the idempotency key first: a concurrent retry waits here for our commit
    // (PostgreSQL), or runs after this write on the one writer (SQLite), then finds
    // the claimed row.
    let claimed = sqlx::query(
        "INSERT INTO purchases (account_id, idempotency_key, item_id, quantity, unit_price, cost, \
         balance_after, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, 0, $7) \
         ON CONFLICT (account_id, idempotency_key) DO NOTHING",
    )
    .bind(req.account_id)
    .bind(&req.idempotency_key)
    .bind(&req.item_id)
    .bind(req.quantity)
    .bind(req.unit_price)
    .bind(cost)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(|e| StoreError::foreign_key_as_not_found(e, "account"))?
    .rows_affected()
        == 1;
    if !claimed {
        let row = sqlx::query(
            "SELECT item_id, quantity, unit_price, cost, balance_after FROM purchases \
             WHERE account_id = $1 AND idempotency_key = $2",
        )
        .bind(req.account_id)
        .bind(&req.idempotency_key)
        .fetch_one(&mut *conn)
        .await?;
        let item_id: String = row.try_get(0)?;
        let quantity: i64 = row.try_get(1)?;
        let unit_price: i64 = row.try_get(2)?;
        if item_id != req.item_id || quantity != req.quantity || unit_price != req.unit_price {
            return Err(StoreError::Conflict {
                what: "idempotency key reused for a different purchase",
            });
        }
        return Ok(PurchaseReceipt {
            account_id: req.account_id,
            idempotency_key: req.idempotency_key.clone(),
            item_id,
            quantity,
            cost: row.try_get(3)?,
            balance_after: row.try_get(4)?,
            replayed: true,
        });
    }
    // The guarded spend: the row lock (PostgreSQL) or the one writer (SQLite) makes
    // the check and the subtraction one step, so concurrent spends cannot overdraw.
    let charged = sqlx::query(
        "UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance >= $1 RETURNING balance",
    )
    .bind(cost)
    .bind(req.account_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(charged) = charged else {
        let row = sqlx::query("SELECT balance FROM accounts WHERE id = $1")
            .bind(req.account_id)
            .fetch_optional(&mut *conn)
            .await?;
        return Err(match row {
            Some(row) => StoreError::InsufficientFunds {
                balance: row.try_get(0)?,
                cost,
            },
            None => StoreError::NotFound { what: "account" },
        });
    };
    let balance_after: i64 = charged.try_get(0)?;
    sqlx::query(
        "INSERT INTO ledger (account_id, delta, reason, reference, created_at_ms) VALUES ($1, $2, 'purchase', $3, $4)",
    )
    .bind(req.account_id)
    .bind(-cost)
    .bind(&req.idempotency_key)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO inventory (account_id, item_id, quantity) VALUES ($1, $2, $3) \
         ON CONFLICT (account_id, item_id) DO UPDATE SET quantity = inventory.quantity + excluded.quantity",
    )
    .bind(req.account_id)
    .bind(&req.item_id)
    .bind(req.quantity)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE purchases SET balance_after = $1 WHERE account_id = $2 AND idempotency_key = $3",
    )
    .bind(balance_after)
    .bind(req.account_id)
    .bind(&req.idempotency_key)
    .execute(&mut *conn)
    .await?;
    Ok(PurchaseReceipt {
        account_id: req.account_id,
        idempotency_key: req.idempotency_key.clone(),
        item_id: req.item_id.clone(),
        quantity: req.quantity,
        cost,
        balance_after,
        replayed: false,
    })
}

/// Most player rows one multi-row statement carries (8 binds each: far below
/// SQLite's 32766 and PostgreSQL's 65535 bind limits). One match always fits.
const MAX_ROWS: usize = 1024;

/// Stores match results (with their players' stats, ratings and rewards) inside the
/// caller's transaction, pushing one [`MatchRecorded`] per match onto `out`, in
/// order. A match id seen before (in the database or earlier in `matches`) changes
/// nothing. Matches are applied in groups of up to [`MAX_ROWS`] player rows, each
/// group in six statements whatever its size (multi-row statements of bound values).
async fn apply_matches(
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

async fn apply_progress(
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

async fn apply_write(conn: &mut Conn, w: &Write, now: i64) -> Result<WriteAck, StoreError> {
    match w {
        Write::MatchResult(m) => {
            let mut out = Vec::with_capacity(1);
            apply_matches(conn, &[m], now, &mut out).await?;
            Ok(WriteAck::Match(
                out.first()
                    .copied()
                    .unwrap_or(MatchRecorded::AlreadyRecorded),
            ))
        }
        Write::Progress { account_id, xp } => apply_progress(conn, *account_id, *xp, now)
            .await
            .map(|xp| WriteAck::Progress { xp }),
    }
}

/// The fast path of [`apply_batch`]: every match result of the batch in grouped
/// multi-row statements, then each progress write.
async fn apply_batch_whole(
    conn: &mut Conn,
    writes: &[Write],
    now: i64,
    acks: &mut Vec<Result<WriteAck, StoreError>>,
) -> Result<(), StoreError> {
    let matches: Vec<&MatchResult> = writes
        .iter()
        .filter_map(|w| match w {
            Write::MatchResult(m) => Some(m),
            Write::Progress { .. } => None,
        })
        .collect();
    let mut recorded = Vec::with_capacity(matches.len());
    apply_matches(conn, &matches, now, &mut recorded).await?;
    let mut recorded = recorded.into_iter();
    for w in writes {
        let ack = match w {
            Write::MatchResult(_) => {
                WriteAck::Match(recorded.next().unwrap_or(MatchRecorded::AlreadyRecorded))
            }
            Write::Progress { account_id, xp } => WriteAck::Progress {
                xp: apply_progress(conn, *account_id, *xp, now).await?,
            },
        };
        acks.push(Ok(ack));
    }
    Ok(())
}

/// Applies a batch of the batching writer, returning one result per write, in
/// order. The fast path applies every write straight through, inside a savepoint;
/// if any fails, that savepoint is rolled back and the batch is applied again with
/// a savepoint per write, so one bad write fails alone. `Err` only when the
/// savepoints themselves fail (the transaction is then unusable).
pub(crate) async fn apply_batch(
    conn: &mut Conn,
    writes: &[Write],
) -> Result<Vec<Result<WriteAck, StoreError>>, StoreError> {
    let now = now_ms();
    let mut acks = Vec::with_capacity(writes.len());
    BATCH.set(&mut *conn).await?;
    let clean = apply_batch_whole(conn, writes, now, &mut acks)
        .await
        .is_ok();
    BATCH.end(&mut *conn, clean).await?;
    if clean {
        return Ok(acks);
    }
    acks.clear();
    for w in writes {
        BATCH_WRITE.set(&mut *conn).await?;
        let res = apply_write(conn, w, now).await;
        BATCH_WRITE.end(&mut *conn, res.is_ok()).await?;
        acks.push(res);
    }
    Ok(acks)
}

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
