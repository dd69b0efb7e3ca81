//! Matchmaking end to end: a real hightick-server host registers with the
//! gateway, ten players queue for a 5v5, the gateway allocates one match on
//! the host and hands each player a connect token, and every one of the ten
//! connects to the host over UDP with it.

mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::Http;
use common::host::{connect_all, start_host};
use hightick_net::ConnectToken;
use hightick_server::MatchInfo;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_queued_players_get_one_match_and_tokens_the_host_accepts() {
    let (_, store) = common::stores("matchmaking", 4).await.remove(0);
    let (gateway, secrets) = common::start(&common::test_config(), store).await;
    let host = start_host(&secrets.token_key);
    let http = Http::new(gateway.address(), 16);

    // The host registers (and would heartbeat) with the server secret.
    let register = json!({ "admin": host.admin_address().to_string(), "capacity": 4 });
    let a = http
        .post("/v1/hosts", &register, Some(&secrets.server_secret))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        http.post("/v1/hosts", &register, Some("wrong-secret"))
            .await
            .status,
        401
    );

    let mut players = Vec::new();
    for i in 0..10 {
        players.push(http.guest(&format!("mm-player-{i}")).await);
    }
    let mut tickets = Vec::new();
    for (i, (_, token)) in players.iter().enumerate() {
        let a = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": "5v5" }),
                Some(token),
            )
            .await;
        assert!(a.status == 202 || a.status == 200, "{}", a.text);
        if i < 9 {
            assert_eq!(a.body["status"], "queued", "{}", a.text);
            assert_eq!(a.body["position"], i + 1);
            assert_eq!(a.body["needed"], 10);
        }
        tickets.push(a.body["ticket"].as_str().unwrap().to_owned());
    }

    let mut assignments: Vec<Value> = Vec::new();
    for ((_, token), ticket) in players.iter().zip(&tickets) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let a = http
                .get(
                    &format!("/v1/matchmaking/tickets/{ticket}?wait_ms=2000"),
                    Some(token),
                )
                .await;
            if a.status == 200 {
                assert_eq!(a.body["status"], "matched");
                assignments.push(a.body["match"].clone());
                break;
            }
            assert_eq!(a.status, 202, "{}", a.text);
            assert!(Instant::now() < deadline, "no match: {}", a.text);
        }
    }
    let match_ids: BTreeSet<&str> = assignments
        .iter()
        .map(|a| a["match_id"].as_str().unwrap())
        .collect();
    assert_eq!(match_ids.len(), 1, "one match for all ten");
    let ids: BTreeSet<i64> = players.iter().map(|(id, _)| *id).collect();
    let roster: BTreeSet<i64> = assignments[0]["roster"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(roster, ids);

    // The host runs the match with the ten accounts as its roster.
    let address: SocketAddr = assignments[0]["address"].as_str().unwrap().parse().unwrap();
    assert_eq!(address, host.game_addresses()[0]);
    let tokens: Vec<ConnectToken> = assignments
        .iter()
        .map(|a| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(a["connect_token"].as_str().unwrap())
                .unwrap();
            ConnectToken::decode(&bytes).expect("a well-formed connect token")
        })
        .collect();
    let connected =
        tokio::task::spawn_blocking(move || connect_all(tokens, Duration::from_secs(20)))
            .await
            .unwrap();
    assert_eq!(connected, 10, "every player connects with its token");

    let admin = Http::new(host.admin_address(), 2);
    let listed = admin.get("/v1/matches", None).await;
    let matches: Vec<MatchInfo> = serde_json::from_str(&listed.text).unwrap();
    assert_eq!(matches.len(), 1, "{}", listed.text);
    assert_eq!(matches[0].players, 10);
    // The gateway's match id is the host's.
    assert_eq!(matches[0].id, assignments[0]["match_id"].as_str().unwrap());

    let metrics = http.get("/metrics", None).await.text;
    assert!(
        metrics.contains("hightick_gateway_matches_formed_total 1\n"),
        "{metrics}"
    );
    // A player leaves nothing behind: joining again queues afresh.
    let again = http
        .post(
            "/v1/matchmaking/tickets",
            &json!({ "mode": "5v5" }),
            Some(&players[0].1),
        )
        .await;
    assert_eq!(again.body["status"], "queued", "{}", again.text);
    let t = again.body["ticket"].as_str().unwrap();
    let gone = http
        .raw(
            "DELETE",
            &format!("/v1/matchmaking/tickets/{t}"),
            None,
            None,
            Some(&players[0].1),
        )
        .await;
    assert_eq!(gone.status, 200, "{}", gone.text);

    host.drain(Duration::ZERO);
    tokio::task::spawn_blocking(move || host.wait())
        .await
        .unwrap();
    gateway.shutdown().await.unwrap();
}

/// Decodes a base64 connect token from an assignment.
fn token_of(assignment: &Value) -> ConnectToken {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(assignment["connect_token"].as_str().unwrap())
        .unwrap();
    ConnectToken::decode(&bytes).expect("a well-formed connect token")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_rejoins_its_seat_with_a_fresh_token_until_the_match_is_over() {
    let (_, store) = common::stores("rejoin", 4).await.remove(0);
    let mut config = common::test_config();
    config.modes = vec![hightick_gateway::config::ModeConfig {
        name: "5v5".to_owned(),
        players: 2,
        settings: serde_json::Map::new(),
    }];
    let (gateway, secrets) = common::start(&config, store).await;
    let host = start_host(&secrets.token_key);
    let http = Http::new(gateway.address(), 8);
    let register = json!({ "admin": host.admin_address().to_string(), "capacity": 4 });
    let a = http
        .post("/v1/hosts", &register, Some(&secrets.server_secret))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);

    let (a_id, a_session) = http.guest("rejoin-a").await;
    let (b_id, b_session) = http.guest("rejoin-b").await;
    let (_, stranger) = http.guest("rejoin-c").await;
    let mut tickets = Vec::new();
    for session in [&a_session, &b_session] {
        let t = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": "5v5" }),
                Some(session),
            )
            .await;
        tickets.push(t.body["ticket"].as_str().unwrap().to_owned());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let assignment = loop {
        let t = http
            .get(
                &format!("/v1/matchmaking/tickets/{}?wait_ms=2000", tickets[0]),
                Some(&a_session),
            )
            .await;
        if t.status == 200 {
            break t.body["match"].clone();
        }
        assert!(Instant::now() < deadline, "no match: {}", t.text);
    };
    let match_id = assignment["match_id"].as_str().unwrap().to_owned();
    let rejoin_path = format!("/v1/matches/{match_id}/rejoin");

    // A fresh token to the same host and match.
    let rejoined = http.post(&rejoin_path, &json!({}), Some(&a_session)).await;
    assert_eq!(rejoined.status, 200, "{}", rejoined.text);
    assert_eq!(rejoined.body["match_id"], match_id.as_str());
    assert_eq!(rejoined.body["address"], assignment["address"]);
    assert_eq!(rejoined.body["roster"], assignment["roster"]);
    assert_ne!(rejoined.body["connect_token"], assignment["connect_token"]);
    // Not for someone without a seat there, nor for a match that is not running.
    let refused = http.post(&rejoin_path, &json!({}), Some(&stranger)).await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(refused.body["field"], "match_id");
    let unknown = http
        .post("/v1/matches/m-nope/rejoin", &json!({}), Some(&a_session))
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.text);

    // The player connects, its link dies, and the fresh token (from another
    // socket) takes its seat over before the old connection timed out.
    let first = token_of(&assignment);
    let fresh = token_of(&rejoined.body);
    let connected = tokio::task::spawn_blocking(move || {
        connect_all(vec![first], Duration::from_secs(20))
            + connect_all(vec![fresh], Duration::from_secs(20))
    })
    .await
    .unwrap();
    assert_eq!(connected, 2, "both connections were taken");
    let admin = Http::new(host.admin_address(), 2);
    let listed: Vec<MatchInfo> =
        serde_json::from_str(&admin.get("/v1/matches", None).await.text).unwrap();
    assert_eq!(listed[0].id, match_id);
    assert_eq!(listed[0].connected, 1, "one seat, held by the rejoin");

    // The match ends abandoned: rewards default to 0, and no more rejoins.
    let result = json!({
        "match_id": match_id,
        "mode": "5v5",
        "abandoned": true,
        "players": [
            { "account_id": a_id, "team": 0, "score": 0, "outcome": "draw" },
            { "account_id": b_id, "team": 1, "score": 0, "outcome": "draw" },
        ],
    });
    let posted = http.post_result(&secrets.server_secret, &result).await;
    assert_eq!(posted.status, 200, "{}", posted.text);
    let history = http.get("/v1/me/matches", Some(&a_session)).await;
    assert_eq!(history.body["matches"][0]["reward"], 0, "{}", history.text);
    let over = http.post(&rejoin_path, &json!({}), Some(&a_session)).await;
    assert_eq!(over.status, 404, "{}", over.text);

    host.drain(Duration::ZERO);
    tokio::task::spawn_blocking(move || host.wait())
        .await
        .unwrap();
    gateway.shutdown().await.unwrap();
}

/// Thirty players queue for a 5v5 while no host has room, then a host with
/// room for two matches registers (the host itself would take four). One
/// pass forms three matches and allocates them at once; two are seated, and
/// they are the twenty players who queued first. Room is taken before a
/// host is asked, so matches allocated together neither overfill a host nor
/// let a younger match take an older one's place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn room_for_two_matches_seats_the_twenty_who_queued_first() {
    for (backend, store) in common::stores("matchmaking_oldest", 4).await {
        eprintln!("{backend}");
        seat_the_oldest(store).await;
    }
}

async fn seat_the_oldest(store: hightick_store::Store) {
    let (gateway, secrets) = common::start(&common::test_config(), store).await;
    let host = start_host(&secrets.token_key);
    let http = Http::new(gateway.address(), 16);

    let mut queued = Vec::new();
    for i in 0..30 {
        let (_, token) = http.guest(&format!("mm-oldest-{i}")).await;
        let a = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": "5v5" }),
                Some(&token),
            )
            .await;
        assert_eq!(a.body["status"], "queued", "no host yet: {}", a.text);
        queued.push((a.body["ticket"].as_str().unwrap().to_owned(), token));
        // Distinct join times: the queue's order is by them.
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let register = json!({ "admin": host.admin_address().to_string(), "capacity": 2 });
    let a = http
        .post("/v1/hosts", &register, Some(&secrets.server_secret))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);

    // Poll the first twenty until matched, then give the gateway a few more
    // passes to (wrongly) seat anyone else.
    let mut matches = BTreeSet::new();
    for (ticket, token) in &queued[..20] {
        let found = common::matched(&http, token, ticket).await;
        matches.insert(found["match_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(matches.len(), 2, "the twenty oldest in two matches");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for (ticket, token) in &queued[20..] {
        let a = http
            .get(&format!("/v1/matchmaking/tickets/{ticket}"), Some(token))
            .await;
        let seated = &a.body["match"]["roster"];
        assert_eq!(
            a.body["status"], "queued",
            "no room left, but seated {seated}"
        );
    }
    let on_host = Http::new(host.admin_address(), 1)
        .get("/v1/matches", None)
        .await;
    assert_eq!(
        on_host.body.as_array().map(Vec::len),
        Some(2),
        "{}",
        on_host.text
    );
    drop(gateway);
}
