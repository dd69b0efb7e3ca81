//! The capacity lab's run history: one row per recorded `hightick demo` or `hightick lab
//! sweep`, or per command whose FIGURE lines `hightick lab record` kept (table
//! `lab_runs`, migration `0002_runs.sql` for both backends).
//!
//! The store keeps the lab's JSON as text and does not read it: the lab owns its
//! shape. [`RunHistory`] opens the same databases as [`Store`](crate::store::Store) (the same
//! URLs, the same embedded migrations, the same `hightick.db` in a data directory), so
//! the gateway's data and the lab's runs can share one file or one PostgreSQL database.
//!
//! ```
//! use hightick_store::{NewRun, RunFilter, RunHistory};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let history = RunHistory::open("sqlite::memory:").await?;
//! let run = NewRun {
//!     kind: "sweep".into(),
//!     mode: "5v5".into(),
//!     matches: 8,
//!     git_commit: Some("0123abcd".into()),
//!     build_profile: "release".into(),
//!     host_json: "{}".into(),
//!     config_json: "{}".into(),
//!     summary_json: "{}".into(),
//!     report_json: None,
//! };
//! let id = history.record(&run).await?;
//! assert_eq!(history.run(id).await?.git_commit.as_deref(), Some("0123abcd"));
//! assert_eq!(history.runs(&RunFilter::default(), 10).await?.len(), 1);
//! # Ok::<(), hightick_store::StoreError>(())
//! # }).unwrap();
//! ```

use std::path::Path;

use sqlx::Row as _;

use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::{check_id, invalid};
use crate::store::{Pool, Store, StoreOptions};

/// Largest JSON text one run may carry, bytes.
pub const MAX_RUN_JSON: usize = 64 * 1024 * 1024;
/// Largest number of runs one listing returns.
pub const MAX_RUNS_LISTED: i64 = 100_000;

/// A run to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    /// What was run: `demo`, `sweep` or `figures` (1..=128 bytes).
    pub kind: String,
    /// The game mode, e.g. `5v5` (1..=128 bytes).
    pub mode: String,
    /// Matches of the run (for a sweep, of the step its summary describes).
    pub matches: i64,
    /// The git commit the binary was built from, when known (1..=128 bytes).
    pub git_commit: Option<String>,
    /// `debug` or `release` (1..=128 bytes).
    pub build_profile: String,
    /// The host's facts, JSON.
    pub host_json: String,
    /// The run's configuration, JSON.
    pub config_json: String,
    /// The run summary, JSON.
    pub summary_json: String,
    /// The whole report when there is more than the summary (a sweep's steps), JSON.
    pub report_json: Option<String>,
}

/// A recorded run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRun {
    /// Run id, increasing in recording order.
    pub id: i64,
    /// When it was recorded, milliseconds since the Unix epoch.
    pub recorded_at_ms: i64,
    /// Everything recorded.
    pub run: NewRun,
}

impl std::ops::Deref for StoredRun {
    type Target = NewRun;
    fn deref(&self) -> &NewRun {
        &self.run
    }
}

/// Which runs a listing returns; `None` matches anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Only runs of this kind.
    pub kind: Option<String>,
    /// Only runs of this mode.
    pub mode: Option<String>,
    /// Only runs of this commit.
    pub git_commit: Option<String>,
}

/// Runs the same statement code on whichever pool the history has; the body is
/// type-checked once per backend.
macro_rules! each_backend {
    ($pool:expr, |$p:ident| $body:expr) => {
        match $pool {
            Pool::Sqlite($p) => $body,
            Pool::Postgres($p) => $body,
        }
    };
}

/// Reads a `lab_runs` row selected with [`SELECT_RUN`]'s columns.
macro_rules! stored_run_from {
    ($row:expr) => {{
        let r = $row;
        StoredRun {
            id: r.try_get(0)?,
            recorded_at_ms: r.try_get(1)?,
            run: NewRun {
                kind: r.try_get(2)?,
                mode: r.try_get(3)?,
                matches: r.try_get(4)?,
                git_commit: r.try_get(5)?,
                build_profile: r.try_get(6)?,
                host_json: r.try_get(7)?,
                config_json: r.try_get(8)?,
                summary_json: r.try_get(9)?,
                report_json: r.try_get(10)?,
            },
        }
    }};
}

const SELECT_RUN: &str = "SELECT id, recorded_at_ms, kind, mode, matches, git_commit, \
     build_profile, host_json, config_json, summary_json, report_json FROM lab_runs WHERE id = $1";

const LIST_RUNS: &str = "SELECT id, recorded_at_ms, kind, mode, matches, git_commit, \
     build_profile, host_json, config_json, summary_json, report_json FROM lab_runs \
     WHERE ($1 IS NULL OR kind = $1) AND ($2 IS NULL OR mode = $2) \
     AND ($3 IS NULL OR git_commit = $3) ORDER BY id DESC LIMIT $4";

const INSERT_RUN: &str = "INSERT INTO lab_runs (recorded_at_ms, kind, mode, matches, git_commit, \
     build_profile, host_json, config_json, summary_json, report_json) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id";

/// The lab's run history in a store database.
#[derive(Debug, Clone)]
pub struct RunHistory {
    pool: Pool,
}

fn check_json(field: &'static str, text: &str) -> Result<(), StoreError> {
    if text.is_empty() || text.len() > MAX_RUN_JSON {
        return Err(invalid(field, "must be 1 byte to 64 MiB of JSON"));
    }
    Ok(())
}

impl NewRun {
    /// Checks every field; nothing reaches the database when one is out of range.
    pub fn validate(&self) -> Result<(), StoreError> {
        check_id("kind", &self.kind)?;
        check_id("mode", &self.mode)?;
        check_id("build_profile", &self.build_profile)?;
        if let Some(commit) = &self.git_commit {
            check_id("git_commit", commit)?;
        }
        if self.matches < 0 {
            return Err(invalid("matches", "must not be negative"));
        }
        check_json("host_json", &self.host_json)?;
        check_json("config_json", &self.config_json)?;
        check_json("summary_json", &self.summary_json)?;
        if let Some(report) = &self.report_json {
            check_json("report_json", report)?;
        }
        Ok(())
    }
}

impl RunHistory {
    /// Opens the database at `url` (as [`Store::open`](crate::Store::open)) and runs
    /// migrations.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(&StoreOptions::new(url)).await
    }

    /// Opens (creating on first run) `<data_dir>/hightick.db`, the embedded default.
    pub async fn open_in_data_dir(data_dir: &Path) -> Result<Self, StoreError> {
        Ok(Self::over(Store::open_in_data_dir(data_dir).await?))
    }

    /// Opens the database `options.url` names (as [`Store::open_with`]).
    pub async fn open_with(options: &StoreOptions) -> Result<Self, StoreError> {
        Ok(Self::over(Store::open_with(options).await?))
    }

    /// The run history in the database `store` has open.
    pub fn over(store: Store) -> Self {
        Self {
            pool: store.into_pool(),
        }
    }

    /// Stores a run; returns its id.
    pub async fn record(&self, run: &NewRun) -> Result<i64, StoreError> {
        run.validate()?;
        let now = now_ms();
        each_backend!(&self.pool, |p| {
            let row = sqlx::query(INSERT_RUN)
                .bind(now)
                .bind(&run.kind)
                .bind(&run.mode)
                .bind(run.matches)
                .bind(&run.git_commit)
                .bind(&run.build_profile)
                .bind(&run.host_json)
                .bind(&run.config_json)
                .bind(&run.summary_json)
                .bind(&run.report_json)
                .fetch_one(p)
                .await?;
            Ok(row.try_get(0)?)
        })
    }

    /// The run with id `id`.
    pub async fn run(&self, id: i64) -> Result<StoredRun, StoreError> {
        each_backend!(&self.pool, |p| {
            let row = sqlx::query(SELECT_RUN)
                .bind(id)
                .fetch_optional(p)
                .await?
                .ok_or(StoreError::NotFound { what: "run" })?;
            Ok(stored_run_from!(&row))
        })
    }

    /// The newest `limit` (1..=100,000) runs that pass `filter`, oldest first.
    pub async fn runs(&self, filter: &RunFilter, limit: i64) -> Result<Vec<StoredRun>, StoreError> {
        if !(1..=MAX_RUNS_LISTED).contains(&limit) {
            return Err(invalid("limit", "must be 1..=100000"));
        }
        let mut runs = each_backend!(&self.pool, |p| {
            let rows = sqlx::query(LIST_RUNS)
                .bind(&filter.kind)
                .bind(&filter.mode)
                .bind(&filter.git_commit)
                .bind(limit)
                .fetch_all(p)
                .await?;
            rows.iter()
                .map(|row| Ok(stored_run_from!(row)))
                .collect::<Result<Vec<StoredRun>, StoreError>>()?
        });
        runs.reverse();
        Ok(runs)
    }

    /// Closes every pooled connection.
    pub async fn close(&self) {
        each_backend!(&self.pool, |p| p.close().await)
    }
}
