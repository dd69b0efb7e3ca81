//! Frame telemetry for hightick: where the time of every tick goes.
//!
//! (The telemetry issue fills in subsystems, scopes, frame records, histograms,
//! budgets and Prometheus text here.)
//!
//! [`bench`] is the small measuring harness every `cargo bench` target in the
//! workspace uses to print its headline `FIGURE` lines.

pub mod bench;
