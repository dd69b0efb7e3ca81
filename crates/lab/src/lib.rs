//! hightick-lab: the capacity lab — load runs, density sweeps, games per core, budgets,
//! run history with build comparison, reports, and the host doctor.
//!
//! What it is for:
//! - [`run_load`]: one load run, the unit every lab command is made of: server
//!   instances as child processes (`hightick serve` from the binary the caller names,
//!   optionally bound to CPU sets per NUMA node), N matches created over their admin
//!   API, a fleet of match bots in this process, warm-up, a steady measured window,
//!   and a [`RunSummary`] judged against the [`BudgetBook`].
//! - [`run_sweep`]: the density sweep (matches 1, 2, 4, 8, ... until budgets break),
//!   the largest load within budget with 10% CPU headroom and its games per core, and
//!   an optional plaza tick-rate probe; a [`SweepReport`] with FIGURE lines, a table,
//!   JSON and HTML ([`render_sweep_html`]).
//! - Run history (`ResultsDb`, over the store's `lab_runs`; cargo feature `history`,
//!   on by default): runs recorded with commit, build profile, host and config;
//!   [`RecordedRun`] is what one is and needs no database; [`commit_points`] and
//!   [`render_history_html`] chart them across commits; [`compare()`] judges a candidate
//!   against a baseline with noise measured from repeated runs ([`Noise`]).
//! - [`run_breakdown`]: the live tick's terms in one sitting (UDP floor plain
//!   and woken, the game's sans-IO tick warm and cold, a wake-up, the live
//!   server CPU per match tick) and what the live tick spends beyond their sum.
//! - [`growth`]: how the tick's cost grows with the crowd: one sans-IO match
//!   per mode of a family of crowd sizes, tick time and bytes per client
//!   against players, the fitted exponent, a peer's rooms charted beside.
//! - [`RunSummary`]: one run's table, JSON, FIGURE lines, budget violations and
//!   self-contained HTML report with inline SVG charts ([`render_html`]).
//! - [`plan`]: the capacity plan: from a target (players, mode, logins, the
//!   meta-game mix) and the history's measured figures to game servers, gateway
//!   replicas, the store's load, the rehearsing swarm and the autoscalers'
//!   settings, every number naming the measurement it came from.
//! - [`doctor`]: read-only checks of a host's `/proc` and `/sys` that matter for tick
//!   servers (NUMA, SMT, frequency governor, C-states, clock source, socket buffers, ...).
//!
//! What it is not: it does not measure ticks (the server and `telemetry` do; the lab
//! reads the admin API), it has no command line (the `cli` crate wires flags to it),
//! and the doctor never changes the host: it only reads files and suggests.
//!
//! ```
//! use hightick_lab::{BudgetBook, RunSummary, TargetStats, compare, CompareOptions, Noise};
//!
//! let mut run = RunSummary {
//!     title: "hightick demo".into(),
//!     mode: "5v5".into(),
//!     tick_rate_hz: 128,
//!     matches: 2,
//!     server_cpu_cores: 0.02,
//!     gpc: hightick_lab::games_per_core(2, 0.02),
//!     subsystems: vec![TargetStats { name: "fow".into(), mean_us: 48.0, ..Default::default() }],
//!     ..Default::default()
//! };
//! BudgetBook::shipped().apply(&mut run); // the shipped 5v5 budgets: fow mean <= 35 us
//! assert_eq!(run.figures()[0], "FIGURE gpc_5v5_128hz 90.000 games/core");
//! assert!(run.render_violations().contains("fow mean 48.00 us > budget 35.00 us"));
//! let back = RunSummary::from_json(&run.to_json()?)?;
//! assert_eq!(back, run);
//! assert!(hightick_lab::render_html(&run)?.contains("<svg"));
//!
//! let mut slower = run.clone();
//! slower.subsystems[0].mean_us = 62.4; // 30% slower
//! let c = compare(("A", &run), ("B", &slower), &Noise::fixed(0.1), CompareOptions::default());
//! assert_eq!(c.regressions().len(), 1);
//! # Ok::<(), hightick_lab::LabError>(())
//! ```

pub mod breakdown;
mod budget_book;
mod chart;
pub mod compare;
pub mod doctor;
pub mod error;
pub mod growth;
pub mod history;
mod host_facts;
pub mod html;
mod link_row;
pub mod load;
pub mod plan;
pub mod soak;
pub mod summary;
pub mod sweep;
mod violations;

pub use breakdown::{BreakdownEvent, BreakdownPlan, BreakdownReport, run_breakdown};
pub use budget_book::BudgetBook;
pub use compare::{ChangeVerdict, CompareOptions, Comparison, Noise, Stat, compare};
pub use doctor::{Check, DoctorOptions, DoctorReport, Verdict, examine};
pub use error::LabError;
pub use history::figures::{Figure, FigureRecord, RecordedFigures, parse_figures};
pub use history::report as history_report;
pub use history::report::{CommitPoint, commit_points, render_history_html, render_history_table};
#[cfg(feature = "history")]
pub use history::results_db::{self, HistoryLocation, ResultsDb};
pub use history::{RecordedRun, RunKind};
pub use html::render_html;
pub use load::{LoadSpec, Phase, Progress, run_load};
pub use soak::{
    SoakBound, SoakVerdict, judge, matches_started, render_soak_html, render_soak_line,
    render_soak_table, render_verdict,
};
pub use summary::{
    BotRow, DropRow, HostFacts, LinkRow, NetworkRow, QualityRow, RunSummary, SoakSample,
    TargetStats, TickRow, TimelinePoint, games_per_core,
};
pub use sweep::html::{self as sweep_html, render_sweep_html};
pub use sweep::{PlazaStep, StepPlan, SweepEvent, SweepPlan, SweepReport, SweepStep, run_sweep};
pub use violations::BudgetViolation;
