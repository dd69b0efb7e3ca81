//! The density sweep: the same load run at more and more matches (1, 2, 4, 8, ... or a
//! given list) until budgets break, then the answer: the largest load at which every
//! match's p99 tick time stays within its budget while the servers leave 10% of their
//! CPUs free, and the games per core at that load. Optionally a probe of one 100-player
//! plaza match at several tick rates, for the highest rate that keeps its budget.

pub(crate) mod chart;
pub mod html;
pub(crate) mod report;

use serde::{Deserialize, Serialize};

use crate::budget_book::BudgetBook;
use crate::error::LabError;
use hightick_engine::BotGame;

use crate::load::{LoadSpec, Progress, run_load};
use crate::summary::{GPC_HEADROOM, HostFacts, RunSummary};

/// How the number of matches steps up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepPlan {
    /// Exactly these counts, in increasing order; every step runs.
    Matches(Vec<u32>),
    /// 1, 2, 4, ... up to `max` (and `max` itself), stopping after the first step that
    /// breaks its budget or the CPU headroom.
    Doubling {
        /// The largest count tried.
        max: u32,
    },
}

impl StepPlan {
    /// A list of counts, sorted with duplicates removed; zero is refused.
    pub fn matches(mut counts: Vec<u32>) -> Result<Self, LabError> {
        if counts.is_empty() || counts.contains(&0) {
            return Err(LabError::config(
                "matches",
                "give one or more counts of at least 1, e.g. 1,2,4,8",
            ));
        }
        counts.sort_unstable();
        counts.dedup();
        Ok(StepPlan::Matches(counts))
    }

    /// Every count the plan may run, in order.
    pub fn counts(&self) -> Vec<u32> {
        match self {
            StepPlan::Matches(c) => c.clone(),
            StepPlan::Doubling { max } => {
                let mut c: Vec<u32> = std::iter::successors(Some(1u32), |n| n.checked_mul(2))
                    .take_while(|n| n <= max)
                    .collect();
                if c.last() != Some(max) && *max > 0 {
                    c.push(*max);
                }
                c
            }
        }
    }

    fn stops_at_first_break(&self) -> bool {
        matches!(self, StepPlan::Doubling { .. })
    }
}

/// `1 match`, `4 matches`.
pub fn matches_text(n: u32) -> String {
    if n == 1 {
        "1 match".to_string()
    } else {
        format!("{n} matches")
    }
}

/// The plaza tick rates probed by default, highest first: each runs the
/// `plaza100` preset at that rate (`tick_rate_hz` of `POST /v1/matches`),
/// judged by plaza100's per-tick budgets.
pub const PLAZA_RATES_HZ: [u32; 6] = [128, 96, 64, 48, 30, 20];

/// The mode every plaza probe runs.
pub const PLAZA_MODE: &str = "plaza100";

/// `rates` highest first without repeats, or an error naming a rate the
/// server would refuse.
pub fn plaza_rates(rates: &[u32]) -> Result<Vec<u32>, LabError> {
    if let Some(bad) = rates
        .iter()
        .find(|r| !hightick_host_api::TICK_RATES_HZ.contains(r))
    {
        return Err(LabError::config(
            "plaza-rates",
            format!(
                "{bad} Hz: a match runs at {} to {} Hz",
                hightick_host_api::TICK_RATES_HZ.start(),
                hightick_host_api::TICK_RATES_HZ.end()
            ),
        ));
    }
    let mut rates = rates.to_vec();
    rates.sort_unstable_by(|a, b| b.cmp(a));
    rates.dedup();
    Ok(rates)
}

/// A whole sweep's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    /// Each step's run (its `matches` is replaced by the step's count).
    pub base: LoadSpec,
    /// The counts.
    pub steps: StepPlan,
    /// Plaza tick rates to probe, any order (empty: no probe); they run
    /// highest first and stop at the first within budget.
    pub plaza_rates: Vec<u32>,
    /// Times a step that breaks is run again before the sweep believes the
    /// break: on a shared host a burst from a neighbour can push one run's
    /// p99 over budget. Every broken run stays in the report.
    #[serde(default)]
    pub retries: u32,
}

/// One step of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepStep {
    /// Matches run.
    pub matches: u32,
    /// Every match's p99 tick time within the tick budget.
    pub within_budget: bool,
    /// Server CPU at most 90% of the CPUs the servers may use.
    pub cpu_headroom_ok: bool,
    /// The run.
    pub summary: RunSummary,
    /// Earlier runs of this step that broke (see [`SweepPlan::retries`]),
    /// oldest first; empty when the first run decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken_attempts: Vec<RunSummary>,
}

impl SweepStep {
    /// Within budget and with CPU headroom.
    pub fn passed(&self) -> bool {
        self.within_budget && self.cpu_headroom_ok
    }
}

/// One plaza tick rate tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlazaStep {
    /// Ticks per second.
    pub tick_rate_hz: u32,
    /// The server preset run (at `tick_rate_hz`).
    pub mode: String,
    /// The match's p99 tick time within its budget.
    pub within_budget: bool,
    /// The run.
    pub summary: RunSummary,
}

/// What a sweep found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// A human title.
    pub title: String,
    /// The mode swept.
    pub mode: String,
    /// Its tick rate.
    pub tick_rate_hz: u32,
    /// Players per match.
    pub players_per_match: u32,
    /// Measured window per step, seconds.
    pub step_duration_s: f64,
    /// Warm-up per step, seconds.
    pub warmup_s: f64,
    /// Server processes per step.
    pub instances: usize,
    /// Whether instances were bound to CPU sets.
    pub bind: bool,
    /// CPUs the servers could use (the 100% of the CPU headroom rule).
    pub cores_available: u32,
    /// The budgets file judged against.
    pub budget_file: String,
    /// The machine.
    pub host: HostFacts,
    /// Steps run, in increasing match count.
    pub steps: Vec<SweepStep>,
    /// The largest count that passed (within budget with CPU headroom).
    pub best_matches: Option<u32>,
    /// Games per core at that count (0 when none passed).
    pub gpc: f64,
    /// Plaza rates tried, highest first.
    pub plaza: Vec<PlazaStep>,
    /// The highest plaza rate within budget.
    pub plaza_max_hz: Option<u32>,
}

/// What a sweep tells its watcher.
#[derive(Debug)]
pub enum SweepEvent<'a> {
    /// A step begins.
    Started {
        /// e.g. `5v5 x 4 matches`.
        label: String,
        /// 1-based step number.
        step: usize,
        /// Steps planned (a doubling sweep may end sooner).
        of: usize,
    },
    /// A progress sample of the running step.
    Progress(&'a Progress),
    /// A step ended.
    Finished {
        /// As in `Started`.
        label: String,
        /// Its result.
        summary: &'a RunSummary,
        /// Whether it passed.
        passed: bool,
    },
}

/// Runs the sweep of game `G`, each step a fresh set of servers.
pub fn run_sweep<G: BotGame>(
    plan: &SweepPlan,
    budgets: &BudgetBook,
    watch: &mut dyn FnMut(SweepEvent<'_>),
) -> Result<SweepReport, LabError> {
    let run = plan.base.validate::<G>()?;
    let plaza_rates = plaza_rates(&plan.plaza_rates)?;
    let counts = plan.steps.counts();
    let cores_available = crate::load::cores_for(&plan.base);
    let of = counts.len() + plaza_rates.len();
    let mut report = SweepReport {
        title: format!("hightick lab sweep: {}", plan.base.mode),
        mode: plan.base.mode.clone(),
        tick_rate_hz: run.config.tick_rate_hz,
        players_per_match: u32::from(run.mode.players),
        step_duration_s: plan.base.duration.as_secs_f64(),
        warmup_s: plan.base.warmup.as_secs_f64(),
        instances: plan.base.instances,
        bind: plan.base.bind,
        cores_available,
        budget_file: budgets.file().to_string(),
        host: crate::load::this_host(),
        steps: Vec::new(),
        best_matches: None,
        gpc: 0.0,
        plaza: Vec::new(),
        plaza_max_hz: None,
    };
    for (i, &matches) in counts.iter().enumerate() {
        let label = format!("{} x {}", plan.base.mode, matches_text(matches));
        watch(SweepEvent::Started {
            label: label.clone(),
            step: i + 1,
            of,
        });
        let spec = LoadSpec {
            title: format!("hightick lab sweep: {label}"),
            matches,
            ..plan.base.clone()
        };
        let step = settle_step(plan.retries, |attempt| {
            let summary = run_load::<G>(&spec, budgets, &mut |p| watch(SweepEvent::Progress(p)))?;
            let step = judge_step(summary, cores_available);
            let label = match attempt {
                1 => label.clone(),
                n => format!("{label} (attempt {n})"),
            };
            watch(SweepEvent::Finished {
                label,
                summary: &step.summary,
                passed: step.passed(),
            });
            Ok(step)
        })?;
        let passed = step.passed();
        report.steps.push(step);
        if !passed && plan.steps.stops_at_first_break() {
            break;
        }
    }
    // Highest first; lower rates cost less per second, so the first rate
    // within budget is the answer and the rest are not run.
    for (k, &rate) in plaza_rates.iter().enumerate() {
        let mode = PLAZA_MODE;
        let label = format!("{mode}: 1 match of 100 at {rate} Hz");
        watch(SweepEvent::Started {
            label: label.clone(),
            step: report.steps.len() + k + 1,
            of,
        });
        let spec = LoadSpec {
            title: format!("hightick lab sweep: {label}"),
            mode: mode.to_string(),
            tick_rate_hz: Some(rate),
            matches: 1,
            ..plan.base.clone()
        };
        let summary = run_load::<G>(&spec, budgets, &mut |p| watch(SweepEvent::Progress(p)))?;
        let within_budget = summary.within_budget;
        watch(SweepEvent::Finished {
            label,
            summary: &summary,
            passed: within_budget,
        });
        report.plaza.push(PlazaStep {
            tick_rate_hz: rate,
            mode: mode.to_string(),
            within_budget,
            summary,
        });
        if within_budget {
            break;
        }
    }
    conclude(&mut report);
    Ok(report)
}

/// Runs a step (`run(attempt)`, attempts counted from 1, each run judged
/// with [`judge_step`]) until it passes or has broken `retries + 1` times;
/// the last run is the step's result and the broken ones before it are kept
/// with it.
pub fn settle_step(
    retries: u32,
    mut run: impl FnMut(u32) -> Result<SweepStep, LabError>,
) -> Result<SweepStep, LabError> {
    let mut broken = Vec::new();
    for attempt in 1.. {
        let mut step = run(attempt)?;
        if step.passed() || attempt > retries {
            step.broken_attempts = broken;
            return Ok(step);
        }
        broken.push(step.summary);
    }
    unreachable!("the loop returns by attempt retries + 1")
}

/// A step's verdicts: budget (already judged) and CPU headroom.
pub fn judge_step(summary: RunSummary, cores_available: u32) -> SweepStep {
    let limit = f64::from(cores_available) * GPC_HEADROOM;
    SweepStep {
        matches: summary.matches,
        within_budget: summary.within_budget,
        cpu_headroom_ok: summary.server_cpu_cores <= limit,
        summary,
        broken_attempts: Vec::new(),
    }
}

/// Fills in the answers from the steps: the best count, its games per core, and the
/// highest plaza rate within budget.
pub fn conclude(report: &mut SweepReport) {
    let best = report
        .steps
        .iter()
        .filter(|s| s.passed())
        .max_by_key(|s| s.matches);
    report.best_matches = best.map(|s| s.matches);
    report.gpc = best.map_or(0.0, |s| s.summary.gpc);
    report.plaza_max_hz = report
        .plaza
        .iter()
        .filter(|p| p.within_budget)
        .map(|p| p.tick_rate_hz)
        .max();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubling_reaches_the_maximum() {
        assert_eq!(StepPlan::Doubling { max: 8 }.counts(), vec![1, 2, 4, 8]);
        assert_eq!(
            StepPlan::Doubling { max: 12 }.counts(),
            vec![1, 2, 4, 8, 12]
        );
        assert_eq!(StepPlan::Doubling { max: 1 }.counts(), vec![1]);
        assert!(StepPlan::Doubling { max: 0 }.counts().is_empty());
    }

    #[test]
    fn match_lists_are_sorted_and_zero_is_refused() {
        assert_eq!(
            StepPlan::matches(vec![4, 1, 2, 4]).unwrap().counts(),
            vec![1, 2, 4]
        );
        assert!(StepPlan::matches(vec![0, 1]).is_err());
        assert!(StepPlan::matches(vec![]).is_err());
    }

    #[test]
    fn plaza_rates_run_highest_first_and_out_of_range_is_refused() {
        assert_eq!(plaza_rates(&[30, 128, 64, 30]).unwrap(), vec![128, 64, 30]);
        assert_eq!(
            plaza_rates(&PLAZA_RATES_HZ).unwrap(),
            PLAZA_RATES_HZ.to_vec()
        );
        assert!(plaza_rates(&[]).unwrap().is_empty());
        let err = plaza_rates(&[64, 0]).unwrap_err().to_string();
        assert!(err.contains("plaza-rates") && err.contains("0 Hz"), "{err}");
        assert!(plaza_rates(&[300]).is_err());
    }

    fn step(matches: u32, cpu: f64, within_budget: bool) -> SweepStep {
        let summary = RunSummary {
            matches,
            server_cpu_cores: cpu,
            gpc: crate::games_per_core(matches, cpu),
            within_budget,
            ..RunSummary::default()
        };
        judge_step(summary, 2)
    }

    #[test]
    fn a_broken_step_is_run_again_and_every_broken_run_is_kept() {
        let run = |verdicts: Vec<bool>| {
            let mut calls = Vec::new();
            let step = settle_step(2, |attempt| {
                calls.push(attempt);
                Ok(step(
                    4,
                    0.2 + 0.01 * f64::from(attempt),
                    verdicts[attempt as usize - 1],
                ))
            })
            .unwrap();
            (step, calls)
        };
        let (first, calls) = run(vec![true]);
        assert!(first.passed() && first.broken_attempts.is_empty());
        assert_eq!(calls, vec![1]);
        let (second, calls) = run(vec![false, true]);
        assert!(second.passed());
        assert_eq!(calls, vec![1, 2]);
        assert_eq!(second.broken_attempts.len(), 1);
        assert_eq!(second.broken_attempts[0].server_cpu_cores, 0.2 + 0.01);
        let (never, calls) = run(vec![false, false, false]);
        assert!(!never.passed(), "three breaks: the break is believed");
        assert_eq!(calls, vec![1, 2, 3]);
        assert_eq!(never.broken_attempts.len(), 2);
        let none = settle_step(0, |_| Ok(step(4, 0.2, false))).unwrap();
        assert!(
            !none.passed() && none.broken_attempts.is_empty(),
            "no retries"
        );
    }

    #[test]
    fn the_answer_is_the_largest_passing_step() {
        let mut report = SweepReport {
            title: String::new(),
            mode: "5v5".into(),
            tick_rate_hz: 128,
            players_per_match: 10,
            step_duration_s: 1.0,
            warmup_s: 1.0,
            instances: 1,
            bind: false,
            cores_available: 2,
            budget_file: String::new(),
            host: HostFacts::default(),
            steps: vec![
                step(1, 0.1, true),
                step(2, 0.2, true),
                step(4, 1.85, true),
                step(8, 1.0, false),
            ],
            best_matches: None,
            gpc: 0.0,
            plaza: Vec::new(),
            plaza_max_hz: None,
        };
        assert!(!report.steps[2].cpu_headroom_ok, "1.85 > 0.9 x 2 cores");
        conclude(&mut report);
        assert_eq!(report.best_matches, Some(2));
        assert!((report.gpc - 9.0).abs() < 1e-9);
        assert!(report.answer().contains("2 matches, 9.0 games per core"));

        // Nothing passes: the answer names why the lightest step failed.
        report.steps = vec![step(1, 1.95, false), step(2, 0.2, false)];
        report.steps[0].summary.tick.p99_us = 300.0;
        report.steps[0].summary.tick.budget_p99_us = Some(100.0);
        report.steps[0].summary.match_tick_p99_us = vec![250.0, 420.0];
        conclude(&mut report);
        assert_eq!((report.best_matches, report.gpc), (None, 0.0));
        let answer = report.answer();
        assert!(
            answer.contains(
                "already at 1 match: worst match tick p99 420 us > budget 100 us, \
                 server CPU 1.95 cores > limit 1.80"
            ),
            "{answer}"
        );
        report.steps.truncate(0);
        conclude(&mut report);
        assert_eq!((report.best_matches, report.gpc), (None, 0.0));
        assert_eq!(
            report.answer(),
            "no step stayed within budget with 10% CPU headroom"
        );
    }
}
