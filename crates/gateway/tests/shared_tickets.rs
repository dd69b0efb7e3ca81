//! Login tickets answered by any gateway: two gateways share one store and
//! one session key (SQLite: one store in process; PostgreSQL, when
//! `HIGHTICK_TEST_DATABASE_URL` is set: two stores on one schema). With one
//! auth worker, logins queue at gateway A; gateway B, which never saw them,
//! answers their tickets:
//! - sign-ups and a guest login queued at A end admitted when polled (and
//!   long-polled) at B, with session tokens B accepts;
//! - a queued login whose session does not exist yet answers 202 at B (a
//!   refused login stays 202 there: only A knows it was refused);
//! - the push socket at B follows A's ticket to its admission;
//! - a ticket past four times its estimate plus the TTL is 404 at B;
//! - a forged or edited ticket is 404 naming `ticket` at both.

mod common;

use common::Http;
use common::socket::{next_push, open};
use hightick_gateway::ticket::{LoginTicket, TicketId, TicketSigner};
use hightick_gateway::{Gateway, GatewayConfig, Secrets};
use hightick_store::{Store, StoreOptions};
use serde_json::{Value, json};

fn config() -> GatewayConfig {
    let mut config = common::test_config();
    config.auth_workers = 1;
    config
}

/// Two stores on one database per backend, labelled: one SQLite store twice
/// (clones share its writer), and two PostgreSQL stores on one schema when
/// the variable is set.
async fn shared_stores(test: &str) -> Vec<(&'static str, Store, Store)> {
    let file = common::temp_dir(test).join("gateway.db");
    let sqlite = Store::open_with(&StoreOptions::new(format!("sqlite://{}", file.display())))
        .await
        .unwrap();
    let mut out = vec![("sqlite", sqlite.clone(), sqlite)];
    match std::env::var(common::PG_ENV) {
        Ok(url) if !url.is_empty() => {
            let mut options = StoreOptions::new(url);
            options.postgres_schema = Some(format!("t_{}", common::unique(test)));
            let a = Store::open_with(&options).await.unwrap();
            let b = Store::open_with(&options).await.unwrap();
            out.push(("postgres", a, b));
        }
        _ => eprintln!(
            "{test}: PostgreSQL part skipped ({} is not set)",
            common::PG_ENV
        ),
    }
    out
}

/// Posts `path` at `http` until it queues (the one worker being busy);
/// gives up after `attempts`.
async fn queued(http: &Http, path: &str, body: &Value, attempts: usize) -> Option<String> {
    for _ in 0..attempts {
        let a = http.post(path, body, None).await;
        if a.status == 202 {
            return Some(a.body["ticket"].as_str().unwrap().to_owned());
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    None
}

/// Long-polls `ticket` at `http` until it is answered.
async fn settle_at(http: &Http, ticket: &str) -> common::Answer {
    loop {
        let a = http
            .get(&format!("/v1/auth/tickets/{ticket}?wait_ms=2000"), None)
            .await;
        if a.status != 202 {
            return a;
        }
        assert_eq!(a.body["ticket"], ticket, "{}", a.text);
    }
}

/// Edits one character in the middle of `ticket`.
fn edited(ticket: &str) -> String {
    let mut bytes = ticket.as_bytes().to_vec();
    bytes[20] = if bytes[20] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

async fn one_backend(label: &str, store_a: Store, store_b: Store) {
    let secrets = Secrets::generate();
    let a = Gateway::start_with_store(&config(), secrets.clone(), store_a)
        .await
        .unwrap();
    let b = Gateway::start_with_store(&config(), secrets.clone(), store_b)
        .await
        .unwrap();
    let (http_a, http_b) = (Http::new(a.address(), 16), Http::new(b.address(), 4));
    let victim = json!({ "name": format!("victim{label}"), "password": "hunter22" });
    let up = http_a
        .settle(http_a.post("/v1/auth/signup", &victim, None).await)
        .await;
    assert_eq!(up.status, 200, "{label}: {}", up.text);

    // Password sign-ups (argon2id, one at a time) keep A's one worker busy;
    // each is collected at B.
    let mut signups = Vec::new();
    for i in 0..6 {
        let (http_a, http_b) = (http_a.clone(), http_b.clone());
        let body = json!({ "name": format!("shared{label}{i}"), "password": "hunter22" });
        signups.push(tokio::spawn(async move {
            let a = http_a.post("/v1/auth/signup", &body, None).await;
            if a.status != 202 {
                return (false, a);
            }
            let ticket = a.body["ticket"].as_str().unwrap().to_owned();
            (true, settle_at(&http_b, &ticket).await)
        }));
    }
    let wrong = json!({ "name": format!("victim{label}"), "password": "wrong-password" });
    let refused = queued(&http_a, "/v1/auth/login", &wrong, 400)
        .await
        .expect("a wrong password queued behind the sign-ups");
    let guest = json!({ "device_id": format!("shared-device-{label}") });
    let ticket = queued(&http_a, "/v1/auth/guest", &guest, 400)
        .await
        .expect("a guest login queued behind the sign-ups");
    assert_eq!(ticket.len(), 58);

    // B has never seen these tickets: before admission it answers 202 from
    // the ticket's own data.
    let early = http_b
        .get(&format!("/v1/auth/tickets/{refused}"), None)
        .await;
    assert_eq!(early.status, 202, "{label}: {}", early.text);
    assert_eq!(
        (&early.body["status"], &early.body["ticket"]),
        (&json!("queued"), &json!(refused))
    );
    assert!(
        early.body["position"].as_u64().unwrap() >= 1,
        "{}",
        early.text
    );

    // The push socket at B follows A's ticket to its admission.
    let mut socket = open(b.address(), &format!("?login_ticket={ticket}"), None)
        .await
        .expect("a foreign login ticket opens a socket");
    let admitted = loop {
        let push = next_push(&mut socket).await;
        match push["type"].as_str().unwrap() {
            "login_queue" => assert_eq!(push["ticket"], ticket.as_str()),
            "admitted" => break push,
            other => panic!("{label}: unexpected push {other}: {push}"),
        }
    };
    let polled = settle_at(&http_b, &ticket).await;
    assert_eq!(polled.status, 200, "{label}: {}", polled.text);
    assert_eq!(polled.body["status"], "admitted");
    assert_eq!(polled.body["account_id"], admitted["account_id"]);
    let token = polled.body["session_token"].as_str().unwrap();
    let profile = http_b.get("/v1/me/profile", Some(token)).await;
    assert_eq!(profile.status, 200, "{label}: {}", profile.text);
    // A answers its own ticket the same.
    let at_a = http_a
        .get(&format!("/v1/auth/tickets/{ticket}"), None)
        .await;
    assert_eq!(at_a.body["account_id"], polled.body["account_id"]);

    let mut collected_at_b = 0;
    for s in signups {
        let (queued, answer) = s.await.unwrap();
        assert_eq!(answer.status, 200, "{label}: {}", answer.text);
        if queued {
            collected_at_b += 1;
            let token = answer.body["session_token"].as_str().unwrap();
            let me = http_b.get("/v1/me/profile", Some(token)).await;
            assert_eq!(me.status, 200, "{label}: {}", me.text);
        }
    }
    assert!(collected_at_b >= 1, "{label}: a sign-up queued at A");

    // The refused login: A says so; B cannot know and still says queued.
    let at_a = settle_at(&http_a, &refused).await;
    assert_eq!(
        (at_a.status, &at_a.body["field"]),
        (401, &json!("password"))
    );
    let at_b = http_b
        .get(&format!("/v1/auth/tickets/{refused}"), None)
        .await;
    assert_eq!(at_b.status, 202, "{label}: {}", at_b.text);

    // Tickets made with the shared key: a fresh one with no session is
    // queued (long-polled too) with an estimate from its own data; one past
    // four times its estimate plus the TTL is gone.
    let shared = TicketSigner::new(&secrets.session_key);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let fresh = shared.sign(&LoginTicket {
        id: TicketId::random(),
        issued_at_ms: now_ms,
        position: 40,
        estimate_ms: 60_000,
    });
    let answer = http_b
        .get(&format!("/v1/auth/tickets/{fresh}?wait_ms=300"), None)
        .await;
    assert_eq!(answer.status, 202, "{label}: {}", answer.text);
    let position = answer.body["position"].as_u64().unwrap();
    assert!((1..=40).contains(&position), "{label}: {}", answer.text);
    assert!(answer.body["estimate_ms"].as_u64().unwrap() <= 60_000);
    let stale = shared.sign(&LoginTicket {
        id: TicketId::random(),
        issued_at_ms: now_ms - 3_600_000,
        position: 1,
        estimate_ms: 10,
    });
    let answer = http_b.get(&format!("/v1/auth/tickets/{stale}"), None).await;
    assert_eq!(
        (answer.status, &answer.body["field"]),
        (404, &json!("ticket"))
    );

    // Forged (another key) or edited tickets are not found at either.
    let forged = TicketSigner::new(&[1; 32]).sign(&LoginTicket {
        id: TicketId::random(),
        issued_at_ms: 0,
        position: 1,
        estimate_ms: 0,
    });
    for bad in [forged, edited(&ticket), edited(&refused)] {
        for http in [&http_a, &http_b] {
            let a = http.get(&format!("/v1/auth/tickets/{bad}"), None).await;
            assert_eq!(
                (a.status, &a.body["field"]),
                (404, &json!("ticket")),
                "{label}: {}",
                a.text
            );
        }
        let refused = open(b.address(), &format!("?login_ticket={bad}"), None).await;
        assert!(refused.is_err(), "{label}: a forged ticket opened a socket");
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_issued_by_one_gateway_is_answered_by_another() {
    for (label, store_a, store_b) in shared_stores("shared_tickets").await {
        one_backend(label, store_a, store_b).await;
    }
}
