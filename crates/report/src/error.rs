//! The one error type of this crate.

/// What can go wrong while building a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A chart could not be drawn.
    #[error("cannot draw chart `{chart}`: {message}")]
    Chart {
        /// Which chart (the name it was built with).
        chart: String,
        /// What the drawing library said.
        message: String,
    },
}
