//! Matchmaking shared through the store: two gateways on one PostgreSQL
//! schema match players queued at different gateways into one match, answer
//! each other's tickets and rejoins; on SQLite (one gateway) a party lands on
//! one team, and a ticket preferring a region gets that region's host.

mod common;
use common::Http;
use common::host::start_host;
use hightick_gateway::config::ModeConfig;
use hightick_gateway::{Gateway, GatewayConfig, Secrets};
use hightick_store::{Store, StoreOptions};
use serde_json::{Value, json};

fn config(players: usize) -> GatewayConfig {
    let mut config = common::test_config();
    config.modes = vec![ModeConfig {
        name: "5v5".to_owned(),
        players,
        settings: serde_json::Map::new(),
    }];
    config
}

async fn register(http: &Http, secrets: &Secrets, host: &hightick_server::Host, region: &str) {
    let body = json!({
        "host_id": host.host_id(),
        "admin": host.admin_address().to_string(),
        "capacity": 4,
        "region": region,
    });
    let a = http
        .post("/v1/hosts", &body, Some(&secrets.server_secret))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
}

async fn queue(http: &Http, session: &str, body: Value) -> String {
    let a = http
        .post("/v1/matchmaking/tickets", &body, Some(session))
        .await;
    assert!(a.status == 200 || a.status == 202, "{}", a.text);
    a.body["ticket"].as_str().unwrap().to_owned()
}

async fn two_gateways(
    options: &StoreOptions,
    config: &GatewayConfig,
) -> (Gateway, Gateway, Secrets) {
    let secrets = Secrets::generate();
    let a = Gateway::start_with_store(
        config,
        secrets.clone(),
        Store::open_with(options).await.unwrap(),
    )
    .await
    .unwrap();
    let b = Gateway::start_with_store(
        config,
        secrets.clone(),
        Store::open_with(options).await.unwrap(),
    )
    .await
    .unwrap();
    (a, b, secrets)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_queued_at_two_gateways_meet_in_one_match_and_either_answers() {
    let Some(options) = common::postgres("shared_two_gateways") else {
        return;
    };
    let (a, b, secrets) = two_gateways(&options, &config(2)).await;
    let (http_a, http_b) = (Http::new(a.address(), 4), Http::new(b.address(), 4));
    let host = start_host(&secrets.token_key);
    register(&http_a, &secrets, &host, "").await;
    register(&http_b, &secrets, &host, "").await;

    let (id_1, s_1) = http_a.guest("shared-1").await;
    let (id_2, s_2) = http_b.guest("shared-2").await;
    // A session from one gateway is good at the other (one key, one store).
    assert_eq!(http_b.get("/v1/me/profile", Some(&s_1)).await.status, 200);
    let t_1 = queue(&http_a, &s_1, json!({ "mode": "5v5" })).await;
    let t_2 = queue(&http_b, &s_2, json!({ "mode": "5v5" })).await;
    // Each ticket is answered by the gateway it was not made at.
    let m_1 = common::matched(&http_b, &s_1, &t_1).await;
    let m_2 = common::matched(&http_a, &s_2, &t_2).await;
    assert_eq!(m_1["match_id"], m_2["match_id"]);
    let roster: Vec<i64> = serde_json::from_value(m_1["roster"].clone()).unwrap();
    assert_eq!(roster.len(), 2);
    assert!(roster.contains(&id_1) && roster.contains(&id_2));
    assert_ne!(m_1["team"], m_2["team"]);
    // Someone else's ticket is not found at either.
    assert_eq!(
        http_a
            .get(&format!("/v1/matchmaking/tickets/{t_1}"), Some(&s_2))
            .await
            .status,
        404
    );

    // A rejoin through the other gateway: same match, same address.
    let match_id = m_1["match_id"].as_str().unwrap();
    let r = http_b
        .post(
            &format!("/v1/matches/{match_id}/rejoin"),
            &json!({}),
            Some(&s_1),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["address"], m_1["address"]);
    assert_eq!(r.body["match_id"], m_1["match_id"]);
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_party_lands_on_one_team() {
    let (gateway, secrets, http) = common::sqlite_gateway("party_team", &config(4)).await;
    let host = start_host(&secrets.token_key);
    register(&http, &secrets, &host, "").await;
    let mut players = Vec::new();
    for i in 0..4 {
        players.push(http.guest(&format!("party-{i}")).await);
    }
    let (leader, leader_s) = players[0].clone();
    let (friend, friend_s) = players[2].clone();
    let created = http.post("/v1/parties", &json!({}), Some(&leader_s)).await;
    assert_eq!(created.status, 201, "{}", created.text);
    let code = created.body["code"].as_str().unwrap().to_owned();
    let joined = http
        .post(
            "/v1/parties/join",
            &json!({ "code": code }),
            Some(&friend_s),
        )
        .await;
    assert_eq!(joined.status, 200, "{}", joined.text);
    assert_eq!(joined.body["members"], json!([leader, friend]));
    // Only the leader queues the party; a bad code names its field.
    let refused = http
        .post(
            "/v1/matchmaking/tickets",
            &json!({ "mode": "5v5", "party": true }),
            Some(&friend_s),
        )
        .await;
    assert_eq!(refused.status, 409, "{}", refused.text);
    let bad = http
        .post(
            "/v1/parties/join",
            &json!({ "code": "nope" }),
            Some(&friend_s),
        )
        .await;
    assert_eq!(
        (bad.status, bad.body["field"].clone()),
        (400, json!("code"))
    );

    // Solo players queue first, so seat order alone would split the party.
    let t_1 = queue(&http, &players[1].1, json!({ "mode": "5v5" })).await;
    let t_3 = queue(&http, &players[3].1, json!({ "mode": "5v5" })).await;
    let party_ticket = queue(&http, &leader_s, json!({ "mode": "5v5", "party": true })).await;
    let m_leader = common::matched(&http, &leader_s, &party_ticket).await;
    // The friend polls the same ticket.
    let m_friend = common::matched(&http, &friend_s, &party_ticket).await;
    let m_1 = common::matched(&http, &players[1].1, &t_1).await;
    let m_3 = common::matched(&http, &players[3].1, &t_3).await;
    assert_eq!(m_leader["match_id"], m_1["match_id"]);
    assert_eq!(m_leader["team"], m_friend["team"]);
    assert_eq!(m_1["team"], m_3["team"]);
    assert_ne!(m_leader["team"], m_1["team"]);
    // Seat i is on team i % 2: the party holds seats of one parity.
    let roster: Vec<i64> = serde_json::from_value(m_leader["roster"].clone()).unwrap();
    let seat = |id: i64| roster.iter().position(|&r| r == id).unwrap();
    assert_eq!(seat(leader) % 2, seat(friend) % 2);

    let left = http
        .post("/v1/parties/leave", &json!({}), Some(&friend_s))
        .await;
    assert_eq!(left.status, 200, "{}", left.text);
    let mine = http.get("/v1/parties/me", Some(&leader_s)).await;
    assert_eq!(mine.body["members"], json!([leader]));
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_preferring_a_region_gets_a_host_there() {
    let (gateway, secrets, http) = common::sqlite_gateway("region_pref", &config(2)).await;
    let eu = start_host(&secrets.token_key);
    let us = start_host(&secrets.token_key);
    register(&http, &secrets, &eu, "eu").await;
    register(&http, &secrets, &us, "us").await;
    for round in 0..2 {
        let region = ["us", "eu"][round];
        let want = [&us, &eu][round].game_addresses().to_vec();
        let (_, s_1) = http.guest(&format!("region-{round}-a")).await;
        let (_, s_2) = http.guest(&format!("region-{round}-b")).await;
        let t_1 = queue(&http, &s_1, json!({ "mode": "5v5", "region": region })).await;
        queue(&http, &s_2, json!({ "mode": "5v5", "region": region })).await;
        let m = common::matched(&http, &s_1, &t_1).await;
        let address: std::net::SocketAddr = m["address"].as_str().unwrap().parse().unwrap();
        assert!(
            want.contains(&address),
            "{region}: {address} not in {want:?}"
        );
    }
    gateway.shutdown().await.unwrap();
}
