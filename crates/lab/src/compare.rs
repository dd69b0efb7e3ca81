//! Build comparison: per-subsystem (and whole-tick) mean and p99 of a baseline run A
//! against a candidate run B, each change judged against run-to-run noise.
//!
//! Noise is measured, when the history holds repeated runs of one commit (same kind,
//! mode, matches and build profile), as the largest relative difference between two
//! such runs, per subsystem and statistic; otherwise a default band applies. A change
//! beyond noise is flagged (faster or slower); a slowdown beyond both noise and the
//! threshold is a regression, which is what CI gates on. Changes smaller than an
//! absolute floor (sub-microsecond subsystems) are never flagged: their relative
//! swings are rounding.

use std::collections::BTreeMap;
use std::fmt;

use crate::history::RecordedRun;
use crate::summary::RunSummary;
use hightick_report::{Align, TextTable};

/// Noise band used when no repeated runs were recorded: 10%.
pub const DEFAULT_NOISE: f64 = 0.10;
/// Default regression threshold: 10% slower.
pub const DEFAULT_THRESHOLD: f64 = 0.10;
/// Changes under this many microseconds are never flagged.
pub const DEFAULT_FLOOR_US: f64 = 0.5;

/// Relative run-to-run noise per `(target, stat)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Noise {
    measured: BTreeMap<(String, Stat), f64>,
    /// Band for targets without a measurement.
    pub default: f64,
    /// Groups of repeated runs the measurement came from.
    pub groups: usize,
}

/// Which statistic of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stat {
    /// The mean time per tick.
    Mean,
    /// The 99th percentile.
    P99,
}

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stat::Mean => "mean",
            Stat::P99 => "p99",
        })
    }
}

/// Every `(target, stat, microseconds)` of a run: the whole tick, then subsystems.
fn values(run: &RunSummary) -> Vec<(String, Stat, f64)> {
    let mut v = vec![
        ("tick".to_string(), Stat::Mean, run.tick.mean_us),
        ("tick".to_string(), Stat::P99, run.tick.p99_us),
    ];
    for s in &run.subsystems {
        v.push((s.name.clone(), Stat::Mean, s.mean_us));
        v.push((s.name.clone(), Stat::P99, s.p99_us));
    }
    v
}

impl Noise {
    /// No measurement: every target gets the `default` band.
    pub fn fixed(default: f64) -> Self {
        Noise {
            measured: BTreeMap::new(),
            default,
            groups: 0,
        }
    }

    /// Measured from `runs`: for each group of repeats (see
    /// [`RecordedRun::repeat_key`]) the largest `(max - min) / min` per target and
    /// statistic, ignoring values under `floor_us`; the largest over groups wins.
    pub fn measured(runs: &[RecordedRun], default: f64, floor_us: f64) -> Self {
        let mut groups: BTreeMap<_, Vec<&RunSummary>> = BTreeMap::new();
        for run in runs {
            if let Some(key) = run.repeat_key() {
                groups.entry(key).or_default().push(&run.summary);
            }
        }
        let mut noise = Noise::fixed(default);
        for members in groups.values().filter(|m| m.len() >= 2) {
            noise.groups += 1;
            let mut span: BTreeMap<(String, Stat), (f64, f64)> = BTreeMap::new();
            for run in members {
                for (target, stat, v) in values(run) {
                    let e = span.entry((target, stat)).or_insert((v, v));
                    e.0 = e.0.min(v);
                    e.1 = e.1.max(v);
                }
            }
            for (key, (low, high)) in span {
                if low >= floor_us && low.is_finite() && high.is_finite() {
                    let rel = (high - low) / low;
                    let e = noise.measured.entry(key).or_insert(0.0);
                    *e = e.max(rel);
                }
            }
        }
        noise
    }

    /// The band of one target's statistic, and whether it was measured.
    pub fn of(&self, target: &str, stat: Stat) -> (f64, bool) {
        match self.measured.get(&(target.to_string(), stat)) {
            Some(v) => (*v, true),
            None => (self.default, false),
        }
    }
}

/// How a change came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeVerdict {
    /// Within noise (or under the absolute floor).
    Same,
    /// Faster beyond noise.
    Faster,
    /// Slower beyond noise, within the threshold.
    Slower,
    /// Slower beyond noise and the threshold.
    Regression,
}

impl fmt::Display for ChangeVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChangeVerdict::Same => "within noise",
            ChangeVerdict::Faster => "faster",
            ChangeVerdict::Slower => "slower",
            ChangeVerdict::Regression => "REGRESSION",
        })
    }
}

/// One target's statistic in A and B.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `tick` or a subsystem.
    pub target: String,
    /// Mean or p99.
    pub stat: Stat,
    /// A's value, microseconds.
    pub a_us: f64,
    /// B's value, microseconds.
    pub b_us: f64,
    /// `(b - a) / a` (infinite when A is zero and B is not).
    pub change: f64,
    /// The noise band applied.
    pub noise: f64,
    /// Whether that band was measured from repeated runs.
    pub noise_measured: bool,
    /// The verdict.
    pub verdict: ChangeVerdict,
}

/// How strict a comparison is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    /// A slowdown beyond this (relative, 0.10 = 10%) and beyond noise is a regression.
    pub threshold: f64,
    /// Changes smaller than this many microseconds are within noise.
    pub floor_us: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            threshold: DEFAULT_THRESHOLD,
            floor_us: DEFAULT_FLOOR_US,
        }
    }
}

/// A against B.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What A is, e.g. `#3 (0123abcd, release)`.
    pub a_label: String,
    /// What B is.
    pub b_label: String,
    /// Every statistic of every target both runs have.
    pub changes: Vec<Change>,
    /// Caveats: different loads, profiles or hosts; where noise came from.
    pub notes: Vec<String>,
    /// The options used.
    pub options: CompareOptions,
}

/// Judges one change.
fn verdict(a: f64, b: f64, noise: f64, options: &CompareOptions) -> (f64, ChangeVerdict) {
    let change = if a > 0.0 {
        (b - a) / a
    } else if b > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    let v = if (b - a).abs() < options.floor_us || change.abs() <= noise {
        ChangeVerdict::Same
    } else if change < 0.0 {
        ChangeVerdict::Faster
    } else if change > options.threshold {
        ChangeVerdict::Regression
    } else {
        ChangeVerdict::Slower
    };
    (change, v)
}

/// Compares candidate `b` against baseline `a`.
pub fn compare(
    a: (&str, &RunSummary),
    b: (&str, &RunSummary),
    noise: &Noise,
    options: CompareOptions,
) -> Comparison {
    let (a_label, a_run) = a;
    let (b_label, b_run) = b;
    let b_values = values(b_run);
    let changes = values(a_run)
        .into_iter()
        .filter_map(|(target, stat, a_us)| {
            let (_, _, b_us) = b_values
                .iter()
                .find(|(t, s, _)| *t == target && *s == stat)?;
            let (band, measured) = noise.of(&target, stat);
            let (change, verdict) = verdict(a_us, *b_us, band, &options);
            Some(Change {
                target,
                stat,
                a_us,
                b_us: *b_us,
                change,
                noise: band,
                noise_measured: measured,
                verdict,
            })
        })
        .collect();
    let mut notes = Vec::new();
    let load =
        |r: &RunSummary| format!("{} at {} Hz, {} matches", r.mode, r.tick_rate_hz, r.matches);
    if load(a_run) != load(b_run) {
        notes.push(format!(
            "different loads: A {} / B {}; times are not like for like",
            load(a_run),
            load(b_run)
        ));
    }
    if a_run.host.cpu_model != b_run.host.cpu_model || a_run.host.cores != b_run.host.cores {
        notes.push("different hosts: A and B ran on different CPUs".to_string());
    }
    if a_run.host.git_commit.is_some() && a_run.host.git_commit == b_run.host.git_commit {
        notes.push("same commit: any difference is run-to-run noise".to_string());
    }
    notes.push(if noise.groups > 0 {
        format!(
            "noise measured from {} group{} of repeated runs; {:.0}% where unmeasured",
            noise.groups,
            if noise.groups == 1 { "" } else { "s" },
            noise.default * 100.0
        )
    } else {
        format!(
            "no repeated runs recorded: a {:.0}% noise band is assumed",
            noise.default * 100.0
        )
    });
    Comparison {
        a_label: a_label.to_string(),
        b_label: b_label.to_string(),
        changes,
        notes,
        options,
    }
}

fn percent(v: f64) -> String {
    if v.is_finite() {
        format!("{:+.1}%", v * 100.0)
    } else {
        "new".to_string()
    }
}

impl Comparison {
    /// The regressions (slower beyond noise and threshold).
    pub fn regressions(&self) -> Vec<&Change> {
        self.changes
            .iter()
            .filter(|c| c.verdict == ChangeVerdict::Regression)
            .collect()
    }

    /// The comparison as a table with notes and a one-line verdict.
    pub fn render_table(&self) -> String {
        let mut t = TextTable::new(&[
            ("target", Align::Left),
            ("stat", Align::Left),
            ("A us", Align::Right),
            ("B us", Align::Right),
            ("change", Align::Right),
            ("noise", Align::Right),
            ("verdict", Align::Left),
        ]);
        for c in &self.changes {
            t.row([
                c.target.clone(),
                c.stat.to_string(),
                format!("{:.2}", c.a_us),
                format!("{:.2}", c.b_us),
                percent(c.change),
                format!(
                    "{:.1}%{}",
                    c.noise * 100.0,
                    if c.noise_measured { "" } else { " (default)" }
                ),
                c.verdict.to_string(),
            ]);
        }
        let mut out = format!("A: {}\nB: {}\n\n", self.a_label, self.b_label);
        out.push_str(&t.render());
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        let regressions = self.regressions();
        if regressions.is_empty() {
            out.push_str(&format!(
                "no regression beyond {:.0}%\n",
                self.options.threshold * 100.0
            ));
        } else {
            let list: Vec<String> = regressions
                .iter()
                .map(|c| format!("{} {} {}", c.target, c.stat, percent(c.change)))
                .collect();
            out.push_str(&format!(
                "{} regression{} beyond {:.0}%: {}\n",
                regressions.len(),
                if regressions.len() == 1 { "" } else { "s" },
                self.options.threshold * 100.0,
                list.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{HostFacts, TargetStats, TickRow};

    fn run(fow_mean: f64, replication_mean: f64) -> RunSummary {
        let row = |name: &str, mean: f64| TargetStats {
            name: name.into(),
            mean_us: mean,
            p50_us: mean,
            p99_us: mean * 3.0,
            ..TargetStats::default()
        };
        RunSummary {
            mode: "5v5".into(),
            tick_rate_hz: 128,
            matches: 8,
            tick: TickRow {
                mean_us: 20.0 + fow_mean + replication_mean,
                p99_us: 60.0 + fow_mean + replication_mean,
                ..TickRow::default()
            },
            subsystems: vec![
                row("fow", fow_mean),
                row("replication", replication_mean),
                row("character", 0.02),
            ],
            ..RunSummary::default()
        }
    }

    fn recorded(id: i64, commit: &str, summary: RunSummary) -> RecordedRun {
        RecordedRun {
            id,
            recorded_at_ms: id,
            kind: "sweep".into(),
            git_commit: Some(commit.into()),
            build_profile: "release".into(),
            summary,
            sweep: None,
        }
    }

    #[test]
    fn a_subsystem_thirty_percent_slower_is_a_regression() {
        let a = run(10.0, 20.0);
        let b = run(13.0, 20.0);
        let c = compare(
            ("A", &a),
            ("B", &b),
            &Noise::fixed(DEFAULT_NOISE),
            CompareOptions::default(),
        );
        let fow = c
            .changes
            .iter()
            .find(|ch| ch.target == "fow" && ch.stat == Stat::Mean)
            .unwrap();
        assert!((fow.change - 0.30).abs() < 1e-9);
        assert_eq!(fow.verdict, ChangeVerdict::Regression);
        let replication = c
            .changes
            .iter()
            .find(|ch| ch.target == "replication" && ch.stat == Stat::Mean)
            .unwrap();
        assert_eq!(replication.verdict, ChangeVerdict::Same);
        let regressed: Vec<String> = c
            .regressions()
            .iter()
            .map(|ch| format!("{} {}", ch.target, ch.stat))
            .collect();
        assert_eq!(regressed, vec!["fow mean", "fow p99"]);
        let text = c.render_table();
        assert!(
            text.contains("2 regressions beyond 10%: fow mean +30.0%, fow p99 +30.0%"),
            "{text}"
        );
        assert!(text.contains("no repeated runs recorded"));
    }

    #[test]
    fn the_same_results_show_no_change_and_faster_is_not_a_regression() {
        let a = run(10.0, 20.0);
        let c = compare(
            ("A", &a),
            ("A again", &a),
            &Noise::fixed(0.0),
            CompareOptions::default(),
        );
        assert!(c.changes.iter().all(|ch| ch.verdict == ChangeVerdict::Same));
        assert!(c.render_table().contains("no regression beyond 10%"));
        let faster = run(7.0, 20.0);
        let c = compare(
            ("A", &a),
            ("B", &faster),
            &Noise::fixed(0.1),
            CompareOptions::default(),
        );
        assert!(c.regressions().is_empty());
        assert!(
            c.changes
                .iter()
                .any(|ch| ch.verdict == ChangeVerdict::Faster)
        );
    }

    #[test]
    fn a_slowdown_within_the_threshold_is_flagged_but_not_a_regression() {
        let a = run(10.0, 20.0);
        let b = run(10.0, 21.6);
        let options = CompareOptions {
            threshold: 0.10,
            floor_us: 0.5,
        };
        let c = compare(("A", &a), ("B", &b), &Noise::fixed(0.05), options);
        let r = c
            .changes
            .iter()
            .find(|ch| ch.target == "replication" && ch.stat == Stat::Mean)
            .unwrap();
        assert_eq!(r.verdict, ChangeVerdict::Slower);
        assert!(c.regressions().is_empty());
    }

    #[test]
    fn tiny_subsystems_never_flag() {
        let a = run(10.0, 20.0);
        let mut b = run(10.0, 20.0);
        b.subsystems[2].mean_us = 0.2; // 10x a 0.02 us subsystem
        let c = compare(
            ("A", &a),
            ("B", &b),
            &Noise::fixed(0.0),
            CompareOptions::default(),
        );
        assert!(c.regressions().iter().all(|ch| ch.target != "character"));
    }

    #[test]
    fn noise_from_repeated_runs_covers_their_spread() {
        let runs = [
            recorded(1, "aaaa", run(10.0, 20.0)),
            recorded(2, "aaaa", run(12.0, 20.0)),
            recorded(3, "aaaa", run(11.0, 21.0)),
            recorded(4, "bbbb", run(30.0, 20.0)),
        ];
        let noise = Noise::measured(&runs, DEFAULT_NOISE, DEFAULT_FLOOR_US);
        assert_eq!(noise.groups, 1, "bbbb has a single run");
        let (fow, measured) = noise.of("fow", Stat::Mean);
        assert!(measured);
        assert!((fow - 0.2).abs() < 1e-9, "{fow}");
        assert!((noise.of("replication", Stat::Mean).0 - 0.05).abs() < 1e-9);
        assert_eq!(
            noise.of("character", Stat::Mean),
            (DEFAULT_NOISE, false),
            "under the floor"
        );
        // Two runs of the same commit: their difference is within the noise it measures.
        let c = compare(
            ("#1", &runs[0].summary),
            ("#2", &runs[1].summary),
            &noise,
            CompareOptions::default(),
        );
        assert!(c.regressions().is_empty(), "{}", c.render_table());
        // A different commit 3x slower in fow is a regression still.
        let c = compare(
            ("#1", &runs[0].summary),
            ("#4", &runs[3].summary),
            &noise,
            CompareOptions::default(),
        );
        assert!(c.regressions().iter().any(|ch| ch.target == "fow"));
    }

    #[test]
    fn notes_name_different_loads_and_same_commits() {
        let mut a = run(10.0, 20.0);
        let mut b = run(10.0, 20.0);
        b.matches = 4;
        a.host = HostFacts {
            git_commit: Some("c".into()),
            ..HostFacts::default()
        };
        b.host = a.host.clone();
        let c = compare(
            ("A", &a),
            ("B", &b),
            &Noise::fixed(0.1),
            CompareOptions::default(),
        );
        assert!(c.notes.iter().any(|n| n.starts_with("different loads")));
        assert!(c.notes.iter().any(|n| n.starts_with("same commit")));
    }
}
