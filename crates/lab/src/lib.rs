//! hightick-lab: the capacity lab's reporting and the host doctor.
//!
//! What it is for:
//! - [`RunSummary`]: the result of one run (`hightick demo`, later each step of
//!   `hightick lab sweep`) with its headline `FIGURE` lines, a human table, JSON, and
//!   a self-contained HTML report with inline SVG charts ([`render_html`]). Its parts
//!   can be built from telemetry's `FrameStats` ([`TickRow::from_stats`],
//!   [`SubsystemRow::all_from_stats`], [`TimelinePoint::from_stats`]) and the host's
//!   files ([`HostFacts::detect`]).
//! - [`doctor`]: read-only checks of a host's `/proc` and `/sys` that matter for tick
//!   servers (NUMA, SMT, frequency governor, C-states, clock source, socket buffers, ...).
//!
//! What it is not: it does not start servers or bots (the `cli` crate wires those), it
//! does not measure ticks (the `telemetry` crate does), and the doctor never changes the
//! host: it only reads files and suggests.
//!
//! ```
//! use hightick_lab::{render_html, RunSummary, SubsystemRow};
//!
//! let run = RunSummary {
//!     title: "hightick demo".into(),
//!     mode: "5v5".into(),
//!     tick_rate_hz: 128,
//!     matches: 2,
//!     server_cpu_cores: 0.02,
//!     gpc: hightick_lab::games_per_core(2, 0.02),
//!     subsystems: vec![SubsystemRow { name: "replication".into(), mean_us: 8.0, ..Default::default() }],
//!     ..Default::default()
//! };
//! assert_eq!(run.figures()[0], "FIGURE gpc_5v5_128hz 90.000 games/core");
//! assert!(run.render_table().contains("replication"));
//! let back = RunSummary::from_json(&run.to_json()?)?;
//! assert_eq!(back, run);
//! assert!(render_html(&run)?.contains("<svg"));
//! # Ok::<(), hightick_lab::LabError>(())
//! ```

mod chart;
pub mod doctor;
pub mod error;
mod frame_rows;
mod host_facts;
pub mod html;
pub mod summary;
mod text_table;

pub use doctor::{Check, DoctorOptions, DoctorReport, Verdict, examine};
pub use error::LabError;
pub use html::render_html;
pub use summary::{
    BotRow, DropRow, HostFacts, NetworkRow, RunSummary, SubsystemRow, TickRow, TimelinePoint,
    games_per_core,
};
