//! The server crate's error type.

use std::net::SocketAddr;

/// Everything that can stop a host from starting or a match from being created.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The config file cannot be read, is not valid TOML for the config, or
    /// holds a field out of range.
    #[error(transparent)]
    Config(#[from] hightick_config::ConfigFileError),
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
    /// An Agones allocation's annotations do not describe a match.
    #[error("allocation annotation `{annotation}`: {reason}")]
    Allocation {
        /// The annotation at fault.
        annotation: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The Agones SDK could not be reached or refused a call.
    #[error("agones: {0}")]
    Agones(String),
}

impl From<hightick_host_api::agones::AnnotationError> for ServerError {
    fn from(e: hightick_host_api::agones::AnnotationError) -> Self {
        ServerError::Allocation {
            annotation: e.annotation,
            reason: e.reason,
        }
    }
}
