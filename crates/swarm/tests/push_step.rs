//! A step that waits for its answer on the player's push socket instead of
//! polling: a stand-in gateway (axum on loopback, a real WebSocket) answers
//! a matchmaking request with `202` and a ticket, then pushes an old
//! ticket's `match_found` (which must be skipped) and the new one's. Every
//! player keeps one socket across its rounds, captures the pushed token, and
//! the push's event-to-client latency is recorded under `<step> push`.
//! Behind two gateways a player's socket is on its own one, and follows it
//! when the player fails over.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hightick_swarm::Scenario;
use serde_json::json;
use tokio::sync::mpsc;

#[derive(Default)]
struct Gateway {
    sockets: Mutex<HashMap<String, mpsc::UnboundedSender<String>>>,
    opened: AtomicU64,
    tickets: AtomicU64,
    /// Tokens players came back with, and whether each was the right one.
    checked: Mutex<Vec<bool>>,
}

type Shared = Arc<Gateway>;

fn bearer(headers: &HeaderMap) -> String {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

async fn events(State(g): State<Shared>, headers: HeaderMap, ws: WebSocketUpgrade) -> Response {
    let who = bearer(&headers);
    g.opened.fetch_add(1, Ordering::Relaxed);
    ws.on_upgrade(move |mut socket: WebSocket| async move {
        let (tx, mut rx) = mpsc::unbounded_channel();
        g.sockets.lock().unwrap().insert(who, tx);
        while let Some(text) = rx.recv().await {
            if socket.send(Message::Text(text.into())).await.is_err() {
                return;
            }
        }
    })
}

async fn join(State(g): State<Shared>, headers: HeaderMap) -> Response {
    let n = g.tickets.fetch_add(1, Ordering::Relaxed);
    let ticket = format!("t-{n}");
    let socket = g.sockets.lock().unwrap().get(&bearer(&headers)).cloned();
    if let Some(socket) = socket {
        let ticket = ticket.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let old = json!({ "type": "match_found", "ticket": "t-old", "match": { "connect_token": "stale" }, "at_ms": now_ms() as u64 });
            let new = json!({ "type": "match_found", "ticket": ticket, "match": { "connect_token": format!("tok-{ticket}") }, "at_ms": now_ms() as u64 });
            let _ = socket.send(old.to_string());
            let _ = socket.send(new.to_string());
        });
    }
    (
        StatusCode::ACCEPTED,
        axum::Json(json!({ "status": "queued", "ticket": ticket })),
    )
        .into_response()
}

async fn check(State(g): State<Shared>, Path((ticket, token)): Path<(String, String)>) -> Response {
    g.checked
        .lock()
        .unwrap()
        .push(token == format!("tok-{ticket}"));
    StatusCode::OK.into_response()
}

/// A stand-in gateway on loopback.
async fn gateway() -> (Shared, std::net::SocketAddr) {
    let g: Shared = Arc::default();
    let app = Router::new()
        .route("/v1/events", get(events))
        .route("/v1/matchmaking/tickets", post(join))
        .route("/check/{ticket}/{token}", get(check))
        .with_state(Arc::clone(&g));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (g, addr)
}

/// Ten players matchmaking by push against `gateway` (a URL or a list).
async fn play(gateway: &str) -> hightick_swarm::result::RunResult {
    let text = format!(
        r#"
name = "push"
users = 10
ramp_up = "500ms"
duration = "3s"
drivers = 1
[targets]
gateway = {gateway}
[[behaviour]]
name = "play"
[[behaviour.step]]
name = "matchmake"
method = "POST"
url = "/v1/matchmaking/tickets"
headers = {{ authorization = "Bearer p{{{{user}}}}" }}
json = {{ mode = "5v5" }}
expect_status = [200, 202]
capture = {{ connect_token = "/match/connect_token", mm_ticket = "/ticket" }}
push = {{ event = "match_found", same = "/ticket", max_wait = "5s" }}
think = "0s"
[[behaviour.step]]
name = "check"
url = "/check/{{{{mm_ticket}}}}/{{{{connect_token}}}}"
think = "200ms"
"#
    );
    common::run_to_end(Arc::new(Scenario::parse(&text, "push.toml").unwrap())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_step_waits_on_one_socket_per_player_and_captures_the_pushed_token() {
    let (g, addr) = gateway().await;
    let result = play(&format!("\"http://{addr}\"")).await;
    assert_eq!(result.total.failed, 0, "{:?}", result.errors);
    let checked = g.checked.lock().unwrap().clone();
    assert!(checked.len() >= 20, "{} rounds", checked.len());
    assert!(checked.iter().all(|&ok| ok), "a stale push answered a step");
    assert_eq!(
        g.opened.load(Ordering::Relaxed),
        10,
        "one socket per player, kept across rounds"
    );
    let latency = result
        .steps
        .iter()
        .find(|s| s.name == "matchmake push")
        .expect("the push latency row");
    assert!(latency.ok >= 20, "{latency:?}");
}

/// With two gateways, a player's socket is on its own gateway, the one its
/// requests go to: a push sent by the other would never reach it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_players_push_socket_is_on_the_gateway_it_asks() {
    let ((a, a_addr), (b, b_addr)) = (gateway().await, gateway().await);
    let result = play(&format!("[\"http://{a_addr}\", \"http://{b_addr}\"]")).await;
    assert_eq!(result.total.failed, 0, "{:?}", result.errors);
    for g in [&a, &b] {
        assert_eq!(g.opened.load(Ordering::Relaxed), 5, "half the sockets each");
        let checked = g.checked.lock().unwrap().clone();
        assert!(checked.len() >= 10, "{} rounds", checked.len());
        assert!(checked.iter().all(|&ok| ok));
    }
}

/// A TCP relay in front of `to` that can die: its listener and every
/// connection through it close at once, as a crashed gateway's would.
struct Relay {
    addr: std::net::SocketAddr,
    tasks: Arc<Mutex<tokio::task::JoinSet<()>>>,
}

impl Relay {
    async fn start(to: std::net::SocketAddr) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let tasks = Arc::new(Mutex::new(tokio::task::JoinSet::new()));
        let spawner = Arc::clone(&tasks);
        tasks.lock().unwrap().spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                spawner.lock().unwrap().spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(to).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        Self { addr, tasks }
    }

    fn kill(&self) {
        self.tasks.lock().unwrap().abort_all();
    }
}

/// The first gateway dies mid-run: its players' sockets close under their
/// push waits or their requests fail, and each moves to the second gateway
/// once, opening its socket there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_socket_follows_its_player_when_it_fails_over() {
    let ((a, a_addr), (b, b_addr)) = (gateway().await, gateway().await);
    let relay = Arc::new(Relay::start(a_addr).await);
    let killer = {
        let (a, relay) = (Arc::clone(&a), Arc::clone(&relay));
        tokio::spawn(async move {
            // Once the first gateway's five players have opened their sockets
            // and a few rounds were played.
            while a.opened.load(Ordering::Relaxed) < 5 || a.checked.lock().unwrap().len() < 10 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            relay.kill();
        })
    };
    let result = play(&format!("[\"http://{}\", \"http://{b_addr}\"]", relay.addr)).await;
    killer.await.unwrap();
    assert_eq!(a.opened.load(Ordering::Relaxed), 5);
    assert_eq!(result.failovers, 5, "{:?}", result.errors);
    assert_eq!(
        b.opened.load(Ordering::Relaxed),
        10,
        "its own five sockets and one for each player that moved"
    );
    let checked = b.checked.lock().unwrap().clone();
    assert!(checked.iter().all(|&ok| ok), "a stale push answered a step");
    // One failure per moving player (a closed socket or a refused request),
    // each retried on the second gateway.
    common::assert_failures_are_the_failovers(&result);
}
