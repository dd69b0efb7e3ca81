//! The error type at the gateway crate's boundary (starting, configuring,
//! serving). Request-level failures are [`crate::api::ApiError`] values that
//! become JSON responses.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Everything that can stop a gateway from starting or serving.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// A config file could not be read.
    #[error("{file}: {source}")]
    ReadConfig {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A config file is not valid TOML for the gateway config.
    #[error("{file}:{line}:{column}: {message}")]
    ParseConfig {
        /// The file.
        file: String,
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column of the fault.
        column: usize,
        /// What is wrong (names the field).
        message: String,
    },
    /// A config field holds a value out of range.
    #[error("config field `{field}`: {reason}")]
    InvalidField {
        /// The field, dotted path.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A key or secret is missing or malformed.
    #[error("{what}: {reason}")]
    Secret {
        /// Which secret.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The listening socket could not be bound.
    #[error("cannot bind {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The database could not be opened or migrated.
    #[error("database: {0}")]
    Store(#[from] hightick_store::StoreError),
    /// Other I/O failure.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
