//! What the gateway's listener (per-connection header, body and idle
//! deadlines: `hightick_gateway::listen`) costs against `axum::serve` with
//! connect info (how the gateway served before), serving the same trivial
//! route over keep-alive HTTP/1.1 on loopback, in one process, the two
//! alternating in rounds. A trivial route shows the most the listener can
//! cost: a real one adds its JSON and its store round trip.
//!
//! Figures (medians over the rounds):
//! - `listen_axum_serve_req_per_s`, `listen_deadlines_req_per_s`;
//! - `listen_deadlines_throughput_ratio` (deadlines / axum::serve);
//! - `listen_{axum_serve,deadlines}_p99_us`: request latency p99.
//!
//! Run: `cargo bench -p hightick-gateway --bench listen`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use hdrhistogram::Histogram;
use hightick_gateway::listen::{ConnectionCounts, HttpConfig, serve};
use hightick_telemetry::bench::figure;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Keep-alive connections driving each server.
const CONNECTIONS: usize = 32;
/// Length of one round.
const ROUND: Duration = Duration::from_secs(3);
/// Rounds per server.
const ROUNDS: usize = 5;

const REQUEST: &[u8] = b"GET /ping HTTP/1.1\r\nhost: bench\r\n\r\n";

fn app() -> Router {
    Router::new().route("/ping", get(|| async { "ok" }))
}

/// One connection's loop until `until`: requests done, and their latencies.
async fn drive(address: SocketAddr, until: Instant) -> Histogram<u64> {
    let mut latencies = Histogram::<u64>::new(3).expect("histogram");
    let mut stream = TcpStream::connect(address).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut buf = vec![0u8; 4096];
    while Instant::now() < until {
        let start = Instant::now();
        stream.write_all(REQUEST).await.expect("write");
        let mut got = 0;
        // The answer is a head and the 2-byte body `ok`.
        loop {
            let n = stream.read(&mut buf[got..]).await.expect("read");
            assert!(n > 0, "closed");
            got += n;
            if buf[..got].ends_with(b"\r\n\r\nok") {
                break;
            }
        }
        let _ = latencies.record(start.elapsed().as_micros() as u64);
    }
    latencies
}

/// One round against `address`: requests per second and the p99 in µs.
async fn round(address: SocketAddr) -> (f64, f64) {
    let until = Instant::now() + ROUND;
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|_| tokio::spawn(drive(address, until)))
        .collect();
    let mut all = Histogram::<u64>::new(3).expect("histogram");
    for t in tasks {
        all.add(t.await.expect("driver")).expect("merge");
    }
    (
        all.len() as f64 / ROUND.as_secs_f64(),
        all.value_at_quantile(0.99) as f64,
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let plain = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let plain_address = plain.local_addr().expect("address");
        // As the gateway served before: with the peer's address on each request.
        let with_peer = app().into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move { axum::serve(plain, with_peer).await });
        let watched = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let watched_address = watched.local_addr().expect("address");
        let counts = Arc::new(ConnectionCounts::default());
        let config = HttpConfig::default();
        tokio::spawn(async move {
            serve(
                watched,
                app(),
                &config,
                None,
                counts,
                std::future::pending(),
            )
            .await
        });
        let (mut plain_rates, mut plain_p99) = (Vec::new(), Vec::new());
        let (mut watched_rates, mut watched_p99) = (Vec::new(), Vec::new());
        for i in 0..ROUNDS {
            let (r, p) = round(plain_address).await;
            plain_rates.push(r);
            plain_p99.push(p);
            let (r, p) = round(watched_address).await;
            watched_rates.push(r);
            watched_p99.push(p);
            eprintln!(
                "round {i}: axum::serve {:.0} req/s, deadlines {:.0} req/s",
                plain_rates[i], watched_rates[i]
            );
        }
        let plain = median(plain_rates);
        let watched = median(watched_rates);
        figure("listen_axum_serve_req_per_s", plain, "req/s");
        figure("listen_deadlines_req_per_s", watched, "req/s");
        figure("listen_deadlines_throughput_ratio", watched / plain, "x");
        figure("listen_axum_serve_p99_us", median(plain_p99), "us");
        figure("listen_deadlines_p99_us", median(watched_p99), "us");
    });
}
