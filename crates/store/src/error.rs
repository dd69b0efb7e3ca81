//! The one error type at the store's boundary.

/// Everything a store operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The thing asked for does not exist.
    #[error("{what} not found")]
    NotFound {
        /// What was looked up ("account", "session", ...).
        what: &'static str,
    },
    /// The write clashes with existing data (a taken name, an idempotency key reused
    /// for a different request, ...).
    #[error("conflict: {what}")]
    Conflict {
        /// What clashed.
        what: &'static str,
    },
    /// A spend larger than the balance; nothing was charged.
    #[error("insufficient funds: balance {balance}, cost {cost}")]
    InsufficientFunds {
        /// Balance at the time of the attempt.
        balance: i64,
        /// What the spend would have cost.
        cost: i64,
    },
    /// A caller-supplied value is out of range or malformed; nothing reached the database.
    #[error("invalid {field}: {reason}")]
    InvalidInput {
        /// The field at fault.
        field: &'static str,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The database URL is neither `sqlite:` nor `postgres://`.
    #[error("unsupported database url (expected sqlite:... or postgres://...)")]
    UnsupportedUrl,
    /// Creating the data directory failed.
    #[error("data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// The database driver failed. A failed TLS handshake with PostgreSQL (a
    /// server certificate that does not verify, ...) is `sqlx::Error::Tls`, whose
    /// text says so, even where the driver reports it as an I/O error.
    #[error("database: {0}")]
    Backend(#[source] sqlx::Error),
    /// A migration failed.
    #[error("migration: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// The transaction holding this write failed (a [`crate::writer::BatchWriter`] batch, or
    /// on SQLite the writer's group commit); no write of that batch or group is stored.
    #[error("batch aborted: {reason}")]
    BatchAborted {
        /// The failure, as text (one failure answers many writers).
        reason: String,
    },
    /// The batching writer has shut down and accepts no more writes.
    #[error("batching writer is closed")]
    WriterClosed,
    /// The password hasher failed (not a wrong password, which is `Ok(false)`).
    #[error("password hashing: {0}")]
    Password(String),
    /// This backend does not do that; `what` says what to do instead.
    #[error("not supported: {what}")]
    Unsupported {
        /// What was asked, and what to use instead.
        what: &'static str,
    },
    /// Reading or writing a file beside the database (a backup, a restore) failed.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// The I/O failure.
        source: std::io::Error,
    },
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Backend(tls_as_tls(e))
    }
}

/// sqlx reports a TLS handshake that rustls refused (during its I/O) as
/// `Error::Io` ("error communicating with database: invalid peer certificate:
/// UnknownIssuer"); this makes it `Error::Tls` ("error occurred while attempting
/// to establish a TLS connection: ..."), so the message names TLS.
fn tls_as_tls(e: sqlx::Error) -> sqlx::Error {
    match e {
        sqlx::Error::Io(io)
            if io
                .get_ref()
                .is_some_and(|inner| inner.is::<rustls::Error>()) =>
        {
            // The I/O error's text is the rustls error's.
            sqlx::Error::Tls(Box::new(io))
        }
        other => other,
    }
}

impl StoreError {
    /// Maps a unique-constraint violation to [`StoreError::Conflict`], anything else to
    /// [`StoreError::Backend`].
    pub(crate) fn unique_as_conflict(e: sqlx::Error, what: &'static str) -> Self {
        match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict { what },
            _ => e.into(),
        }
    }

    /// Maps a foreign-key violation to [`StoreError::NotFound`].
    pub(crate) fn foreign_key_as_not_found(e: sqlx::Error, what: &'static str) -> Self {
        match &e {
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                StoreError::NotFound { what }
            }
            _ => e.into(),
        }
    }
}
