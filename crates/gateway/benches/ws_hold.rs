//! 19,000 push WebSockets held by one gateway process, and the latency of
//! a push to every one of them.
//!
//! This process runs the gateway (and a stand-in host admin API that
//! accepts every match); the clients run in child processes (this same
//! executable, `WS_HOLD_SHARD` set), because a process may hold 20,000 open
//! files on this machine and the gateway alone holds one per socket. Each
//! child logs its players in over HTTP, opens one WebSocket per player from
//! its own source address (127.0.0.2, .3, ...), and says `HELD n`. With all
//! held, the gateway's open files, RSS and idle CPU are read. Then two
//! bursts, each child measuring the time from a push's `at_ms` (stamped when
//! the gateway published it) to its arrival (same clock; `at_ms` is whole
//! milliseconds, so each latency reads up to 1 ms high):
//! 1. every player joins the one-player mode `solo` at once: one
//!    `match_found` each (allocations run one at a time, so these pushes
//!    spread over the burst);
//! 2. every player joins the 128-player mode `crowd` (no host takes it, so
//!    nobody leaves), spread over 10 s, then one player a second cancels for
//!    5 s: every position pass (once a second) pushes a `queue` update to
//!    every queued player whose position or queue length changed, so the
//!    last passes push to all of them at once.
//!
//! Figures:
//! - `ws_held_sockets`, `ws_gateway_open_files` (and the limit),
//!   `ws_gateway_rss_mb`, `ws_gateway_rss_per_socket_kb` (RSS growth from
//!   before the sockets to all held, divided by the sockets);
//! - `ws_gateway_idle_cpu_cores` while holding them (pings every 20 s);
//! - `ws_match_found_push_p50_ms`, `_p99_ms`, `_max_ms` over all players,
//!   and `ws_burst_gateway_cpu_s` (the gateway's CPU for the whole burst:
//!   joins, allocations, tokens, pushes);
//! - `ws_queue_push_p50_ms`, `_p99_ms` over the position passes that found
//!   at least 99% of the players queued (each such pass pushes to all of
//!   them), `ws_queue_pushes_full` (how many such pushes were timed), and
//!   `ws_queue_gateway_cpu_cores` over that phase.
//!
//! Run: `cargo bench -p hightick-gateway --bench ws_hold`
//! (`WS_HOLD_SOCKETS=19000`, `WS_HOLD_SHARDS=4` by default).

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::post;
use common::Http;
use futures_util::StreamExt;
use hightick_gateway::GatewayConfig;
use hightick_gateway::config::{ModeConfig, StaticHost};
use hightick_gateway::push::PushConfig;
use hightick_telemetry::bench::figure;
use serde_json::{Value, json};
use tokio::net::TcpSocket;
use tokio::sync::Semaphore;
use tokio_tungstenite::MaybeTlsStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn raise_nofile() -> u64 {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write one struct we own.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut l);
        l.rlim_cur = l.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &l);
    }
    l.rlim_cur
}

fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn unix_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

fn main() {
    let limit = raise_nofile();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match std::env::var("WS_HOLD_SHARD") {
        Ok(shard) => runtime.block_on(client(shard)),
        Err(_) => runtime.block_on(gateway(limit)),
    }
}

/// A host admin API that accepts every match.
async fn accepting_host() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let app = axum::Router::new().route(
        "/v1/matches",
        post(|Json(body): Json<Value>| async move {
            if body["mode"] == "crowd" {
                // Full: the gateway stops asking; `crowd` players stay queued.
                return (axum::http::StatusCode::SERVICE_UNAVAILABLE, Json(json!({})));
            }
            (
                axum::http::StatusCode::CREATED,
                Json(json!(hightick_host_api::MatchInfo::new(
                    body["match_id"].as_str().unwrap_or_default(),
                    "127.0.0.1:9".parse().unwrap(),
                ))),
            )
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

struct Shard {
    child: Child,
    stdin: Option<ChildStdin>,
}

async fn gateway(limit: u64) {
    let sockets = env_or("WS_HOLD_SOCKETS", 19_000);
    let shards = env_or("WS_HOLD_SHARDS", 4).max(1);
    let host = accepting_host().await;
    let config = GatewayConfig {
        auth_workers: 2,
        modes: ["solo", "crowd"]
            .iter()
            .zip([1, 128])
            .map(|(name, players)| ModeConfig {
                name: (*name).to_owned(),
                players,
                settings: serde_json::Map::new(),
            })
            .collect(),
        hosts: vec![StaticHost {
            admin: host,
            capacity: 100_000,
        }],
        push: PushConfig {
            max_sockets: 100_000,
            ..PushConfig::default()
        },
        ..common::test_config()
    };
    let (_, store) = common::stores("ws_hold", 8).await.remove(0);
    let (gateway, _) = common::start(&config, store).await;
    let address = gateway.address();
    let rss0 = hightick_process::rss_bytes();
    let exe = std::env::current_exe().expect("this executable");
    let (lines, heard) = mpsc::channel::<(usize, String)>();
    let mut children = Vec::new();
    for i in 0..shards {
        let count = sockets / shards + usize::from(i < sockets % shards);
        let mut child = Command::new(&exe)
            .env("WS_HOLD_SHARD", i.to_string())
            .env("WS_HOLD_GATEWAY", address.to_string())
            .env("WS_HOLD_COUNT", count.to_string())
            .env("WS_HOLD_SOURCE", format!("127.0.0.{}", i + 2))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("a client process");
        let stdout = child.stdout.take().expect("piped stdout");
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines.send((i, line)).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        children.push(Shard { child, stdin });
    }
    let started = Instant::now();
    let full_queue = (sockets as f64 * 0.99) as u64;
    let wait_for = |word: &str, latencies: &mut Vec<f64>| {
        let mut done = 0;
        while done < shards {
            let (i, line) = heard
                .recv_timeout(Duration::from_secs(600))
                .expect("the clients keep talking");
            if let Some(us) = line.strip_prefix("LAT ") {
                latencies.extend(us.parse::<f64>().ok());
            } else if let Some(rest) = line.strip_prefix("QLAT ") {
                let mut fields = rest.split(' ');
                let us = fields.next().and_then(|v| v.parse::<f64>().ok());
                let waiting = fields.next().and_then(|v| v.parse::<u64>().ok());
                if waiting.is_some_and(|w| w >= full_queue) {
                    latencies.extend(us);
                }
            } else if line.starts_with(word) {
                eprintln!(
                    "shard {i}: {line} ({:.1} s)",
                    started.elapsed().as_secs_f64()
                );
                done += 1;
            } else {
                eprintln!("shard {i}: {line}");
            }
        }
    };
    let mut latencies = Vec::with_capacity(sockets);
    wait_for("HELD", &mut latencies);
    let http = Http::new(address, 2);
    let metrics = http.get("/metrics", None).await.text;
    let held = metrics
        .lines()
        .find_map(|l| l.strip_prefix("hightick_gateway_push_sockets "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    let files = open_files();
    let rss = hightick_process::rss_bytes();
    let cpu0 = hightick_process::process_cpu_seconds();
    tokio::time::sleep(Duration::from_secs(20)).await;
    let idle = (hightick_process::process_cpu_seconds() - cpu0) / 20.0;
    figure("ws_held_sockets", held, "sockets");
    figure("ws_gateway_open_files", files as f64, "files");
    figure("ws_open_file_limit", limit as f64, "files");
    figure("ws_gateway_rss_mb", rss as f64 / 1048576.0, "MiB");
    figure(
        "ws_gateway_rss_per_socket_kb",
        rss.saturating_sub(rss0) as f64 / 1024.0 / held.max(1.0),
        "KiB",
    );
    figure("ws_gateway_idle_cpu_cores", idle, "cores");

    let go = |children: &mut Vec<Shard>| {
        for shard in children.iter_mut() {
            if let Some(stdin) = shard.stdin.as_mut() {
                let _ = writeln!(stdin, "GO");
                let _ = stdin.flush();
            }
        }
    };
    let cpu1 = hightick_process::process_cpu_seconds();
    let burst = Instant::now();
    go(&mut children);
    wait_for("DONE", &mut latencies);
    let burst_s = burst.elapsed().as_secs_f64();
    let burst_cpu = hightick_process::process_cpu_seconds() - cpu1;
    latency_figures("ws_match_found", "pushes", &mut latencies);
    figure("ws_burst_wall_s", burst_s, "s");
    figure("ws_burst_gateway_cpu_s", burst_cpu, "s");

    let mut queue_latencies = Vec::with_capacity(sockets * 6);
    let cpu2 = hightick_process::process_cpu_seconds();
    let crowd = Instant::now();
    go(&mut children);
    wait_for("QDONE", &mut queue_latencies);
    let crowd_cpu =
        (hightick_process::process_cpu_seconds() - cpu2) / crowd.elapsed().as_secs_f64();
    latency_figures("ws_queue", "pushes_full", &mut queue_latencies);
    figure("ws_queue_gateway_cpu_cores", crowd_cpu, "cores");
    for mut shard in children {
        drop(shard.stdin.take());
        let _ = shard.child.wait();
    }
    gateway.shutdown().await.expect("a clean shutdown");
}

/// `<prefix>_<count>` and the push p50, p99 and max of `us` (microseconds).
fn latency_figures(prefix: &str, count: &str, us: &mut [f64]) {
    us.sort_by(f64::total_cmp);
    figure(&format!("{prefix}_{count}"), us.len() as f64, "pushes");
    for (name, q) in [("p50", 0.5), ("p99", 0.99), ("max", 1.0)] {
        figure(
            &format!("{prefix}_push_{name}_ms"),
            quantile_ms(us, q),
            "ms",
        );
    }
}

/// The `q` quantile of sorted microseconds, in milliseconds.
fn quantile_ms(sorted_us: &[f64], q: f64) -> f64 {
    let i = ((sorted_us.len() as f64 * q) as usize).min(sorted_us.len().saturating_sub(1));
    sorted_us.get(i).map_or(f64::NAN, |us| us / 1000.0)
}

/// What a client's reader saw: a `match_found`, or a `queue` update with
/// its queue length.
enum Seen {
    Found(i64),
    Queue(i64, u64),
}

/// One shard of players: log in, hold a socket each, then join and time
/// each `match_found`; then join the crowd and time each `queue` update.
async fn client(shard: String) {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"));
    let gateway: SocketAddr = var("WS_HOLD_GATEWAY").parse().expect("an address");
    let count: usize = var("WS_HOLD_COUNT").parse().expect("a count");
    let source: IpAddr = var("WS_HOLD_SOURCE").parse().expect("an address");
    let http = Http::new(gateway, 64);
    let mut logins = Vec::with_capacity(count);
    for i in 0..count {
        let http = http.clone();
        let device = format!("hold-{shard}-{i}");
        logins.push(tokio::spawn(async move { http.guest(&device).await.1 }));
    }
    let mut tokens = Vec::with_capacity(count);
    for l in logins {
        tokens.push(l.await.expect("a login"));
    }
    println!("LOGGED-IN {count}");
    let (found, mut arrivals) = tokio::sync::mpsc::unbounded_channel::<Seen>();
    let dialling = Arc::new(Semaphore::new(128));
    let mut opened = Vec::with_capacity(count);
    for token in &tokens {
        let dialling = Arc::clone(&dialling);
        let found = found.clone();
        let token = token.clone();
        opened.push(tokio::spawn(async move {
            let permit = dialling.acquire_owned().await.expect("open");
            let socket = TcpSocket::new_v4().expect("a socket");
            socket.bind(SocketAddr::new(source, 0)).expect("bind");
            let stream = socket.connect(gateway).await.expect("connect");
            let mut request = format!("ws://{gateway}/v1/events")
                .into_client_request()
                .expect("a request");
            request.headers_mut().insert(
                "authorization",
                format!("Bearer {token}").parse().expect("a header"),
            );
            let config = WebSocketConfig::default().read_buffer_size(4096);
            let (mut ws, _) = tokio_tungstenite::client_async_with_config(
                request,
                MaybeTlsStream::Plain(stream),
                Some(config),
            )
            .await
            .expect("an upgrade");
            drop(permit);
            tokio::spawn(async move {
                while let Some(Ok(message)) = ws.next().await {
                    let Message::Text(text) = message else {
                        continue;
                    };
                    let now = unix_us();
                    let Ok(push) = serde_json::from_str::<Value>(&text) else {
                        continue;
                    };
                    let latency = now - push["at_ms"].as_i64().unwrap_or(0) * 1000;
                    if push["type"] == "match_found" {
                        let _ = found.send(Seen::Found(latency));
                    } else if push["type"] == "queue" {
                        let waiting = push["waiting"].as_u64().unwrap_or(0);
                        let _ = found.send(Seen::Queue(latency, waiting));
                    }
                }
            });
        }));
    }
    for o in opened {
        o.await.expect("a socket held");
    }
    println!("HELD {count}");
    let stdin = BufReader::new(std::io::stdin());
    let stdin = next_line(stdin).await;
    let mut joins = Vec::with_capacity(count);
    for token in tokens.clone() {
        let http = http.clone();
        joins.push(tokio::spawn(async move {
            http.post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": "solo" }),
                Some(&token),
            )
            .await
            .status
        }));
    }
    let mut received = 0;
    let deadline = tokio::time::sleep(Duration::from_secs(300));
    tokio::pin!(deadline);
    while received < count {
        tokio::select! {
            Some(seen) = arrivals.recv() => if let Seen::Found(us) = seen {
                println!("LAT {us}");
                received += 1;
            },
            () = &mut deadline => break,
        }
    }
    for j in joins {
        let _ = j.await;
    }
    println!("DONE {received} of {count}");

    // The crowd: joins spread over 10 s, then (shard 0) a cancel a second.
    let stdin = next_line(stdin).await;
    let every = Duration::from_secs(10) / count.max(1) as u32;
    let mut joins = Vec::with_capacity(count);
    let mut pace = tokio::time::interval(every);
    for token in tokens.clone() {
        pace.tick().await;
        let http = http.clone();
        joins.push(tokio::spawn(async move {
            let a = http
                .post(
                    "/v1/matchmaking/tickets",
                    &json!({ "mode": "crowd" }),
                    Some(&token),
                )
                .await;
            a.body["ticket"].as_str().map(str::to_owned)
        }));
    }
    let mut tickets = Vec::with_capacity(count);
    for j in joins {
        tickets.push(j.await.ok().flatten());
    }
    for (token, ticket) in tokens
        .iter()
        .zip(&tickets)
        .take(if shard == "0" { 5 } else { 0 })
    {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if let Some(ticket) = ticket {
            http.raw(
                "DELETE",
                &format!("/v1/matchmaking/tickets/{ticket}"),
                None,
                None,
                Some(token),
            )
            .await;
        }
    }
    tokio::time::sleep(Duration::from_secs(if shard == "0" { 3 } else { 8 })).await;
    while let Ok(seen) = arrivals.try_recv() {
        if let Seen::Queue(us, waiting) = seen {
            println!("QLAT {us} {waiting}");
        }
    }
    println!("QDONE");
    let _ = next_line(stdin).await;
}

/// Reads one line of `stdin` on a blocking thread; gives it back.
async fn next_line(mut stdin: BufReader<std::io::Stdin>) -> BufReader<std::io::Stdin> {
    tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        let _ = stdin.read_line(&mut line);
        stdin
    })
    .await
    .expect("stdin")
}
