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
    /// A chart could not be drawn.
    #[error("cannot draw chart `{chart}`: {message}")]
    Chart {
        /// Which chart.
        chart: &'static str,
        /// What the drawing library said.
        message: String,
    },
    /// The doctor's root directory does not exist or is not a directory.
    #[error("{}: host root is not a readable directory", root.display())]
    HostRoot {
        /// The root given.
        root: PathBuf,
    },
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
