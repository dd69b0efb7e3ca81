//! PostgreSQL over TLS, against a real server with `ssl = on` and a CA of its own
//! (`.ci/postgres-tls.sh` makes one; `.ci/run` exports the variables below).
//!
//! - `HIGHTICK_TEST_DATABASE_TLS_URL`: `postgres://user:pw@localhost:port/db`;
//!   the test sets `sslmode=verify-full` and `sslrootcert` on it itself.
//! - `HIGHTICK_TEST_DATABASE_TLS_CA`: the CA that signed the server's certificate
//!   (optional when the URL already names it as `sslrootcert`).
//!
//! With the right CA the store connects over TLS, migrates and records a
//! purchase; with a CA the test makes itself (rcgen) the connection is refused,
//! and the error says TLS and certificate. Without the URL the test is skipped
//! loudly; under `CI=true` it fails instead.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use hightick_store::{BackendKind, PurchaseRequest, Store, StoreError, StoreOptions};
use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, KeyPair};
use sqlx::Connection;

const URL_ENV: &str = "HIGHTICK_TEST_DATABASE_TLS_URL";
const CA_ENV: &str = "HIGHTICK_TEST_DATABASE_TLS_CA";

/// `url` with `params` set: any earlier value of the same name goes.
fn with_params(url: &str, params: &[(&str, &str)]) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept: Vec<String> = query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .filter(|kv| {
            let name = kv.split_once('=').map_or(*kv, |(n, _)| n);
            params.iter().all(|(p, _)| *p != name)
        })
        .map(str::to_owned)
        .collect();
    kept.extend(params.iter().map(|(n, v)| format!("{n}={v}")));
    format!("{base}?{}", kept.join("&"))
}

/// The server's URL with `sslmode=verify-full` and `sslrootcert=<the right CA>`,
/// or `None` after saying why the test is skipped (a failure under `CI=true`).
fn tls_url() -> Option<String> {
    let Some(url) = std::env::var(URL_ENV).ok().filter(|u| !u.is_empty()) else {
        let why = format!(
            "{URL_ENV} is not set (.ci/run sets it: .ci/postgres-tls.sh makes a PostgreSQL \
             cluster with TLS)"
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("\n!!! SKIPPED: {why}\n");
        return None;
    };
    let mut params = vec![("sslmode", "verify-full")];
    let ca = std::env::var(CA_ENV).ok().filter(|c| !c.is_empty());
    match &ca {
        Some(ca) => params.push(("sslrootcert", ca)),
        None => assert!(
            url.contains("sslrootcert="),
            "{URL_ENV} names no sslrootcert and {CA_ENV} is not set"
        ),
    }
    Some(with_params(&url, &params))
}

/// Options for `url` in a schema of this run's own, failing fast.
fn options(url: String, test: &str) -> StoreOptions {
    let mut options = StoreOptions::new(url);
    options.postgres_schema = Some(format!("t_{}", common::unique(test)));
    options.acquire_timeout = Duration::from_secs(10);
    options
}

/// A CA of the test's own making (the server's certificate is not signed by it).
fn wrong_ca(dir: &Path) -> PathBuf {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "not the server's CA");
    params.distinguished_name = name;
    let ca = params.self_signed(&KeyPair::generate().unwrap()).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("wrong-ca.pem");
    std::fs::write(&path, ca.pem()).unwrap();
    path
}

#[tokio::test]
async fn verify_full_connects_migrates_and_writes() {
    let Some(url) = tls_url() else { return };

    // The session really is encrypted (sqlx itself, same URL).
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let (ssl, version): (bool, String) =
        sqlx::query_as("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    conn.close().await.unwrap();
    assert!(ssl, "the session is not encrypted");
    assert!(version.starts_with("TLSv1."), "{version}");

    let store = Store::open_with(&options(url, "tls_ok")).await.unwrap();
    assert_eq!(store.backend(), BackendKind::Postgres);
    assert!(store.applied_migrations().await.unwrap() > 0);
    let player = store.guest_account("tls-device").await.unwrap();
    store
        .grant_currency(player.id, 100, "welcome")
        .await
        .unwrap();
    let receipt = store
        .purchase(&PurchaseRequest {
            account_id: player.id,
            idempotency_key: "tls-order-1".into(),
            item_id: "skin.red".into(),
            quantity: 1,
            unit_price: 30,
        })
        .await
        .unwrap();
    assert_eq!(receipt.balance_after, 70);
    assert_eq!(store.balance(player.id).await.unwrap(), 70);
    store.close().await;
}

#[tokio::test]
async fn a_wrong_ca_is_refused_with_a_clear_error() {
    let Some(url) = tls_url() else { return };
    let wrong = wrong_ca(&common::temp_dir("tls_wrong_ca"));
    let url = with_params(&url, &[("sslrootcert", wrong.to_str().unwrap())]);

    let err = Store::open_with(&options(url, "tls_wrong_ca"))
        .await
        .expect_err("a server certificate the CA did not sign was accepted");
    let text = err.to_string();
    eprintln!("refused as expected: {text}");
    assert!(
        matches!(err, StoreError::Backend(sqlx::Error::Tls(_))),
        "{err:?}"
    );
    assert!(text.contains("TLS"), "{text}");
    assert!(text.contains("certificate"), "{text}");
}

#[test]
fn with_params_replaces_and_appends() {
    assert_eq!(
        with_params("postgres://h/db", &[("sslmode", "verify-full")]),
        "postgres://h/db?sslmode=verify-full"
    );
    assert_eq!(
        with_params(
            "postgres://h/db?sslmode=require&application_name=x&sslrootcert=/a.pem",
            &[("sslmode", "verify-full"), ("sslrootcert", "/b.pem")]
        ),
        "postgres://h/db?application_name=x&sslmode=verify-full&sslrootcert=/b.pem"
    );
}
