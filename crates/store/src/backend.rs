//! The two backends. `ops.rs` is written once and compiled into each module below
//! with that backend's types, so both run the same statements (every statement in it
//! is valid SQLite and PostgreSQL) without a dynamic `Any` layer.
//!
//! How a write reaches its transaction differs: on SQLite every write is queued to
//! the one writer (`sqlite_writer.rs`), which runs it in a savepoint of a group
//! transaction; on PostgreSQL each write runs in a transaction of its own
//! ([`postgres::in_transaction`]), or as one autocommitted statement
//! ([`postgres::autocommit`]).

use std::future::Future;
use std::pin::Pin;

use crate::error::StoreError;

/// The future of one write, borrowing the connection it runs on.
pub(crate) type WriteFuture<'c, T> =
    Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'c>>;

pub(crate) mod sqlite {
    #![allow(dead_code)]
    pub(crate) type Db = sqlx::Sqlite;
    pub(crate) type Pool = sqlx::SqlitePool;
    pub(crate) type Conn = sqlx::SqliteConnection;
    pub(crate) type Row = sqlx::sqlite::SqliteRow;

    /// SQLite has no row locks; the one writer runs writes one after another.
    const RATING_LOCK: &str = "";
    /// No row locks either: the one writer runs claims one after another.
    const CLAIM_LOCK: &str = "";

    include!("ops.rs");
    include!("audit_ops.rs");
    include!("queue_ops.rs");
    include!("registry_ops.rs");
}

pub(crate) mod postgres {
    #![allow(dead_code)]
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

    include!("ops.rs");
    include!("audit_ops.rs");
    include!("queue_ops.rs");
    include!("registry_ops.rs");
}
