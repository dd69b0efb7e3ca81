//! The host doctor: read-only checks of `/proc` and `/sys` that matter for tick servers.
//!
//! Each [`Check`] gives a verdict (OK, WARN, INFO), the value found, why it matters for
//! a server that must finish every tick before its deadline, and what to change when
//! the verdict is WARN. The doctor only reads files under its root and suggests; it
//! never writes anything or changes a setting.

mod cpu;
pub(crate) mod host_files;
mod neighbours;
mod system;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::LabError;
use hightick_report::{Align, TextTable};
use host_files::HostFiles;

pub use neighbours::{Neighbour, TaskSwitches, rank_neighbours, read_switches};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Set up well for tick servers.
    Ok,
    /// Likely to cost tick time or cause late ticks; see the advice.
    Warn,
    /// Worth knowing, or not exposed on this host.
    Info,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Ok => "OK",
            Verdict::Warn => "WARN",
            Verdict::Info => "INFO",
        })
    }
}

/// One inspected property of the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// What was inspected, e.g. `clock source`.
    pub name: String,
    /// How it came out.
    pub verdict: Verdict,
    /// What was found, e.g. `tsc`.
    pub value: String,
    /// Why it matters for tick servers.
    pub why: String,
    /// What to change, when something should change.
    pub advice: Option<String>,
}

impl Check {
    fn new(name: &str, verdict: Verdict, value: impl Into<String>, why: &str) -> Self {
        Check {
            name: name.to_string(),
            verdict,
            value: value.into(),
            why: why.to_string(),
            advice: None,
        }
    }

    fn advise(mut self, advice: impl Into<String>) -> Self {
        self.advice = Some(advice.into());
        self
    }
}

/// What the doctor looks at and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorOptions {
    /// Where `proc/` and `sys/` are found: `/` for this machine, a fixture tree in tests.
    pub root: PathBuf,
    /// How long to watch context switches for noisy neighbours; zero skips the sample.
    pub sample: Duration,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            root: PathBuf::from("/"),
            sample: Duration::from_millis(500),
        }
    }
}

/// Every check of one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoctorReport {
    /// The root the files were read from.
    pub root: String,
    /// The checks, in a fixed order.
    pub checks: Vec<Check>,
}

/// Inspects the host under `options.root`. Fails only when the root is not a directory;
/// anything the host does not expose becomes an INFO check.
pub fn examine(options: &DoctorOptions) -> Result<DoctorReport, LabError> {
    if !options.root.is_dir() {
        return Err(LabError::HostRoot {
            root: options.root.clone(),
        });
    }
    let host = HostFiles::new(&options.root);
    let checks = vec![
        cpu::numa(&host),
        cpu::smt(&host),
        cpu::governor(&host),
        cpu::cstates(&host),
        cpu::migration_cost(&host),
        system::clocksource(&host),
        system::timer_slack(&host),
        system::huge_pages(&host),
        system::udp_buffers(&host),
        system::open_files(&host),
        neighbours::check(&options.root, options.sample),
    ];
    Ok(DoctorReport {
        root: options.root.display().to_string(),
        checks,
    })
}

impl DoctorReport {
    /// The check with this name, if it ran.
    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// The number of checks with this verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.checks.iter().filter(|c| c.verdict == verdict).count()
    }

    /// A table of checks (name, verdict, value), then why each matters and what to change.
    pub fn render_table(&self) -> String {
        let mut t = TextTable::new(&[
            ("check", Align::Left),
            ("verdict", Align::Left),
            ("value", Align::Left),
        ]);
        for c in &self.checks {
            t.row([c.name.clone(), c.verdict.to_string(), c.value.clone()]);
        }
        let mut out = t.render();
        out.push('\n');
        for c in &self.checks {
            out.push_str(&format!("{} [{}]: {}\n", c.name, c.verdict, c.why));
            if let Some(advice) = &c.advice {
                out.push_str(&format!("    -> {advice}\n"));
            }
        }
        out.push_str(&format!(
            "\n{} OK, {} WARN, {} INFO (read-only: nothing was changed)\n",
            self.count(Verdict::Ok),
            self.count(Verdict::Warn),
            self.count(Verdict::Info)
        ));
        out
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> Result<String, LabError> {
        serde_json::to_string_pretty(self).map_err(LabError::EncodeJson)
    }

    /// Reads a report written by [`DoctorReport::to_json`].
    pub fn from_json(text: &str) -> Result<Self, LabError> {
        serde_json::from_str(text).map_err(|e| LabError::decode(&e))
    }
}

/// Convenience for callers with only a root path: examine with the default sample.
pub fn examine_root(root: &Path) -> Result<DoctorReport, LabError> {
    examine(&DoctorOptions {
        root: root.to_path_buf(),
        ..DoctorOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_serialize_in_capitals() {
        assert_eq!(serde_json::to_string(&Verdict::Warn).unwrap(), "\"WARN\"");
        assert_eq!(Verdict::Ok.to_string(), "OK");
    }

    #[test]
    fn missing_root_is_an_error() {
        let err = examine_root(Path::new("/definitely/not/here")).unwrap_err();
        assert!(matches!(err, LabError::HostRoot { .. }));
    }
}
