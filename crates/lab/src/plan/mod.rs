//! The capacity plan (`hightick lab plan`): from a target (concurrent players, mode
//! and tick rate, the peak login rate, the meta-game mix) and the figures measured
//! in the run history to host cores and GameServers, gateway replicas, the store's
//! write load against its measured throughput, the swarm that would rehearse it,
//! and the FleetAutoscaler and HPA settings.
//!
//! Every number names the figures it came from, and every figure its source:
//! command, commit, machine and date. A figure that is missing, from another
//! commit or from another kind of machine is warned about with the command that
//! would measure it. The modules: [`inputs`] (what a plan starts from; a rehearsal
//! can fill it by hand), [`sources`] (finding the figures in the history),
//! [`freshness`] (the warnings), [`arithmetic`] (the numbers) and [`report`] (text,
//! FIGURE lines, JSON, HTML).
//!
//! A plan can also be built from a rehearsal's own figures (`hightick lab plan
//! --from-rehearsal REPORT.json`): [`rehearsal`] reads the report `hightick stack`
//! wrote, [`queue`] works out its matchmaking queue with its hosts (players beyond
//! their capacity wait for a match to end), and [`agreement`] sets what the plan
//! predicts against what the run measured, saying why where they cannot agree.
//!
//! What it is not: it measures nothing, and it does not deploy; a figure it lacks is
//! measured by the command its warning names and recorded (`lab sweep --record`, or
//! a bench's output piped to `hightick lab record`).
//!
//! ```
//! use hightick_lab::plan::{Deployment, Figures, Machine, PlanInputs, StoreBackend, Target, plan};
//!
//! let machine = Machine { cpu_model: "AMD EPYC 7B13".into(), cores: 2 };
//! let target = Target {
//!     ccu: 200_000, mode: "5v5".into(), players_per_match: 10, tick_rate_hz: 128,
//!     login_rate_per_s: 2000.0, requests_per_player_min: 6.0,
//!     purchases_per_player_min: 0.0, match_minutes: 30.0, store: StoreBackend::Postgres,
//! };
//! let p = plan(PlanInputs {
//!     target, deployment: Deployment::default(), figures: Figures::default(),
//!     commit: None, machine, rehearsal: None,
//! });
//! assert_eq!(p.value("matches"), Some(20_000.0));
//! assert_eq!(p.value("gameservers"), None); // games per core was never measured
//! assert!(p.warnings[0].message.starts_with("missing: games_per_core"));
//! ```

pub mod agreement;
pub mod arithmetic;
#[cfg(test)]
mod fixtures;
pub mod freshness;
pub mod inputs;
pub mod queue;
pub mod rehearsal;
pub mod report;
pub mod sources;

pub use agreement::Agreement;
pub use arithmetic::{CapacityPlan, Number, Section, plan};
pub use freshness::{Concern, Warning};
pub use inputs::{
    Deployment, Figures, Machine, Measured, Need, PlanInputs, Source, StoreBackend, Target,
};
pub use rehearsal::Rehearsal;

/// The inputs of a plan for `target`, with its figures from the run history in `db`,
/// for a `machine` and build `commit`.
#[cfg(feature = "history")]
pub fn inputs_from_history(
    db: &crate::ResultsDb,
    target: Target,
    deployment: Deployment,
    machine: Machine,
    commit: Option<String>,
) -> Result<PlanInputs, crate::LabError> {
    target.validate()?;
    deployment.validate()?;
    let runs = db.list(None, Some(&target.mode))?;
    let figures = sources::gather(&target, &machine, &runs, &db.figures()?);
    Ok(PlanInputs {
        target,
        deployment,
        figures,
        commit,
        machine,
        rehearsal: None,
    })
}
