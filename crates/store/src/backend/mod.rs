//! The two backends, [`sqlite`] and [`postgres`]. The store's operations are written
//! once, in `ops/` (one module per table family), and each backend declares them as
//! its own modules, so each is compiled against that backend's `Db`, `Pool`, `Conn`
//! and `Row`: both run the same statements (every one valid SQLite and PostgreSQL,
//! a static string with `$n` binds; no value is ever formatted into SQL) without a
//! dynamic `Any` layer.
//!
//! Reads take the pool. Writes take a connection and never begin or end a
//! transaction of their own: the caller runs them inside one and commits them when
//! they return `Ok`, or rolls them back when they return `Err`. A write's reads go
//! through that same connection, so they see its own changes.
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

// Each backend declares the `ops/` files as its own modules: compiled twice on
// purpose, once per backend's types (what clippy's `duplicate_mod` warns of).
#[expect(clippy::duplicate_mod, reason = "ops/ is compiled once per backend")]
pub(crate) mod postgres;
pub(crate) mod sqlite;
