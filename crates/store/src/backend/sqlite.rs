//! The SQLite backend: the operations of `ops/` compiled against SQLite's types.
//! Every write is queued to the one writer (`sqlite_writer.rs`), which runs it in
//! a savepoint of a group transaction.

pub(crate) type Db = sqlx::Sqlite;
pub(crate) type Pool = sqlx::SqlitePool;
pub(crate) type Conn = sqlx::SqliteConnection;
pub(crate) type Row = sqlx::sqlite::SqliteRow;

/// SQLite has no row locks; the one writer runs writes one after another.
const RATING_LOCK: &str = "";
/// No row locks either: the one writer runs claims one after another.
const CLAIM_LOCK: &str = "";

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
