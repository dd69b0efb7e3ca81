//! Run history: demos and sweeps recorded with the git commit they were built from,
//! the build profile, the host and the configuration, in the store's `lab_runs` table
//! (SQLite under a data directory by default, or any store URL).

use std::path::{Path, PathBuf};

use hightick_store::{NewRun, RunFilter, RunHistory, StoredRun};
use serde::Serialize;

use crate::error::LabError;
use crate::summary::{HostFacts, RunSummary};
use crate::sweep::SweepReport;

/// The file the history lives in under a data directory (shared with the store).
pub use hightick_store::SQLITE_FILE_NAME as HISTORY_FILE_NAME;

/// Most runs a listing reads.
const LIST_LIMIT: i64 = 10_000;

/// The git commit of this build: `git rev-parse HEAD` in the working directory, else
/// in the source tree the lab was compiled from; `None` without git or a repository.
pub fn git_commit() -> Option<String> {
    let in_dir = |dir: Option<&Path>| {
        let mut git = std::process::Command::new("git");
        if let Some(d) = dir {
            git.arg("-C").arg(d);
        }
        git.args(["rev-parse", "HEAD"])
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|c| !c.is_empty())
    };
    in_dir(None).or_else(|| in_dir(Some(Path::new(env!("CARGO_MANIFEST_DIR")))))
}

/// `debug` or `release`: how this code was compiled.
pub fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

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
}

impl RunKind {
    /// `demo` or `sweep`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Demo => "demo",
            RunKind::Sweep => "sweep",
        }
    }
}

/// Where the run history lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryLocation {
    /// `<dir>/hightick.db` (SQLite, created on first use).
    DataDir(PathBuf),
    /// A store URL: `sqlite://...`, `sqlite::memory:` or `postgres://...`.
    Url(String),
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

    fn from_stored(run: StoredRun) -> Result<Self, LabError> {
        let bad = |what: &str, e: LabError| {
            LabError::History(format!("run #{}: its {what} is unreadable: {e}", run.id))
        };
        let summary = RunSummary::from_json(&run.summary_json).map_err(|e| bad("summary", e))?;
        let sweep = match &run.report_json {
            Some(text) if run.kind == RunKind::Sweep.as_str() => {
                Some(SweepReport::from_json(text).map_err(|e| bad("sweep report", e))?)
            }
            _ => None,
        };
        Ok(RecordedRun {
            id: run.id,
            recorded_at_ms: run.recorded_at_ms,
            kind: run.run.kind,
            git_commit: run.run.git_commit,
            build_profile: run.run.build_profile,
            summary,
            sweep,
        })
    }
}

/// The run history, opened for the blocking calls of a command-line tool.
#[derive(Debug)]
pub struct ResultsDb {
    runtime: tokio::runtime::Runtime,
    history: RunHistory,
}

fn json<T: Serialize>(value: &T) -> Result<String, LabError> {
    serde_json::to_string(value).map_err(LabError::EncodeJson)
}

impl ResultsDb {
    /// Opens (creating and migrating as needed) the history at `location`.
    pub fn open(location: &HistoryLocation) -> Result<Self, LabError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(LabError::io("starting the database runtime"))?;
        let history = runtime.block_on(async {
            match location {
                HistoryLocation::DataDir(dir) => RunHistory::open_in_data_dir(dir).await,
                HistoryLocation::Url(url) => RunHistory::open(url).await,
            }
        })?;
        Ok(ResultsDb { runtime, history })
    }

    fn record(
        &self,
        kind: RunKind,
        summary: &RunSummary,
        host: &HostFacts,
        config: &impl Serialize,
        report_json: Option<String>,
    ) -> Result<i64, LabError> {
        let run = NewRun {
            kind: kind.as_str().to_string(),
            mode: summary.mode.clone(),
            matches: i64::from(summary.matches),
            git_commit: host.git_commit.clone(),
            build_profile: build_profile().to_string(),
            host_json: json(host)?,
            config_json: json(config)?,
            summary_json: summary.to_json()?,
            report_json,
        };
        Ok(self.runtime.block_on(self.history.record(&run))?)
    }

    /// Records a demo run with its configuration; returns the run id.
    pub fn record_demo(
        &self,
        summary: &RunSummary,
        config: &impl Serialize,
    ) -> Result<i64, LabError> {
        self.record(RunKind::Demo, summary, &summary.host, config, None)
    }

    /// Records a sweep (its representative step as the summary, the whole report
    /// beside it); returns the run id. A sweep with no step cannot be recorded.
    pub fn record_sweep(
        &self,
        report: &SweepReport,
        config: &impl Serialize,
    ) -> Result<i64, LabError> {
        let summary = report.representative().ok_or_else(|| {
            LabError::History("a sweep with no step has nothing to record".into())
        })?;
        self.record(
            RunKind::Sweep,
            summary,
            &report.host,
            config,
            Some(report.to_json()?),
        )
    }

    /// The run with id `id`.
    pub fn get(&self, id: i64) -> Result<RecordedRun, LabError> {
        let stored = self
            .runtime
            .block_on(self.history.run(id))
            .map_err(|e| match e {
                hightick_store::StoreError::NotFound { .. } => {
                    LabError::History(format!("no recorded run #{id}"))
                }
                other => other.into(),
            })?;
        RecordedRun::from_stored(stored)
    }

    /// Recorded runs, oldest first, of a kind and mode when given.
    pub fn list(
        &self,
        kind: Option<&str>,
        mode: Option<&str>,
    ) -> Result<Vec<RecordedRun>, LabError> {
        let filter = RunFilter {
            kind: kind.map(str::to_string),
            mode: mode.map(str::to_string),
            git_commit: None,
        };
        let runs = self
            .runtime
            .block_on(self.history.runs(&filter, LIST_LIMIT))?;
        runs.into_iter().map(RecordedRun::from_stored).collect()
    }

    /// Closes the database.
    pub fn close(self) {
        self.runtime.block_on(self.history.close());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::SubsystemRow;

    fn summary(fow_mean: f64) -> RunSummary {
        RunSummary {
            title: "t".into(),
            mode: "5v5".into(),
            tick_rate_hz: 128,
            matches: 4,
            host: HostFacts {
                git_commit: Some("0123456789abcdef".into()),
                ..HostFacts::default()
            },
            subsystems: vec![SubsystemRow {
                name: "fow".into(),
                mean_us: fow_mean,
                ..SubsystemRow::default()
            }],
            ..RunSummary::default()
        }
    }

    #[test]
    fn demos_are_recorded_and_read_back() {
        let db = ResultsDb::open(&HistoryLocation::Url("sqlite::memory:".into())).unwrap();
        let a = db.record_demo(&summary(10.0), &"config a").unwrap();
        let b = db.record_demo(&summary(11.0), &"config b").unwrap();
        let run = db.get(b).unwrap();
        assert_eq!(run.summary, summary(11.0));
        assert_eq!(run.kind, "demo");
        assert_eq!(run.git_commit.as_deref(), Some("0123456789abcdef"));
        assert_eq!(run.build_profile, build_profile());
        assert_eq!(
            run.label(),
            format!("#{b} (0123456789ab, {})", build_profile())
        );
        assert_eq!(run.repeat_key(), db.get(a).unwrap().repeat_key());
        let all = db.list(Some("demo"), Some("5v5")).unwrap();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), vec![a, b]);
        assert!(db.list(Some("sweep"), None).unwrap().is_empty());
        let missing = db.get(999).unwrap_err().to_string();
        assert!(missing.contains("no recorded run #999"), "{missing}");
        db.close();
    }

    #[test]
    fn this_build_knows_its_profile_and_maybe_its_commit() {
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
