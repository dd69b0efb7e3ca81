//! Whether each figure a plan uses can be trusted for it: missing (with the command
//! that would measure it), stale (measured on another commit, or on an unknown one),
//! from another kind of machine, or from a debug build.

use serde::Serialize;

use crate::plan::inputs::{Need, PlanInputs};

/// What is wrong with a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Concern {
    /// Never measured (or not recorded).
    Missing,
    /// Measured on another commit, or one not known.
    Stale,
    /// Measured on another CPU model.
    OtherMachine,
    /// Measured by a debug build.
    DebugBuild,
}

/// One warning about one figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The figure.
    pub need: Need,
    /// What is wrong.
    pub concern: Concern,
    /// The whole warning, with what to run.
    pub message: String,
}

/// Whether two commits are the same, either possibly abbreviated.
fn same_commit(a: &str, b: &str) -> bool {
    let n = a.len().min(b.len());
    n >= 7 && a[..n].eq_ignore_ascii_case(&b[..n])
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// The warnings about `inputs`' figures, in the plan's order of figures.
pub fn warnings(inputs: &PlanInputs) -> Vec<Warning> {
    let t = &inputs.target;
    let mut out = Vec::new();
    for need in Need::ALL {
        let command = need.record_command(t);
        let mut warn = |concern, message: String| {
            out.push(Warning {
                need,
                concern,
                message,
            });
        };
        let Some(m) = inputs.figures.get(need) else {
            warn(
                Concern::Missing,
                format!(
                    "missing: {} (FIGURE {}): run `{command}`",
                    need.key(),
                    need.figure(t)
                ),
            );
            continue;
        };
        let s = &m.source;
        if let Some(here) = &inputs.commit {
            match &s.commit {
                Some(c) if same_commit(c, here) => {}
                Some(c) => warn(
                    Concern::Stale,
                    format!(
                        "stale: {} was measured on commit {}, this is {}: rerun `{command}`",
                        need.key(),
                        short(c),
                        short(here)
                    ),
                ),
                None => warn(
                    Concern::Stale,
                    format!("stale: {} names no commit: rerun `{command}`", need.key()),
                ),
            }
        }
        if !s.machine.same_kind(&inputs.machine) {
            warn(
                Concern::OtherMachine,
                format!(
                    "other machine: {} was measured on {}, the plan is for {}: rerun `{command}` there",
                    need.key(),
                    s.machine.cpu_model,
                    inputs.machine.cpu_model
                ),
            );
        }
        if s.build_profile.as_deref() == Some("debug") {
            warn(
                Concern::DebugBuild,
                format!(
                    "debug build: {} was measured by a debug build: rerun `{command}` with a release build",
                    need.key()
                ),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fixtures::{inputs, machine, measured as at};
    use crate::plan::inputs::{Figures, Machine, Measured};

    fn measured(commit: Option<&str>, cpu: &str) -> Measured {
        at(1.0, commit, cpu)
    }

    #[test]
    fn missing_stale_and_foreign_figures_are_warned_about() {
        let mut figures = Figures::default();
        for need in Need::ALL {
            figures.insert(need, measured(Some("abcdef0123456789"), "EPYC"));
        }
        figures.insert(
            Need::WebSocketsPerReplica,
            measured(Some("1234567aaaa"), "EPYC"),
        );
        figures.insert(Need::LoginsPerCore, measured(None, "EPYC"));
        figures.insert(Need::StoreResultsPerS, measured(Some("abcdef0"), "Xeon"));
        let mut debug = measured(Some("abcdef0"), "EPYC");
        debug.source.build_profile = Some("debug".into());
        figures.insert(Need::MatchBotsPerCore, debug);
        let mut inputs = PlanInputs {
            figures,
            commit: Some("abcdef0123".into()),
            machine: Machine {
                cores: 64,
                ..machine("EPYC")
            },
            ..inputs(&[])
        };
        let all = |inputs: &PlanInputs| -> Vec<(Need, Concern)> {
            warnings(inputs)
                .iter()
                .map(|w| (w.need, w.concern))
                .collect()
        };
        assert_eq!(
            all(&inputs),
            vec![
                (Need::WebSocketsPerReplica, Concern::Stale),
                (Need::LoginsPerCore, Concern::Stale),
                (Need::StoreResultsPerS, Concern::OtherMachine),
                (Need::MatchBotsPerCore, Concern::DebugBuild),
            ],
            "abbreviated commits match; cores do not make another kind of machine"
        );
        let w = warnings(&inputs);
        assert!(
            w[0].message.contains("1234567aaaa, this is abcdef0123"),
            "{}",
            w[0].message
        );
        assert!(w[2].message.contains("measured on Xeon") && w[2].message.contains("store_ops"));
        assert!(
            w[2].message.contains("| hightick lab record --command '"),
            "a bench's output is recorded: {}",
            w[2].message
        );
        assert!(w[3].message.starts_with("debug build: match_bots_per_core"));

        inputs.figures = Figures::default();
        inputs.commit = None;
        let w = warnings(&inputs);
        assert_eq!(w.len(), Need::ALL.len());
        assert!(w.iter().all(|w| w.concern == Concern::Missing));
        assert_eq!(
            w[0].message,
            "missing: games_per_core (FIGURE lab_gpc_5v5_128hz): run `hightick lab sweep --mode 5v5 --max 64 --record`"
        );
    }
}
