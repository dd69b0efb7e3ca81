//! Frame telemetry for hightick: where the time of every tick goes.
//!
//! A server worker opens one frame per tick (or per match-tick) on a
//! [`FrameRecorder`], and game code wraps its work in scopes:
//! `let _s = frame.scope(Subsystem::Movement, "collide");`. A scope reads the
//! CPU's time-stamp counter when it opens and when it drops (tens of
//! nanoseconds, no allocation) and charges the time to its [`Subsystem`] and
//! static sub-scope name. Time is exclusive: a nested scope's time belongs to
//! the nested scope only, so subsystem times add up to at most the frame.
//!
//! When a frame closes, the recorder:
//! - fills a [`FrameRecord`] (tick, start, total, ns per subsystem and per sub-scope);
//! - feeds an HDR histogram per subsystem and one for the whole frame ([`FrameStats`]);
//! - counts late ticks (the frame overran the tick period) and judges
//!   [`budget`]s (mean and p99 per subsystem and per tick, per game mode,
//!   loaded from a TOML file such as the crate's `budgets.toml`) over windows;
//! - keeps every Nth record in a ring, written later as JSON lines.
//!
//! All memory is reserved when the recorder is built: steady-state frames do
//! not allocate. Off the tick path, [`prometheus::render`] writes the
//! statistics as Prometheus text for `/metrics` (with
//! [`prometheus::text::Exposition`], the one writer every `/metrics` in the
//! workspace uses), and [`FrameSummary`] gives
//! the mean, p50, p90, p99 and max a report or run history needs.
//!
//! What this crate is not: it does not serve HTTP, read sockets, spawn
//! threads or aggregate across hosts; the server and lab crates do that with
//! what it produces. It never reads the wall clock on the tick path.
//!
//! With the cargo feature `tracy`, every scope is also a zone of the Tracy
//! frame profiler (named after its subsystem, its sub-scope name as text)
//! and every frame a Tracy frame, so a developer can attach Tracy to a live
//! server and read each tick (docs/PROFILING.md). Without the feature nothing
//! of it is compiled in.
//!
//! [`alloc`] counts heap allocations per thread for zero-allocation tests, and
//! [`bench`](mod@bench) is the small measuring harness every `cargo bench` target in the
//! workspace uses to print its headline `FIGURE` lines.
//!
//! ```
//! use hightick_telemetry::{Budgets, FrameRecorder, RecorderConfig, Subsystem, prometheus};
//!
//! let budgets = Budgets::parse("[5v5.tick]\nmean_us = 40.0\np99_us = 100.0\n", "inline")?;
//! let mut recorder = FrameRecorder::new(RecorderConfig::default(), budgets.mode("5v5")?.clone())?;
//!
//! for tick in 0..3 {
//!     let frame = recorder.begin(tick);
//!     {
//!         let _movement = frame.scope(Subsystem::Movement, "apply_inputs");
//!         let _physics = frame.scope(Subsystem::Physics, "collide"); // nested: its own time
//!     }
//!     let _fow = frame.enter(Subsystem::Fow);
//!     drop(_fow);
//!     let outcome = frame.end();
//!     assert_eq!(outcome.tick, tick);
//! }
//! let record = recorder.last_frame();
//! assert!(record.attributed_ns() <= record.total_ns);
//! assert_eq!(recorder.summary().frames, 3);
//!
//! let mut metrics = String::new();
//! prometheus::render(&mut metrics, &[prometheus::Series {
//!     labels: &[("mode", "5v5")],
//!     stats: recorder.stats(),
//! }])?;
//! assert!(metrics.contains("hightick_ticks_total{mode=\"5v5\"} 3"));
//! # Ok::<(), hightick_telemetry::TelemetryError>(())
//! ```

pub mod alloc;
pub mod bench;
pub mod budget;
mod clock;
mod error;
pub mod prometheus;
mod record;
mod recorder;
mod sample;
mod scope;
mod stats;
mod sub_scope;
mod subsystem;
mod summary;
#[cfg(feature = "tracy")]
mod tracy;

pub use budget::{Budget, BudgetTarget, Budgets, DEFAULT_BUDGETS_TOML, ModeBudget};
pub use clock::{MockTime, TscClock};
pub use error::TelemetryError;
pub use hdrhistogram::Histogram;
pub use record::FrameRecord;
pub use recorder::{Frame, FrameOutcome, FrameRecorder, RecorderConfig};
pub use scope::{MAX_SCOPE_DEPTH, Scope};
pub use stats::{BudgetStat, FrameStats};
pub use sub_scope::{MAX_SUB_SCOPES, SubScopeId};
pub use subsystem::{Subsystem, UnknownSubsystem};
pub use summary::{BudgetMiss, FrameSummary, SubsystemSummary, TimeSummary};
