//! A plan built from a rehearsal, set against the run: each number the run
//! also measured (the matchmaking wait's mean and median, the hosts its
//! peak filled, the hosts its players need) beside the run's figure, and
//! whether the two agree within [`TOLERANCE`]. Where they cannot agree the
//! row says why instead, and is shown, not checked.

use serde::Serialize;

use crate::plan::arithmetic::Number;
use crate::plan::inputs::Deployment;
use crate::plan::rehearsal::{Rehearsal, field};

/// How far plan and run may differ, as a share of the run's figure.
pub const TOLERANCE: f64 = 0.25;

/// One number of the plan beside the run's figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// The plan's number.
    pub key: &'static str,
    /// Its value in the plan.
    pub plan: f64,
    /// The run's figure.
    pub run: f64,
    /// Where the run's figure comes from in the report.
    pub run_figure: &'static str,
    /// (plan - run) / run (0 when both are 0).
    pub off: f64,
    /// Whether they agree: within [`TOLERANCE`] of the run's figure, or
    /// within `floor` of it (a wait within one matchmaking pass).
    pub agrees: bool,
    /// Why the two cannot agree, when they cannot: then the row is shown,
    /// not checked.
    pub why_not: Option<String>,
}

/// `plan` against `run`, agreeing within [`TOLERANCE`] or within `floor`.
fn row(key: &'static str, plan: f64, run: f64, run_figure: &'static str, floor: f64) -> Agreement {
    let gap = plan - run;
    let off = if run != 0.0 {
        gap / run
    } else if gap == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(gap)
    };
    Agreement {
        key,
        plan,
        run,
        run_figure,
        off,
        agrees: gap.abs() <= TOLERANCE * run.abs() || gap.abs() <= floor,
        why_not: None,
    }
}

/// The plan's `numbers` (of rehearsal `r`, deployed as `d`) against the run.
pub fn against(numbers: &[Number], r: &Rehearsal, d: &Deployment) -> Vec<Agreement> {
    let value = |key: &str| {
        numbers
            .iter()
            .find(|n| n.key == key)
            .and_then(|n| n.value)
            .unwrap_or(0.0)
    };
    let run = &r.measured;
    let pass = d.matchmaking_pass_s;
    let run_hosts = (run.matches_running_peak / r.matches_per_host() - 1e-9)
        .ceil()
        .max(0.0);
    let mut p99 = row(
        "matchmaking_wait_p99_s",
        value("matchmaking_wait_p99_s"),
        run.wait_p99_s,
        field::WAIT_P99,
        pass,
    );
    p99.why_not = Some(
        "shown, not checked: the model gives every match the mean length and every player the mean times, so its tail is the queue's alone".into(),
    );
    let needed = value("hosts_needed");
    let mut hosts_needed = row(
        "hosts_needed",
        needed,
        run_hosts,
        field::MATCHES_RUNNING_PEAK,
        0.0,
    );
    if needed > r.hosts as f64 {
        hosts_needed.why_not = Some(format!(
            "the rehearsal had {} host(s) and its players needed more: a run shows no more hosts in use than it had; {needed:.0} is what its players need with nobody waiting for a seat",
            r.hosts
        ));
    }
    vec![
        row(
            "matchmaking_wait_s",
            value("matchmaking_wait_s"),
            run.wait_mean_s,
            field::WAIT_MEAN,
            pass,
        ),
        row(
            "matchmaking_wait_p50_s",
            value("matchmaking_wait_p50_s"),
            run.wait_p50_s,
            field::WAIT_P50,
            pass,
        ),
        p99,
        row(
            "hosts_in_use_peak",
            value("hosts_in_use_peak"),
            run_hosts,
            field::MATCHES_RUNNING_PEAK,
            0.0,
        ),
        hosts_needed,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_a_quarter_or_a_pass_agrees() {
        assert!(row("k", 1.24, 1.0, "f", 0.0).agrees);
        assert!(!row("k", 1.26, 1.0, "f", 0.0).agrees);
        assert!(row("k", 0.4, 0.0, "f", 0.5).agrees, "within a pass");
        assert!(!row("k", 0.6, 0.0, "f", 0.5).agrees);
        assert_eq!(row("k", 0.0, 0.0, "f", 0.0).off, 0.0);
        assert!((row("k", 0.75, 1.0, "f", 0.0).off + 0.25).abs() < 1e-12);
    }
}
