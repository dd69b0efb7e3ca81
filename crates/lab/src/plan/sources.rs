//! Finding each figure a plan needs in the run history: games per core from the
//! sweeps of the target's mode and tick rate, match bots per core from the sweeps'
//! and demos' bot rows, everything else from recorded FIGURE lines. Of the
//! candidates for a figure, one from the plan's kind of machine wins, then the newest.

use crate::history::figures::RecordedFigures;
use crate::history::{RecordedRun, RunKind};
use crate::plan::inputs::{Figures, Machine, Measured, Need, Source, Target};
use crate::summary::HostFacts;
use crate::sweep::SweepReport;

/// The figures for `target` found in `runs` (demos and sweeps) and `records`
/// (figures records), preferring those measured on `machine`.
pub fn gather(
    target: &Target,
    machine: &Machine,
    runs: &[RecordedRun],
    records: &[RecordedFigures],
) -> Figures {
    let mut candidates: Vec<(Need, Measured)> = Vec::new();
    for run in runs {
        candidates.extend(from_run(target, run));
    }
    for rec in records {
        for figure in &rec.record.figures {
            for need in Need::ALL {
                if need.matches(target, &figure.name) {
                    candidates.push((
                        need,
                        Measured {
                            value: figure.value,
                            unit: figure.unit.clone(),
                            source: source(
                                &rec.record.command,
                                &figure.name,
                                rec.id,
                                rec.recorded_at_ms,
                                &rec.host,
                            ),
                        },
                    ));
                }
            }
        }
    }
    let mut figures = Figures::default();
    for need in Need::ALL {
        let best = candidates
            .iter()
            .filter(|(n, m)| *n == need && m.value > 0.0)
            .map(|(_, m)| m)
            .max_by_key(|m| {
                (
                    m.source.machine.same_kind(machine),
                    m.source.recorded_at_ms,
                    m.source.run_id,
                )
            });
        if let Some(m) = best {
            figures.insert(need, m.clone());
        }
    }
    figures
}

fn source(command: &str, figure: &str, id: i64, at_ms: i64, host: &HostFacts) -> Source {
    Source {
        command: command.to_string(),
        figure: figure.to_string(),
        run_id: Some(id),
        commit: host.git_commit.clone(),
        machine: Machine::of(host),
        build_profile: None,
        recorded_at_ms: at_ms,
    }
}

/// The source of a figure of a recorded lab run (whose build profile is known).
fn run_source(command: &str, figure: &str, run: &RecordedRun, host: &HostFacts) -> Source {
    Source {
        build_profile: Some(run.build_profile.clone()),
        ..source(command, figure, run.id, run.recorded_at_ms, host)
    }
}

/// The command that made a sweep, as a person would rerun it.
fn sweep_command(sweep: &SweepReport) -> String {
    let counts: Vec<String> = sweep.steps.iter().map(|s| s.matches.to_string()).collect();
    let mut command = format!(
        "hightick lab sweep --mode {} --matches {} --step-duration {}s --warmup {}s",
        sweep.mode,
        counts.join(","),
        sweep.step_duration_s,
        sweep.warmup_s
    );
    if sweep.instances > 1 {
        command.push_str(&format!(" --instances {}", sweep.instances));
    }
    if sweep.bind {
        command.push_str(" --bind");
    }
    if !sweep.budget_file.is_empty() && !sweep.budget_file.ends_with("(built in)") {
        command.push_str(&format!(" --budgets {}", sweep.budget_file));
    }
    command + " --record"
}

/// Games per core (a sweep of the target's mode and rate with a step within budget)
/// and match bots per core (any run of the target's mode and rate that measured them).
fn from_run(target: &Target, run: &RecordedRun) -> Vec<(Need, Measured)> {
    let s = &run.summary;
    if s.mode != target.mode || s.tick_rate_hz != target.tick_rate_hz {
        return Vec::new();
    }
    let (command, host) = match &run.sweep {
        Some(sweep) if run.kind == RunKind::Sweep.as_str() => (sweep_command(sweep), &sweep.host),
        _ => (
            format!(
                "hightick demo --mode {} --matches {} --record",
                s.mode, s.matches
            ),
            &s.host,
        ),
    };
    let mut out = Vec::new();
    if let Some(sweep) = &run.sweep
        && let Some(best) = sweep.best_matches
        && sweep.gpc > 0.0
    {
        out.push((
            Need::GamesPerCore,
            Measured {
                value: sweep.gpc,
                unit: "games/core".into(),
                source: run_source(
                    &command,
                    &format!("{} (at {best} matches)", Need::GamesPerCore.figure(target)),
                    run,
                    host,
                ),
            },
        ));
    }
    if let Some(per_core) = s.bots.bots_per_core() {
        out.push((
            Need::MatchBotsPerCore,
            Measured {
                value: per_core,
                unit: "bots/core".into(),
                source: run_source(
                    &command,
                    &format!(
                        "{} (at {} matches)",
                        Need::MatchBotsPerCore.figure(target),
                        s.matches
                    ),
                    run,
                    host,
                ),
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::figures::{Figure, FigureRecord};
    use crate::plan::inputs::StoreBackend;
    use crate::summary::{BotRow, RunSummary};
    use crate::sweep::SweepStep;

    fn target() -> Target {
        Target {
            store: StoreBackend::Sqlite,
            ..crate::plan::fixtures::target()
        }
    }

    fn host(cpu: &str, commit: &str) -> HostFacts {
        HostFacts {
            cores: 2,
            cpu_model: cpu.into(),
            os: "Linux".into(),
            git_commit: Some(commit.into()),
        }
    }

    fn record(id: i64, cpu: &str, figures: &[(&str, f64)]) -> RecordedFigures {
        RecordedFigures {
            id,
            recorded_at_ms: id * 1000,
            git_commit: Some("c1".into()),
            host: host(cpu, "c1"),
            record: FigureRecord {
                command: format!("bench {id}"),
                figures: figures
                    .iter()
                    .map(|(n, v)| Figure {
                        name: (*n).into(),
                        value: *v,
                        unit: "u".into(),
                    })
                    .collect(),
            },
        }
    }

    fn sweep(id: i64, mode: &str, gpc: f64) -> RecordedRun {
        let summary = RunSummary {
            mode: mode.into(),
            tick_rate_hz: 128,
            matches: 8,
            bots: BotRow {
                bots: 80,
                cpu_cores: 0.2,
                ..BotRow::default()
            },
            host: host("EPYC", "c2"),
            ..RunSummary::default()
        };
        RecordedRun {
            id,
            recorded_at_ms: id * 1000,
            kind: "sweep".into(),
            git_commit: Some("c2".into()),
            build_profile: "release".into(),
            summary: summary.clone(),
            sweep: Some(SweepReport {
                mode: mode.into(),
                tick_rate_hz: 128,
                host: host("EPYC", "c2"),
                steps: vec![SweepStep {
                    matches: 8,
                    within_budget: true,
                    cpu_headroom_ok: true,
                    summary,
                    broken_attempts: Vec::new(),
                }],
                step_duration_s: 20.0,
                warmup_s: 5.0,
                budget_file: "tight.toml".into(),
                best_matches: Some(8),
                gpc,
                ..SweepReport::default()
            }),
        }
    }

    #[test]
    fn the_same_machine_wins_then_the_newest() {
        let here = Machine {
            cpu_model: "EPYC".into(),
            cores: 2,
        };
        let records = [
            record(1, "EPYC", &[("ws_held_sockets", 100.0)]),
            record(
                2,
                "EPYC",
                &[
                    ("ws_held_sockets", 200.0),
                    ("store_sqlite_match_result_batched", 7.0),
                ],
            ),
            record(
                3,
                "Xeon",
                &[
                    ("ws_held_sockets", 300.0),
                    ("store_postgres_match_result_batched", 9.0),
                ],
            ),
        ];
        let runs = [sweep(4, "5v5", 80.0), sweep(5, "solo", 500.0)];
        let f = gather(&target(), &here, &runs, &records);
        assert_eq!(f.value(Need::WebSocketsPerReplica), Some(200.0));
        assert_eq!(
            f.get(Need::WebSocketsPerReplica).unwrap().source.command,
            "bench 2"
        );
        assert_eq!(
            f.value(Need::StoreResultsPerS),
            Some(7.0),
            "the sqlite figure, not postgres"
        );
        assert_eq!(
            f.value(Need::GamesPerCore),
            Some(80.0),
            "the 5v5 sweep, not solo"
        );
        let gpc = f.get(Need::GamesPerCore).unwrap();
        assert_eq!(gpc.source.run_id, Some(4));
        assert!(
            gpc.source
                .command
                .starts_with("hightick lab sweep --mode 5v5")
        );
        assert_eq!(f.value(Need::MatchBotsPerCore), Some(400.0));
        assert_eq!(f.get(Need::GameServerStartMs), None);
        let elsewhere = Machine {
            cpu_model: "Xeon".into(),
            cores: 64,
        };
        let f = gather(&target(), &elsewhere, &runs, &records);
        assert_eq!(f.value(Need::WebSocketsPerReplica), Some(300.0));
    }
}
