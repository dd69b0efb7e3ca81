//! [`NetemError`]: everything this crate can fail with.

use hightick_config::ConfigFileError;

/// What went wrong: a link name or profile file at fault, or the proxy's
/// sockets.
#[derive(Debug, thiserror::Error)]
pub enum NetemError {
    /// No built-in link has this name.
    #[error("unknown link `{0}` (known: lan, wifi, mobile, bad)")]
    UnknownLink(String),
    /// A profile file could not be read or is not TOML of the right shape.
    #[error(transparent)]
    File(#[from] ConfigFileError),
    /// A field of a profile file holds a value out of range.
    #[error("{file}:{line}:{column}: `{field}` {reason}")]
    FileField {
        /// The file.
        file: String,
        /// 1-based line of the value.
        line: usize,
        /// 1-based column of the value.
        column: usize,
        /// The field, dotted path (`down.loss`).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A profile's field holds a value out of range.
    #[error("`{field}` {reason}")]
    Invalid {
        /// The field, dotted path (`down.loss`).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A proxy setting is out of range.
    #[error("proxy `{field}`: {reason}")]
    Config {
        /// The setting.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A socket or thread of the proxy failed.
    #[error("{what}: {source}")]
    Io {
        /// What the proxy was doing.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

impl NetemError {
    /// `field` holds a value out of range: `reason` says how.
    pub fn invalid(field: impl Into<String>, reason: &str) -> Self {
        Self::Invalid {
            field: field.into(),
            reason: reason.to_owned(),
        }
    }

    /// A constructor for [`NetemError::Io`] while doing `what`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}
