//! Steady-state sending and receiving through `PacketEndpoint` (and the
//! simulated link) allocates nothing.

use std::time::{Duration, Instant};

use hightick_net::sim_link::{PacketPair, SimLinkConfig};
use hightick_net::{PacketConfig, PacketEndpoint};
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// One game tick each way: snapshot, an event, sometimes a large message;
/// build, exchange and process packets; drain messages and deliveries.
fn tick(
    a: &mut PacketEndpoint,
    b: &mut PacketEndpoint,
    now: Instant,
    n: u32,
    buf: &mut [u8],
    big: &[u8],
) -> u32 {
    let mut received = 0;
    let _ = a.send_unreliable(&buf[..200]);
    let _ = b.send_unreliable(&buf[..120]);
    let _ = a.send_reliable(&n.to_le_bytes());
    if n.is_multiple_of(50) {
        let _ = b.send_reliable(big);
    }
    exchange(a, b, now, n);
    exchange(b, a, now, n);
    for endpoint in [&mut *a, &mut *b] {
        while let Some(m) = endpoint.poll_message(buf) {
            received += m.len as u32;
        }
        while endpoint.poll_delivery().is_some() {}
    }
    received
}

fn exchange(from: &mut PacketEndpoint, to: &mut PacketEndpoint, now: Instant, n: u32) {
    let mut datagram = [0u8; 1200];
    while let Some((_, len)) = from.write_packet(now, &mut datagram) {
        // Drop every ninth tick's packets to exercise loss and resend paths.
        if !n.is_multiple_of(9) {
            let _ = to.read_packet(now, &datagram[..len]);
        }
    }
}

#[test]
fn steady_state_send_and_receive_allocates_nothing() {
    let start = Instant::now();
    let config = PacketConfig::default();
    let mut a = PacketEndpoint::new(&config, start);
    let mut b = PacketEndpoint::new(&config, start);
    let mut buf = vec![7u8; 64 * 1024];
    let big = vec![3u8; 20_000];
    let step = Duration::from_millis(8);
    let mut n = 0;
    let mut received = 0;
    // Warm-up: fills every ring once, and grows the reliable send ring and
    // receive chunks (sized for whole messages at first) for the large ones.
    for _ in 0..500 {
        received += tick(&mut a, &mut b, start + step * n, n, &mut buf, &big);
        n += 1;
    }
    let allocations = count_allocations(|| {
        for _ in 0..5000 {
            received += tick(&mut a, &mut b, start + step * n, n, &mut buf, &big);
            n += 1;
        }
    });
    assert_eq!(allocations, 0);
    assert!(received > 0);
    let stats = b.stats();
    assert!(
        stats.reliable_received > 5000 && stats.pieces_resent > 0,
        "{stats:?}"
    );
    assert!(
        a.stats().reliable_received > 50,
        "large messages got through"
    );
}

#[test]
fn simulated_pair_allocates_nothing_in_steady_state() {
    let link = SimLinkConfig {
        loss: 0.1,
        latency: Duration::from_millis(20),
        jitter: Duration::from_millis(10),
        duplicate: 0.05,
        reorder: 0.05,
        seed: 3,
        ..SimLinkConfig::default()
    };
    let mut pair = PacketPair::new(
        &PacketConfig::default(),
        link.clone(),
        SimLinkConfig { seed: 4, ..link },
        Some(Duration::from_millis(8)),
        Instant::now(),
    );
    let mut buf = [0u8; 2048];
    let mut run = |pair: &mut PacketPair, steps: u32| {
        for i in 0..steps {
            let _ = pair.a.send_unreliable(&buf[..100]);
            let _ = pair.b.send_reliable(&i.to_le_bytes());
            pair.step();
            while pair.a.poll_message(&mut buf).is_some() || pair.b.poll_message(&mut buf).is_some()
            {
            }
            while pair.a.poll_delivery().is_some() || pair.b.poll_delivery().is_some() {}
        }
    };
    run(&mut pair, 2000);
    assert_eq!(count_allocations(|| run(&mut pair, 5000)), 0);
    assert!(pair.a.stats().reliable_received > 3000);
}
