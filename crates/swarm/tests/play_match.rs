//! `play_match` steps: players get a connect token from an HTTP login
//! (base64 in JSON), then play a real match over UDP against a real
//! `hightick_net::Server` + `Match<Arena>` on a std thread; what the bots
//! saw (snapshots, inter-arrival, RTT, desyncs) lands in the result.

#[path = "../../client/tests/support/mod.rs"]
mod support;

use std::convert::Infallible;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use base64::Engine as _;
use bytes::Bytes;
use hightick_arena::game::Arena;
use hightick_swarm::MatchPlayer;
use hightick_swarm::Scenario;
use hightick_swarm::run::run;
use http_body_util::Full;
use support::Host;

const PLAYERS: usize = 4;

/// An HTTP login that hands out the prepared tokens in order.
async fn token_desk(tokens: Vec<String>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tokens = Arc::new(Mutex::new(tokens));
    let next = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let (tokens, next) = (tokens.clone(), next.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |_req| {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let token = tokens.lock().unwrap().get(i).cloned().unwrap_or_default();
                    let body = format!("{{\"connect_token\":\"{token}\"}}");
                    async move {
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from(body))))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// Players log in at a token desk and play a real match for 3 s against a
/// real host; `extra` goes into the scenario (a `link` key). Returns the
/// run's result and the host.
async fn log_in_and_play(extra: &str) -> (hightick_swarm::result::RunResult, Host) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = socket.local_addr().unwrap();
    let host = Host::at(server, PLAYERS, Instant::now());
    let tokens = (0..PLAYERS as u64)
        .map(|i| base64::engine::general_purpose::STANDARD.encode(host.token(i).encode()))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let host_thread = support::serve_udp(host, socket, stop.clone());
    let desk = token_desk(tokens).await;

    let text = format!(
        r#"
users = {PLAYERS}
duration = "4s"
drivers = 1
{extra}
[targets]
desk = "http://{desk}"
[[setup]]
name = "matchmake"
method = "POST"
url = "/v1/matchmaking"
capture = {{ connect_token = "/connect_token" }}
[[behaviour]]
name = "play"
[[behaviour.step]]
name = "play"
play_match = {{ token = "{{{{connect_token}}}}", duration = "3s" }}
think = "10s"
[[threshold]]
metric = "desyncs"
max = 0
"#
    );
    let scenario = Arc::new(Scenario::parse(&text, "match.toml").unwrap());
    let result = run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap();
    stop.store(true, Ordering::Relaxed);
    (result, host_thread.join().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_log_in_then_play_a_real_match() {
    let interarrival = "[[threshold]]\nmetric = \"snapshot_interarrival_p50\"\nmax = \"16ms\"";
    let (result, host) = log_in_and_play(interarrival).await;
    let m = result.matches.as_ref().expect("matches were played");
    assert_eq!(m.started, PLAYERS as u64, "{m:?}");
    assert_eq!(result.steps[1].name, "play");
    assert_eq!(result.steps[1].ok, PLAYERS as u64);
    assert!(m.snapshots > PLAYERS as u64 * 128, "{m:?}");
    assert_eq!(
        (m.desyncs, m.decode_errors, m.disconnects),
        (0, 0, 0),
        "{m:?}"
    );
    assert!((4_000..16_000).contains(&m.interarrival_p50_us), "{m:?}");
    assert!(m.rtt_p50_us > 0, "{m:?}");
    assert!(result.passed, "{:?}", result.thresholds);
    // The bots' inputs reached the match.
    for p in 0..PLAYERS as u16 {
        let inputs = host.game.input_stats(hightick_engine::PlayerId(p)).unwrap();
        assert!(inputs.accepted > 128, "player {p}: {inputs:?}");
    }
}

/// The scenario's `link` key: every player behind `wifi` (30 ms ± 10 round
/// trip, 1% loss each way) still plays its match through, and the round
/// trips the bots measure are the link's (loopback alone: well under 10 ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_behind_a_link_play_through_it() {
    let (result, host) =
        log_in_and_play("link = { profile = \"wifi\", share = 1.0, seed = 7 }").await;
    let m = result.matches.as_ref().expect("matches were played");
    assert_eq!(m.started, PLAYERS as u64, "{m:?}");
    assert_eq!(result.steps[1].ok, PLAYERS as u64, "{:?}", result.steps);
    assert_eq!((m.desyncs, m.decode_errors), (0, 0), "{m:?}");
    assert!(m.snapshots > PLAYERS as u64 * 100, "{m:?}");
    assert!(m.rtt_p50_us >= 20_000, "the link's round trip: {m:?}");
    for p in 0..PLAYERS as u16 {
        let inputs = host.game.input_stats(hightick_engine::PlayerId(p)).unwrap();
        assert!(inputs.accepted > 100, "player {p}: {inputs:?}");
    }
}
