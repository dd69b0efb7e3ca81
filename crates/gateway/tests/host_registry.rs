//! One host registry for every gateway: the hosts that heartbeat live in the
//! store. On PostgreSQL (when `HIGHTICK_TEST_DATABASE_URL` is set) a host
//! registers with gateway A only, and gateway B, which alone serves the
//! players' mode, allocates their match on it; A then counts that match
//! against the host's room. On SQLite, a host whose last heartbeat is older
//! than the timeout gets no match until it heartbeats again.

mod common;

use std::time::{Duration, Instant};

use common::Http;
use common::host::start_host;
use hightick_gateway::config::ModeConfig;
use hightick_gateway::{Gateway, GatewayConfig, Secrets};
use hightick_server::MatchInfo;
use hightick_store::{HostBeat, Store};
use serde_json::{Value, json};

/// A config whose only matchmaking queue is `mode`, two players a match.
fn config(mode: &str) -> GatewayConfig {
    let mut config = common::test_config();
    config.modes = vec![ModeConfig {
        name: mode.to_owned(),
        players: 2,
        settings: serde_json::Map::new(),
    }];
    config
}

async fn register(http: &Http, secrets: &Secrets, host: &hightick_server::Host) {
    let body = json!({
        "host_id": host.host_id(),
        "admin": host.admin_address().to_string(),
        "capacity": 4,
    });
    let a = http
        .post("/v1/hosts", &body, Some(&secrets.server_secret))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
}

/// The host `host_id` as `http`'s gateway lists it.
async fn listed(http: &Http, secrets: &Secrets, host_id: &str) -> Option<Value> {
    let a = http.get("/v1/hosts", Some(&secrets.server_secret)).await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body["hosts"]
        .as_array()?
        .iter()
        .find(|h| h["host_id"] == host_id)
        .cloned()
}

/// Two guests of `http` queued for `mode`: their sessions and tickets.
async fn two_queued(http: &Http, prefix: &str, mode: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for i in 0..2 {
        let (_, session) = http.guest(&format!("{prefix}-{i}")).await;
        let a = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": mode }),
                Some(&session),
            )
            .await;
        assert!(a.status == 200 || a.status == 202, "{}", a.text);
        out.push((session, a.body["ticket"].as_str().unwrap().to_owned()));
    }
    out
}

/// The matches running on `host`, by its admin API.
async fn matches_on(host: &hightick_server::Host) -> Vec<MatchInfo> {
    let admin = Http::new(host.admin_address(), 1);
    serde_json::from_str(&admin.get("/v1/matches", None).await.text).unwrap()
}

/// A counter of `http`'s gateway's `/metrics`.
async fn counter(http: &Http, name: &str) -> u64 {
    let text = http.get("/metrics", None).await.text;
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_registered_at_one_gateway_gets_a_match_the_other_allocates() {
    let Some(options) = common::postgres("registry_two_gateways") else {
        return;
    };
    let secrets = Secrets::generate();
    // A serves another mode: only B can form the players' match.
    let start = |config: GatewayConfig| {
        let (secrets, options) = (secrets.clone(), options.clone());
        async move {
            let store = Store::open_with(&options).await.unwrap();
            Gateway::start_with_store(&config, secrets, store)
                .await
                .unwrap()
        }
    };
    let a = start(config("ffa")).await;
    let b = start(config("5v5")).await;
    let (http_a, http_b) = (Http::new(a.address(), 4), Http::new(b.address(), 4));
    let host = start_host(&secrets.token_key);
    register(&http_a, &secrets, &host).await;
    // B lists the host it never heard from.
    let at_b = listed(&http_b, &secrets, host.host_id()).await;
    let at_b = at_b.expect("B lists the host registered at A");
    assert_eq!(at_b["admin"], host.admin_address().to_string());
    assert_eq!(at_b["active"], 0);

    let players = two_queued(&http_b, "registry-b", "5v5").await;
    let m_0 = common::matched(&http_b, &players[0].0, &players[0].1).await;
    let m_1 = common::matched(&http_b, &players[1].0, &players[1].1).await;
    assert_eq!(m_0["match_id"], m_1["match_id"]);
    let match_id = m_0["match_id"].as_str().unwrap();
    assert!(
        matches_on(&host).await.iter().any(|m| m.id == match_id),
        "{match_id} is not on the host"
    );
    assert_eq!(
        counter(&http_b, "hightick_gateway_matches_formed_total").await,
        1
    );
    assert_eq!(
        counter(&http_a, "hightick_gateway_matches_formed_total").await,
        0
    );
    // A counts B's match against the host's room (no heartbeat since).
    let at_a = listed(&http_a, &secrets, host.host_id()).await.unwrap();
    assert_eq!(at_a["active"], 1, "{at_a}");

    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_silent_past_the_timeout_gets_no_match_until_it_heartbeats() {
    let (_, store) = common::stores("registry_expired", 4).await.remove(0);
    let config = config("5v5");
    let (gateway, secrets) = common::start(&config, store.clone()).await;
    let http = Http::new(gateway.address(), 8);
    let host = start_host(&secrets.token_key);
    // Its last heartbeat (at some gateway) came twice the timeout ago.
    let timeout_ms = i64::try_from(config.host_timeout_s * 1000).unwrap();
    let now_ms = hightick_store::clock::now_ms();
    let beat = HostBeat {
        host_id: host.host_id().to_owned(),
        admin: host.admin_address().to_string(),
        capacity: 4,
        active: 0,
        draining: false,
        region: String::new(),
        game: String::new(),
    };
    store
        .host_heartbeat(&beat, now_ms - 2 * timeout_ms)
        .await
        .unwrap();
    let silent = listed(&http, &secrets, host.host_id()).await.unwrap();
    assert!(silent["last_seen_s"].as_f64().unwrap() >= 2.0 * config.host_timeout_s as f64);

    // Two players make a match, but no host takes it: they keep waiting.
    let players = two_queued(&http, "registry-silent", "5v5").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while counter(&http, "hightick_gateway_allocation_failures_total").await == 0 {
        assert!(Instant::now() < deadline, "no allocation was tried");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (session, ticket) = &players[0];
    let waiting = http
        .get(&format!("/v1/matchmaking/tickets/{ticket}"), Some(session))
        .await;
    assert_eq!(waiting.status, 202, "{}", waiting.text);
    assert!(matches_on(&host).await.is_empty());

    // It heartbeats: the next pass allocates on it.
    register(&http, &secrets, &host).await;
    let m = common::matched(&http, session, ticket).await;
    let match_id = m["match_id"].as_str().unwrap();
    assert!(matches_on(&host).await.iter().any(|m| m.id == match_id));
    gateway.shutdown().await.unwrap();
}
