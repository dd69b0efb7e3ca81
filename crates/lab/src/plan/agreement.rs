//! A plan built from a rehearsal, set against the run: each number the run
//! also measured beside the run's figure, and whether the two agree within
//! [`TOLERANCE`]. The mean wait of every ticket, the players waiting, and
//! the hosts the peak filled are single numbers, checked. The answered
//! tickets' waits are a range (the oldest matches' tickets seated alike ..
//! the oldest tickets first), the run agreeing when it falls within it,
//! widened by the tolerance; when the hosts were short, who gets a freed
//! seat is not the oldest ticket alone ([`crate::plan::queue`]) and those
//! rows say so and are shown, not checked. Every row that cannot agree
//! says why.

use serde::Serialize;

use crate::plan::arithmetic::Number;
use crate::plan::inputs::Deployment;
use crate::plan::rehearsal::{Rehearsal, field};

/// How far plan and run may differ, as a share of the run's figure.
pub const TOLERANCE: f64 = 0.25;

/// One number of the plan (or a range of two) beside the run's figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// What is compared: a number of the plan, or a range of two.
    pub key: &'static str,
    /// The plan's value, or the low end of its range.
    pub plan_low: f64,
    /// The same, or the high end of its range.
    pub plan_high: f64,
    /// The run's figure.
    pub run: f64,
    /// Where the run's figure comes from in the report.
    pub run_figure: &'static str,
    /// How far the plan is off, as a share of the run's figure: from the
    /// range's nearer end (0 within it), positive when the plan is higher.
    pub off: f64,
    /// Whether they agree: within [`TOLERANCE`] of the run's figure, or
    /// within the row's floor (a wait within one matchmaking pass).
    pub agrees: bool,
    /// Why the two cannot agree, when they cannot: then the row is shown,
    /// not checked.
    pub why_not: Option<String>,
}

/// The plan's `low..high` against `run`, agreeing within [`TOLERANCE`] or
/// within `floor`.
fn row(
    key: &'static str,
    (low, high): (f64, f64),
    run: f64,
    run_figure: &'static str,
    floor: f64,
) -> Agreement {
    let (low, high) = (low.min(high), low.max(high));
    let gap = if run < low {
        low - run
    } else if run > high {
        high - run
    } else {
        0.0
    };
    let off = if run != 0.0 {
        gap / run
    } else if gap == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(gap)
    };
    Agreement {
        key,
        plan_low: low,
        plan_high: high,
        run,
        run_figure,
        off,
        agrees: gap.abs() <= TOLERANCE * run.abs() || gap.abs() <= floor,
        why_not: None,
    }
}

/// Why the answered tickets' waits cannot be held to the plan when the
/// hosts were short.
const SEAT_RACE: &str = "shown, not checked: the hosts were short, and a freed seat does not go to the oldest tickets alone: each match a pass forms is anchored on the oldest ticket but filled with the tickets nearest its rating, new ones among them, and the model has no ratings; so the answered tickets' waits depend on who was seated; the mean wait of every ticket does not";

/// The plan's `numbers` (of rehearsal `r`, deployed as `d`) against the
/// run; `hosts_short`: players waited for a match to end.
pub fn against(
    numbers: &[Number],
    r: &Rehearsal,
    d: &Deployment,
    hosts_short: bool,
) -> Vec<Agreement> {
    let value = |key: &str| {
        numbers
            .iter()
            .find(|n| n.key == key)
            .and_then(|n| n.value)
            .unwrap_or(0.0)
    };
    let one = |key: &str| (value(key), value(key));
    let ends = |a: &str, b: &str| (value(a), value(b));
    let run = &r.measured;
    let pass = d.matchmaking_pass_s;
    let run_hosts = (run.matches_running_peak / r.matches_per_host() - 1e-9)
        .ceil()
        .max(0.0);
    let mut p99 = row(
        "matchmaking_wait_p99_s",
        ends(
            "matchmaking_wait_p99_oldest_s",
            "matchmaking_wait_p99_race_s",
        ),
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
        (needed, needed),
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
    let raced = |mut a: Agreement| {
        if hosts_short {
            let mut why = SEAT_RACE.to_owned();
            if r.gateways > 1 {
                why.push_str(&format!(
                    "; and the {} gateways' passes claim disjoint tickets, so one gateway's matches of the oldest tickets race another's of the newest",
                    r.gateways
                ));
            }
            a.why_not = Some(why);
        }
        a
    };
    vec![
        row(
            "matchmaking_wait_s",
            one("matchmaking_wait_s"),
            run.wait_all_mean_s,
            field::WAIT_ALL_MEAN,
            pass,
        ),
        row(
            "matchmaking_queued_mean",
            one("matchmaking_queued_mean"),
            run.queued_mean,
            field::QUEUED_MEAN,
            0.0,
        ),
        raced(row(
            "matchmaking_wait_answered_s",
            ends(
                "matchmaking_wait_answered_oldest_s",
                "matchmaking_wait_answered_race_s",
            ),
            run.wait_mean_s,
            field::WAIT_MEAN,
            pass,
        )),
        raced(row(
            "matchmaking_wait_p50_s",
            ends(
                "matchmaking_wait_p50_oldest_s",
                "matchmaking_wait_p50_race_s",
            ),
            run.wait_p50_s,
            field::WAIT_P50,
            pass,
        )),
        p99,
        row(
            "hosts_in_use_peak",
            one("hosts_in_use_peak"),
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
        let point = |plan: f64, run: f64, floor: f64| row("k", (plan, plan), run, "f", floor);
        assert!(point(1.24, 1.0, 0.0).agrees);
        assert!(!point(1.26, 1.0, 0.0).agrees);
        assert!(point(0.4, 0.0, 0.5).agrees, "within a pass");
        assert!(!point(0.6, 0.0, 0.5).agrees);
        assert_eq!(point(0.0, 0.0, 0.0).off, 0.0);
        assert!((point(0.75, 1.0, 0.0).off + 0.25).abs() < 1e-12);
    }

    #[test]
    fn a_range_agrees_with_a_run_within_it_or_near_its_ends() {
        let range = |run: f64| row("k", (20.0, 10.0), run, "f", 0.0);
        assert!(range(15.0).agrees);
        assert_eq!(range(15.0).off, 0.0);
        assert_eq!((range(15.0).plan_low, range(15.0).plan_high), (10.0, 20.0));
        assert!(range(13.0).agrees && range(24.0).agrees);
        assert!(!range(7.9).agrees, "10 is over 25% above 7.9");
        assert!(!range(27.0).agrees);
        assert!(range(30.0).off < 0.0, "the plan is lower");
    }
}
