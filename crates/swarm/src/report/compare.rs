//! `hightick swarm compare A.json B.json`: per-step differences between two
//! runs (B against A), matched by step name.

use std::fmt::Write as _;

use hightick_report::{Align, TextTable};

use crate::result::{RunResult, StepSummary};

/// One metric of one step in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The step.
    pub step: String,
    /// The metric.
    pub metric: &'static str,
    /// In run A.
    pub a: f64,
    /// In run B.
    pub b: f64,
}

impl Difference {
    /// B relative to A, in percent (`None` when A is 0).
    pub fn change_percent(&self) -> Option<f64> {
        (self.a != 0.0).then(|| (self.b / self.a - 1.0) * 100.0)
    }
}

/// How a metric is read from a step summary.
type Read = fn(&StepSummary) -> f64;

const METRICS: [(&str, Read); 6] = [
    ("req/s", |s| s.rps),
    ("err %", |s| s.error_rate * 100.0),
    ("p50 ms", |s| s.p50_us as f64 / 1e3),
    ("p90 ms", |s| s.p90_us as f64 / 1e3),
    ("p99 ms", |s| s.p99_us as f64 / 1e3),
    ("max ms", |s| s.max_us as f64 / 1e3),
];

/// Every metric of every step present in both runs (and `all`).
pub fn differences(a: &RunResult, b: &RunResult) -> Vec<Difference> {
    let mut out = Vec::new();
    let pairs = a
        .steps
        .iter()
        .filter_map(|sa| {
            b.steps
                .iter()
                .find(|sb| sb.name == sa.name)
                .map(|sb| (sa, sb))
        })
        .chain(std::iter::once((&a.total, &b.total)));
    for (sa, sb) in pairs {
        for (metric, f) in METRICS {
            out.push(Difference {
                step: sa.name.clone(),
                metric,
                a: f(sa),
                b: f(sb),
            });
        }
    }
    out
}

/// The comparison as a table, plus the steps only one run has.
pub fn render_comparison(a: &RunResult, b: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "A: {} ({} users, {:.1} s)   B: {} ({} users, {:.1} s)",
        a.scenario, a.users, a.elapsed_s, b.scenario, b.users, b.elapsed_s
    );
    let mut table = TextTable::new(&[
        ("step", Align::Left),
        ("metric", Align::Left),
        ("A", Align::Right),
        ("B", Align::Right),
        ("change", Align::Right),
    ]);
    for d in differences(a, b) {
        let change = d
            .change_percent()
            .map_or_else(|| "-".to_owned(), |c| format!("{c:+.1} %"));
        table.row([
            d.step,
            d.metric.to_owned(),
            format!("{:.3}", d.a),
            format!("{:.3}", d.b),
            change,
        ]);
    }
    out.push_str(&table.render());
    for s in a
        .steps
        .iter()
        .filter(|s| !b.steps.iter().any(|x| x.name == s.name))
    {
        let _ = writeln!(out, "only in A: {}", s.name);
    }
    for s in b
        .steps
        .iter()
        .filter(|s| !a.steps.iter().any(|x| x.name == s.name))
    {
        let _ = writeln!(out, "only in B: {}", s.name);
    }
    out
}
