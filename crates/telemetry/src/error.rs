//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong in telemetry set-up, budget loading and
/// metric rendering. Recording frames never fails.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// A budget file could not be read.
    #[error("{}: cannot read budget file: {source}", file.display())]
    ReadBudgets {
        /// The file.
        file: PathBuf,
        /// Why reading failed.
        source: std::io::Error,
    },
    /// A budget file is malformed or holds an invalid value.
    #[error("{file}:{line}:{column}: field `{field}`: {message}")]
    Budget {
        /// The file (or the name given to in-memory text).
        file: String,
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column of the fault.
        column: usize,
        /// Dotted path of the field at fault, e.g. `5v5.movement.mean_us`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A budget file has no section for the requested mode.
    #[error("{file}: no budget for mode `{mode}` (modes: {known})")]
    UnknownMode {
        /// The file.
        file: String,
        /// The requested mode.
        mode: String,
        /// The modes the file has, comma-separated.
        known: String,
    },
    /// A recorder configuration value is out of range.
    #[error("recorder config: field `{field}`: {message}")]
    Config {
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// Every sub-scope slot of a recorder is taken.
    #[error("sub-scope registry is full ({capacity} names); raise `max_sub_scopes`")]
    SubScopesFull {
        /// How many sub-scopes the recorder holds.
        capacity: usize,
    },
    /// Sub-scope names must not be empty (an empty name means "no sub-scope").
    #[error("a sub-scope name must not be empty")]
    EmptySubScopeName,
    /// Two recorders' statistics cannot be merged (different histogram ranges).
    #[error("cannot merge frame statistics: {0}")]
    Merge(String),
    /// A Prometheus label name is not `[a-zA-Z_][a-zA-Z0-9_]*`, or is reserved.
    #[error("invalid Prometheus label name `{0}`")]
    LabelName(String),
    /// Writing metric text into the caller's buffer failed.
    #[error("writing metrics text failed")]
    Format(#[from] std::fmt::Error),
    /// Writing sampled frame records failed.
    #[error("writing frame records failed: {0}")]
    Write(#[from] std::io::Error),
}
