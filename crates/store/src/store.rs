//! [`Store`]: the one async API, opened from a URL, over either backend.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{AssertSqlSafe, Connection};

use crate::backend::{postgres, sqlite};
use crate::error::StoreError;
use crate::model::{
    Account, GuestLogin, InventoryItem, LeaderboardEntry, LedgerEntry, MatchHistoryEntry,
    MatchRecorded, MatchResult, PlayerCard, PlayerStats, Profile, PurchaseReceipt, PurchaseRequest,
    Session,
};
use crate::model::{Write, WriteAck};
use crate::sqlite_writer::SqliteWriter;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

/// File name of the embedded database inside the data directory.
pub const SQLITE_FILE_NAME: &str = "hightick.db";

/// Which database a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// Embedded SQLite (a file, or `sqlite::memory:`).
    Sqlite,
    /// PostgreSQL server.
    Postgres,
}

/// How to open a [`Store`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// `sqlite://path/to/file.db`, `sqlite::memory:` or `postgres://user:pw@host/db`.
    pub url: String,
    /// Pool size (an in-memory SQLite database always uses one connection).
    pub max_connections: u32,
    /// PostgreSQL only: create this schema if missing and use it as `search_path`
    /// (lets tests and tenants share one database). `[a-z_][a-z0-9_]{0,62}`.
    pub postgres_schema: Option<String>,
    /// Run pending migrations when opening.
    pub migrate: bool,
    /// Longest a query waits for a pooled connection (also while the database
    /// is down and the pool keeps reconnecting) before it fails with
    /// [`StoreError::Backend`] (`PoolTimedOut`), which a server answers as
    /// "unavailable, retry".
    pub acquire_timeout: Duration,
}

impl StoreOptions {
    /// Defaults for `url`: 8 connections, public schema, migrate on open,
    /// 60 s to get a connection.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            max_connections: 8,
            postgres_schema: None,
            migrate: true,
            acquire_timeout: Duration::from_secs(60),
        }
    }
}

/// The connection pool of whichever backend a store opened (shared with the run history).
#[derive(Debug, Clone)]
pub(crate) enum Pool {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

/// What a store talks to: on SQLite a pool of readers and the one writer, on
/// PostgreSQL one pool.
#[derive(Debug, Clone)]
enum Backend {
    Sqlite {
        reads: sqlx::SqlitePool,
        writer: SqliteWriter,
    },
    Postgres(sqlx::PgPool),
}

/// Runs the same read on whichever backend the store has.
macro_rules! on_backend {
    ($store:expr, $op:ident($($arg:expr),*)) => {
        match &$store.backend {
            Backend::Sqlite { reads, .. } => sqlite::$op(reads, $($arg),*).await,
            Backend::Postgres(p) => postgres::$op(p, $($arg),*).await,
        }
    };
}

/// Runs the same write on whichever backend the store has: on SQLite queued to the
/// one writer, which runs it in a savepoint of its group transaction
/// (`sqlite_writer.rs`); on PostgreSQL through `$pg` (`in_transaction` or
/// `autocommit`, see backend/postgres.rs). The arguments are moved into the write, so the
/// caller passes owned values (or references to owned locals).
macro_rules! on_backend_write {
    ($store:expr, $pg:ident, $op:ident($($arg:expr),*)) => {
        match &$store.backend {
            Backend::Sqlite { writer, .. } => {
                writer
                    .write(move |conn| Box::pin(async move { sqlite::$op(conn, $($arg),*).await }))
                    .await
            }
            Backend::Postgres(p) => {
                postgres::$pg(p, move |conn| {
                    Box::pin(async move { postgres::$op(conn, $($arg),*).await })
                })
                .await
            }
        }
    };
}

/// Persistence behind one API. Cheap to clone (clones share the pool and, on
/// SQLite, the writer).
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
}

fn valid_schema(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z' | '_'))
        && name.len() <= 63
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

impl Store {
    /// The pool, for other tables of the same database (the lab's run history).
    pub(crate) fn into_pool(self) -> Pool {
        match self.backend {
            Backend::Sqlite { reads, .. } => Pool::Sqlite(reads),
            Backend::Postgres(p) => Pool::Postgres(p),
        }
    }

    /// Opens the database at `url` with default options and runs migrations.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(&StoreOptions::new(url)).await
    }

    /// Opens (creating on first run) `<data_dir>/hightick.db`, the embedded default.
    pub async fn open_in_data_dir(data_dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|source| StoreError::DataDir {
            path: data_dir.display().to_string(),
            source,
        })?;
        let options = SqliteConnectOptions::new()
            .filename(data_dir.join(SQLITE_FILE_NAME))
            .create_if_missing(true);
        Self::open_sqlite(options, &StoreOptions::new("sqlite:")).await
    }

    /// Opens the database `options.url` names.
    pub async fn open_with(options: &StoreOptions) -> Result<Self, StoreError> {
        let url = options.url.as_str();
        if url.starts_with("sqlite:") {
            if options.postgres_schema.is_some() {
                return Err(crate::model::invalid(
                    "postgres_schema",
                    "only for PostgreSQL",
                ));
            }
            let connect = SqliteConnectOptions::from_str(url)?.create_if_missing(true);
            Self::open_sqlite(connect, options).await
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Self::open_postgres(options).await
        } else {
            Err(StoreError::UnsupportedUrl)
        }
    }

    async fn open_sqlite(
        connect: SqliteConnectOptions,
        options: &StoreOptions,
    ) -> Result<Self, StoreError> {
        let in_memory = connect
            .get_filename()
            .to_string_lossy()
            .contains("sqlx-in-memory")
            || options.url.contains(":memory:")
            || options.url.contains("mode=memory");
        // FULL: a commit is on disk (the WAL fsynced) before any caller of its
        // group hears back, so an acknowledged purchase or match result survives a
        // power loss, not only a crash. With group commits this costs one fsync per
        // group, not one per write (NORMAL would skip it and could lose the last
        // acknowledged commits to a power cut).
        let connect = connect
            .foreign_keys(true)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(30));
        // A local file does not hang up: no ping before each checkout (on SQLite
        // every statement, a ping too, is a round trip to the connection's thread).
        let pool = |max: u32| {
            SqlitePoolOptions::new()
                .max_connections(max)
                .test_before_acquire(false)
                .acquire_timeout(options.acquire_timeout)
        };
        let (reads, writes) = if in_memory {
            // Every connection to an in-memory database would share one page cache
            // with table-level locks; one connection, shared by the readers and
            // the writer (a group at a time), keeps the semantics simple.
            let one = pool(1).connect_with(connect).await?;
            (one.clone(), one)
        } else {
            let connect = connect.journal_mode(SqliteJournalMode::Wal);
            // The writer's connection first: it creates the file and turns on WAL.
            let writes = pool(1).connect_with(connect.clone()).await?;
            let reads = pool(options.max_connections.max(1))
                .connect_with(connect)
                .await?;
            (reads, writes)
        };
        let store = Store {
            backend: Backend::Sqlite {
                reads,
                writer: SqliteWriter::spawn(writes),
            },
        };
        if options.migrate {
            store.migrate().await?;
        }
        Ok(store)
    }

    async fn open_postgres(options: &StoreOptions) -> Result<Self, StoreError> {
        let mut connect = PgConnectOptions::from_str(&options.url)?;
        if let Some(schema) = &options.postgres_schema {
            if !valid_schema(schema) {
                return Err(crate::model::invalid(
                    "postgres_schema",
                    "must match [a-z_][a-z0-9_]{0,62}",
                ));
            }
            let mut conn = sqlx::PgConnection::connect_with(&connect).await?;
            // An identifier cannot be bound; it was checked to be [a-z0-9_] above.
            sqlx::query(AssertSqlSafe(format!(
                "CREATE SCHEMA IF NOT EXISTS \"{schema}\""
            )))
            .execute(&mut conn)
            .await?;
            conn.close().await?;
            connect = connect.options([("search_path", schema.as_str())]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect)
            .await?;
        let store = Store {
            backend: Backend::Postgres(pool),
        };
        if options.migrate {
            store.migrate().await?;
        }
        Ok(store)
    }

    /// Runs pending migrations; already-applied ones are skipped, so this is
    /// idempotent.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite { writer, .. } => SQLITE_MIGRATIONS.run(writer.connection()).await?,
            Backend::Postgres(p) => POSTGRES_MIGRATIONS.run(p).await?,
        }
        Ok(())
    }

    /// Number of migrations recorded as applied.
    pub async fn applied_migrations(&self) -> Result<i64, StoreError> {
        use sqlx::Row;
        const SQL: &str = "SELECT COUNT(*) FROM _sqlx_migrations WHERE success";
        let row = match &self.backend {
            Backend::Sqlite { reads, .. } => sqlx::query(SQL).fetch_one(reads).await?.try_get(0)?,
            Backend::Postgres(p) => sqlx::query(SQL).fetch_one(p).await?.try_get(0)?,
        };
        Ok(row)
    }

    /// Which backend this store uses.
    pub fn backend(&self) -> BackendKind {
        match &self.backend {
            Backend::Sqlite { .. } => BackendKind::Sqlite,
            Backend::Postgres(_) => BackendKind::Postgres,
        }
    }

    /// Closes every pooled connection (waits for checked-out ones to come back,
    /// and on SQLite for the writer's group in flight to commit).
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite { reads, writer } => {
                reads.close().await;
                writer.close().await;
            }
            Backend::Postgres(p) => p.close().await,
        }
    }

    /// The guest account for `device_id`, created on first use.
    pub async fn guest_account(&self, device_id: &str) -> Result<Account, StoreError> {
        if let Some(found) = on_backend!(self, find_guest(device_id))? {
            return Ok(found);
        }
        let device_id = device_id.to_owned();
        on_backend_write!(self, in_transaction, guest_account(&device_id))
    }

    /// Guest logins in one transaction (a batch from a login queue): each
    /// device's account is created on first use, and each login gets a session.
    /// All or nothing; sessions come back in `logins` order.
    pub async fn guest_logins(&self, logins: &[GuestLogin]) -> Result<Vec<Session>, StoreError> {
        let logins = logins.to_vec();
        on_backend_write!(self, in_transaction, guest_logins(&logins))
    }

    /// Creates a named account with an argon2id PHC string (see [`crate::password`]).
    /// A taken name is [`StoreError::Conflict`].
    pub async fn create_named_account(
        &self,
        name: &str,
        password_hash: &str,
    ) -> Result<Account, StoreError> {
        let (name, hash) = (name.to_owned(), password_hash.to_owned());
        on_backend_write!(self, in_transaction, create_named_account(&name, &hash))
    }

    /// The account with id `id`.
    pub async fn account(&self, id: i64) -> Result<Account, StoreError> {
        on_backend!(self, account(id))
    }

    /// The named account `name` (for password login).
    pub async fn account_by_name(&self, name: &str) -> Result<Account, StoreError> {
        on_backend!(self, account_by_name(name))
    }

    /// Records a session token id for `account_id`, valid until `expires_at_ms`.
    pub async fn create_session(
        &self,
        token_id: &str,
        account_id: i64,
        expires_at_ms: i64,
    ) -> Result<Session, StoreError> {
        let token_id = token_id.to_owned();
        on_backend_write!(
            self,
            autocommit,
            create_session(&token_id, account_id, expires_at_ms)
        )
    }

    /// The session `token_id` (check [`Session::is_valid_at`]).
    pub async fn session(&self, token_id: &str) -> Result<Session, StoreError> {
        on_backend!(self, session(token_id))
    }

    /// Revokes one session.
    pub async fn revoke_session(&self, token_id: &str) -> Result<(), StoreError> {
        let token_id = token_id.to_owned();
        on_backend_write!(self, autocommit, revoke_session(&token_id))
    }

    /// Revokes every live session of an account; returns how many.
    pub async fn revoke_sessions_of(&self, account_id: i64) -> Result<u64, StoreError> {
        on_backend_write!(self, autocommit, revoke_sessions_of(account_id))
    }

    /// The account's profile.
    pub async fn profile(&self, account_id: i64) -> Result<Profile, StoreError> {
        on_backend!(self, profile(account_id))
    }

    /// Renames the profile.
    pub async fn set_display_name(
        &self,
        account_id: i64,
        display_name: &str,
    ) -> Result<Profile, StoreError> {
        let display_name = display_name.to_owned();
        on_backend_write!(
            self,
            autocommit,
            set_display_name(account_id, &display_name)
        )
    }

    /// Adds progress points now (high-rate callers use the [`crate::writer::BatchWriter`]).
    pub async fn add_progress(&self, account_id: i64, xp: i64) -> Result<i64, StoreError> {
        on_backend_write!(self, in_transaction, add_progress(account_id, xp))
    }

    /// Current currency balance.
    pub async fn balance(&self, account_id: i64) -> Result<i64, StoreError> {
        on_backend!(self, balance(account_id))
    }

    /// Credits `amount` (1..=1e12) with a ledger entry; returns the new balance.
    pub async fn grant_currency(
        &self,
        account_id: i64,
        amount: i64,
        reference: &str,
    ) -> Result<i64, StoreError> {
        let reference = reference.to_owned();
        on_backend_write!(
            self,
            in_transaction,
            grant_currency(account_id, amount, &reference)
        )
    }

    /// The newest `limit` (1..=1000) ledger entries, newest first.
    pub async fn ledger(
        &self,
        account_id: i64,
        limit: i64,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        on_backend!(self, ledger(account_id, limit))
    }

    /// Items held, by item id.
    pub async fn inventory(&self, account_id: i64) -> Result<Vec<InventoryItem>, StoreError> {
        on_backend!(self, inventory(account_id))
    }

    /// Spends currency and grants the item in one transaction. A retry with the same
    /// idempotency key returns the first receipt (`replayed: true`) and charges
    /// nothing; the same key with a different request is [`StoreError::Conflict`]. A
    /// balance never goes negative: a spend larger than it is
    /// [`StoreError::InsufficientFunds`] and leaves no trace.
    pub async fn purchase(&self, request: &PurchaseRequest) -> Result<PurchaseReceipt, StoreError> {
        let request = request.clone();
        on_backend_write!(self, in_transaction, purchase(&request))
    }

    /// Stores a match result with stats, ratings and rewards in one transaction;
    /// idempotent by match id.
    pub async fn record_match(&self, result: &MatchResult) -> Result<MatchRecorded, StoreError> {
        let result = result.clone();
        on_backend_write!(self, in_transaction, record_match(&result))
    }

    /// The player's newest `limit` (1..=1000) matches, newest first.
    pub async fn match_history(
        &self,
        account_id: i64,
        limit: i64,
    ) -> Result<Vec<MatchHistoryEntry>, StoreError> {
        on_backend!(self, match_history(account_id, limit))
    }

    /// Account, profile, and stats of one player, read in one statement.
    pub async fn player_card(&self, account_id: i64) -> Result<PlayerCard, StoreError> {
        on_backend!(self, player_card(account_id))
    }

    /// Totals and rating.
    pub async fn player_stats(&self, account_id: i64) -> Result<PlayerStats, StoreError> {
        on_backend!(self, player_stats(account_id))
    }

    /// The whole store's books: accounts, matches recorded, balances against
    /// the ledger (reads only; for checks after a run).
    pub async fn audit(&self) -> Result<crate::audit::Audit, StoreError> {
        on_backend!(self, audit())
    }

    /// The top `limit` (1..=1000) rated players that have played.
    pub async fn leaderboard(&self, limit: i64) -> Result<Vec<LeaderboardEntry>, StoreError> {
        on_backend!(self, leaderboard(limit))
    }

    /// The player's leaderboard line, or `None` before their first match.
    pub async fn rank(&self, account_id: i64) -> Result<Option<LeaderboardEntry>, StoreError> {
        on_backend!(self, rank(account_id))
    }

    /// Applies a batch of the [`crate::writer::BatchWriter`] in one transaction: one
    /// result per write, in order, each meaningful only if this is `Ok` (the
    /// commit happened).
    pub(crate) async fn apply_batch(
        &self,
        writes: Vec<Write>,
    ) -> Result<Vec<Result<WriteAck, StoreError>>, StoreError> {
        on_backend_write!(self, in_transaction, apply_batch(&writes))
    }
}

#[cfg(test)]
mod tests {
    use super::{Store, valid_schema};
    use crate::model::MatchResult;
    use crate::model::PurchaseRequest;
    use crate::model::Write;
    use crate::writer::BatchWriter;

    /// Compiles only if the futures a web handler awaits are `Send`.
    #[allow(dead_code)]
    fn futures_are_send(store: &Store, req: &PurchaseRequest, m: &MatchResult, w: &BatchWriter) {
        fn send<T: Send>(_: T) {}
        send(store.purchase(req));
        send(store.record_match(m));
        send(store.guest_account("x"));
        send(store.leaderboard(100));
        send(store.session("t"));
        send(w.submit(Write::Progress {
            account_id: 1,
            xp: 1,
        }));
        send(Store::open("sqlite::memory:"));
    }

    #[test]
    fn schema_names_are_plain_identifiers() {
        assert!(valid_schema("t_purchase_1234"));
        assert!(!valid_schema("1abc"));
        assert!(!valid_schema("a\"; DROP SCHEMA public; --"));
        assert!(!valid_schema(""));
        assert!(!valid_schema(&"a".repeat(64)));
    }
}

#[path = "store_backup.rs"]
pub(crate) mod backup_api;

#[path = "store_queue.rs"]
mod queue_api;

#[path = "store_registry.rs"]
mod registry_api;
