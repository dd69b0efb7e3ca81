//! A gateway killed with SIGKILL after a match result commits and before it
//! replies, then restarted on the same database, answers the retried post
//! with "already recorded": the reward is credited once and nothing is lost.
//!
//! The gateway runs in a child process: this test binary re-executes itself
//! to run `child_gateway` (which serves until killed), the first time with
//! the crash injected (`Faults::crash_after_result_commit`, which exists only
//! in this crate's test builds: feature `fault-injection`).
//! SQLite always; PostgreSQL too (in a schema of its own) when
//! `HIGHTICK_TEST_DATABASE_URL` is set.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::Http;
use hightick_gateway::{Faults, Gateway, GatewayConfig, Secrets, open_store};
use hightick_store::{Store, StoreOptions};
use serde_json::json;

const CHILD_ENV: &str = "HIGHTICK_TEST_CHILD_GATEWAY_DIR";
const CHILD_SCHEMA_ENV: &str = "HIGHTICK_TEST_CHILD_GATEWAY_PG_SCHEMA";
/// Set for the child that must crash after its first committed result.
const CHILD_CRASH_ENV: &str = "HIGHTICK_TEST_CHILD_GATEWAY_CRASH";
const SECRET: &str = "crash-test-server-secret-0123456789";

/// Runs only inside the child process: a gateway over the database the
/// parent names (SQLite in the given directory, or PostgreSQL in the given
/// schema), until it is killed or told to stop with SIGTERM.
#[test]
fn child_gateway() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = Path::new(&dir);
    let config = GatewayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: dir.join("data"),
        rate_limit_per_s: 0.0,
        token_key_file: Some(dir.join("key.hex")),
        session_key_file: Some(dir.join("session.hex")),
        server_secret_file: Some(dir.join("server.secret")),
        ..GatewayConfig::default()
    };
    let secrets = Secrets::load(
        config.token_key_file.as_deref(),
        config.session_key_file.as_deref(),
        config.server_secret_file.as_deref(),
    )
    .unwrap();
    let faults = Faults {
        crash_after_result_commit: std::env::var_os(CHILD_CRASH_ENV).is_some(),
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = match std::env::var(CHILD_SCHEMA_ENV) {
            // PostgreSQL in a per-test schema, which the config cannot name.
            Ok(schema) => {
                let mut options = StoreOptions::new(std::env::var(common::PG_ENV).unwrap());
                options.postgres_schema = Some(schema);
                Store::open_with(&options).await.unwrap()
            }
            // SQLite under the data directory, as `hightick gateway` opens it.
            Err(_) => open_store(&config).await.unwrap(),
        };
        let gateway = Gateway::start_with_faults(&config, secrets, store, faults)
            .await
            .unwrap();
        println!("LISTENING {}", gateway.address());
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
        term.recv().await;
        gateway.shutdown().await.unwrap();
    });
}

fn spawn_child(dir: &Path, schema: Option<&str>, crash: bool) -> (Child, SocketAddr) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    match schema {
        Some(schema) => command.env(CHILD_SCHEMA_ENV, schema),
        None => command.env_remove(CHILD_SCHEMA_ENV),
    };
    command
        .args([
            "--exact",
            "child_gateway",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if crash {
        command.env(CHILD_CRASH_ENV, "1");
    } else {
        command.env_remove(CHILD_CRASH_ENV);
    }
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let address = loop {
        let line = lines.next().expect("the child prints its address").unwrap();
        // The harness may print "test child_gateway ... " before it.
        if let Some((_, a)) = line.split_once("LISTENING ") {
            break a.trim().parse().unwrap();
        }
    };
    // Keep reading, so the child's later output never meets a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, address)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_committed_before_a_sigkill_is_credited_once_after_the_retry() {
    let mut schemas = vec![None];
    match std::env::var(common::PG_ENV) {
        Ok(url) if !url.is_empty() => schemas.push(Some(format!("t_{}", common::unique("crash")))),
        _ => eprintln!(
            "crash: PostgreSQL part skipped ({} is not set)",
            common::PG_ENV
        ),
    }
    for schema in schemas {
        crash_then_retry(schema.as_deref()).await;
    }
}

/// The scenario on one backend: SQLite when `schema` is `None`.
async fn crash_then_retry(schema: Option<&str>) {
    let backend = if schema.is_some() {
        "postgres"
    } else {
        "sqlite"
    };
    let dir = common::temp_dir("crash");
    std::fs::write(dir.join("key.hex"), "11".repeat(32)).unwrap();
    std::fs::write(dir.join("session.hex"), "22".repeat(32)).unwrap();
    std::fs::write(dir.join("server.secret"), SECRET).unwrap();

    let (mut child, address) = spawn_child(&dir, schema, true);
    let http = Http::new(address, 4);
    let (a, token_a) = http.guest("crash-a").await;
    let (b, _) = http.guest("crash-b").await;
    let result = json!({ "match_id": "m-crash", "mode": "5v5", "players": [
        { "account_id": a, "team": 0, "score": 7, "outcome": "win", "reward": 70 },
        { "account_id": b, "team": 1, "score": 2, "outcome": "loss", "reward": 5 },
    ]});

    // The gateway dies between the commit and the reply: the client sees no answer.
    let body = serde_json::to_vec(&result).unwrap();
    let request = hyper::Request::post(format!("http://{address}/v1/results"))
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {SECRET}"))
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap();
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let answer = tokio::time::timeout(Duration::from_secs(30), client.request(request))
        .await
        .expect("the connection ends");
    assert!(answer.is_err(), "no reply after the crash: {answer:?}");
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");

    // Restarted on the same database, the retried post credits nothing more.
    let (mut child, address) = spawn_child(&dir, schema, false);
    let http = Http::new(address, 4);
    let retry = http.post_result(SECRET, &result).await;
    assert_eq!(retry.status, 200, "{}", retry.text);
    assert_eq!(
        retry.body["recorded"], false,
        "{backend}: the first post had committed"
    );
    let again = http.post_result(SECRET, &result).await;
    assert_eq!(again.body["recorded"], false);

    // The session from before the crash still works (signing key from a file).
    let profile = http.get("/v1/me/profile", Some(&token_a)).await;
    assert_eq!(profile.status, 200, "{}", profile.text);
    assert_eq!(
        profile.body["balance"], 70,
        "{backend}: credited exactly once"
    );
    assert_eq!(profile.body["stats"]["matches_played"], 1);
    assert_eq!(profile.body["stats"]["wins"], 1);
    let history = http.get("/v1/me/matches", Some(&token_a)).await;
    assert_eq!(history.body["matches"].as_array().unwrap().len(), 1);
    assert_eq!(history.body["matches"][0]["match_id"], "m-crash");

    // A clean stop this time.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
