//! Time to rejoin: a client whose link died comes back with a fresh connect
//! token from a new source port while its old connection is still open on
//! the host (dead, not yet timed out), and takes its seat over. Measured on
//! a real host over loopback UDP, directly and through `hightick netem`
//! with the built-in links: from the new client's first connection request
//! to its connection (`rejoin_connected_ms_<link>`) and to the first
//! full-state snapshot (`rejoin_full_state_ms_<link>`), medians of
//! `REJOINS` rejoins each (the largest is printed beside). The client pumps
//! every millisecond, so the figures are the link's round trips plus the
//! host's tick and timer cadence, not the client's. Nothing is asserted but
//! that every rejoin got its seat back with full state.
//!
//! `cargo bench -p hightick-server --bench rejoin`

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use hightick_net::Key;
use hightick_netem::{LinkProfile, Proxy, ProxyConfig};
use hightick_telemetry::bench::figure;
use support::{BareClient, create_match, list_matches, start_host};

/// Rejoins measured per link.
const REJOINS: usize = 15;
/// Longest one rejoin may take before the bench gives up on it.
const PATIENCE: Duration = Duration::from_secs(20);

/// Pumps `c` every millisecond until `done`; the time it took.
fn pump_until(c: &mut BareClient, tick: &mut u32, done: impl Fn(&BareClient) -> bool) -> Duration {
    let start = Instant::now();
    while !done(c) {
        assert!(start.elapsed() < PATIENCE, "a rejoin took too long");
        *tick += 1;
        c.send_inputs(*tick / 8 + 20);
        c.pump();
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed()
}

fn median_ms(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() - 1]),
    )
}

fn main() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    create_match(admin, r#"{"mode":"5v5","roster":[1,2]}"#);
    let server = host.game_addresses()[0];
    println!("rejoins per link: {REJOINS}; the old connection is left open (dead) each time");
    println!(
        "{:<8} {:>14} {:>14} {:>16} {:>16}",
        "link", "connected ms", "max", "full state ms", "max"
    );
    for link in ["direct", "lan", "wifi", "mobile", "bad"] {
        let proxy = (link != "direct").then(|| {
            let profile = LinkProfile::builtin(link).expect("a built-in link");
            Proxy::start(ProxyConfig::new(
                "127.0.0.1:0".parse().expect("address"),
                server,
                profile,
                7,
            ))
            .expect("the proxy starts")
        });
        let mut connected = Vec::with_capacity(REJOINS);
        let mut full = Vec::with_capacity(REJOINS);
        let mut tick = 0;
        // The previous connection: left open and silent when the next comes.
        let mut dead = None;
        for _ in 0..=REJOINS {
            let mut c = BareClient::new(&key, 1, server);
            c.via = proxy.as_ref().map(Proxy::local_addr);
            let start = Instant::now();
            pump_until(&mut c, &mut tick, |c| c.net.is_connected());
            let at_connect = start.elapsed();
            pump_until(&mut c, &mut tick, |c| c.full_resyncs >= 1);
            if dead.is_some() {
                connected.push(at_connect);
                full.push(start.elapsed());
            }
            dead = Some(c);
        }
        assert_eq!(list_matches(admin)[0].connected, 1);
        drop(dead);
        if let Some(p) = proxy {
            let _ = p.stop();
        }
        let (c, c_max) = median_ms(connected);
        let (f, f_max) = median_ms(full);
        println!("{link:<8} {c:>14.1} {c_max:>14.1} {f:>16.1} {f_max:>16.1}");
        figure(&format!("rejoin_connected_ms_{link}"), c, "ms");
        figure(&format!("rejoin_full_state_ms_{link}"), f, "ms");
    }
    host.drain(Duration::ZERO);
    host.wait();
}
