//! Matchmaking throughput through the shared queue: 20,000 solo players
//! queued in the store, then matchmaker passes (claim, form by the rules,
//! allocate on a stand-in host over real HTTP, record, release, refresh)
//! until every one is matched, for 5v5 (10 players a match) and for 1-player
//! matches. Figures: `mm_{sqlite,postgres}_{5v5,solo}_players_per_s`.
//! PostgreSQL when `HIGHTICK_TEST_DATABASE_URL` is set.
//!
//! Run: `cargo bench -p hightick-gateway --bench matchmaking_queue`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::post;
use hightick_gateway::config::ModeConfig;
use hightick_gateway::hosts::Hosts;
use hightick_gateway::matchmaking::{Allocation, Matchmaker, MatchmakerParts, TokenSettings};
use hightick_gateway::push::{Hub, PushConfig};
use hightick_gateway::queue::rules::MatchRules;
use hightick_net::Key;
use hightick_store::{NewTicket, Store, StoreOptions};
use serde_json::Value;

const PLAYERS: i64 = 20_000;
const ROUNDS: usize = 3;

/// Answers every allocation at once, as a host with room would.
async fn stand_in_host() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
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

/// Seconds from the first pass until all `PLAYERS` are matched.
async fn one_round(store: &Store, host: SocketAddr, mode: &str, players: usize) -> f64 {
    // Queued concurrently, so SQLite's writer groups them into few commits.
    let mut joins = tokio::task::JoinSet::new();
    for i in 0..PLAYERS {
        let (store, mode) = (store.clone(), mode.to_owned());
        joins.spawn(async move {
            store
                .queue_join(&NewTicket {
                    ticket: format!("{mode}-{i}-{}", rand_suffix()),
                    mode,
                    members: vec![1_000_000 + i],
                    rating: 1000 + i % 200,
                    region: String::new(),
                })
                .await
                .expect("queue")
        });
    }
    while joins.join_next().await.is_some() {}
    let matchmaker = Matchmaker::start(
        &[ModeConfig {
            name: mode.to_owned(),
            players,
            settings: serde_json::Map::new(),
        }],
        MatchmakerParts {
            store: store.clone(),
            allocation: Allocation::Hosts(Arc::new(Hosts::new(
                &[(host, 1_000_000)],
                Duration::from_secs(10),
                store.clone(),
            ))),
            tokens: TokenSettings {
                key: Key::generate(&mut rand::rng()),
                ttl_s: 60,
                connect_timeout_s: 10,
            },
            ticket_ttl: Duration::from_secs(120),
            rules: MatchRules::default(),
            hub: Hub::new(&PushConfig::default()),
            host_admin_secret: None,
        },
    );
    let started = Instant::now();
    loop {
        matchmaker.pass_now().await.expect("pass");
        if store.queue_waiting().await.expect("waiting").is_empty() {
            break;
        }
    }
    let took = started.elapsed().as_secs_f64();
    store.queue_sweep(i64::MAX, i64::MAX).await.expect("sweep");
    took
}

fn rand_suffix() -> u64 {
    rand::random()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn backend(label: &str, store: Store, host: SocketAddr) {
    for (mode, players) in [("5v5", 10usize), ("solo", 1)] {
        let mut rates = Vec::new();
        for _ in 0..ROUNDS {
            let s = one_round(&store, host, mode, players).await;
            rates.push(PLAYERS as f64 / s);
        }
        println!(
            "FIGURE mm_{label}_{mode}_players_per_s {:.0} players/s",
            median(rates)
        );
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let host = stand_in_host().await;
        let dir = std::env::temp_dir().join(format!("hightick-mm-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let sqlite = Store::open_in_data_dir(&dir).await.expect("sqlite");
        backend("sqlite", sqlite, host).await;
        let _ = std::fs::remove_dir_all(&dir);
        match std::env::var("HIGHTICK_TEST_DATABASE_URL") {
            Ok(url) if !url.is_empty() => {
                let mut options = StoreOptions::new(url);
                options.postgres_schema = Some(format!("mm_bench_{}", std::process::id()));
                let pg = Store::open_with(&options).await.expect("postgres");
                backend("postgres", pg, host).await;
            }
            _ => println!("PostgreSQL skipped (HIGHTICK_TEST_DATABASE_URL is not set)"),
        }
    });
}
