//! The push channel end to end: a real gateway on loopback, real WebSocket
//! clients (tokio-tungstenite), a real game host for the tokens.
//!
//! - a queued login's socket gets its position, then its admission, and
//!   carries on as the session's socket (queue position, cancel);
//! - matchmaking players get their match found with a token the host
//!   accepts, without polling, and it is what the polling route says;
//! - a bad session, an unknown login ticket and a plain GET are refused;
//! - a reader that never reads is dropped with a reason when its queue
//!   fills, and another player's socket carries on.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Json;
use axum::routing::post;
use base64::Engine as _;
use common::Http;
use common::host::{connect_all, start_host};
use common::socket::{PATIENCE, Socket, next_push, open};
use futures_util::StreamExt;
use hightick_gateway::GatewayConfig;
use hightick_gateway::config::{ModeConfig, StaticHost};
use hightick_net::ConnectToken;
use serde_json::{Value, json};
use tokio::net::TcpSocket;
use tokio_tungstenite::MaybeTlsStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

fn mode(name: &str, players: usize) -> ModeConfig {
    ModeConfig {
        name: name.to_owned(),
        players,
        settings: serde_json::Map::new(),
    }
}

/// The next push of `kind`, skipping others.
async fn next_of(socket: &mut Socket, kind: &str) -> Value {
    loop {
        let push = next_push(socket).await;
        if push["type"] == kind {
            return push;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_login_gets_its_position_then_its_admission_and_keeps_the_socket() {
    let mut config = common::test_config();
    config.auth_workers = 1;
    config.modes = vec![mode("duel", 2)];
    let (gateway, _, http) = common::sqlite_gateway("push_login", &config).await;

    // Password sign-ups (argon2id, one at a time) keep the one worker busy.
    let mut signups = Vec::new();
    for i in 0..6 {
        let http = http.clone();
        signups.push(tokio::spawn(async move {
            let body = json!({ "name": format!("pusher{i}"), "password": "hunter22" });
            http.settle(http.post("/v1/auth/signup", &body, None).await)
                .await
        }));
    }
    let mut queued = None;
    for attempt in 0..500 {
        let body = json!({ "device_id": format!("push-device-{attempt}") });
        let a = http.post("/v1/auth/guest", &body, None).await;
        if a.status == 202 && a.body["position"].as_u64().unwrap_or(0) >= 3 {
            queued = Some(a);
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let queued = queued.expect("a guest login queued behind the sign-ups");
    let ticket = queued.body["ticket"].as_str().unwrap().to_owned();

    let mut socket = open(gateway.address(), &format!("?login_ticket={ticket}"), None)
        .await
        .expect("a login ticket opens a socket");
    let mut positions = Vec::new();
    let admitted = loop {
        let push = next_push(&mut socket).await;
        assert!(push["at_ms"].as_i64().unwrap() > 0, "{push}");
        match push["type"].as_str().unwrap() {
            "login_queue" => {
                assert_eq!(push["ticket"], ticket.as_str());
                positions.push(push["position"].as_u64().unwrap());
            }
            "admitted" => break push,
            other => panic!("unexpected push {other}: {push}"),
        }
    };
    assert!(!positions.is_empty(), "a queued login hears its position");
    assert!(
        positions.windows(2).all(|w| w[1] < w[0]),
        "positions only fall, once each: {positions:?}"
    );
    let token = admitted["session_token"].as_str().unwrap().to_owned();
    assert_eq!(admitted["status"], "admitted");
    // The polling route answers the same admission.
    let polled = http.get(&format!("/v1/auth/tickets/{ticket}"), None).await;
    assert_eq!(polled.body["account_id"], admitted["account_id"]);

    // The same socket now carries the session's matchmaking pushes.
    let join = http
        .post(
            "/v1/matchmaking/tickets",
            &json!({ "mode": "duel" }),
            Some(&token),
        )
        .await;
    assert_eq!(join.status, 202, "{}", join.text);
    let mm_ticket = join.body["ticket"].as_str().unwrap().to_owned();
    let queue = next_of(&mut socket, "queue").await;
    assert_eq!(queue["ticket"], mm_ticket.as_str());
    assert_eq!(
        (&queue["position"], &queue["waiting"], &queue["needed"]),
        (&json!(1), &json!(1), &json!(2))
    );
    let cancel = http
        .raw(
            "DELETE",
            &format!("/v1/matchmaking/tickets/{mm_ticket}"),
            None,
            None,
            Some(&token),
        )
        .await;
    assert_eq!(cancel.status, 200, "{}", cancel.text);
    let cancelled = next_of(&mut socket, "match_cancelled").await;
    assert_eq!(cancelled["ticket"], mm_ticket.as_str());

    for s in signups {
        assert_eq!(s.await.unwrap().status, 200);
    }
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matched_players_hear_of_their_match_without_polling_with_tokens_the_host_takes() {
    let mut config = common::test_config();
    config.modes = vec![mode("5v5", 2)];
    let (gateway, secrets, http) = common::sqlite_gateway("push_match", &config).await;
    let host = start_host(&secrets.token_key);
    let register = json!({ "admin": host.admin_address().to_string(), "capacity": 4 });
    let a = http
        .post("/v1/hosts", &register, Some(&secrets.server_secret))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);

    let mut players = Vec::new();
    for i in 0..2 {
        let (_, token) = http.guest(&format!("push-match-{i}")).await;
        // One by header, one by query (as a browser would).
        let socket = if i == 0 {
            open(gateway.address(), "", Some(&token)).await
        } else {
            open(gateway.address(), &format!("?access_token={token}"), None).await
        }
        .expect("a session opens a socket");
        players.push((token, socket));
    }
    let mut tickets = Vec::new();
    for (token, _) in &players {
        let a = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": "5v5" }),
                Some(token),
            )
            .await;
        tickets.push(a.body["ticket"].as_str().unwrap().to_owned());
    }
    let mut tokens = Vec::new();
    let mut match_ids = Vec::new();
    for ((token, socket), ticket) in players.iter_mut().zip(&tickets) {
        let found = next_of(socket, "match_found").await;
        assert_eq!(found["ticket"], ticket.as_str());
        assert_eq!(found["status"], "matched");
        // The push is the polling route's answer, to the byte of the token.
        let polled = http
            .get(&format!("/v1/matchmaking/tickets/{ticket}"), Some(token))
            .await;
        assert_eq!(polled.status, 200, "{}", polled.text);
        assert_eq!(polled.body["match"], found["match"]);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(found["match"]["connect_token"].as_str().unwrap())
            .unwrap();
        tokens.push(ConnectToken::decode(&bytes).expect("a well-formed connect token"));
        match_ids.push(found["match"]["match_id"].clone());
    }
    assert_eq!(match_ids[0], match_ids[1], "one match for both");
    let connected = tokio::task::spawn_blocking(move || connect_all(tokens, PATIENCE))
        .await
        .unwrap();
    assert_eq!(
        connected, 2,
        "both connect to the host with the pushed tokens"
    );

    // A socket opened after the match was found hears of it at once.
    let mut late = open(gateway.address(), "", Some(&players[0].0))
        .await
        .unwrap();
    let found = next_of(&mut late, "match_found").await;
    assert_eq!(found["match"]["match_id"], match_ids[0]);

    host.drain(Duration::ZERO);
    tokio::task::spawn_blocking(move || host.wait())
        .await
        .unwrap();
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sessions_unknown_tickets_and_plain_requests_are_refused() {
    let (gateway, _, http) = common::sqlite_gateway("push_refused", &common::test_config()).await;
    let address = gateway.address();
    let status = |e: tokio_tungstenite::tungstenite::Error| match e {
        tokio_tungstenite::tungstenite::Error::Http(response) => response.status().as_u16(),
        other => panic!("expected an HTTP refusal, got {other}"),
    };
    let forged = "1.00000000000000000000000000000000.9999999999999.".to_owned() + &"0".repeat(64);
    assert_eq!(
        status(open(address, "", Some(&forged)).await.unwrap_err()),
        401
    );
    assert_eq!(status(open(address, "", None).await.unwrap_err()), 401);
    assert_eq!(
        status(open(address, "?access_token=junk", None).await.unwrap_err()),
        401
    );
    assert_eq!(
        status(open(address, "?login_ticket=feed", None).await.unwrap_err()),
        404
    );
    // A revoked session is refused too.
    let (_, token) = http.guest("push-revoked").await;
    let out = http.post("/v1/auth/logout", &json!({}), Some(&token)).await;
    assert_eq!(out.status, 200, "{}", out.text);
    assert_eq!(
        status(open(address, "", Some(&token)).await.unwrap_err()),
        401
    );
    // A good session without an upgrade gets the JSON error shape.
    let (_, token) = http.guest("push-plain").await;
    let plain = http.get("/v1/events", Some(&token)).await;
    assert_eq!(plain.status, 426, "{}", plain.text);
    assert_eq!(plain.body["field"], "upgrade");
    gateway.shutdown().await.unwrap();
}

/// A stand-in host admin API that accepts every match (the game address
/// is never dialled here).
async fn accepting_host() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/v1/matches",
        post(|Json(body): Json<Value>| async move {
            (
                axum::http::StatusCode::CREATED,
                Json(hightick_host_api::MatchInfo::new(
                    body["match_id"].as_str().unwrap_or_default(),
                    "127.0.0.1:9".parse().unwrap(),
                )),
            )
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

/// A socket whose client side holds a tiny receive buffer and never reads.
async fn never_reading(gateway: SocketAddr, token: &str) -> Socket {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(gateway).await.unwrap();
    let mut request = format!("ws://{gateway}/v1/events")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    let (socket, _) = tokio_tungstenite::client_async(request, MaybeTlsStream::Plain(stream))
        .await
        .unwrap();
    socket
}

/// Joins `solo` and long-polls until matched (one `match_found` push).
async fn play_solo(http: &Http, token: &str) {
    let join = http
        .post(
            "/v1/matchmaking/tickets",
            &json!({ "mode": "solo" }),
            Some(token),
        )
        .await;
    let ticket = join.body["ticket"].as_str().unwrap().to_owned();
    let mut a = join;
    while a.status == 202 {
        a = http
            .get(
                &format!("/v1/matchmaking/tickets/{ticket}?wait_ms=2000"),
                Some(token),
            )
            .await;
    }
    assert_eq!(a.status, 200, "{}", a.text);
}

fn dropped_slow(metrics: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("hightick_gateway_push_dropped_slow_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_never_reads_is_dropped_with_a_reason_and_others_carry_on() {
    let host = accepting_host().await;
    let config = GatewayConfig {
        modes: vec![mode("solo", 1)],
        hosts: vec![StaticHost {
            admin: host,
            capacity: 100_000,
        }],
        push: hightick_gateway::push::PushConfig {
            queue: 4,
            send_timeout_ms: 600_000,
            ..Default::default()
        },
        ..common::test_config()
    };
    let (gateway, _, http) = common::sqlite_gateway("push_slow", &config).await;
    let (_, slow_token) = http.guest("push-slow").await;
    let (_, fine_token) = http.guest("push-fine").await;
    let mut slow = never_reading(gateway.address(), &slow_token).await;
    let mut fine = open(gateway.address(), "", Some(&fine_token))
        .await
        .unwrap();

    // Each solo match found pushes ~3 KB to the slow socket, which never
    // reads: its buffers fill, then its queue, and the gateway drops it.
    let mut rounds = 0;
    while dropped_slow(&http.get("/metrics", None).await.text) == 0 {
        play_solo(&http, &slow_token).await;
        rounds += 1;
        assert!(rounds < 5_000, "the slow socket was never dropped");
    }
    // The other player's socket is unharmed.
    play_solo(&http, &fine_token).await;
    let found = next_of(&mut fine, "match_found").await;
    assert_eq!(found["status"], "matched");

    // Reading now, the slow client finds its pushes, then the end.
    let mut pushes = 0;
    let reason = loop {
        match tokio::time::timeout(PATIENCE, slow.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => {
                let push: Value = serde_json::from_str(&text).unwrap();
                pushes += u32::from(push["type"] == "match_found");
            }
            Ok(Some(Ok(Message::Close(frame)))) => {
                break frame.map(|f| (u16::from(f.code), f.reason.as_str().to_owned()));
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(_)) | None) => break None,
            Err(_) => panic!("the slow socket was never closed"),
        }
    };
    assert!(pushes <= rounds, "{pushes} pushes for {rounds} matches");
    if let Some((code, text)) = reason {
        assert_eq!(code, 1008);
        assert!(text.contains("slow reader"), "{text}");
    }
    gateway.shutdown().await.unwrap();
}
