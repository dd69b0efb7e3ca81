//! The meta-game API over real HTTP: idempotent purchases, never-negative
//! balances under concurrent spending, idempotent match results, sessions
//! that end on logout, and password accounts. SQLite always, PostgreSQL when
//! `HIGHTICK_TEST_DATABASE_URL` is set.

mod common;

use common::Http;
use serde_json::{Value, json};

fn result(match_id: &str, players: &[(i64, i64, &str, i64)]) -> Value {
    let players: Vec<Value> = players
        .iter()
        .map(|&(account_id, team, outcome, reward)| {
            json!({ "account_id": account_id, "team": team, "score": 10, "outcome": outcome, "reward": reward })
        })
        .collect();
    json!({ "match_id": match_id, "mode": "5v5", "players": players })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_purchase_charges_once_and_concurrent_ones_never_overdraw() {
    for (backend, store) in common::stores("purchase", 8).await {
        let (gateway, secrets) = common::start(&common::test_config(), store).await;
        let http = Http::new(gateway.address(), 32);
        let (me, token) = http.guest("buyer").await;
        // Currency comes from a match reward: 1000.
        let a = http
            .post_result(
                &secrets.server_secret,
                &result("m-buy", &[(me, 0, "win", 1000)]),
            )
            .await;
        assert_eq!(a.status, 200, "{backend}: {}", a.text);

        // skin.red costs 100: the same key three times charges once.
        let buy = json!({ "item_id": "skin.red", "quantity": 2, "idempotency_key": "order-1" });
        let first = http.post("/v1/me/purchases", &buy, Some(&token)).await;
        assert_eq!(first.status, 200, "{backend}: {}", first.text);
        assert_eq!(first.body["cost"], 200);
        assert_eq!(first.body["balance_after"], 800);
        assert_eq!(first.body["replayed"], false);
        for _ in 0..2 {
            let again = http.post("/v1/me/purchases", &buy, Some(&token)).await;
            assert_eq!(again.status, 200, "{backend}: {}", again.text);
            assert_eq!(again.body["replayed"], true, "{backend}");
            assert_eq!(again.body["balance_after"], 800, "{backend}");
        }
        let inv = http.get("/v1/me/inventory", Some(&token)).await;
        assert_eq!(inv.body["balance"], 800, "{backend}: {}", inv.text);
        assert_eq!(
            inv.body["items"],
            json!([{ "item_id": "skin.red", "quantity": 2 }])
        );
        // An item the shop does not sell is not found, and names the field.
        let unknown =
            json!({ "item_id": "skin.gold", "quantity": 1, "idempotency_key": "order-2" });
        let a = http.post("/v1/me/purchases", &unknown, Some(&token)).await;
        assert_eq!(a.status, 404, "{}", a.text);
        assert_eq!(a.body["field"], "item_id", "{}", a.text);
        // The same key for a different purchase is a conflict, not a charge.
        let clash = json!({ "item_id": "skin.blue", "quantity": 1, "idempotency_key": "order-1" });
        assert_eq!(
            http.post("/v1/me/purchases", &clash, Some(&token))
                .await
                .status,
            409
        );

        // 20 concurrent purchases of 100 with 800 left: exactly 8 succeed.
        let mut tasks = Vec::new();
        for i in 0..20 {
            let http = http.clone();
            let token = token.clone();
            tasks.push(tokio::spawn(async move {
                let buy = json!({ "item_id": "skin.red", "quantity": 1, "idempotency_key": format!("race-{i}") });
                http.post("/v1/me/purchases", &buy, Some(&token)).await
            }));
        }
        let mut ok = 0;
        for t in tasks {
            let a = t.await.unwrap();
            match a.status {
                200 => ok += 1,
                409 => {
                    assert_eq!(a.body["error"], "insufficient_funds", "{}", a.text);
                    assert_eq!(a.body["field"], "quantity");
                }
                other => panic!("{backend}: unexpected {other}: {}", a.text),
            }
        }
        assert_eq!(ok, 8, "{backend}");
        let profile = http.get("/v1/me/profile", Some(&token)).await;
        assert_eq!(profile.body["balance"], 0, "{backend}: {}", profile.text);
        let inv = http.get("/v1/me/inventory", Some(&token)).await;
        assert_eq!(
            inv.body["items"][0]["quantity"], 10,
            "{backend}: {}",
            inv.text
        );
        gateway.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_result_posted_twice_credits_once() {
    for (backend, store) in common::stores("results", 8).await {
        let (gateway, secrets) = common::start(&common::test_config(), store).await;
        let http = Http::new(gateway.address(), 16);
        let (a, token_a) = http.guest("player-a").await;
        let (b, token_b) = http.guest("player-b").await;
        let r = result("m-twice", &[(a, 0, "win", 50), (b, 1, "loss", 10)]);
        let first = http.post_result(&secrets.server_secret, &r).await;
        assert_eq!(first.status, 200, "{backend}: {}", first.text);
        assert_eq!(first.body["recorded"], true);
        let second = http.post_result(&secrets.server_secret, &r).await;
        assert_eq!(second.status, 200, "{backend}: {}", second.text);
        assert_eq!(second.body["recorded"], false);

        let pa = http.get("/v1/me/profile", Some(&token_a)).await.body;
        assert_eq!(pa["balance"], 50, "{backend}");
        assert_eq!(pa["stats"]["matches_played"], 1, "{backend}");
        assert_eq!(pa["stats"]["wins"], 1);
        assert!(pa["stats"]["rating"].as_f64().unwrap() > 1000.0);
        let pb = http.get("/v1/me/profile", Some(&token_b)).await.body;
        assert_eq!(pb["balance"], 10, "{backend}");
        assert!(pb["stats"]["rating"].as_f64().unwrap() < 1000.0);

        let history = http.get("/v1/me/matches?limit=5", Some(&token_a)).await;
        assert_eq!(history.status, 200, "{}", history.text);
        let lines = history.body["matches"].as_array().unwrap();
        assert_eq!(lines.len(), 1, "{backend}");
        assert_eq!(lines[0]["match_id"], "m-twice");
        assert_eq!(lines[0]["outcome"], "win");

        let board = http.get("/v1/leaderboard", Some(&token_b)).await;
        assert_eq!(board.status, 200, "{}", board.text);
        let top = board.body["top"].as_array().unwrap();
        assert_eq!(top.len(), 2, "{backend}");
        assert_eq!(top[0]["account_id"], a);
        assert_eq!(board.body["me"]["rank"], 2, "{backend}");

        // Without the server secret nothing is stored.
        let forged = http
            .post_result("not-the-secret", &result("m-forged", &[(a, 0, "win", 999)]))
            .await;
        assert_eq!(forged.status, 401);
        let none = http
            .post(
                "/v1/results",
                &result("m-forged", &[(a, 0, "win", 999)]),
                None,
            )
            .await;
        assert_eq!(none.status, 401);
        assert_eq!(
            http.get("/v1/me/profile", Some(&token_a)).await.body["balance"],
            50
        );
        gateway.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_checked_on_every_call_and_end_on_logout() {
    let (gateway, _, http) = common::sqlite_gateway("sessions", &common::test_config()).await;
    let (me, token) = http.guest("session-device").await;
    let profile = http.get("/v1/me/profile", Some(&token)).await;
    assert_eq!(profile.status, 200, "{}", profile.text);
    assert_eq!(profile.body["account_id"], me);
    assert_eq!(profile.body["guest"], true);
    // The same device logs into the same account with a second session.
    let (again, token2) = http.guest("session-device").await;
    assert_eq!(again, me);
    assert_ne!(token, token2);

    assert_eq!(
        http.post("/v1/auth/logout", &json!({}), Some(&token))
            .await
            .status,
        200
    );
    let after = http.get("/v1/me/profile", Some(&token)).await;
    assert_eq!(after.status, 401, "{}", after.text);
    assert_eq!(after.body["field"], "authorization");
    // The other session lives on.
    assert_eq!(http.get("/v1/me/profile", Some(&token2)).await.status, 200);

    let rename = http
        .raw(
            "PUT",
            "/v1/me/profile",
            Some(br#"{"display_name":"');DROP TABLE a;"}"#),
            Some("application/json"),
            Some(&token2),
        )
        .await;
    assert_eq!(rename.status, 200, "{}", rename.text);
    assert_eq!(rename.body["display_name"], "');DROP TABLE a;");
    assert_eq!(http.get("/v1/me/profile", Some(&token2)).await.status, 200);
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_accounts_sign_up_once_and_log_in_with_the_right_password() {
    let (gateway, _, http) = common::sqlite_gateway("password", &common::test_config()).await;
    let creds = json!({ "name": "alice", "password": "correct horse battery" });
    let up = http.post("/v1/auth/signup", &creds, None).await;
    let up = http.settle(up).await;
    assert_eq!(up.status, 200, "{}", up.text);
    let id = up.body["account_id"].as_i64().unwrap();

    let again = http
        .settle(http.post("/v1/auth/signup", &creds, None).await)
        .await;
    assert_eq!(again.status, 409, "{}", again.text);
    assert_eq!(again.body["field"], "name");

    let login = http
        .settle(http.post("/v1/auth/login", &creds, None).await)
        .await;
    assert_eq!(login.status, 200, "{}", login.text);
    assert_eq!(login.body["account_id"], id);
    let token = login.body["session_token"].as_str().unwrap();
    let profile = http.get("/v1/me/profile", Some(token)).await;
    assert_eq!(profile.body["name"], "alice");
    assert_eq!(profile.body["guest"], false);

    let wrong = json!({ "name": "alice", "password": "wrong horse" });
    let denied = http
        .settle(http.post("/v1/auth/login", &wrong, None).await)
        .await;
    assert_eq!(denied.status, 401, "{}", denied.text);
    let nobody = json!({ "name": "nobody", "password": "whatever" });
    let denied = http
        .settle(http.post("/v1/auth/login", &nobody, None).await)
        .await;
    assert_eq!(denied.status, 401, "{}", denied.text);
    gateway.shutdown().await.unwrap();
}
