//! The PostgreSQL backend: the operations of `ops/` compiled against PostgreSQL's
//! types. Each write runs in a transaction of its own ([`in_transaction`]), or as
//! one autocommitted statement ([`autocommit`]).

use crate::error::StoreError;

pub(crate) type Db = sqlx::Postgres;
pub(crate) type Pool = sqlx::PgPool;
pub(crate) type Conn = sqlx::PgConnection;
pub(crate) type Row = sqlx::postgres::PgRow;

/// Locks the stats rows so concurrent results for one player apply one after another.
const RATING_LOCK: &str = " FOR UPDATE";
/// Concurrent matchmaker passes (one per gateway) claim disjoint tickets.
const CLAIM_LOCK: &str = " FOR UPDATE SKIP LOCKED";

/// Runs `write` in a plain read-committed transaction of its own (guarded
/// updates and row locks do the rest): committed when it returns `Ok`,
/// rolled back when it returns `Err`.
pub(crate) async fn in_transaction<T>(
    pool: &Pool,
    write: impl for<'c> FnOnce(&'c mut Conn) -> crate::backend::WriteFuture<'c, T>,
) -> Result<T, StoreError> {
    let mut tx = pool.begin().await?;
    let out = write(&mut tx).await?;
    tx.commit().await?;
    Ok(out)
}

/// Runs `write` on a pooled connection without a transaction: for writes of
/// one statement (followed at most by a read of what it wrote).
pub(crate) async fn autocommit<T>(
    pool: &Pool,
    write: impl for<'c> FnOnce(&'c mut Conn) -> crate::backend::WriteFuture<'c, T>,
) -> Result<T, StoreError> {
    let mut conn = pool.acquire().await?;
    write(&mut conn).await
}

#[path = "ops/accounts.rs"]
mod accounts;
#[path = "ops/audit.rs"]
mod audit;
#[path = "ops/batch.rs"]
mod batch;
#[path = "ops/parties.rs"]
mod parties;
#[path = "ops/profiles.rs"]
mod profiles;
#[path = "ops/queue.rs"]
mod queue;
#[path = "ops/registry.rs"]
mod registry;
#[path = "ops/results.rs"]
mod results;
#[path = "ops/sessions.rs"]
mod sessions;
#[path = "ops/stats.rs"]
mod stats;
#[path = "ops/wallet.rs"]
mod wallet;

pub(crate) use accounts::*;
pub(crate) use audit::*;
pub(crate) use batch::*;
pub(crate) use parties::*;
pub(crate) use profiles::*;
pub(crate) use queue::*;
pub(crate) use registry::*;
pub(crate) use results::*;
pub(crate) use sessions::*;
pub(crate) use stats::*;
pub(crate) use wallet::*;
