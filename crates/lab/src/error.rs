//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong while reporting a run or inspecting a host.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A summary or report could not be encoded as JSON.
    #[error("cannot encode JSON: {0}")]
    EncodeJson(#[source] serde_json::Error),
    /// A summary holds a NaN or infinite number, which JSON cannot carry.
    #[error("field `{field}` is {value}, which JSON cannot carry")]
    NonFinite {
        /// Dotted path of the field, e.g. `subsystems[2].p99_us`.
        field: String,
        /// The value found.
        value: f64,
    },
    /// JSON text is not a valid summary or report.
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    DecodeJson {
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column of the fault.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A report could not be drawn (a chart).
    #[error(transparent)]
    Report(#[from] hightick_report::ReportError),
    /// The doctor's root directory does not exist or is not a directory.
    #[error("{}: host root is not a readable directory", root.display())]
    HostRoot {
        /// The root given.
        root: PathBuf,
    },
    /// A run or sweep was asked for with a setting out of range.
    #[error("{field}: {message}")]
    Config {
        /// The setting at fault, as its flag or field is named.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A rehearsal's report lacks a figure a plan needs, or holds a bad one.
    #[error("{file}: {field}: {message}")]
    Rehearsal {
        /// The report file.
        file: String,
        /// The field at fault, as a dotted path, e.g. `launch.capacity.match_minutes`.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, e.g. `writing /tmp/key.hex`.
        what: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// A server child process misbehaved (no banner, early exit, no drain).
    #[error("server: {0}")]
    Server(String),
    /// A server's admin API refused a call or answered something unreadable.
    #[error("admin API {call}: {message}")]
    Admin {
        /// The call, e.g. `POST /v1/matches`.
        call: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A connect token could not be minted.
    #[error("minting a connect token: {0}")]
    Token(String),
    /// The match bots could not start.
    #[error("bots: {0}")]
    Swarm(#[from] hightick_swarm::SwarmError),
    /// The impairment proxy's link or sockets failed.
    #[error("link: {0}")]
    Link(#[from] hightick_netem::NetemError),
    /// The budgets file is unreadable or invalid (the message names file, line and field).
    #[error(transparent)]
    Budgets(#[from] hightick_telemetry::TelemetryError),
    /// The run history database failed.
    #[cfg(feature = "history")]
    #[error("run history: {0}")]
    Store(#[from] hightick_store::StoreError),
    /// A run named for comparison or history cannot be used.
    #[error("{0}")]
    History(String),
    /// A measurement of the breakdown could not run (its in-process match
    /// could not be set up, a measuring thread failed).
    #[error("breakdown: {0}")]
    Breakdown(String),
}

impl LabError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> LabError {
        let what = what.into();
        move |source| LabError::Io { what, source }
    }

    pub(crate) fn config(field: &'static str, message: impl Into<String>) -> LabError {
        LabError::Config {
            field,
            message: message.into(),
        }
    }
}

impl LabError {
    pub(crate) fn decode(err: &serde_json::Error) -> Self {
        LabError::DecodeJson {
            line: err.line(),
            column: err.column(),
            message: err.to_string(),
        }
    }
}
