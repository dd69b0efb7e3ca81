//! [`StackError`]: why a stack run could not start or finish.

use std::path::Path;

/// Why a stack run failed.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    /// A file or process operation on `path` failed.
    #[error("{path}: {source}")]
    Io {
        /// The file, directory or program.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A child process did not start or answer.
    #[error("{name}: {reason}")]
    Child {
        /// Which child.
        name: String,
        /// What went wrong.
        reason: String,
    },
    /// An option is out of range (the option's name comes first).
    #[error("{0}")]
    Options(String),
    /// The players' run failed.
    #[error("swarm: {0}")]
    Swarm(#[from] hightick_swarm::SwarmError),
    /// The store could not be read for the audit.
    #[error("store: {0}")]
    Store(#[from] hightick_store::StoreError),
}

impl StackError {
    /// Wraps an I/O error on `path`.
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
