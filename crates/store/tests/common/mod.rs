//! Backends every end-to-end test runs against: SQLite in memory, SQLite in a file
//! (pooled connections, the embedded default), and PostgreSQL when
//! `HIGHTICK_TEST_DATABASE_URL` is set, each test in its own schema.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use hightick_store::{Store, StoreOptions};

pub(crate) const PG_ENV: &str = "HIGHTICK_TEST_DATABASE_URL";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A name no other test run uses: `<test>_<pid>_<seq>`.
pub(crate) fn unique(test: &str) -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut s = format!("{test}_{}_{n}", std::process::id());
    s.truncate(63);
    s
}

/// A fresh, empty directory under the system temp dir.
pub(crate) fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-store-{}", unique(test)));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Options for a fresh PostgreSQL schema, or `None` (with a note) when the variable
/// is unset.
pub(crate) fn pg_options(test: &str) -> Option<StoreOptions> {
    match std::env::var(PG_ENV) {
        Ok(url) if !url.is_empty() => {
            let mut options = StoreOptions::new(url);
            options.postgres_schema = Some(format!("t_{}", unique(test)));
            Some(options)
        }
        _ => {
            eprintln!("{test}: PostgreSQL part skipped ({PG_ENV} is not set)");
            None
        }
    }
}

/// One fresh, migrated store per backend, labelled.
pub(crate) async fn stores(test: &str) -> Vec<(&'static str, Store)> {
    let mut out = vec![(
        "sqlite-memory",
        Store::open("sqlite::memory:").await.unwrap(),
    )];
    let dir = temp_dir(test);
    out.push(("sqlite-file", Store::open_in_data_dir(&dir).await.unwrap()));
    if let Some(options) = pg_options(test) {
        out.push(("postgres", Store::open_with(&options).await.unwrap()));
    }
    out
}

/// `n` guest accounts `<prefix>-0`, `<prefix>-1`, ..., by id.
pub(crate) async fn guests(store: &Store, prefix: &str, n: usize) -> Vec<i64> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        ids.push(
            store
                .guest_account(&format!("{prefix}-{i}"))
                .await
                .unwrap()
                .id,
        );
    }
    ids
}

/// Like [`pg_options`], but in CI (`CI` set) a missing database is a failure,
/// not a skip.
pub(crate) fn pg_options_or_fail_in_ci(test: &str) -> Option<StoreOptions> {
    let options = pg_options(test);
    assert!(
        options.is_some() || std::env::var_os("CI").is_none(),
        "{test}: {PG_ENV} must be set in CI"
    );
    options
}
