//! The run history's database: demos and sweeps recorded with the git commit they
//! were built from, the build profile, the host and the configuration, and figures
//! records (any command's FIGURE lines with the command, commit and host), in the
//! store's `lab_runs` table (SQLite under a data directory by default, or any store
//! URL). Cargo feature `history`.

use std::path::PathBuf;

use hightick_store::{NewRun, RunFilter, RunHistory, StoredRun};
use serde::Serialize;

use crate::error::LabError;
use crate::history::figures::{FigureRecord, RecordedFigures};
use crate::history::{RecordedRun, RunKind};
use crate::host_facts::build_profile;
use crate::summary::{HostFacts, RunSummary};
use crate::sweep::SweepReport;

/// The file the history lives in under a data directory (shared with the store).
pub use hightick_store::SQLITE_FILE_NAME as HISTORY_FILE_NAME;

/// Most runs a listing reads.
const LIST_LIMIT: i64 = 10_000;

/// The `mode` column of a figures record (figures name their own mode, if any).
const FIGURES_MODE: &str = "-";

/// Where the run history lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryLocation {
    /// `<dir>/hightick.db` (SQLite, created on first use).
    DataDir(PathBuf),
    /// A store URL: `sqlite://...`, `sqlite::memory:` or `postgres://...`.
    Url(String),
}

impl RecordedRun {
    fn from_stored(run: StoredRun) -> Result<Self, LabError> {
        let bad = |what: &str, e: LabError| {
            LabError::History(format!("run #{}: its {what} is unreadable: {e}", run.id))
        };
        if run.kind == RunKind::Figures.as_str() {
            return Err(LabError::History(format!(
                "run #{} records figures, not a demo or a sweep",
                run.id
            )));
        }
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

impl RecordedFigures {
    fn from_stored(run: StoredRun) -> Result<Self, LabError> {
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            LabError::History(format!("run #{}: its {what} is unreadable: {e}", run.id))
        };
        let record = FigureRecord::from_json(&run.summary_json).map_err(|e| bad("figures", &e))?;
        let host = serde_json::from_str(&run.host_json).map_err(|e| bad("host", &e))?;
        Ok(RecordedFigures {
            id: run.id,
            recorded_at_ms: run.recorded_at_ms,
            git_commit: run.run.git_commit,
            host,
            record,
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

    /// Records the figures one command printed, measured on `host` (whose
    /// `git_commit` is the measured build's); returns the run id. A record with no
    /// figure or no command cannot be recorded.
    pub fn record_figures(&self, record: &FigureRecord, host: &HostFacts) -> Result<i64, LabError> {
        if record.command.trim().is_empty() {
            return Err(LabError::History(
                "figures need the command that printed them".into(),
            ));
        }
        if record.figures.is_empty() {
            return Err(LabError::History(format!(
                "`{}` printed no FIGURE line: nothing to record",
                record.command
            )));
        }
        let run = NewRun {
            kind: RunKind::Figures.as_str().to_string(),
            mode: FIGURES_MODE.to_string(),
            matches: 0,
            git_commit: host.git_commit.clone(),
            build_profile: build_profile().to_string(),
            host_json: json(host)?,
            config_json: json(&record.command)?,
            summary_json: record.to_json()?,
            report_json: None,
        };
        Ok(self.runtime.block_on(self.history.record(&run))?)
    }

    /// Every figures record, oldest first.
    pub fn figures(&self) -> Result<Vec<RecordedFigures>, LabError> {
        self.stored(Some(RunKind::Figures.as_str()), None)?
            .into_iter()
            .map(RecordedFigures::from_stored)
            .collect()
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

    /// Recorded demos and sweeps, oldest first, of a kind and mode when given
    /// (figures records are read with [`ResultsDb::figures`]).
    pub fn list(
        &self,
        kind: Option<&str>,
        mode: Option<&str>,
    ) -> Result<Vec<RecordedRun>, LabError> {
        self.stored(kind, mode)?
            .into_iter()
            .filter(|r| r.kind != RunKind::Figures.as_str())
            .map(RecordedRun::from_stored)
            .collect()
    }

    fn stored(&self, kind: Option<&str>, mode: Option<&str>) -> Result<Vec<StoredRun>, LabError> {
        let filter = RunFilter {
            kind: kind.map(str::to_string),
            mode: mode.map(str::to_string),
            git_commit: None,
        };
        Ok(self
            .runtime
            .block_on(self.history.runs(&filter, LIST_LIMIT))?)
    }

    /// Closes the database.
    pub fn close(self) {
        self.runtime.block_on(self.history.close());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::TargetStats;

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
            subsystems: vec![TargetStats {
                name: "fow".into(),
                mean_us: fow_mean,
                ..TargetStats::default()
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
        let record = FigureRecord {
            command: "cargo bench -p hightick-gateway --bench ws_hold".into(),
            figures: crate::history::figures::parse_figures("FIGURE ws_held_sockets 19000 sockets")
                .unwrap(),
        };
        let host = summary(0.0).host;
        let f = db.record_figures(&record, &host).unwrap();
        let figures = db.figures().unwrap();
        assert_eq!(figures.len(), 1);
        assert_eq!(
            (figures[0].id, &figures[0].record, &figures[0].host),
            (f, &record, &host)
        );
        assert_eq!(
            db.list(None, None).unwrap().len(),
            2,
            "figures are not runs"
        );
        assert!(
            db.get(f)
                .unwrap_err()
                .to_string()
                .contains("records figures")
        );
        let empty = FigureRecord {
            figures: Vec::new(),
            ..record
        };
        assert!(
            db.record_figures(&empty, &host)
                .unwrap_err()
                .to_string()
                .contains("no FIGURE")
        );
        let missing = db.get(999).unwrap_err().to_string();
        assert!(missing.contains("no recorded run #999"), "{missing}");
        db.close();
    }
}
