//! Persistence for hightick behind one async API: accounts (guest or named with an
//! argon2id hash), sessions, profiles, inventory, a currency ledger, idempotent
//! purchases, idempotent match results with stats and Elo rating, a leaderboard, a
//! batching writer for high-rate writes, and what every gateway replica shares: the
//! matchmaking queue (`queue_*`) and the registry of heartbeating server hosts
//! (`host_*`).
//!
//! Two backends, chosen by URL: SQLite (`sqlite://file.db`, `sqlite::memory:`; the
//! embedded default is [`Store::open_in_data_dir`]) and PostgreSQL
//! (`postgres://...`). Both run the same parameterized statements and embedded
//! migrations (`migrations/{sqlite,postgres}`), applied on open. PostgreSQL over
//! TLS (rustls) is asked for in the URL as with libpq:
//! `?sslmode=verify-full&sslrootcert=/path/ca.pem` (docs/OPERATIONS.md).
//!
//! Concurrency: on PostgreSQL, spends are guarded single-row updates and match
//! results lock the players' stats rows in account order. On SQLite, readers use a
//! pool of connections in WAL mode and every write is queued to one writer
//! connection, which runs the writes that wait together in one `BEGIN IMMEDIATE`
//! transaction (each in its own savepoint, so a failing write fails alone) and
//! commits them with one fsync (`synchronous=FULL`): a group commit. Either way a
//! write is answered only after the transaction holding it has committed. High-rate
//! writes (match results) can also go through a [`BatchWriter`], which gathers them
//! for a few milliseconds into one batch.
//!
//! Backups: [`Store::backup_to`] copies a SQLite store while it serves (one
//! consistent snapshot, `VACUUM INTO`), [`Store::restore_in_data_dir`] puts one
//! back; PostgreSQL is backed up with `pg_dump --format=custom` and restored with
//! `pg_restore` (docs/OPERATIONS.md, "Backups and upgrades"; `tests/backup.rs`).
//! Upgrades: migrations are additive and run on open, and a store written by the
//! previous schema version opens with nothing lost (`tests/upgrade.rs`).
//!
//! Tests run against SQLite always and against PostgreSQL when
//! `HIGHTICK_TEST_DATABASE_URL` is set (each test in its own schema, see
//! [`StoreOptions::postgres_schema`]), and over TLS when
//! `HIGHTICK_TEST_DATABASE_TLS_URL` is set (`tests/postgres_tls.rs`).
//!
//! What it is not: an HTTP API (that is the gateway's), an authentication service
//! (the gateway signs tokens; the store keeps session ids and revocation), or a
//! cache. Money invariants live here: a balance never goes negative, a retried
//! purchase or match result never charges or credits twice.
//!
//! ```
//! use hightick_store::{PurchaseRequest, Store};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let store = Store::open("sqlite::memory:").await?;
//! let player = store.guest_account("device-1234").await?;
//! store.grant_currency(player.id, 100, "welcome").await?;
//! let buy = PurchaseRequest {
//!     account_id: player.id,
//!     idempotency_key: "order-1".into(),
//!     item_id: "skin.red".into(),
//!     quantity: 1,
//!     unit_price: 30,
//! };
//! let first = store.purchase(&buy).await?;
//! let retry = store.purchase(&buy).await?;
//! assert!(retry.replayed);
//! assert_eq!(first.balance_after, 70);
//! assert_eq!(store.balance(player.id).await?, 70);
//! # Ok::<(), hightick_store::StoreError>(())
//! # }).unwrap();
//! ```

mod audit;
mod backend;
pub mod clock;
mod error;
mod model;
pub mod password;
mod queue;
mod registry;
mod runs;
mod savepoint;
mod sqlite_writer;
mod store;
mod writer;

pub use audit::Audit;
pub use error::StoreError;
pub use model::{
    Account, GuestLogin, INITIAL_RATING, InventoryItem, LeaderboardEntry, LedgerEntry, MAX_AMOUNT,
    MAX_ID_LEN, MAX_NAME_LEN, MAX_QUANTITY, MAX_SCORE, MatchHistoryEntry, MatchPlayer,
    MatchRecorded, MatchResult, Outcome, PlayerCard, PlayerStats, Profile, PurchaseReceipt,
    PurchaseRequest, RATING_K, Session,
};
pub use model::{Write, WriteAck};
pub use queue::{
    LiveMatch, MAX_TICKET_MEMBERS, NewMatch, NewTicket, Party, QueueTicket, Seat, TicketState,
};
pub use registry::{HostBeat, HostTally, RegisteredHost};
pub use runs::{MAX_RUN_JSON, MAX_RUNS_LISTED, NewRun, RunFilter, RunHistory, StoredRun};
pub use store::backup_api::Restored;
pub use store::{BackendKind, SQLITE_FILE_NAME, Store, StoreOptions};
pub use writer::{BatchWriter, WriteSender, WriterConfig, WriterStats};
