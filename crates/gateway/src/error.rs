//! The error type at the gateway crate's boundary (starting, configuring,
//! serving). Request-level failures are [`crate::api::ApiError`] values that
//! become JSON responses.

use std::net::SocketAddr;

/// Everything that can stop a gateway from starting or serving.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The config file cannot be read, is not valid TOML for the config, or
    /// holds a field out of range.
    #[error(transparent)]
    Config(#[from] hightick_config::ConfigFileError),
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
