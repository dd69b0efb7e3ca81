//! End-to-end: the smoothed RTT converges near the link's round trip, and the
//! loss estimate near the link's loss.

use std::time::{Duration, Instant};

use hightick_net::PacketConfig;
use hightick_net::sim_link::{PacketPair, SimLinkConfig};

fn link(latency_ms: u64, loss: f32, seed: u64) -> SimLinkConfig {
    SimLinkConfig {
        latency: Duration::from_millis(latency_ms),
        loss,
        seed,
        ..SimLinkConfig::default()
    }
}

/// Both ends queue a small snapshot every 10 ms for `secs` seconds.
fn run(mut pair: PacketPair, secs: u64) -> PacketPair {
    let start = pair.now();
    let mut next_snapshot = start;
    let mut buf = [0u8; 256];
    while pair.now() - start < Duration::from_secs(secs) {
        if pair.now() >= next_snapshot {
            pair.a.send_unreliable(&[1; 64]).unwrap();
            pair.b.send_unreliable(&[2; 64]).unwrap();
            next_snapshot += Duration::from_millis(10);
        }
        match pair.next_wakeup() {
            Some(at) if at <= next_snapshot => {
                pair.step();
            }
            _ => pair.run_until(next_snapshot),
        }
        while pair.a.poll_message(&mut buf).is_some() || pair.b.poll_message(&mut buf).is_some() {}
        while pair.a.poll_delivery().is_some() || pair.b.poll_delivery().is_some() {}
    }
    pair
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[test]
fn rtt_converges_to_the_round_trip_when_acks_are_immediate() {
    let config = PacketConfig {
        initial_rtt: Duration::from_millis(500),
        ..PacketConfig::default()
    };
    let pair = PacketPair::new(
        &config,
        link(40, 0.0, 1),
        link(25, 0.0, 2),
        None,
        Instant::now(),
    );
    let pair = run(pair, 5);
    // Eager sending acks every packet at once: the round trip is 40 + 25 ms.
    for endpoint in [&pair.a, &pair.b] {
        let rtt = ms(endpoint.rtt());
        assert!((64.0..=66.0).contains(&rtt), "rtt {rtt} ms");
        assert!(endpoint.packet_loss() < 0.01);
    }
}

#[test]
fn rtt_with_ticked_sending_includes_at_most_one_tick_of_ack_delay() {
    let tick = Duration::from_millis(10);
    let pair = PacketPair::new(
        &PacketConfig::default(),
        SimLinkConfig {
            jitter: Duration::from_millis(6),
            ..link(50, 0.0, 3)
        },
        SimLinkConfig {
            jitter: Duration::from_millis(6),
            ..link(50, 0.0, 4)
        },
        Some(tick),
        Instant::now(),
    );
    let pair = run(pair, 10);
    for endpoint in [&pair.a, &pair.b] {
        let rtt = ms(endpoint.rtt());
        // 100 ms of latency, 0..12 ms of jitter, 0..10 ms waiting for the peer's tick.
        assert!((100.0..=122.0).contains(&rtt), "rtt {rtt} ms");
        assert!(endpoint.rtt_variation() < Duration::from_millis(15));
    }
}

#[test]
fn loss_estimate_converges_near_the_link_loss() {
    let pair = PacketPair::new(
        &PacketConfig::default(),
        link(30, 0.2, 5),
        link(30, 0.05, 6),
        Some(Duration::from_millis(8)),
        Instant::now(),
    );
    let pair = run(pair, 30);
    let a_loss = pair.a.packet_loss();
    let b_loss = pair.b.packet_loss();
    assert!(
        (0.1..0.3).contains(&a_loss),
        "a sends over 20% loss: {a_loss}"
    );
    assert!(b_loss < 0.12, "b sends over 5% loss: {b_loss}");
    let stats = pair.a.stats();
    let share = stats.packets_lost as f64 / (stats.packets_lost + stats.packets_acked) as f64;
    assert!((0.17..0.23).contains(&share), "lost share {share}");
}
