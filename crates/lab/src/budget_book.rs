//! The budgets every lab report is judged against: the budgets file (per mode, per
//! subsystem, mean and p99 in microseconds), by default the one shipped with hightick
//! (`hightick_telemetry::DEFAULT_BUDGETS_TOML`, modes `5v5` and `plaza100`).
//!
//! A mode the file does not name falls back to its base preset: `plaza100_30hz` is
//! judged by `plaza100`'s budgets (the same crowd at a lower rate must do no worse).

use std::path::{Path, PathBuf};

use hightick_telemetry::{BudgetTarget, Budgets, ModeBudget, Subsystem};

use crate::error::LabError;
use crate::summary::RunSummary;

/// A budgets file, read once, applied to every run of a report.
#[derive(Debug, Clone)]
pub struct BudgetBook {
    budgets: Budgets,
    path: Option<PathBuf>,
}

fn ns_to_us(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

/// `plaza100_30hz` -> `plaza100`: the preset name without a trailing `_<digits>hz`.
fn base_mode(mode: &str) -> Option<&str> {
    let (base, rate) = mode.rsplit_once('_')?;
    let digits = rate.strip_suffix("hz")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(base)
}

impl BudgetBook {
    /// The budgets shipped with hightick.
    pub fn shipped() -> Self {
        BudgetBook {
            budgets: Budgets::defaults(),
            path: None,
        }
    }

    /// Reads a budgets file; a bad one is an error naming the file, line and field.
    pub fn load(path: &Path) -> Result<Self, LabError> {
        Ok(BudgetBook {
            budgets: Budgets::load(path)?,
            path: Some(path.to_path_buf()),
        })
    }

    /// Parses budgets text; `file` names it in errors and reports.
    pub fn parse(text: &str, file: &str) -> Result<Self, LabError> {
        Ok(BudgetBook {
            budgets: Budgets::parse(text, file)?,
            path: None,
        })
    }

    /// The file the budgets came from, to hand to a server (`None`: the shipped ones,
    /// which a server uses when given no file).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// How the file is named in reports.
    pub fn file(&self) -> &str {
        self.budgets.file()
    }

    /// The budgets for `mode` and the mode name they are filed under: the mode itself,
    /// else its base preset; `None` when the file has neither.
    pub fn for_mode<'a>(&'a self, mode: &'a str) -> Option<(&'a str, &'a ModeBudget)> {
        if let Ok(b) = self.budgets.mode(mode) {
            return Some((mode, b));
        }
        let base = base_mode(mode)?;
        self.budgets.mode(base).ok().map(|b| (base, b))
    }

    /// Writes the budgets of the run's mode into its tick and subsystem rows (keeping
    /// any a row has when the file has none for it) and decides `within_budget`: every
    /// match's p99 tick time (or, without per-match figures, the run's) at or under
    /// the tick's p99 budget.
    pub fn apply(&self, run: &mut RunSummary) {
        if let Some((_, budget)) = self.for_mode(&run.mode) {
            let us = |target| {
                let b = budget.get(target);
                (b.mean_ns.map(ns_to_us), b.p99_ns.map(ns_to_us))
            };
            let (_, tick_p99) = us(BudgetTarget::Tick);
            run.tick.budget_p99_us = tick_p99.or(run.tick.budget_p99_us);
            for row in &mut run.subsystems {
                if let Some(s) = Subsystem::ALL.into_iter().find(|s| s.as_str() == row.name) {
                    let (mean, p99) = us(BudgetTarget::Subsystem(s));
                    row.budget_mean_us = mean.or(row.budget_mean_us);
                    row.budget_p99_us = p99.or(row.budget_p99_us);
                }
            }
        }
        run.within_budget = match run.tick.budget_p99_us {
            None => true,
            Some(limit) if run.match_tick_p99_us.is_empty() => run.tick.p99_us <= limit,
            Some(limit) => run.match_tick_p99_us.iter().all(|&p99| p99 <= limit),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{TargetStats, TickRow};

    #[test]
    fn modes_fall_back_to_their_base_preset() {
        assert_eq!(base_mode("plaza100_30hz"), Some("plaza100"));
        assert_eq!(base_mode("plaza100_hz"), None);
        assert_eq!(base_mode("5v5"), None);
        let shipped = BudgetBook::shipped();
        assert_eq!(shipped.for_mode("5v5").unwrap().0, "5v5");
        assert_eq!(
            shipped.for_mode("plaza100_30hz").unwrap().0,
            "plaza100_30hz"
        );
        assert!(shipped.for_mode("duel").is_none());
        let only_base = BudgetBook::parse("[plaza100.tick]\np99_us = 3000.0\n", "b.toml").unwrap();
        assert_eq!(only_base.for_mode("plaza100_30hz").unwrap().0, "plaza100");
    }

    #[test]
    fn applying_fills_budgets_and_judges_every_match() {
        let book = BudgetBook::parse(
            "[5v5.tick]\np99_us = 100.0\n[5v5.fow]\nmean_us = 5.0\np99_us = 15.0\n",
            "test.toml",
        )
        .unwrap();
        let mut run = RunSummary {
            mode: "5v5".into(),
            tick: TickRow {
                p99_us: 90.0,
                ..TickRow::default()
            },
            subsystems: vec![TargetStats {
                name: "fow".into(),
                ..TargetStats::default()
            }],
            match_tick_p99_us: vec![80.0, 99.0],
            ..RunSummary::default()
        };
        book.apply(&mut run);
        assert_eq!(run.tick.budget_p99_us, Some(100.0));
        assert_eq!(run.subsystems[0].budget_mean_us, Some(5.0));
        assert_eq!(run.subsystems[0].budget_p99_us, Some(15.0));
        assert!(run.within_budget);
        // One match over the limit breaks the run even when the merged p99 is under.
        run.match_tick_p99_us.push(101.0);
        book.apply(&mut run);
        assert!(!run.within_budget);
        // No per-match figures: the run's own p99 decides.
        run.match_tick_p99_us.clear();
        book.apply(&mut run);
        assert!(run.within_budget);
        run.tick.p99_us = 150.0;
        book.apply(&mut run);
        assert!(!run.within_budget);
    }

    #[test]
    fn a_bad_file_names_the_field() {
        let err = BudgetBook::parse("[5v5.tick]\np99_us = \"fast\"\n", "b.toml").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("b.toml"), "{text}");
    }
}
