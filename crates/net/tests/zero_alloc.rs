//! Steady-state traffic through the whole stack (packet layer inside the
//! secure layer, both directions, with acks, keep-alives, delivery
//! notifications, resends and losses) allocates nothing.

mod secure_pair;

use std::time::Duration;

use hightick_net::sim_link::SimLinkConfig;
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};
use secure_pair::{Pair, clean_link, lossy_link};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const TICK: Duration = Duration::from_millis(8);

/// One 128 Hz-ish tick of game traffic: a snapshot down, an input up, an
/// occasional reliable event each way; everything received and every delivery
/// notification drained.
fn tick(pair: &mut Pair, n: u32, out: &mut [u8], counts: &mut [u64; 4]) {
    let snapshot = [n as u8; 200];
    let input = [n as u8; 40];
    pair.server.send_unreliable(0, &snapshot).unwrap();
    pair.client.send_unreliable(&input).unwrap();
    if n.is_multiple_of(8) {
        // The reliable queue may be full for a moment on a lossy link; that is fine.
        let _ = pair.server.send_reliable(0, b"kill: player 3 by player 7");
        let _ = pair.client.send_reliable(b"buy: rifle");
    }
    let end = pair.now + TICK;
    while pair.now < end {
        pair.step(Some(end));
        while pair.server.poll_message(0, out).is_some() {
            counts[0] += 1;
        }
        while pair.client.poll_message(out).is_some() {
            counts[1] += 1;
        }
        while pair.server.poll_delivery(0).is_some() {
            counts[2] += 1;
        }
        while pair.client.poll_delivery().is_some() {
            counts[3] += 1;
        }
    }
}

fn assert_steady_state_allocates_nothing(mut pair: Pair) {
    let mut out = vec![0u8; MAX_PACKET_BYTES];
    let mut counts = [0u64; 4];
    for n in 0..200 {
        tick(&mut pair, n, &mut out, &mut counts);
    }
    let before = counts;
    let allocations = count_allocations(|| {
        for n in 200..800 {
            tick(&mut pair, n, &mut out, &mut counts);
        }
    });
    assert_eq!(allocations, 0, "allocations in 600 steady-state ticks");
    // The measured ticks really moved traffic both ways.
    for (i, (after, before)) in counts.iter().zip(before).enumerate() {
        assert!(
            after - before > 300,
            "counter {i} moved only {}",
            after - before
        );
    }
    assert!(pair.client.is_connected() && pair.server.is_connected(0));
}

#[test]
fn steady_state_on_a_clean_link_allocates_nothing() {
    assert_steady_state_allocates_nothing(Pair::connected(
        51,
        clean_link(15, 51),
        clean_link(15, 52),
    ));
}

#[test]
fn steady_state_on_a_lossy_link_allocates_nothing() {
    let lossy = |seed| SimLinkConfig {
        capacity: 4096,
        ..lossy_link(0.1, seed)
    };
    assert_steady_state_allocates_nothing(Pair::connected(53, lossy(53), lossy(54)));
}
