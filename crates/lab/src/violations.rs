//! Budget violations of a run, listed plainly so every report (table, HTML, sweep)
//! shows what broke its budget and by how much.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::summary::RunSummary;

/// One limit a run broke.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetViolation {
    /// `tick`, `match N` or a subsystem name.
    pub target: String,
    /// `mean` or `p99`.
    pub stat: String,
    /// What was measured, microseconds.
    pub value_us: f64,
    /// The limit, microseconds.
    pub budget_us: f64,
    /// Budget windows (of the budgets file's `window_ticks`) in which the server saw
    /// the target break a limit; 0 when the server did not judge it.
    pub windows: u64,
}

impl fmt::Display for BudgetViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {:.2} us > budget {:.2} us ({:+.1}%)",
            self.target,
            self.stat,
            self.value_us,
            self.budget_us,
            (self.value_us / self.budget_us - 1.0) * 100.0
        )?;
        if self.windows > 0 {
            write!(f, ", {} budget windows broken", self.windows)?;
        }
        Ok(())
    }
}

impl RunSummary {
    /// Every limit the run broke: subsystem means and p99s, the whole tick's p99, and
    /// each match whose own p99 tick time is over the tick's budget.
    pub fn violations(&self) -> Vec<BudgetViolation> {
        let mut found = Vec::new();
        let mut over = |target: String, stat: &str, value: f64, budget: Option<f64>, windows| {
            if let Some(b) = budget.filter(|b| value > *b) {
                found.push(BudgetViolation {
                    target,
                    stat: stat.to_string(),
                    value_us: value,
                    budget_us: b,
                    windows,
                });
            }
        };
        for s in &self.subsystems {
            over(
                s.name.clone(),
                "mean",
                s.mean_us,
                s.budget_mean_us,
                s.violations,
            );
            over(s.name.clone(), "p99", s.p99_us, s.budget_p99_us, 0);
        }
        let t = &self.tick;
        over("tick".into(), "p99", t.p99_us, t.budget_p99_us, 0);
        for (i, p99) in self.match_tick_p99_us.iter().enumerate() {
            over(format!("match {}", i + 1), "p99", *p99, t.budget_p99_us, 0);
        }
        found
    }

    /// The violations as text lines under a heading (`budget violations: none` when
    /// there are none).
    pub fn render_violations(&self) -> String {
        let found = self.violations();
        if found.is_empty() {
            return "budget violations: none\n".to_string();
        }
        let mut out = format!("budget violations ({}):\n", found.len());
        for v in found {
            out.push_str(&format!("  {v}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::summary::{RunSummary, TargetStats, TickRow};

    #[test]
    fn violations_list_every_broken_limit() {
        let run = RunSummary {
            tick: TickRow {
                p99_us: 120.0,
                budget_p99_us: Some(100.0),
                ..TickRow::default()
            },
            subsystems: vec![
                TargetStats {
                    name: "fow".into(),
                    mean_us: 6.0,
                    p99_us: 10.0,
                    budget_mean_us: Some(5.0),
                    budget_p99_us: Some(15.0),
                    violations: 3,
                    ..TargetStats::default()
                },
                TargetStats {
                    name: "movement".into(),
                    mean_us: 1.0,
                    p99_us: 2.0,
                    ..TargetStats::default()
                },
            ],
            match_tick_p99_us: vec![90.0, 130.0],
            ..RunSummary::default()
        };
        let v = run.violations();
        let names: Vec<(&str, &str)> = v
            .iter()
            .map(|v| (v.target.as_str(), v.stat.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![("fow", "mean"), ("tick", "p99"), ("match 2", "p99")]
        );
        assert_eq!(v[0].windows, 3);
        let text = run.render_violations();
        assert!(text.starts_with("budget violations (3):"), "{text}");
        assert!(
            text.contains("fow mean 6.00 us > budget 5.00 us (+20.0%), 3 budget windows broken")
        );
        assert_eq!(
            RunSummary::default().render_violations(),
            "budget violations: none\n"
        );
    }
}
