//! The launch-day stampede: 20,000 guest logins fired at once at a gateway
//! whose auth pool has two workers. Nobody gets an error, everybody is
//! admitted, and a waiting client's queue position only ever goes down.
//!
//! The process may hold at most 20,000 open files, and the gateway runs in
//! this same process, so the 20,000 logical clients SHARE a pool of 256
//! keep-alive HTTP/1.1 connections (a request waits for a free connection);
//! they are still all in flight at once as far as the login queue sees.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::Http;
use serde_json::json;

const LOGINS: usize = 20_000;

fn logins() -> usize {
    std::env::var("STAMPEDE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LOGINS)
}
const CONNECTIONS: usize = 256;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_guest_logins_are_all_admitted_in_order() {
    for (backend, store) in common::stores("stampede", 8).await {
        let mut config = common::test_config();
        config.auth_workers = 2;
        let (gateway, _) = common::start(&config, store).await;
        let http = Http::new(gateway.address(), CONNECTIONS);
        let queued = Arc::new(AtomicU64::new(0));
        let n = logins();
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let http = http.clone();
            let queued = Arc::clone(&queued);
            clients.push(tokio::spawn(async move {
                let body = json!({ "device_id": format!("stampede-device-{i}") });
                let mut a = http.post("/v1/auth/guest", &body, None).await;
                let mut last_position = u64::MAX;
                if a.status == 202 {
                    queued.fetch_add(1, Ordering::Relaxed);
                }
                while a.status == 202 {
                    let position = a.body["position"].as_u64().expect("a position");
                    if a.body["status"] == "queued" {
                        assert!(
                            position <= last_position,
                            "position rose from {last_position} to {position}"
                        );
                        assert!(position >= 1);
                        last_position = position;
                    } else {
                        assert_eq!(a.body["status"], "working");
                        last_position = 0;
                    }
                    let ticket = a.body["ticket"].as_str().expect("a ticket").to_owned();
                    // Like a real client: come back when the estimate says,
                    // without holding a connection meanwhile; near the head,
                    // long-poll.
                    let estimate = a.body["estimate_ms"].as_u64().unwrap_or(0);
                    if estimate > 100 {
                        tokio::time::sleep(Duration::from_millis(estimate.min(5_000))).await;
                    }
                    let wait = if estimate > 100 { 0 } else { 500 };
                    a = http
                        .get(&format!("/v1/auth/tickets/{ticket}?wait_ms={wait}"), None)
                        .await;
                }
                assert_eq!(a.status, 200, "{}", a.text);
                assert_eq!(a.body["status"], "admitted");
                assert!(a.body["session_token"].is_string());
                a.body["account_id"].as_i64().expect("an account id")
            }));
        }
        let started = Instant::now();
        let mut accounts = HashSet::with_capacity(n);
        for c in clients {
            accounts.insert(c.await.expect("no client failed"));
        }
        assert_eq!(accounts.len(), n, "{backend}: one account per device");
        let queued = queued.load(Ordering::Relaxed);
        assert!(
            queued > n as u64 / 20,
            "{backend}: the queue should have engaged, {queued} queued"
        );
        let metrics = http.get("/metrics", None).await.text;
        assert!(
            metrics.contains("hightick_gateway_login_queue_depth 0\n"),
            "{metrics}"
        );
        assert!(
            metrics.contains(&format!("hightick_gateway_logins_total {n}\n")),
            "{metrics}"
        );
        for status in ["500", "502", "503", "429"] {
            assert!(
                !metrics.contains(&format!("status=\"{status}\"")),
                "{backend}: {status} answers: {metrics}"
            );
        }
        eprintln!(
            "{backend}: {n} admitted in {:?}, {queued} through the queue",
            started.elapsed()
        );
        gateway.shutdown().await.unwrap();
    }
}
