//! The two backends. `ops.rs` is written once and compiled into each module below
//! with that backend's types, so both run the same statements (every statement in it
//! is valid SQLite and PostgreSQL) without a dynamic `Any` layer.

pub(crate) mod sqlite {
    #![allow(dead_code)]
    pub(crate) type Db = sqlx::Sqlite;
    pub(crate) type Pool = sqlx::SqlitePool;
    pub(crate) type Conn = sqlx::SqliteConnection;
    pub(crate) type Row = sqlx::sqlite::SqliteRow;

    /// SQLite has no row locks; `BEGIN IMMEDIATE` takes the write lock up front.
    const RATING_LOCK: &str = "";

    /// Write transactions take the database write lock at `BEGIN`, so a transaction
    /// never has to upgrade a read lock (which fails with SQLITE_BUSY at once).
    pub(crate) async fn begin_write(
        pool: &Pool,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error> {
        pool.begin_with("BEGIN IMMEDIATE").await
    }

    include!("ops.rs");
    include!("audit_ops.rs");
}

pub(crate) mod postgres {
    #![allow(dead_code)]
    pub(crate) type Db = sqlx::Postgres;
    pub(crate) type Pool = sqlx::PgPool;
    pub(crate) type Conn = sqlx::PgConnection;
    pub(crate) type Row = sqlx::postgres::PgRow;

    /// Locks the stats rows so concurrent results for one player apply one after another.
    const RATING_LOCK: &str = " FOR UPDATE";

    /// A plain read-committed transaction; guarded updates and row locks do the rest.
    pub(crate) async fn begin_write(
        pool: &Pool,
    ) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
        pool.begin().await
    }

    include!("ops.rs");
    include!("audit_ops.rs");
}
