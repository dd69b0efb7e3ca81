//! Ten match bots against a real `hightick_net::Server` + `Match<Arena>`
//! served over loopback UDP from a std thread (a minimal host written for
//! the test; the product's host is `hightick-server`).

#[path = "../../client/tests/support/mod.rs"]
mod support;

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hightick_arena::game::Arena;
use hightick_engine::PlayerId;
use hightick_swarm::{BotTarget, Fleet, FleetConfig};
use support::Host;

const BOTS: usize = 10;

#[tokio::test(flavor = "current_thread")]
async fn ten_bots_connect_play_and_see_consistent_state() {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = socket.local_addr().unwrap();
    let host = Host::at(server, BOTS, Instant::now());
    let targets: Vec<BotTarget> = (0..BOTS)
        .map(|i| BotTarget {
            server,
            token: host.token(i as u64).encode().to_vec(),
        })
        .collect();
    let host_stop = Arc::new(AtomicBool::new(false));
    let host_thread = support::serve_udp(host, socket, host_stop.clone());

    // HIGHTICK_SWARM_TEST_SECS lengthens the run (e.g. to watch kills).
    let secs = std::env::var("HIGHTICK_SWARM_TEST_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5u64)
        .max(3);
    let config = FleetConfig {
        duration: Duration::from_secs(secs),
        ..FleetConfig::default()
    };
    let fleet =
        Fleet::launch::<Arena>(&targets, &config, Arc::new(AtomicBool::new(false))).unwrap();
    assert_eq!(fleet.bots(), BOTS);
    // The live counters grow while the fleet runs.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let live = fleet.live();
    assert!(live.snapshots > 0, "{live:?}");
    let report = fleet.finish().await;
    host_stop.store(true, Ordering::Relaxed);
    let host = host_thread.join().unwrap();
    println!("{report}");

    let c = &report.counters;
    assert_eq!((report.bots, report.failed), (BOTS as u64, 0));
    assert_eq!(c.connected, BOTS as u64, "{report}");
    assert_eq!(c.disconnected, 0, "{report}");
    assert!(c.snapshots > BOTS as u64 * 128 * (secs - 2), "{report}");
    assert_eq!(c.decode_errors, 0, "{report}");
    assert_eq!(c.desyncs, 0, "{report}");
    // Everyone was welcomed and heard of every join; rounds started.
    assert_eq!(c.events[8], BOTS as u64, "{report}");
    assert!(c.events[5] >= BOTS as u64, "{report}");
    assert!(c.events[0] >= BOTS as u64, "{report}");
    assert!(c.bytes_in > 0 && c.bytes_out > 0 && c.packets_out > c.packets_in / 4);
    let p50 = report.interarrival_p50_us();
    assert!((4_000..16_000).contains(&p50), "{report}");
    // The bots' inputs drove the match: every player's commands arrived.
    for p in 0..BOTS as u16 {
        let inputs = host.game.input_stats(PlayerId(p)).unwrap();
        assert!(inputs.accepted > 128, "player {p}: {inputs:?}");
    }
    // They bought in the buy phase (rifle or armor) from what they received.
    assert!(c.events[4] > 0, "{report}");
}
