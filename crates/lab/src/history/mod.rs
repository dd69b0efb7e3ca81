//! Run history without its database: what a recorded run is (kind, commit, build
//! profile, summary) and which build this is. The database runs are recorded in is
//! `results_db` (cargo feature `history`); comparing and charting runs needs none.
//! Beside demos and sweeps the history keeps `figures`: FIGURE lines any command
//! printed, recorded with the command, commit and machine ([`figures`]).

pub mod figures;
pub mod report;
#[cfg(feature = "history")]
pub mod results_db;

use crate::summary::RunSummary;
use crate::sweep::SweepReport;

/// The first 12 characters of a commit, or `unknown`.
pub fn short_commit(commit: Option<&str>) -> String {
    commit.map_or_else(|| "unknown".to_string(), |c| c.chars().take(12).collect())
}

/// What a recorded run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// `hightick demo`.
    Demo,
    /// `hightick lab sweep`.
    Sweep,
    /// FIGURE lines of any command (`hightick lab record`).
    Figures,
}

impl RunKind {
    /// `demo`, `sweep` or `figures`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Demo => "demo",
            RunKind::Sweep => "sweep",
            RunKind::Figures => "figures",
        }
    }
}

/// One run read back from the history.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRun {
    /// Run id.
    pub id: i64,
    /// When it was recorded, ms since the Unix epoch.
    pub recorded_at_ms: i64,
    /// `demo` or `sweep`.
    pub kind: String,
    /// The commit, when known.
    pub git_commit: Option<String>,
    /// `debug` or `release`.
    pub build_profile: String,
    /// The run (for a sweep, the step it is compared by: see [`SweepReport::representative`]).
    pub summary: RunSummary,
    /// The whole sweep, for a sweep.
    pub sweep: Option<SweepReport>,
}

impl RecordedRun {
    /// `#id (commit, profile)`.
    pub fn label(&self) -> String {
        format!(
            "#{} ({}, {})",
            self.id,
            short_commit(self.git_commit.as_deref()),
            self.build_profile
        )
    }

    /// Runs of the same commit, kind, load and profile are repeats: their spread is
    /// run-to-run noise.
    pub fn repeat_key(&self) -> Option<(String, String, String, u32, String)> {
        Some((
            self.git_commit.clone()?,
            self.kind.clone(),
            self.summary.mode.clone(),
            self.summary.matches,
            self.build_profile.clone(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: i64, commit: Option<&str>) -> RecordedRun {
        RecordedRun {
            id,
            recorded_at_ms: 0,
            kind: RunKind::Demo.as_str().into(),
            git_commit: commit.map(str::to_string),
            build_profile: "release".into(),
            summary: RunSummary::default(),
            sweep: None,
        }
    }

    #[test]
    fn a_run_is_labelled_by_id_commit_and_profile() {
        let a = run(3, Some("0123456789abcdef"));
        assert_eq!(a.label(), "#3 (0123456789ab, release)");
        assert_eq!(run(4, None).label(), "#4 (unknown, release)");
        assert_eq!(
            a.repeat_key(),
            run(5, Some("0123456789abcdef")).repeat_key()
        );
        assert_eq!(run(6, None).repeat_key(), None);
    }

    #[test]
    fn this_build_knows_its_profile_and_maybe_its_commit() {
        use crate::host_facts::{build_profile, git_commit};
        assert!(matches!(build_profile(), "debug" | "release"));
        if let Some(c) = git_commit() {
            assert!(
                c.len() >= 7 && c.chars().all(|c| c.is_ascii_hexdigit()),
                "{c}"
            );
        }
        assert_eq!(short_commit(None), "unknown");
        assert_eq!(short_commit(Some("abc")), "abc");
    }
}
