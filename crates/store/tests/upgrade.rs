//! Upgrades: a store written by the previous schema version (what the last
//! release's binary migrated to) opens with this build, which migrates it,
//! with nothing lost: every row of every table the old schema had is there
//! unchanged, the books balance, and the old rows still answer through the API
//! (a retried purchase or match result from before the upgrade is recognised).
//!
//! The old store is made as the old binary made it: sqlx's migrator applies
//! the migration files up to [`PREVIOUS_VERSION`] (recording them as applied,
//! with their checksums), then the fixture writes rows with plain SQL that only
//! names tables and columns of that version. When a migration is added, bump
//! [`PREVIOUS_VERSION`] to the version before it; the fixture stays valid
//! because migrations only add (add rows for the new tables if you like).

mod common;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use hightick_store::{
    MatchPlayer, MatchRecorded, MatchResult, Outcome, PurchaseRequest, Store, TicketState,
};
use sqlx::migrate::Migrator;
use sqlx::{AssertSqlSafe, Connection as _, Row as _};

/// The schema version of the last release (`0004_matchmaking`, before
/// `0005_host_registry`). Bump it with each new migration.
const PREVIOUS_VERSION: i64 = 4;

/// Longest a test here may run.
const BOUND: Duration = Duration::from_secs(120);

/// Guests of the fixture (paired into matches, so even).
const GUESTS: usize = 6;
const T0: i64 = 1_700_000_000_000;
/// Far in the future (2100), for sessions still valid after the upgrade.
const FOREVER: i64 = 4_102_444_800_000;

fn migrations(flavour: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(flavour)
}

/// The migration files this build has.
fn current_migrations(flavour: &str) -> i64 {
    std::fs::read_dir(migrations(flavour))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sql"))
        })
        .count() as i64
}

/// The accounts, written first (their ids come from the database).
fn accounts_sql() -> Vec<String> {
    let mut sql: Vec<String> = (0..GUESTS)
        .map(|i| {
            format!(
                "INSERT INTO accounts (device_id, balance, created_at_ms) \
                 VALUES ('old-dev-{i}', 95, {})",
                T0 + i as i64
            )
        })
        .collect();
    sql.push(format!(
        "INSERT INTO accounts (name, password_hash, balance, created_at_ms) \
         VALUES ('veteran', '$argon2id$v=19$m=19456,t=2,p=1$b2xkc2FsdA$b2xkaGFzaA', 100, {T0})"
    ));
    sql
}

/// Everything else, given the guests' ids (in `old-dev-<i>` order) and the
/// named account's: each guest got 100, bought a skin for 30 and won or lost
/// a match paying 25 (balance 95); the veteran got 100. Sessions, profiles, a
/// matched queue ticket, a party and a lab run round it off.
fn rows_sql(guests: &[i64], veteran: i64) -> Vec<String> {
    let mut sql = Vec::new();
    let t = T0 + 1_000;
    for (i, &id) in guests.iter().enumerate() {
        sql.push(format!(
            "INSERT INTO profiles (account_id, display_name, xp, updated_at_ms) \
             VALUES ({id}, 'Old Timer {i}', {}, {t})",
            10 * i
        ));
        sql.push(format!(
            "INSERT INTO sessions (token_id, account_id, created_at_ms, expires_at_ms, revoked) \
             VALUES ('old-session-{i}', {id}, {t}, {FOREVER}, FALSE)"
        ));
        sql.push(format!(
            "INSERT INTO ledger (account_id, delta, reason, reference, created_at_ms) VALUES \
             ({id}, 100, 'grant', 'welcome', {t}), \
             ({id}, -30, 'purchase', 'order-old-{i}', {}), \
             ({id}, 25, 'match_reward', 'old-match-{}', {})",
            t + 1,
            i / 2,
            t + 2
        ));
        sql.push(format!(
            "INSERT INTO purchases (account_id, idempotency_key, item_id, quantity, unit_price, \
             cost, balance_after, created_at_ms) \
             VALUES ({id}, 'order-old-{i}', 'skin.red', 1, 30, 30, 70, {})",
            t + 1
        ));
        sql.push(format!(
            "INSERT INTO inventory (account_id, item_id, quantity) VALUES ({id}, 'skin.red', 1)"
        ));
    }
    for (k, pair) in guests.chunks(2).enumerate() {
        let (winner, loser) = (pair[0], pair[1]);
        sql.push(format!(
            "INSERT INTO match_results (match_id, mode, recorded_at_ms) \
             VALUES ('old-match-{k}', '5v5', {})",
            t + 2
        ));
        sql.push(format!(
            "INSERT INTO match_players (match_id, account_id, team, score, outcome, reward, \
             rating_before, rating_after) VALUES \
             ('old-match-{k}', {winner}, 0, 10, 'win', 25, 1000.0, 1016.0), \
             ('old-match-{k}', {loser}, 1, 3, 'loss', 25, 1000.0, 984.0)"
        ));
        sql.push(format!(
            "INSERT INTO player_stats (account_id, matches_played, wins, losses, draws, \
             score_total, rating, updated_at_ms) VALUES \
             ({winner}, 1, 1, 0, 0, 10, 1016.0, {t}), ({loser}, 1, 0, 1, 0, 3, 984.0, {t})"
        ));
    }
    sql.push(format!(
        "INSERT INTO profiles (account_id, display_name, xp, updated_at_ms) \
         VALUES ({veteran}, 'Veteran', 0, {t})"
    ));
    sql.push(format!(
        "INSERT INTO ledger (account_id, delta, reason, reference, created_at_ms) \
         VALUES ({veteran}, 100, 'grant', 'welcome', {t})"
    ));
    // The queue: one ticket matched into a match that is still live, a party.
    let (a, b) = (guests[0], guests[1]);
    sql.push(format!(
        "INSERT INTO mm_tickets (ticket, mode, members, size, rating, region, joined_ms, state, \
         settled_ms, match_id, team) VALUES \
         ('old-ticket', '5v5', '{a},{b}', 2, 1000, 'eu', {t}, 'matched', {}, 'old-live', 0)",
        t + 5
    ));
    sql.push(format!(
        "INSERT INTO mm_members (account_id, ticket) VALUES ({a}, 'old-ticket'), ({b}, 'old-ticket')"
    ));
    sql.push(format!(
        "INSERT INTO mm_matches (match_id, mode, address, region, seats, formed_ms) VALUES \
         ('old-live', '5v5', '127.0.0.1:7777', 'eu', '{a}:0,{b}:0', {})",
        t + 5
    ));
    sql.push(format!(
        "INSERT INTO parties (party_id, code, leader, created_ms) VALUES ('old-party', 'OLD123', {a}, {t})"
    ));
    sql.push(format!(
        "INSERT INTO party_members (account_id, party_id, joined_ms) VALUES \
         ({a}, 'old-party', {t}), ({b}, 'old-party', {})",
        t + 1
    ));
    sql.push(format!(
        "INSERT INTO lab_runs (recorded_at_ms, kind, mode, matches, git_commit, build_profile, \
         host_json, config_json, summary_json, report_json) VALUES \
         ({t}, 'demo', '5v5', 48, 'abc123', 'release', '{{}}', '{{}}', '{{\"gpc\":12}}', NULL)"
    ));
    sql
}

/// Every row of every table (but sqlx's own), each as one line of text, sorted:
/// what the old schema held, to compare after the upgrade.
type Contents = Vec<(String, Vec<String>)>;

/// `SELECT` of every column of `table` as one text line (NULL as `∅`).
fn row_text_sql(table: &str, columns: &[String]) -> String {
    let line = columns
        .iter()
        .map(|c| format!("COALESCE(CAST({c} AS TEXT), '∅')"))
        .collect::<Vec<_>>()
        .join(" || '|' || ");
    format!("SELECT {line} FROM {table}")
}

/// Runs the same steps on either backend's connection (sqlx has no `Any`
/// here): `$conn` is a `&mut` SQLite or PostgreSQL connection.
macro_rules! old_store_steps {
    ($conn:expr, $tables_sql:expr, $columns_sql:expr) => {{
        let conn = $conn;
        for sql in accounts_sql() {
            sqlx::query(AssertSqlSafe(sql))
                .execute(&mut *conn)
                .await
                .unwrap();
        }
        let rows =
            sqlx::query("SELECT id, device_id FROM accounts ORDER BY device_id IS NULL, device_id")
                .fetch_all(&mut *conn)
                .await
                .unwrap();
        let ids: Vec<i64> = rows.iter().map(|r| r.get::<i64, _>(0)).collect();
        let (guests, veteran) = (&ids[..GUESTS], ids[GUESTS]);
        for sql in rows_sql(guests, veteran) {
            sqlx::query(AssertSqlSafe(sql))
                .execute(&mut *conn)
                .await
                .unwrap();
        }
        contents!(conn, $tables_sql, $columns_sql)
    }};
}

/// Reads [`Contents`] of every table the connection's schema has.
macro_rules! contents {
    ($conn:expr, $tables_sql:expr, $columns_sql:expr) => {{
        let conn = $conn;
        let tables: Vec<String> = sqlx::query($tables_sql)
            .fetch_all(&mut *conn)
            .await
            .unwrap()
            .iter()
            .map(|r| r.get::<String, _>(0))
            .filter(|t| t != "_sqlx_migrations")
            .collect();
        let mut out: Contents = Vec::new();
        for table in tables {
            let columns: Vec<String> = sqlx::query($columns_sql)
                .bind(&table)
                .fetch_all(&mut *conn)
                .await
                .unwrap()
                .iter()
                .map(|r| r.get::<String, _>(0))
                .collect();
            let mut rows: Vec<String> = sqlx::query(AssertSqlSafe(row_text_sql(&table, &columns)))
                .fetch_all(&mut *conn)
                .await
                .unwrap()
                .iter()
                .map(|r| r.get::<String, _>(0))
                .collect();
            rows.sort();
            out.push((table, rows));
        }
        out.sort();
        out
    }};
}

const SQLITE_TABLES: &str =
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
const SQLITE_COLUMNS: &str = "SELECT name FROM pragma_table_info(?) ORDER BY cid";
const PG_TABLES: &str = "SELECT CAST(table_name AS TEXT) FROM information_schema.tables \
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'";
const PG_COLUMNS: &str = "SELECT CAST(column_name AS TEXT) FROM information_schema.columns \
     WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position";

/// Every old row is still there, unchanged (new tables and columns may come).
fn assert_kept(label: &str, before: &Contents, after: &Contents) {
    let mut rows = 0;
    for (table, old_rows) in before {
        let Some((_, new_rows)) = after.iter().find(|(t, _)| t == table) else {
            panic!("{label}: table {table} is gone after the upgrade");
        };
        assert_eq!(
            new_rows, old_rows,
            "{label}: the rows of {table} changed in the upgrade"
        );
        rows += old_rows.len();
    }
    assert!(rows > 40, "{label}: the fixture wrote its rows ({rows})");
}

/// The upgraded store answers for the old data through its API, and takes new
/// writes.
async fn check_upgraded(label: &str, store: &Store, flavour: &str) {
    assert_eq!(
        store.applied_migrations().await.unwrap(),
        current_migrations(flavour),
        "{label}: migrated to this build's version"
    );
    let audit = store.audit().await.unwrap();
    assert!(audit.balanced(), "{label}: {audit:?}");
    assert_eq!(audit.accounts, GUESTS as i64 + 1, "{label}");
    assert_eq!(audit.matches_recorded, GUESTS as i64 / 2, "{label}");
    assert_eq!(audit.balance_total, 95 * GUESTS as i64 + 100, "{label}");

    let veteran = store.account_by_name("veteran").await.unwrap();
    assert_eq!(store.balance(veteran.id).await.unwrap(), 100, "{label}");
    assert!(
        veteran
            .password_hash
            .as_deref()
            .is_some_and(|h| h.starts_with("$argon2id$")),
        "{label}"
    );
    let mut guests = Vec::new();
    for i in 0..GUESTS {
        let account = store.guest_account(&format!("old-dev-{i}")).await.unwrap();
        let id = account.id;
        guests.push(id);
        assert_eq!(store.balance(id).await.unwrap(), 95, "{label}: guest {i}");
        assert_eq!(store.ledger(id, 10).await.unwrap().len(), 3, "{label}");
        let inventory = store.inventory(id).await.unwrap();
        assert_eq!(
            (
                inventory.len(),
                inventory[0].item_id.as_str(),
                inventory[0].quantity
            ),
            (1, "skin.red", 1),
            "{label}"
        );
        assert_eq!(
            store.profile(id).await.unwrap().display_name,
            format!("Old Timer {i}"),
            "{label}"
        );
        let session = store.session(&format!("old-session-{i}")).await.unwrap();
        assert!(session.is_valid_at(T0 + 10_000), "{label}");
        assert_eq!(
            store.match_history(id, 10).await.unwrap().len(),
            1,
            "{label}"
        );
        assert_eq!(
            store.player_stats(id).await.unwrap().matches_played,
            1,
            "{label}"
        );
        // Retries of writes made before the upgrade are recognised.
        let retry = store
            .purchase(&PurchaseRequest {
                account_id: id,
                idempotency_key: format!("order-old-{i}"),
                item_id: "skin.red".into(),
                quantity: 1,
                unit_price: 30,
            })
            .await
            .unwrap();
        assert!(retry.replayed && retry.balance_after == 70, "{label}");
    }
    let old_match = MatchResult {
        match_id: "old-match-0".into(),
        mode: "5v5".into(),
        players: vec![MatchPlayer {
            account_id: guests[0],
            team: 0,
            score: 10,
            outcome: Outcome::Win,
            reward: 25,
        }],
    };
    assert_eq!(
        store.record_match(&old_match).await.unwrap(),
        MatchRecorded::AlreadyRecorded,
        "{label}"
    );
    assert_eq!(
        store.leaderboard(10).await.unwrap().len(),
        GUESTS,
        "{label}"
    );
    let ticket = store.queue_ticket("old-ticket").await.unwrap().unwrap();
    assert_eq!(ticket.state, TicketState::Matched, "{label}");
    assert!(
        store.live_match("old-live").await.unwrap().is_some(),
        "{label}"
    );
    assert!(store.party(guests[1]).await.unwrap().is_some(), "{label}");
    assert_eq!(
        store.audit().await.unwrap(),
        audit,
        "{label}: retries change nothing"
    );

    // New writes on the upgraded store.
    let newcomer = store.guest_account("new-dev").await.unwrap().id;
    store.grant_currency(newcomer, 50, "welcome").await.unwrap();
    let new_match = MatchResult {
        match_id: "new-match".into(),
        ..old_match
    };
    assert_eq!(
        store.record_match(&new_match).await.unwrap(),
        MatchRecorded::Recorded,
        "{label}"
    );
    let audit = store.audit().await.unwrap();
    assert!(audit.balanced(), "{label}: {audit:?}");
    assert_eq!(audit.accounts, GUESTS as i64 + 2, "{label}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_store_of_the_previous_version_upgrades_with_nothing_lost() {
    tokio::time::timeout(BOUND, async {
        let dir = common::temp_dir("upgrade_sqlite");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(hightick_store::SQLITE_FILE_NAME);
        // The old binary: its migrations, its writes, on a connection of its own.
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&file)
            .create_if_missing(true)
            .foreign_keys(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
        let mut conn = sqlx::SqliteConnection::connect_with(&options)
            .await
            .unwrap();
        let old = Migrator::new(migrations("sqlite")).await.unwrap();
        assert!(
            old.iter().any(|m| m.version > PREVIOUS_VERSION),
            "no migration after PREVIOUS_VERSION: nothing to upgrade to"
        );
        old.run_to(PREVIOUS_VERSION, &mut conn).await.unwrap();
        let applied: i64 = sqlx::query("SELECT MAX(version) FROM _sqlx_migrations")
            .fetch_one(&mut conn)
            .await
            .unwrap()
            .get(0);
        assert_eq!(applied, PREVIOUS_VERSION);
        let before = old_store_steps!(&mut conn, SQLITE_TABLES, SQLITE_COLUMNS);
        conn.close().await.unwrap();

        // This build opens it (and migrates).
        let store = Store::open_in_data_dir(&dir).await.unwrap();
        store.close().await;
        let mut conn = sqlx::SqliteConnection::connect_with(&options)
            .await
            .unwrap();
        let after = contents!(&mut conn, SQLITE_TABLES, SQLITE_COLUMNS);
        conn.close().await.unwrap();
        assert_kept("sqlite", &before, &after);
        assert!(after.len() > before.len(), "the upgrade added tables");

        let store = Store::open_in_data_dir(&dir).await.unwrap();
        check_upgraded("sqlite", &store, "sqlite").await;
        store.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .expect("the test ends in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_store_of_the_previous_version_upgrades_with_nothing_lost() {
    let Some(options) = common::pg_options_or_fail_in_ci("upgrade_pg") else {
        return;
    };
    tokio::time::timeout(BOUND, async {
        let schema = options.postgres_schema.clone().unwrap();
        let connect = sqlx::postgres::PgConnectOptions::from_str(&options.url).unwrap();
        let mut conn = sqlx::PgConnection::connect_with(&connect).await.unwrap();
        sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\"")))
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
        let in_schema = connect.options([("search_path", schema.as_str())]);
        let mut conn = sqlx::PgConnection::connect_with(&in_schema).await.unwrap();
        let old = Migrator::new(migrations("postgres")).await.unwrap();
        old.run_to(PREVIOUS_VERSION, &mut conn).await.unwrap();
        let before = old_store_steps!(&mut conn, PG_TABLES, PG_COLUMNS);

        let store = Store::open_with(&options).await.unwrap();
        store.close().await;
        let after = contents!(&mut conn, PG_TABLES, PG_COLUMNS);
        assert_kept("postgres", &before, &after);
        assert!(after.len() > before.len(), "the upgrade added tables");

        let store = Store::open_with(&options).await.unwrap();
        check_upgraded("postgres", &store, "postgres").await;
        store.close().await;
        sqlx::query(AssertSqlSafe(format!("DROP SCHEMA \"{schema}\" CASCADE")))
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    })
    .await
    .expect("the test ends in time");
}
