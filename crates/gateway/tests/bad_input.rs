//! Bad input of every kind gets a 4xx with a JSON error naming the field,
//! never a 5xx, a panic or a dropped connection; SQL-looking text is plain
//! data; forged, altered and expired tokens are refused; a client over its
//! rate gets 429 with Retry-After.

mod common;

use common::Http;
use hightick_gateway::session::{SessionClaims, SessionSigner};
use serde_json::json;

struct Case {
    name: &'static str,
    method: &'static str,
    path: &'static str,
    body: Vec<u8>,
    content_type: Option<&'static str>,
    authed: bool,
    status: u16,
    field: &'static str,
}

fn case(
    name: &'static str,
    method: &'static str,
    path: &'static str,
    body: &str,
    authed: bool,
    status: u16,
    field: &'static str,
) -> Case {
    Case {
        name,
        method,
        path,
        body: body.as_bytes().to_vec(),
        content_type: Some("application/json"),
        authed,
        status,
        field,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_request_is_a_4xx_naming_the_field() {
    let (gateway, secrets, http) =
        common::sqlite_gateway("bad_input", &common::test_config()).await;
    let (me, token) = http.guest("bad-input-device").await;
    let huge = format!("{{\"device_id\":\"{}\"}}", "x".repeat(64 * 1024));
    let cases = vec![
        case(
            "malformed json",
            "POST",
            "/v1/auth/guest",
            "{\"device_id\":",
            false,
            400,
            "body",
        ),
        case(
            "not an object",
            "POST",
            "/v1/auth/guest",
            "[1,2]",
            false,
            422,
            "body",
        ),
        case(
            "wrong type",
            "POST",
            "/v1/auth/guest",
            "{\"device_id\":42}",
            false,
            422,
            "device_id",
        ),
        case(
            "missing field",
            "POST",
            "/v1/auth/guest",
            "{}",
            false,
            422,
            "device_id",
        ),
        case(
            "unknown field",
            "POST",
            "/v1/auth/guest",
            "{\"device_id\":\"d\",\"admin\":true}",
            false,
            422,
            "admin",
        ),
        case(
            "empty id",
            "POST",
            "/v1/auth/guest",
            "{\"device_id\":\"\"}",
            false,
            400,
            "device_id",
        ),
        case(
            "control chars",
            "POST",
            "/v1/auth/guest",
            "{\"device_id\":\"a\\u0000b\"}",
            false,
            400,
            "device_id",
        ),
        case(
            "id too long",
            "POST",
            "/v1/auth/guest",
            &format!("{{\"device_id\":\"{}\"}}", "y".repeat(200)),
            false,
            400,
            "device_id",
        ),
        Case {
            body: huge.into_bytes(),
            ..case(
                "oversized body",
                "POST",
                "/v1/auth/guest",
                "",
                false,
                413,
                "body",
            )
        },
        Case {
            content_type: Some("text/plain"),
            ..case(
                "not json",
                "POST",
                "/v1/auth/guest",
                "{\"device_id\":\"d\"}",
                false,
                415,
                "content-type",
            )
        },
        Case {
            content_type: None,
            ..case(
                "no content type",
                "POST",
                "/v1/auth/guest",
                "{\"device_id\":\"d\"}",
                false,
                415,
                "content-type",
            )
        },
        case(
            "empty password",
            "POST",
            "/v1/auth/signup",
            "{\"name\":\"bob\",\"password\":\"\"}",
            false,
            400,
            "password",
        ),
        case(
            "long name",
            "POST",
            "/v1/auth/signup",
            &format!("{{\"name\":\"{}\",\"password\":\"pw\"}}", "n".repeat(65)),
            false,
            400,
            "name",
        ),
        case(
            "no token",
            "GET",
            "/v1/me/profile",
            "",
            false,
            401,
            "authorization",
        ),
        case(
            "negative quantity",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":-5,\"idempotency_key\":\"k\"}",
            true,
            400,
            "quantity",
        ),
        case(
            "zero quantity",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":0,\"idempotency_key\":\"k\"}",
            true,
            400,
            "quantity",
        ),
        case(
            "huge quantity",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":99999999999999,\"idempotency_key\":\"k\"}",
            true,
            400,
            "quantity",
        ),
        case(
            "overflowing quantity",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":1e40,\"idempotency_key\":\"k\"}",
            true,
            422,
            "quantity",
        ),
        case(
            "fractional quantity",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":1.5,\"idempotency_key\":\"k\"}",
            true,
            422,
            "quantity",
        ),
        case(
            "string quantity",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":\"1\",\"idempotency_key\":\"k\"}",
            true,
            422,
            "quantity",
        ),
        case(
            "client sets the price",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":1,\"idempotency_key\":\"k\",\"unit_price\":0}",
            true,
            422,
            "unit_price",
        ),
        case(
            "sql item",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red' OR '1'='1\",\"quantity\":1,\"idempotency_key\":\"k\"}",
            true,
            400,
            "item_id",
        ),
        case(
            "no key",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":1,\"idempotency_key\":\"\"}",
            true,
            400,
            "idempotency_key",
        ),
        case(
            "poor buyer",
            "POST",
            "/v1/me/purchases",
            "{\"item_id\":\"skin.red\",\"quantity\":1,\"idempotency_key\":\"k\"}",
            true,
            409,
            "quantity",
        ),
        case(
            "bad limit",
            "GET",
            "/v1/me/matches?limit=-3",
            "",
            true,
            400,
            "limit",
        ),
        case(
            "huge limit",
            "GET",
            "/v1/me/matches?limit=100000000000000000000000",
            "",
            true,
            400,
            "limit",
        ),
        case(
            "bad wait",
            "GET",
            "/v1/auth/tickets/abc?wait_ms=999999999",
            "",
            false,
            400,
            "wait_ms",
        ),
        case(
            "unknown ticket",
            "GET",
            "/v1/auth/tickets/abc",
            "",
            false,
            404,
            "ticket",
        ),
        case(
            "unknown mode",
            "POST",
            "/v1/matchmaking/tickets",
            "{\"mode\":\"'; DELETE FROM sessions; --\"}",
            true,
            400,
            "mode",
        ),
        case(
            "long display name",
            "PUT",
            "/v1/me/profile",
            &format!("{{\"display_name\":\"{}\"}}", "z".repeat(65)),
            true,
            400,
            "display_name",
        ),
        case(
            "result without secret",
            "POST",
            "/v1/results",
            "{}",
            false,
            401,
            "authorization",
        ),
    ];
    for c in &cases {
        let bearer = c.authed.then_some(token.as_str());
        let a = http
            .raw(c.method, c.path, Some(&c.body), c.content_type, bearer)
            .await;
        assert_eq!(a.status, c.status, "{}: {}", c.name, a.text);
        assert!(a.body.is_object(), "{}: not JSON: {}", c.name, a.text);
        assert!(a.body["error"].is_string(), "{}: {}", c.name, a.text);
        assert_eq!(a.body["field"], c.field, "{}: {}", c.name, a.text);
    }

    // Server results: wrong types, negative and huge amounts, duplicates.
    let secret = secrets.server_secret.as_str();
    let player = |reward: serde_json::Value| {
        json!({ "match_id": "m-bad", "mode": "5v5", "players": [
            { "account_id": me, "team": 0, "score": 1, "outcome": "win", "reward": reward }
        ]})
    };
    for (name, body, status, field) in [
        ("negative reward", player(json!(-1)), 400, "reward"),
        (
            "huge reward",
            player(json!(1_000_000_000_000_000i64)),
            400,
            "reward",
        ),
        (
            "string reward",
            player(json!("10")),
            422,
            "players[0].reward",
        ),
        (
            "bad outcome",
            json!({ "match_id": "m", "mode": "5v5", "players": [{ "account_id": me, "team": 0, "score": 1, "outcome": "flawless" }] }),
            422,
            "players[0].outcome",
        ),
        (
            "no players",
            json!({ "match_id": "m", "mode": "5v5", "players": [] }),
            400,
            "players",
        ),
        (
            "twice the same player",
            json!({ "match_id": "m", "mode": "5v5", "players": [
            { "account_id": me, "team": 0, "score": 1, "outcome": "win" },
            { "account_id": me, "team": 1, "score": 1, "outcome": "loss" }] }),
            400,
            "players",
        ),
        (
            "sql match id",
            json!({ "match_id": "m'); DROP TABLE match_results; --", "mode": "5v5", "players": [
            { "account_id": me, "team": 0, "score": 1, "outcome": "win" }] }),
            200,
            "",
        ),
        (
            "unknown account",
            json!({ "match_id": "m-ghost", "mode": "5v5", "players": [
            { "account_id": 987654321, "team": 0, "score": 1, "outcome": "win" }] }),
            404,
            "",
        ),
    ] {
        let a = http.post_result(secret, &body).await;
        assert_eq!(a.status, status, "{name}: {}", a.text);
        if !field.is_empty() {
            assert_eq!(a.body["field"], field, "{name}: {}", a.text);
        }
    }
    // The SQL-looking match id was stored as data, and the tables are intact.
    let history = http.get("/v1/me/matches", Some(&token)).await;
    assert_eq!(history.status, 200, "{}", history.text);
    assert_eq!(
        history.body["matches"][0]["match_id"],
        "m'); DROP TABLE match_results; --"
    );

    // Nothing above produced a 5xx.
    let metrics = http.get("/metrics", None).await.text;
    assert!(!metrics.contains("status=\"5"), "{metrics}");
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_altered_expired_and_malformed_tokens_are_refused() {
    let (gateway, secrets, http) = common::sqlite_gateway("tokens", &common::test_config()).await;
    let (me, token) = http.guest("token-device").await;
    let other_key = SessionSigner::new(&[0x55; 32]);
    let forged = other_key.sign(&SessionClaims {
        account_id: me,
        token_id: "whatever".into(),
        expires_at_ms: i64::MAX,
    });
    let expired = SessionSigner::new(&secrets.session_key).sign(&SessionClaims {
        account_id: me,
        token_id: "t".into(),
        expires_at_ms: 1,
    });
    let never_stored = SessionSigner::new(&secrets.session_key).sign(&SessionClaims {
        account_id: me,
        token_id: "never-stored".into(),
        expires_at_ms: i64::MAX,
    });
    let (id_part, rest) = token.split_once('.').unwrap();
    let other_account = format!("{}.{rest}", id_part.parse::<i64>().unwrap() + 1);
    for (name, bad) in [
        ("forged", forged.as_str()),
        ("expired", expired.as_str()),
        ("never stored", never_stored.as_str()),
        ("other account", other_account.as_str()),
        ("garbage", "garbage"),
        ("empty", ""),
        ("sql", "' OR 1=1 --"),
    ] {
        let a = http.get("/v1/me/profile", Some(bad)).await;
        assert_eq!(a.status, 401, "{name}: {}", a.text);
        assert_eq!(a.body["field"], "authorization", "{name}");
    }
    let a = http.raw("GET", "/v1/me/profile", None, None, None).await;
    assert_eq!(a.status, 401);
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_over_its_rate_gets_429_with_retry_after() {
    let (_, store) = common::stores("rate", 4).await.remove(0);
    let mut config = common::test_config();
    config.rate_limit_per_s = 1.0;
    config.rate_limit_burst = 5;
    let (gateway, _) = common::start(&config, store).await;
    let http = Http::new(gateway.address(), 4);
    let mut statuses = Vec::new();
    for _ in 0..8 {
        let a = http.get("/v1/shop", None).await;
        if a.status == 429 {
            assert!(a.retry_after.is_some(), "{}", a.text);
            assert_eq!(a.body["error"], "rate_limited");
        }
        statuses.push(a.status);
    }
    assert_eq!(
        statuses.iter().filter(|&&s| s == 200).count(),
        5,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|&&s| s == 429).count(),
        3,
        "{statuses:?}"
    );
    // Health and metrics are never limited.
    assert_eq!(http.get("/healthz", None).await.status, 200);
    let metrics = http.get("/metrics", None).await.text;
    assert!(
        metrics.contains("route=\"/v1/shop\",status=\"429\"} 3"),
        "{metrics}"
    );
    gateway.shutdown().await.unwrap();
}
