//! The server crate's error type.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Everything that can stop a host from starting or a match from being created.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A config file could not be read.
    #[error("{file}: {source}")]
    ReadConfig {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A config file is not valid TOML for the host config.
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
    /// The token key is missing or malformed.
    #[error("token key: {0}")]
    Key(String),
    /// A socket could not be bound.
    #[error("cannot bind {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Other I/O failure (threads, files).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The budgets file is bad.
    #[error(transparent)]
    Telemetry(#[from] hightick_telemetry::TelemetryError),
    /// The net layer refused its config.
    #[error(transparent)]
    Net(#[from] hightick_net::NetError),
}
