//! A sweep's result as FIGURE lines, a human table and JSON.

use hightick_telemetry::bench::figure_line;

use crate::error::LabError;
use crate::summary::{RunSummary, figure_token};
use crate::sweep::{SweepReport, SweepStep, judge_step, matches_text};
use hightick_report::{Align, TextTable};

fn yes_no(ok: bool) -> &'static str {
    if ok { "ok" } else { "NO" }
}

impl SweepReport {
    /// `<mode>_<rate>hz` for figure names.
    fn figure_suffix(&self) -> String {
        format!("{}_{}hz", figure_token(&self.mode), self.tick_rate_hz)
    }

    /// The headline `FIGURE` lines: games per core at the largest load within budget
    /// with CPU headroom, that load, games per core by CPU alone at the heaviest step
    /// (the demo's measure), and the highest plaza rate within budget when probed.
    pub fn figures(&self) -> Vec<String> {
        let suffix = self.figure_suffix();
        let mut lines = vec![
            figure_line(&format!("lab_gpc_{suffix}"), self.gpc, "games/core"),
            figure_line(
                &format!("lab_max_matches_{suffix}"),
                f64::from(self.best_matches.unwrap_or(0)),
                "matches",
            ),
        ];
        if let Some(heaviest) = self.steps.last() {
            lines.push(figure_line(
                &format!("lab_cpu_gpc_{suffix}"),
                heaviest.summary.gpc,
                "games/core",
            ));
        }
        if !self.plaza.is_empty() {
            lines.push(figure_line(
                "lab_plaza100_max_hz",
                f64::from(self.plaza_max_hz.unwrap_or(0)),
                "Hz",
            ));
        }
        lines
    }

    /// The step a single summary stands for (recording, history): the largest that
    /// passed, else the heaviest run.
    pub fn representative(&self) -> Option<&RunSummary> {
        self.best_matches
            .and_then(|m| self.steps.iter().find(|s| s.matches == m))
            .or(self.steps.last())
            .map(|s| &s.summary)
    }

    /// The step with `matches` matches, if run.
    pub fn step(&self, matches: u32) -> Option<&RunSummary> {
        self.steps
            .iter()
            .find(|s| s.matches == matches)
            .map(|s| &s.summary)
    }

    /// One line saying what was swept.
    pub fn headline(&self) -> String {
        format!(
            "{}: {} at {} Hz, {} players per match, {:.1} s measured per step after {:.1} s warm-up, \
             {} server instance{} ({}), {} CPUs",
            self.title,
            self.mode,
            self.tick_rate_hz,
            self.players_per_match,
            self.step_duration_s,
            self.warmup_s,
            self.instances,
            if self.instances == 1 { "" } else { "s" },
            if self.bind {
                "bound to CPU sets"
            } else {
                "unbound"
            },
            self.cores_available
        )
    }

    /// The human table: one row per step, per-subsystem means and p99s by step, every
    /// step's budget violations, the plaza probe, and the answer.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.headline());
        out.push('\n');
        out.push_str(&crate::summary::host_line(&self.host));
        out.push('\n');
        out.push_str(&format!("budgets: {}\n\n", self.budget_file));
        out.push_str(&self.step_table().render());
        out.push('\n');
        for (title, pick) in [
            ("mean us", (|s| s.mean_us) as fn(&crate::TargetStats) -> f64),
            ("p99 us", |s| s.p99_us),
        ] {
            out.push_str(&self.subsystem_table(title, pick).render());
            out.push('\n');
        }
        for step in &self.steps {
            let violations = step.summary.render_violations();
            out.push_str(&format!("{}: {violations}", matches_text(step.matches)));
            for (k, broken) in step.broken_attempts.iter().enumerate() {
                let again = judge_step(broken.clone(), self.cores_available);
                out.push_str(&format!(
                    "  run {} of this step broke ({}); it was run again\n",
                    k + 1,
                    self.failure(&again)
                ));
            }
        }
        if !self.plaza.is_empty() {
            out.push('\n');
            out.push_str(&self.plaza_table().render());
            for p in &self.plaza {
                out.push_str(&format!("{}: {}", p.mode, p.summary.render_violations()));
            }
        }
        out.push('\n');
        out.push_str(&self.answer());
        out.push('\n');
        out
    }

    /// The conclusion in words.
    pub fn answer(&self) -> String {
        let mut text = match self.best_matches {
            Some(m) => format!(
                "largest load within budget with 10% CPU headroom: {}, {:.1} games per core",
                matches_text(m),
                self.gpc
            ),
            None => {
                let mut text = "no step stayed within budget with 10% CPU headroom".to_string();
                if let Some(first) = self.steps.first() {
                    text.push_str(&format!(
                        " (already at {}: {})",
                        matches_text(first.matches),
                        self.failure(first)
                    ));
                }
                text
            }
        };
        if !self.plaza.is_empty() {
            text.push_str(&match self.plaza_max_hz {
                Some(hz) => format!("; plaza100 keeps its budget at {hz} Hz"),
                None => "; plaza100 kept its budget at none of the rates tried".to_string(),
            });
        }
        text
    }

    /// Why `step` failed, in words: its worst match p99 against the tick budget,
    /// its server CPU against the headroom limit, or both.
    fn failure(&self, step: &SweepStep) -> String {
        let mut reasons = Vec::new();
        if !step.within_budget {
            let s = &step.summary;
            let worst = s
                .match_tick_p99_us
                .iter()
                .copied()
                .fold(s.tick.p99_us, f64::max);
            reasons.push(match s.tick.budget_p99_us {
                Some(b) => format!("worst match tick p99 {worst:.0} us > budget {b:.0} us"),
                None => format!("worst match tick p99 {worst:.0} us over budget"),
            });
        }
        if !step.cpu_headroom_ok {
            let limit = f64::from(self.cores_available) * crate::summary::GPC_HEADROOM;
            reasons.push(format!(
                "server CPU {:.2} cores > limit {limit:.2}",
                step.summary.server_cpu_cores
            ));
        }
        if reasons.is_empty() {
            "passed".to_string()
        } else {
            reasons.join(", ")
        }
    }

    fn step_table(&self) -> TextTable {
        let mut t = TextTable::new(&[
            ("matches", Align::Right),
            ("tick mean us", Align::Right),
            ("tick p99 us", Align::Right),
            ("worst match p99", Align::Right),
            ("p99 budget", Align::Right),
            ("late ticks", Align::Right),
            ("server CPU", Align::Right),
            ("CPU limit", Align::Right),
            ("B/s per client", Align::Right),
            ("GPC", Align::Right),
            ("budget", Align::Left),
            ("CPU", Align::Left),
        ]);
        let cpu_limit = f64::from(self.cores_available) * crate::summary::GPC_HEADROOM;
        for step in &self.steps {
            let s = &step.summary;
            let worst = s.match_tick_p99_us.iter().copied().fold(0.0, f64::max);
            t.row([
                step.matches.to_string(),
                format!("{:.1}", s.tick.mean_us),
                format!("{:.1}", s.tick.p99_us),
                format!("{worst:.1}"),
                s.tick
                    .budget_p99_us
                    .map_or_else(|| "-".to_string(), |b| format!("{b:.1}")),
                s.tick.late_ticks.to_string(),
                format!("{:.3}", s.server_cpu_cores),
                format!("{cpu_limit:.2}"),
                format!("{:.0}", s.network.client_bytes_out_per_s),
                format!("{:.1}", s.gpc),
                yes_no(step.within_budget).to_string(),
                yes_no(step.cpu_headroom_ok).to_string(),
            ]);
        }
        t
    }

    fn subsystem_table(&self, title: &str, pick: fn(&crate::TargetStats) -> f64) -> TextTable {
        let headers: Vec<String> = std::iter::once(format!("{title} by matches"))
            .chain(self.steps.iter().map(|s| s.matches.to_string()))
            .collect();
        let columns: Vec<(&str, Align)> = headers
            .iter()
            .enumerate()
            .map(|(i, h)| (h.as_str(), if i == 0 { Align::Left } else { Align::Right }))
            .collect();
        let mut t = TextTable::new(&columns);
        let names: Vec<&str> = self
            .steps
            .first()
            .map(|s| {
                s.summary
                    .subsystems
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect()
            })
            .unwrap_or_default();
        for name in names {
            let mut row = vec![name.to_string()];
            for step in &self.steps {
                let cell = step
                    .summary
                    .subsystems
                    .iter()
                    .find(|r| r.name == name)
                    .map_or_else(String::new, |r| {
                        let over = if title.starts_with("mean") {
                            r.mean_over_budget()
                        } else {
                            r.p99_over_budget()
                        };
                        format!("{:.1}{}", pick(r), if over { "*" } else { " " })
                    });
                row.push(cell);
            }
            t.row(row);
        }
        t
    }

    fn plaza_table(&self) -> TextTable {
        let mut t = TextTable::new(&[
            ("plaza100 rate", Align::Right),
            ("mode", Align::Left),
            ("tick mean us", Align::Right),
            ("tick p99 us", Align::Right),
            ("p99 budget", Align::Right),
            ("server CPU", Align::Right),
            ("budget", Align::Left),
        ]);
        for p in &self.plaza {
            let s = &p.summary;
            t.row([
                format!("{} Hz", p.tick_rate_hz),
                p.mode.clone(),
                format!("{:.1}", s.tick.mean_us),
                format!("{:.1}", s.tick.p99_us),
                s.tick
                    .budget_p99_us
                    .map_or_else(|| "-".to_string(), |b| format!("{b:.1}")),
                format!("{:.3}", s.server_cpu_cores),
                yes_no(p.within_budget).to_string(),
            ]);
        }
        t
    }

    /// The report as pretty-printed JSON (fails, naming the field, on NaN or infinity).
    pub fn to_json(&self) -> Result<String, LabError> {
        let runs = self
            .steps
            .iter()
            .map(|s| (format!("steps[{}]", s.matches), &s.summary))
            .chain(
                self.plaza
                    .iter()
                    .map(|p| (format!("plaza[{}]", p.tick_rate_hz), &p.summary)),
            );
        for (at, summary) in runs {
            if let Some((field, value)) = summary.first_non_finite() {
                return Err(LabError::NonFinite {
                    field: format!("{at}.{field}"),
                    value,
                });
            }
        }
        if !self.gpc.is_finite() || !self.step_duration_s.is_finite() || !self.warmup_s.is_finite()
        {
            return Err(LabError::NonFinite {
                field: "gpc, step_duration_s or warmup_s".into(),
                value: self.gpc,
            });
        }
        serde_json::to_string_pretty(self).map_err(LabError::EncodeJson)
    }

    /// Reads a report written by [`SweepReport::to_json`].
    pub fn from_json(text: &str) -> Result<Self, LabError> {
        serde_json::from_str(text).map_err(|e| LabError::decode(&e))
    }
}
