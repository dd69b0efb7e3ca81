//! Shared by the gateway's end-to-end tests: a gateway on loopback over each
//! backend (SQLite always, PostgreSQL when `HIGHTICK_TEST_DATABASE_URL` is
//! set, each test in its own schema), and an HTTP client over a bounded pool
//! of keep-alive connections.
#![allow(dead_code)]

pub(crate) mod host;
pub(crate) mod socket;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hightick_gateway::{Gateway, GatewayConfig, Secrets};
use hightick_store::{Store, StoreOptions};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::sync::Semaphore;

pub(crate) const PG_ENV: &str = "HIGHTICK_TEST_DATABASE_URL";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A name no other test run uses: `<test>_<pid>_<seq>`.
pub(crate) fn unique(test: &str) -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut s = format!("{test}_{}_{n}", std::process::id());
    s.truncate(50);
    s
}

/// A fresh, empty directory under the system temp dir.
pub(crate) fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-gateway-{}", unique(test)));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One fresh store per backend, labelled: SQLite in a file always,
/// PostgreSQL in its own schema when the variable is set.
pub(crate) async fn stores(test: &str, connections: u32) -> Vec<(&'static str, Store)> {
    let dir = temp_dir(test);
    let mut sqlite = StoreOptions::new(format!("sqlite://{}", dir.join("gateway.db").display()));
    sqlite.max_connections = connections;
    let mut out = vec![("sqlite", Store::open_with(&sqlite).await.unwrap())];
    match std::env::var(PG_ENV) {
        Ok(url) if !url.is_empty() => {
            let mut options = StoreOptions::new(url);
            options.max_connections = connections;
            options.postgres_schema = Some(format!("t_{}", unique(test)));
            out.push(("postgres", Store::open_with(&options).await.unwrap()));
        }
        _ => eprintln!("{test}: PostgreSQL part skipped ({PG_ENV} is not set)"),
    }
    out
}

/// A config for tests: loopback on any port, no rate limit.
pub(crate) fn test_config() -> GatewayConfig {
    GatewayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        rate_limit_per_s: 0.0,
        ..GatewayConfig::default()
    }
}

/// A gateway over `store` with `config`.
pub(crate) async fn start(config: &GatewayConfig, store: Store) -> (Gateway, Secrets) {
    let secrets = Secrets::generate();
    let gateway = Gateway::start_with_store(config, secrets.clone(), store)
        .await
        .expect("gateway starts");
    (gateway, secrets)
}

/// A gateway with `config` over a fresh SQLite store, and a client of it.
pub(crate) async fn sqlite_gateway(test: &str, config: &GatewayConfig) -> (Gateway, Secrets, Http) {
    let (_, store) = stores(test, 4).await.remove(0);
    let (gateway, secrets) = start(config, store).await;
    let http = Http::new(gateway.address(), 8);
    (gateway, secrets, http)
}

/// An answer: status and JSON body (`Value::Null` when not JSON).
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub retry_after: Option<String>,
    /// The `content-type` header, if any.
    pub content_type: Option<String>,
}

/// HTTP/1.1 client sharing at most `connections` keep-alive connections:
/// a request waits for a free slot, so thousands of logical clients never
/// open thousands of sockets.
#[derive(Clone)]
pub(crate) struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    slots: Arc<Semaphore>,
    base: String,
}

impl Http {
    pub(crate) fn new(address: SocketAddr, connections: usize) -> Self {
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(connections)
            .pool_idle_timeout(Duration::from_secs(30))
            .build_http();
        Self {
            client,
            slots: Arc::new(Semaphore::new(connections)),
            base: format!("http://{address}"),
        }
    }

    /// Sends a request with optional JSON body, bearer token and extra header.
    pub(crate) async fn raw(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        content_type: Option<&str>,
        bearer: Option<&str>,
    ) -> Answer {
        let _slot = self.slots.acquire().await.unwrap();
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(ct) = content_type {
            request = request.header("content-type", ct);
        }
        if let Some(token) = bearer {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::copy_from_slice(body.unwrap_or_default())))
            .unwrap();
        let response = self.client.request(request).await.expect("gateway answers");
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Answer {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            text,
            retry_after,
            content_type,
        }
    }

    pub(crate) async fn get(&self, path: &str, bearer: Option<&str>) -> Answer {
        self.raw("GET", path, None, None, bearer).await
    }

    pub(crate) async fn post(&self, path: &str, body: &Value, bearer: Option<&str>) -> Answer {
        let bytes = serde_json::to_vec(body).unwrap();
        self.raw("POST", path, Some(&bytes), Some("application/json"), bearer)
            .await
    }

    /// Logs in as a guest and waits out the queue; returns the session token.
    pub(crate) async fn guest(&self, device_id: &str) -> (i64, String) {
        let mut a = self
            .post(
                "/v1/auth/guest",
                &serde_json::json!({ "device_id": device_id }),
                None,
            )
            .await;
        while a.status == 202 {
            let ticket = a.body["ticket"].as_str().unwrap().to_owned();
            a = self
                .get(&format!("/v1/auth/tickets/{ticket}?wait_ms=2000"), None)
                .await;
        }
        assert_eq!(a.status, 200, "{}", a.text);
        (
            a.body["account_id"].as_i64().unwrap(),
            a.body["session_token"].as_str().unwrap().to_owned(),
        )
    }

    /// Follows a login ticket until it is answered.
    pub(crate) async fn settle(&self, mut a: Answer) -> Answer {
        while a.status == 202 {
            let ticket = a.body["ticket"].as_str().unwrap().to_owned();
            a = self
                .get(&format!("/v1/auth/tickets/{ticket}?wait_ms=2000"), None)
                .await;
        }
        a
    }

    /// Posts a match result as a server.
    pub(crate) async fn post_result(&self, secret: &str, result: &Value) -> Answer {
        self.post("/v1/results", result, Some(secret)).await
    }
}

/// The PostgreSQL options of test `test` in a schema of its own, or `None`
/// to skip: only when the variable is unset outside CI (in CI a missing
/// database fails).
pub(crate) fn postgres(test: &str) -> Option<StoreOptions> {
    let url = std::env::var(PG_ENV).ok().filter(|u| !u.is_empty());
    let Some(url) = url else {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: {PG_ENV} must be set in CI"
        );
        eprintln!("{test}: skipped ({PG_ENV} is not set)");
        return None;
    };
    let mut options = StoreOptions::new(url);
    options.postgres_schema = Some(unique(test));
    Some(options)
}

/// Long-polls `ticket` at `http` until it is matched (at most 30 s); its
/// `match` object.
pub(crate) async fn matched(http: &Http, session: &str, ticket: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let a = http
            .get(
                &format!("/v1/matchmaking/tickets/{ticket}?wait_ms=2000"),
                Some(session),
            )
            .await;
        if a.body["status"] == "matched" {
            return a.body["match"].clone();
        }
        assert_eq!(a.status, 202, "{}", a.text);
        assert!(
            std::time::Instant::now() < deadline,
            "never matched: {}",
            a.text
        );
    }
}
