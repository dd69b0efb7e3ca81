//! Named savepoints by plain SQL, valid on SQLite and PostgreSQL.
//!
//! The SQLite writer opens its group transaction with plain `BEGIN IMMEDIATE` (not
//! through sqlx's transaction tracking, which cannot recover when a failed write
//! ends the transaction under it), so the savepoints inside it are plain SQL too.
//! A savepoint undone is also released, so the next one starts from a clean stack.

use sqlx::{Database, Executor};

/// One savepoint name and its three statements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Savepoint {
    set: &'static str,
    keep: &'static str,
    undo: &'static str,
}

/// Around each write of a SQLite group transaction.
pub(crate) const GROUP_WRITE: Savepoint = Savepoint {
    set: "SAVEPOINT group_write",
    keep: "RELEASE group_write",
    undo: "ROLLBACK TO group_write; RELEASE group_write",
};

/// Around a whole batch of the batching writer (its fast path).
pub(crate) const BATCH: Savepoint = Savepoint {
    set: "SAVEPOINT batch",
    keep: "RELEASE batch",
    undo: "ROLLBACK TO batch; RELEASE batch",
};

/// Around each write of a batch applied one by one.
pub(crate) const BATCH_WRITE: Savepoint = Savepoint {
    set: "SAVEPOINT batch_write",
    keep: "RELEASE batch_write",
    undo: "ROLLBACK TO batch_write; RELEASE batch_write",
};

impl Savepoint {
    /// Sets the savepoint.
    pub(crate) async fn set<'c, DB: Database>(
        self,
        conn: impl Executor<'c, Database = DB>,
    ) -> Result<(), sqlx::Error> {
        sqlx::raw_sql(self.set).execute(conn).await.map(drop)
    }

    /// Keeps what was done since the savepoint (`ok`) or undoes it.
    pub(crate) async fn end<'c, DB: Database>(
        self,
        conn: impl Executor<'c, Database = DB>,
        ok: bool,
    ) -> Result<(), sqlx::Error> {
        let sql = if ok { self.keep } else { self.undo };
        sqlx::raw_sql(sql).execute(conn).await.map(drop)
    }
}
