//! Frame-time budgets per game mode, loaded from a TOML file.
//!
//! The file has one table per mode; under it, `window_ticks` and one table per
//! budget target (`tick` for the whole frame, or a subsystem name) with
//! `mean_us` and `p99_us`, both optional:
//!
//! ```toml
//! [5v5]
//! window_ticks = 1280      # budgets are judged over windows of this many ticks
//! [5v5.tick]
//! mean_us = 40.0
//! p99_us = 100.0
//! [5v5.movement]
//! mean_us = 4.0
//! ```
//!
//! A target with no table (or a missing field) has no budget. A bad file gets
//! an error naming the file, the line and the field.

use hightick_config::text_position::line_column;
use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::error::TelemetryError;
use crate::subsystem::Subsystem;

/// Window length used when a mode does not set `window_ticks`: 10 s at 128 Hz.
pub const DEFAULT_WINDOW_TICKS: u32 = 1280;

/// What a budget applies to: the whole frame, or one subsystem's share of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BudgetTarget {
    /// The whole frame (tick).
    Tick,
    /// One subsystem's exclusive time in the frame.
    Subsystem(Subsystem),
}

impl BudgetTarget {
    /// How many targets there are: every subsystem and the whole tick.
    pub const COUNT: usize = Subsystem::COUNT + 1;

    /// Every target, in [`BudgetTarget::index`] order (subsystems, then tick).
    pub fn all() -> impl Iterator<Item = BudgetTarget> {
        Subsystem::ALL
            .into_iter()
            .map(BudgetTarget::Subsystem)
            .chain([BudgetTarget::Tick])
    }

    /// Position in per-target arrays: the subsystem's index, or `COUNT - 1` for the tick.
    pub const fn index(self) -> usize {
        match self {
            BudgetTarget::Subsystem(s) => s.index(),
            BudgetTarget::Tick => Subsystem::COUNT,
        }
    }

    /// `"tick"` or the subsystem's name: the budget file key and metric label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            BudgetTarget::Subsystem(s) => s.as_str(),
            BudgetTarget::Tick => "tick",
        }
    }
}

/// A mean and a 99th-percentile limit in nanoseconds; `None` means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// Limit for the mean over a window.
    pub mean_ns: Option<u64>,
    /// Limit for the 99th percentile over a window: at most 1% of frames may exceed it.
    pub p99_ns: Option<u64>,
}

impl Budget {
    /// No limit at all.
    pub const UNLIMITED: Budget = Budget {
        mean_ns: None,
        p99_ns: None,
    };

    /// Both limits, given in microseconds.
    pub fn from_us(mean_us: f64, p99_us: f64) -> Self {
        Self {
            mean_ns: Some(us_to_ns(mean_us)),
            p99_ns: Some(us_to_ns(p99_us)),
        }
    }

    /// Whether either limit is set.
    pub fn is_limited(self) -> bool {
        self.mean_ns.is_some() || self.p99_ns.is_some()
    }
}

fn us_to_ns(us: f64) -> u64 {
    (us * 1_000.0).round() as u64
}

/// The budgets of one game mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeBudget {
    /// How many ticks make one budget window.
    pub window_ticks: u32,
    /// Per target, in [`BudgetTarget::index`] order.
    targets: [Budget; BudgetTarget::COUNT],
}

impl ModeBudget {
    /// No budget for anything (counters stay at zero).
    pub fn unlimited() -> Self {
        Self {
            window_ticks: DEFAULT_WINDOW_TICKS,
            targets: [Budget::UNLIMITED; BudgetTarget::COUNT],
        }
    }

    /// The budget of one target.
    pub fn get(&self, target: BudgetTarget) -> Budget {
        self.targets[target.index()]
    }

    /// Sets the budget of one target.
    pub fn set(&mut self, target: BudgetTarget, budget: Budget) -> &mut Self {
        self.targets[target.index()] = budget;
        self
    }

    /// Budgets in [`BudgetTarget::index`] order.
    pub fn targets(&self) -> &[Budget; BudgetTarget::COUNT] {
        &self.targets
    }
}

impl Default for ModeBudget {
    fn default() -> Self {
        Self::unlimited()
    }
}

/// The text of the budgets file shipped with hightick (`budgets.toml` at the
/// telemetry crate's root): per-mode defaults for `5v5` and `plaza100`.
pub const DEFAULT_BUDGETS_TOML: &str = include_str!("../budgets.toml");

/// Every mode's budgets, as read from one file.
#[derive(Debug, Clone)]
pub struct Budgets {
    file: String,
    modes: BTreeMap<String, ModeBudget>,
}

impl Budgets {
    /// The budgets shipped with hightick (the crate's `budgets.toml`), for
    /// hosts started without a budgets file.
    pub fn defaults() -> Self {
        Self::parse(DEFAULT_BUDGETS_TOML, "budgets.toml (built in)")
            .expect("the shipped budgets file parses (tested)")
    }

    /// Reads and validates a budget file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, TelemetryError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| TelemetryError::ReadBudgets {
            file: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and validates budget text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, TelemetryError> {
        let raw: BTreeMap<String, RawMode> = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let field = field_at(text, offset);
            budget_error(text, file, offset, field, e.message().trim().to_owned())
        })?;
        let modes = raw
            .into_iter()
            .map(|(mode, raw)| {
                let budget = raw.validate(&mode, text, file)?;
                Ok((mode, budget))
            })
            .collect::<Result<_, TelemetryError>>()?;
        Ok(Self {
            file: file.to_owned(),
            modes,
        })
    }

    /// The budgets of `mode`, or an error listing the modes the file has.
    pub fn mode(&self, mode: &str) -> Result<&ModeBudget, TelemetryError> {
        self.modes
            .get(mode)
            .ok_or_else(|| TelemetryError::UnknownMode {
                file: self.file.clone(),
                mode: mode.to_owned(),
                known: self.modes.keys().cloned().collect::<Vec<_>>().join(", "),
            })
    }

    /// Mode names and their budgets, in name order.
    pub fn modes(&self) -> impl Iterator<Item = (&str, &ModeBudget)> {
        self.modes.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The file these budgets came from.
    pub fn file(&self) -> &str {
        &self.file
    }
}

/// One mode's table as written in the file, with spans for error messages.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of budgets for one mode, like [5v5]"
)]
struct RawMode {
    window_ticks: Option<Spanned<i64>>,
    tick: Option<RawBudget>,
    replication: Option<RawBudget>,
    fow: Option<RawBudget>,
    network: Option<RawBudget>,
    animation: Option<RawBudget>,
    gameplay: Option<RawBudget>,
    movement: Option<RawBudget>,
    equippable: Option<RawBudget>,
    character: Option<RawBudget>,
    physics: Option<RawBudget>,
    other: Option<RawBudget>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with mean_us and p99_us")]
struct RawBudget {
    mean_us: Option<Spanned<f64>>,
    p99_us: Option<Spanned<f64>>,
}

impl RawMode {
    fn raw_budget(&self, target: BudgetTarget) -> Option<&RawBudget> {
        match target {
            BudgetTarget::Tick => self.tick.as_ref(),
            BudgetTarget::Subsystem(s) => match s {
                Subsystem::Replication => self.replication.as_ref(),
                Subsystem::Fow => self.fow.as_ref(),
                Subsystem::Network => self.network.as_ref(),
                Subsystem::Animation => self.animation.as_ref(),
                Subsystem::Gameplay => self.gameplay.as_ref(),
                Subsystem::Movement => self.movement.as_ref(),
                Subsystem::Equippable => self.equippable.as_ref(),
                Subsystem::Character => self.character.as_ref(),
                Subsystem::Physics => self.physics.as_ref(),
                Subsystem::Other => self.other.as_ref(),
            },
        }
    }

    fn validate(&self, mode: &str, text: &str, file: &str) -> Result<ModeBudget, TelemetryError> {
        let mut budget = ModeBudget::unlimited();
        if let Some(w) = &self.window_ticks {
            let value = *w.get_ref();
            if !(1..=i64::from(u32::MAX)).contains(&value) {
                return Err(budget_error(
                    text,
                    file,
                    w.span().start,
                    format!("{mode}.window_ticks"),
                    format!("must be between 1 and {}, got {value}", u32::MAX),
                ));
            }
            budget.window_ticks = value as u32;
        }
        for target in BudgetTarget::all() {
            let Some(raw) = self.raw_budget(target) else {
                continue;
            };
            let limit = |value: &Option<Spanned<f64>>, key: &str| {
                value
                    .as_ref()
                    .map(|v| {
                        let us = *v.get_ref();
                        // 1e9 us (over 16 minutes) is far past any frame.
                        if us.is_finite() && (0.0..=1e9).contains(&us) {
                            Ok(us_to_ns(us))
                        } else {
                            Err(budget_error(
                                text,
                                file,
                                v.span().start,
                                format!("{mode}.{}.{key}", target.as_str()),
                                format!(
                                    "must be a duration in microseconds between 0 and 1e9, got {us}"
                                ),
                            ))
                        }
                    })
                    .transpose()
            };
            budget.set(
                target,
                Budget {
                    mean_ns: limit(&raw.mean_us, "mean_us")?,
                    p99_ns: limit(&raw.p99_us, "p99_us")?,
                },
            );
        }
        Ok(budget)
    }
}

fn budget_error(
    text: &str,
    file: &str,
    offset: usize,
    field: String,
    message: String,
) -> TelemetryError {
    let (line, column) = line_column(text, offset);
    TelemetryError::Budget {
        file: file.to_owned(),
        line,
        column,
        field,
        message,
    }
}

/// The longest prefix of `text` that ends at or before `offset` on a char boundary.
fn prefix(text: &str, offset: usize) -> &str {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The dotted path of the key or table at `offset`: the nearest table header
/// at or above it, joined with the key of the line it is on.
fn field_at(text: &str, offset: usize) -> String {
    let before = prefix(text, offset);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = text[line_start..line_end].trim();
    if let Some(header) = table_header(line).filter(|h| !h.is_empty()) {
        return header;
    }
    let key = line.split('=').next().map(unquote_path).unwrap_or_default();
    let table = text[..line_start]
        .lines()
        .rev()
        .find_map(|l| table_header(l.trim()))
        .filter(|t| !t.is_empty());
    match table {
        Some(t) if !key.is_empty() => format!("{t}.{key}"),
        Some(t) => t,
        None if key.is_empty() => "(document)".to_owned(),
        None => key,
    }
}

fn table_header(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?;
    let inner = inner.strip_prefix('[').unwrap_or(inner);
    Some(unquote_path(inner.split(']').next()?))
}

fn unquote_path(path: &str) -> String {
    path.split('.')
        .map(|part| part.trim().trim_matches(|c| c == '"' || c == '\''))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    #[test]
    fn shipped_budgets_parse_and_cover_both_presets() {
        let b = Budgets::defaults();
        assert!(b.mode("5v5").is_ok());
        assert!(b.mode("plaza100").is_ok());
    }

    use super::*;

    const GOOD: &str = r#"
[5v5]
window_ticks = 256
[5v5.tick]
mean_us = 40
p99_us = 100.5
[5v5.movement]
mean_us = 4.0

["plaza100"]
[plaza100.tick]
p99_us = 3000
"#;

    fn budget_err(text: &str) -> (usize, usize, String, String, String) {
        match Budgets::parse(text, "budgets.toml") {
            Err(TelemetryError::Budget {
                file,
                line,
                column,
                field,
                message,
            }) => (line, column, field, message, file),
            other => panic!("expected a budget error, got {other:?}"),
        }
    }

    #[test]
    fn a_good_file_parses_with_defaults_for_missing_values() {
        let b = Budgets::parse(GOOD, "budgets.toml").unwrap();
        let m = b.mode("5v5").unwrap();
        assert_eq!(m.window_ticks, 256);
        assert_eq!(
            m.get(BudgetTarget::Tick),
            Budget {
                mean_ns: Some(40_000),
                p99_ns: Some(100_500)
            }
        );
        let movement = m.get(BudgetTarget::Subsystem(Subsystem::Movement));
        assert_eq!(movement.mean_ns, Some(4_000));
        assert_eq!(movement.p99_ns, None);
        assert_eq!(
            m.get(BudgetTarget::Subsystem(Subsystem::Fow)),
            Budget::UNLIMITED
        );
        let p = b.mode("plaza100").unwrap();
        assert_eq!(p.window_ticks, DEFAULT_WINDOW_TICKS);
        assert_eq!(p.get(BudgetTarget::Tick).p99_ns, Some(3_000_000));
        assert_eq!(b.modes().count(), 2);
    }

    #[test]
    fn an_unknown_mode_lists_the_known_ones() {
        let b = Budgets::parse(GOOD, "budgets.toml").unwrap();
        let e = b.mode("10v10").unwrap_err().to_string();
        assert!(e.contains("10v10") && e.contains("5v5, plaza100"), "{e}");
    }

    #[test]
    fn targets_cover_every_subsystem_and_the_tick_once() {
        let idx: Vec<usize> = BudgetTarget::all().map(BudgetTarget::index).collect();
        assert_eq!(idx, (0..BudgetTarget::COUNT).collect::<Vec<_>>());
        assert_eq!(BudgetTarget::Tick.as_str(), "tick");
    }

    #[test]
    fn field_at_joins_table_and_key() {
        let text = "[a]\n[a.b]\n c = 1\n";
        assert_eq!(field_at(text, text.find('1').unwrap()), "a.b.c");
        assert_eq!(field_at(text, 5), "a.b");
        assert_eq!(field_at("x = 1", 4), "x");
    }

    #[test]
    fn shipped_budget_file_is_valid_and_has_both_modes() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/budgets.toml");
        let b = Budgets::load(path).unwrap();
        let v = b.mode("5v5").unwrap();
        assert_eq!(v.get(BudgetTarget::Tick), Budget::from_us(300.0, 1000.0));
        let p = b.mode("plaza100").unwrap();
        assert_eq!(p.get(BudgetTarget::Tick).mean_ns, Some(3_000_000));
        for mode in [v, p] {
            let tick_mean = mode.get(BudgetTarget::Tick).mean_ns.unwrap();
            let sum: u64 = Subsystem::ALL
                .iter()
                .map(|s| mode.get(BudgetTarget::Subsystem(*s)).mean_ns.unwrap())
                .sum();
            assert!(
                sum <= tick_mean,
                "subsystem means {sum} exceed tick {tick_mean}"
            );
        }
    }

    #[test]
    fn a_missing_file_names_it() {
        let e = Budgets::load("/nonexistent/budgets.toml").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/budgets.toml"), "{e}");
    }

    #[test]
    fn a_syntax_error_names_file_and_line() {
        let (line, _, _, _, file) = budget_err("[5v5]\n[5v5.tick\nmean_us = 1\n");
        assert_eq!(file, "budgets.toml");
        assert_eq!(line, 2);
    }

    #[test]
    fn window_ticks_must_be_positive() {
        let (line, _, field, message, _) = budget_err("[5v5]\nwindow_ticks = 0\n");
        assert_eq!((line, field.as_str()), (2, "5v5.window_ticks"));
        assert!(message.contains("got 0"), "{message}");
    }
}
