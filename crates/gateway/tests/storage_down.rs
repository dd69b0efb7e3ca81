//! A store that fails (its pools closed under a running gateway, as when
//! the database goes away): every route that needs it answers 503 with a
//! Retry-After and the usual JSON error body naming the cause, never a
//! hang, a dropped connection or a 500; routes that do not need it carry on.

mod common;

use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_store_is_a_503_with_retry_after_in_the_usual_shape() {
    let (gateway, secrets, http) =
        common::sqlite_gateway("storage_down", &common::test_config()).await;
    let (me, token) = http.guest("storage-down").await;
    assert_eq!(http.get("/v1/me/profile", Some(&token)).await.status, 200);

    gateway.store().close().await;

    let result = json!({
        "match_id": "m-down", "mode": "5v5",
        "players": [{ "account_id": me, "team": 0, "score": 1, "outcome": "win", "reward": 10 }],
    });
    let buy = json!({ "item_id": "skin.red", "quantity": 1, "idempotency_key": "down-1" });
    let answers = [
        ("profile", http.get("/v1/me/profile", Some(&token)).await),
        (
            "leaderboard",
            http.get("/v1/leaderboard", Some(&token)).await,
        ),
        (
            "purchase",
            http.post("/v1/me/purchases", &buy, Some(&token)).await,
        ),
        (
            "guest login",
            http.settle(
                http.post("/v1/auth/guest", &json!({ "device_id": "new-one" }), None)
                    .await,
            )
            .await,
        ),
        (
            "result",
            http.post_result(&secrets.server_secret, &result).await,
        ),
    ];
    for (what, a) in answers {
        assert_eq!(a.status, 503, "{what}: {}", a.text);
        let wait: u64 = a
            .retry_after
            .as_deref()
            .unwrap_or_else(|| panic!("{what}: no Retry-After"))
            .parse()
            .unwrap();
        assert!(wait >= 1, "{what}");
        assert_eq!(a.body["error"], "unavailable", "{what}: {}", a.text);
        let message = a.body["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("storage: "), "{what}: {message}");
        assert!(a.body.as_object().unwrap().contains_key("field"), "{what}");
    }
    // What needs no store still answers.
    assert_eq!(http.get("/healthz", None).await.status, 200);
    assert_eq!(http.get("/v1/shop", None).await.status, 200);
    gateway.shutdown().await.unwrap();
}
