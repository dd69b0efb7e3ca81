//! What the impairment proxy costs per datagram.
//!
//! - `netem_ns_per_datagram`: the real proxy on loopback under the `mobile`
//!   link, 40 clients each sending one 200-byte datagram per tick at 128 Hz
//!   to an echo server (about 10,000 datagrams/s each way, what the demo's
//!   80 bots of 5v5 make): the proxy thread's CPU time
//!   (`CLOCK_THREAD_CPUTIME_ID`) over the datagrams it took in, both
//!   directions. Median of 3 runs of 3 s.
//! - `netem_core_ns_per_datagram`: the sans-IO emulator alone (decide, hold,
//!   release), on a virtual clock.
//!
//! Run with `cargo bench -p hightick-netem`.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hightick_netem::{
    Direction, Emulator, FlowKey, Limits, LinkProfile, MAX_DATAGRAM, Proxy, ProxyConfig,
};
use hightick_telemetry::bench::{Stats, figure, measure};

const CLIENTS: usize = 40;
const RATE_HZ: u32 = 128;
const RUN: Duration = Duration::from_secs(3);

fn echo_server(stop: Arc<AtomicBool>) -> (SocketAddr, std::thread::JoinHandle<()>) {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind echo");
    socket
        .set_read_timeout(Some(Duration::from_millis(20)))
        .expect("timeout");
    let addr = socket.local_addr().expect("addr");
    let thread = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !stop.load(Ordering::Relaxed) {
            if let Ok((n, from)) = socket.recv_from(&mut buf) {
                let _ = socket.send_to(&buf[..n], from);
            }
        }
    });
    (addr, thread)
}

/// One run of the real proxy: its CPU nanoseconds per datagram.
fn proxy_run() -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let (server, echo) = echo_server(stop.clone());
    let proxy = Proxy::start(ProxyConfig::new(
        "127.0.0.1:0".parse().expect("addr"),
        server,
        LinkProfile::builtin("mobile").expect("builtin"),
        1,
    ))
    .expect("start proxy");
    let clients: Vec<UdpSocket> = (0..CLIENTS)
        .map(|_| {
            let s = UdpSocket::bind("127.0.0.1:0").expect("bind client");
            s.set_nonblocking(true).expect("nonblocking");
            s
        })
        .collect();
    let payload = [7u8; 200];
    let mut buf = [0u8; 2048];
    let period = Duration::from_secs(1) / RATE_HZ;
    let start = Instant::now();
    let mut next = start;
    while start.elapsed() < RUN {
        for c in &clients {
            let _ = c.send_to(&payload, proxy.local_addr());
            while c.recv_from(&mut buf).is_ok() {}
        }
        next += period;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let report = proxy.stop().expect("stop proxy");
    stop.store(true, Ordering::Relaxed);
    let _ = echo.join();
    eprintln!(
        "  {} datagrams in, {:.3} s of proxy CPU over {:.1} s ({:.3} cores)",
        report.emulator.up.datagrams + report.emulator.down.datagrams,
        report.cpu_s,
        report.wall_s,
        report.cpu_cores()
    );
    report.ns_per_datagram
}

/// The emulator alone: one datagram decided, held and released per call.
fn core_ns() -> Stats {
    let t0 = Instant::now();
    let mut e = Emulator::new(
        LinkProfile::builtin("mobile").expect("builtin"),
        1,
        Limits::default(),
    );
    let flows: Vec<_> = (0..CLIENTS as u16)
        .map(|p| {
            e.flow(
                t0,
                FlowKey::new(0, SocketAddr::from(([127, 0, 0, 1], 1000 + p))),
            )
            .expect("room for the flows")
        })
        .collect();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let payload = [7u8; 200];
    let mut i = 0u64;
    measure(
        || {
            i += 1;
            // 20,000 datagrams a second of virtual time, alternating ways.
            let now = t0 + Duration::from_micros(i * 50);
            let flow = flows[i as usize % flows.len()];
            let direction = if i.is_multiple_of(2) {
                Direction::Up
            } else {
                Direction::Down
            };
            e.handle_datagram(now, flow, direction, &payload);
            let mut released = 0;
            while let Some(r) = e.poll_transmit(now, &mut buf) {
                released += r.len;
            }
            released
        },
        100_000,
        9,
    )
}

fn main() {
    let mut runs: Vec<f64> = (0..3).map(|_| proxy_run()).collect();
    runs.sort_by(f64::total_cmp);
    figure("netem_ns_per_datagram", runs[1], "ns");
    figure("netem_core_ns_per_datagram", core_ns().median_ns(), "ns");
}
