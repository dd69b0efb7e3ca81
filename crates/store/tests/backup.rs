//! Backups taken while writes go on, restored into a fresh store: the books
//! balance, and every count lies between what was acknowledged before the
//! backup began and what was written by the end. SQLite through
//! [`Store::backup_to`] and [`Store::restore_in_data_dir`]; PostgreSQL through
//! `pg_dump --format=custom` and `pg_restore` (docs/OPERATIONS.md).

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use hightick_store::{
    MatchPlayer, MatchRecorded, MatchResult, Outcome, PurchaseRequest, Store, StoreError,
    StoreOptions,
};
use tokio::task::JoinHandle;

/// Longest any test here may run.
const BOUND: Duration = Duration::from_secs(240);
/// Players the load writes for.
const PLAYERS: usize = 16;
/// Each player's first grant, before the load.
const SEED: i64 = 1_000;
/// Each grant of the load.
const GRANT: i64 = 7;
/// Each purchase: one item at this price.
const PRICE: i64 = 3;
/// Each player's reward in each match (two players a match).
const REWARD: i64 = 5;
/// Most writes of each kind the load makes (it stops earlier when told).
const MOST: u64 = 20_000;

/// Writes acknowledged so far, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Counts {
    grants: u64,
    purchases: u64,
    matches: u64,
}

impl Counts {
    fn total(&self) -> u64 {
        self.grants + self.purchases + self.matches
    }
}

fn purchase(ids: &[i64], n: u64) -> PurchaseRequest {
    PurchaseRequest {
        account_id: ids[n as usize % ids.len()],
        idempotency_key: format!("order-{n}"),
        item_id: format!("skin.{}", n % 5),
        quantity: 1,
        unit_price: PRICE,
    }
}

fn match_result(ids: &[i64], n: u64) -> MatchResult {
    let line = |i: u64, outcome| MatchPlayer {
        account_id: ids[i as usize % ids.len()],
        team: i64::from(outcome == Outcome::Loss),
        score: 3,
        outcome,
        reward: REWARD,
    };
    MatchResult {
        match_id: format!("match-{n}"),
        mode: "5v5".into(),
        players: vec![line(n, Outcome::Win), line(n + 1, Outcome::Loss)],
    }
}

/// Three tasks writing grants, purchases and match results one after another
/// (each write numbered by what was acknowledged before it), until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    acked: [Arc<AtomicU64>; 3],
    tasks: Vec<JoinHandle<()>>,
}

impl Load {
    fn start(store: &Store, ids: &[i64]) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let acked: [Arc<AtomicU64>; 3] = Default::default();
        let mut tasks = Vec::new();
        for (kind, counter) in acked.iter().enumerate() {
            let (store, ids, stop, counter) =
                (store.clone(), ids.to_vec(), stop.clone(), counter.clone());
            tasks.push(tokio::spawn(async move {
                for n in 0..MOST {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    match kind {
                        0 => {
                            let id = ids[n as usize % ids.len()];
                            store
                                .grant_currency(id, GRANT, &format!("grant-{n}"))
                                .await
                                .map(|_| ())
                        }
                        1 => store.purchase(&purchase(&ids, n)).await.map(|_| ()),
                        _ => store.record_match(&match_result(&ids, n)).await.map(|_| ()),
                    }
                    .expect("a write of the load");
                    counter.store(n + 1, Ordering::Release);
                }
            }));
        }
        Self { stop, acked, tasks }
    }

    fn acked(&self) -> Counts {
        let [g, p, m] = &self.acked;
        Counts {
            grants: g.load(Ordering::Acquire),
            purchases: p.load(Ordering::Acquire),
            matches: m.load(Ordering::Acquire),
        }
    }

    /// Waits until `more` writes beyond `since` are acknowledged (or the load
    /// has ended).
    async fn wait_for(&self, since: Counts, more: u64) {
        while self.acked().total() < since.total() + more
            && self.tasks.iter().any(|t| !t.is_finished())
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    async fn stop(self) -> Counts {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.await.expect("a load task");
        }
        let [g, p, m] = &self.acked;
        Counts {
            grants: g.load(Ordering::Acquire),
            purchases: p.load(Ordering::Acquire),
            matches: m.load(Ordering::Acquire),
        }
    }
}

/// `PLAYERS` guests with `SEED` each.
async fn seeded(store: &Store) -> Vec<i64> {
    let ids = common::guests(store, "backup", PLAYERS).await;
    for &id in &ids {
        store.grant_currency(id, SEED, "seed").await.unwrap();
    }
    ids
}

/// What a restored store holds, counted from its books.
async fn held(store: &Store, ids: &[i64]) -> Counts {
    let audit = store.audit().await.unwrap();
    assert!(audit.balanced(), "the restored books balance: {audit:?}");
    assert_eq!(audit.accounts, PLAYERS as i64);
    let by = |reason: &str| audit.ledger_by_reason.get(reason).copied().unwrap_or(0);
    let grants = by("grant") - SEED * PLAYERS as i64;
    let spent = -by("purchase");
    let rewards = by("match_reward");
    assert_eq!(grants % GRANT, 0, "whole grants only: {audit:?}");
    assert_eq!(spent % PRICE, 0, "whole purchases only: {audit:?}");
    assert_eq!(
        rewards,
        audit.matches_recorded * 2 * REWARD,
        "every recorded match paid its two players, no other: {audit:?}"
    );
    let mut items = 0;
    for &id in ids {
        items += store
            .inventory(id)
            .await
            .unwrap()
            .iter()
            .map(|i| i.quantity)
            .sum::<i64>();
    }
    assert_eq!(items * PRICE, spent, "an item for every purchase paid");
    Counts {
        grants: (grants / GRANT) as u64,
        purchases: (spent / PRICE) as u64,
        matches: audit.matches_recorded as u64,
    }
}

/// Checks a restored store against the load: its counts lie between what was
/// acknowledged before the backup began (`before`) and what was written by the
/// end (`after`), and the writes acknowledged before are there to be replayed
/// (a retried purchase or match result is answered from the restored rows,
/// charging and crediting nothing).
async fn check_restored(label: &str, store: &Store, ids: &[i64], before: Counts, after: Counts) {
    let got = held(store, ids).await;
    eprintln!("{label}: acknowledged before {before:?}, restored {got:?}, by the end {after:?}");
    for (what, lo, v, hi) in [
        ("grants", before.grants, got.grants, after.grants),
        (
            "purchases",
            before.purchases,
            got.purchases,
            after.purchases,
        ),
        ("matches", before.matches, got.matches, after.matches),
    ] {
        assert!(lo <= v && v <= hi, "{label}: {what} {v} not in {lo}..={hi}");
    }
    let audit = store.audit().await.unwrap();
    for n in 0..before.purchases {
        let receipt = store.purchase(&purchase(ids, n)).await.unwrap();
        assert!(receipt.replayed, "{label}: purchase {n} is in the backup");
    }
    for n in 0..before.matches {
        assert_eq!(
            store.record_match(&match_result(ids, n)).await.unwrap(),
            MatchRecorded::AlreadyRecorded,
            "{label}: match {n} is in the backup"
        );
    }
    assert_eq!(
        store.audit().await.unwrap(),
        audit,
        "{label}: replays change nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_backup_taken_under_writes_restores_balanced() {
    tokio::time::timeout(BOUND, async {
        let dir = common::temp_dir("backup_sqlite");
        let store = Store::open_in_data_dir(&dir).await.unwrap();
        let ids = seeded(&store).await;
        let load = Load::start(&store, &ids);
        let mut backups = Vec::new();
        for i in 0..3 {
            // Some writes between backups, so each sees a different store.
            load.wait_for(load.acked(), 30).await;
            let file = dir.join(format!("backup-{i}.db"));
            let before = load.acked();
            let bytes = store.backup_to(&file).await.unwrap();
            assert!(bytes > 0);
            backups.push((file, before));
        }
        // A backup never overwrites a file.
        let err = store.backup_to(&backups[0].0).await.unwrap_err();
        assert!(
            matches!(&err, StoreError::File { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists),
            "{err}"
        );
        let after = load.stop().await;
        let live = held(&store, &ids).await;
        assert_eq!(live, after, "the live store holds every acknowledged write");

        // Restoring over a database a store still has open is refused.
        let err = Store::restore_in_data_dir(&backups[0].0, &dir, true)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("stop the gateway"), "{err}");
        store.close().await;

        for (i, (file, before)) in backups.iter().enumerate() {
            let fresh = common::temp_dir(&format!("backup_restore_{i}"));
            let restored = Store::restore_in_data_dir(file, &fresh, false).await.unwrap();
            assert!(restored.migrations >= 1);
            let store = Store::open_in_data_dir(&fresh).await.unwrap();
            check_restored(&format!("sqlite backup {i}"), &store, &ids, *before, after).await;
            store.close().await;
            // Restoring again over it needs `replace`.
            let err = Store::restore_in_data_dir(file, &fresh, false)
                .await
                .unwrap_err();
            assert!(err.to_string().contains("already exists"), "{err}");
        }
        // With `replace`, the last backup goes over the data directory itself.
        let (last, before) = backups.last().unwrap();
        Store::restore_in_data_dir(last, &dir, true).await.unwrap();
        let store = Store::open_in_data_dir(&dir).await.unwrap();
        check_restored("sqlite restored in place", &store, &ids, *before, after).await;
        store.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .expect("the test ends in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_not_a_backup_is_not_restored() {
    let dir = common::temp_dir("backup_bad");
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.db");
    std::fs::write(&junk, b"not a database at all, not even close to one.").unwrap();
    assert!(
        Store::restore_in_data_dir(&junk, &dir.join("data"), false)
            .await
            .is_err()
    );
    let missing = dir.join("missing.db");
    let err = Store::restore_in_data_dir(&missing, &dir.join("data"), false)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no such backup file"), "{err}");
    // An empty SQLite file is whole, but not a hightick store.
    let empty = dir.join("empty.db");
    Store::open(&format!("sqlite://{}", dir.join("other.db").display()))
        .await
        .unwrap()
        .close()
        .await;
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect_with(
        &sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&empty)
            .create_if_missing(true),
    )
    .await
    .unwrap();
    sqlx::query("CREATE TABLE t (x INTEGER)")
        .execute(&mut conn)
        .await
        .unwrap();
    drop(conn);
    let err = Store::restore_in_data_dir(&empty, &dir.join("data"), false)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a hightick store"), "{err}");
    assert!(
        !dir.join("data")
            .join(hightick_store::SQLITE_FILE_NAME)
            .exists()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `program args`, panicking with its stderr when it fails.
fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `program --version` runs.
fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

async fn execute(options: &StoreOptions, sql: &str) {
    use sqlx::Connection as _;
    let mut conn = sqlx::PgConnection::connect(&options.url).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_dump_taken_under_writes_restores_balanced() {
    let Some(options) = common::pg_options_or_fail_in_ci("backup_pg") else {
        return;
    };
    let tools = have("pg_dump") && have("pg_restore");
    assert!(
        tools || std::env::var_os("CI").is_none(),
        "pg_dump and pg_restore must be installed in CI"
    );
    if !tools {
        eprintln!("backup_pg: skipped (pg_dump or pg_restore is not installed)");
        return;
    }
    tokio::time::timeout(BOUND, async {
        let schema = options.postgres_schema.clone().unwrap();
        let store = Store::open_with(&options).await.unwrap();
        let err = store.backup_to(Path::new("x.db")).await.unwrap_err();
        assert!(
            matches!(err, StoreError::Unsupported { .. }) && err.to_string().contains("pg_dump"),
            "{err}"
        );
        let ids = seeded(&store).await;
        let load = Load::start(&store, &ids);
        load.wait_for(load.acked(), 30).await;
        let dir = common::temp_dir("backup_pg");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hightick.dump");
        let before = load.acked();
        let (url, dump) = (options.url.clone(), file.display().to_string());
        let schema_arg = schema.clone();
        // pg_dump reads one snapshot of the schema while the load goes on.
        tokio::task::spawn_blocking(move || {
            run(
                "pg_dump",
                &[
                    "--format=custom",
                    "--schema",
                    &schema_arg,
                    "--file",
                    &dump,
                    "--dbname",
                    &url,
                ],
            )
        })
        .await
        .unwrap();
        let after = load.stop().await;
        assert_eq!(held(&store, &ids).await, after);
        store.close().await;

        // The test's role may not create databases: the source schema steps
        // aside and the dump recreates it under its name.
        let aside = format!("{schema}_src");
        execute(
            &options,
            &format!("ALTER SCHEMA \"{schema}\" RENAME TO \"{aside}\""),
        )
        .await;
        let (url, dump) = (options.url.clone(), file.display().to_string());
        tokio::task::spawn_blocking(move || {
            run(
                "pg_restore",
                &["--no-owner", "--exit-on-error", "--dbname", &url, &dump],
            )
        })
        .await
        .unwrap();
        let restored = Store::open_with(&options).await.unwrap();
        check_restored("postgres", &restored, &ids, before, after).await;
        restored.close().await;
        execute(
            &options,
            &format!("DROP SCHEMA \"{schema}\" CASCADE; DROP SCHEMA \"{aside}\" CASCADE"),
        )
        .await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .expect("the test ends in time");
}
