//! Failures a test may inject ([`Faults`]).

/// Failures a test may inject, for proving what a crash does and does not
/// lose. Only [`Gateway::start_with_faults`] takes them, and it exists only
/// with the cargo feature `fault-injection`, which only this crate's own
/// tests turn on (a dev-dependency on itself): no shipped binary,
/// configuration or environment can reach them, and without the feature the
/// code that would act on them is not compiled.
#[derive(Debug, Clone, Copy, Default)]
pub struct Faults {
    /// SIGKILL the process right after a match result commits, before the
    /// reply is written.
    pub crash_after_result_commit: bool,
}
