//! Frame telemetry for hightick: where the time of every tick goes.
//!
//! (The telemetry issue fills in subsystems, scopes, frame records, histograms,
//! budgets and Prometheus text here.)
//!
//! [`alloc`] counts heap allocations per thread for zero-allocation tests, and
//! [`bench`] is the small measuring harness every `cargo bench` target in the
//! workspace uses to print its headline `FIGURE` lines.

pub mod alloc;
pub mod bench;
