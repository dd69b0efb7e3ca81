//! End-to-end: the reliable ordered channel (and the unreliable one beside
//! it) between two packet endpoints over lossy, jittery, duplicating and
//! reordering simulated links, on a virtual clock.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use hightick_net::sim_link::{PacketPair, SimLinkConfig};
use hightick_net::{Channel, PacketConfig, PacketEndpoint, PacketError};

fn lossy(seed: u64, loss: f32) -> SimLinkConfig {
    SimLinkConfig {
        loss,
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(20),
        duplicate: 0.05,
        reorder: 0.05,
        seed,
        ..SimLinkConfig::default()
    }
}

/// Message `n`: its number, then a pattern. Lengths run from 4 to 603 bytes,
/// so some travel whole and some in 2 or 3 fragments.
fn message(n: u32, buf: &mut [u8]) -> usize {
    let len = 4 + (n as usize * 37) % 600;
    buf[..4].copy_from_slice(&n.to_le_bytes());
    for (i, b) in buf[4..len].iter_mut().enumerate() {
        *b = (n as usize ^ i) as u8;
    }
    len
}

fn check_message(n: u32, got: &[u8]) {
    let mut want = [0u8; 1024];
    let len = message(n, &mut want);
    assert_eq!(got, &want[..len], "reliable message {n} differs");
}

/// Queues messages `*sent..total` until the queue is full.
fn queue(endpoint: &mut PacketEndpoint, sent: &mut u32, total: u32) {
    let mut buf = [0u8; 1024];
    while *sent < total {
        let len = message(*sent, &mut buf);
        match endpoint.send_reliable(&buf[..len]) {
            Ok(()) => *sent += 1,
            Err(PacketError::SendQueueFull) => break,
            Err(e) => panic!("send_reliable: {e}"),
        }
    }
}

/// Polls every ready message: reliable ones must be the next expected
/// number; unreliable ones (numbered snapshots) must be new.
fn drain(endpoint: &mut PacketEndpoint, expected: &mut u32, snapshots: &mut HashSet<u32>) {
    let mut buf = [0u8; 70 * 1024];
    while let Some(m) = endpoint.poll_message(&mut buf) {
        let number = u32::from_le_bytes(buf[..4].try_into().unwrap());
        match m.channel {
            Channel::Reliable => {
                check_message(*expected, &buf[..m.len]);
                *expected += 1;
            }
            Channel::Unreliable => {
                assert_eq!(m.len, 200);
                assert!(
                    snapshots.insert(number),
                    "snapshot {number} delivered twice"
                );
            }
        }
    }
}

#[test]
fn reliable_messages_arrive_exactly_once_and_in_order_at_20_percent_loss() {
    const TOTAL: u32 = 4000;
    let start = Instant::now();
    let tick = Duration::from_millis(10);
    let mut pair = PacketPair::new(
        &PacketConfig::default(),
        lossy(1, 0.2),
        lossy(2, 0.2),
        Some(tick),
        start,
    );
    let (mut a_sent, mut b_sent, mut a_got, mut b_got) = (0, 0, 0, 0);
    let (mut a_snapshots, mut b_snapshots) = (HashSet::new(), HashSet::new());
    let mut snapshot = [0u8; 200];
    let mut ticks = 0u32;
    while a_got < TOTAL || b_got < TOTAL {
        assert!(
            pair.now() - start < Duration::from_secs(300),
            "stalled: {a_got} {b_got}"
        );
        queue(&mut pair.a, &mut a_sent, TOTAL);
        queue(&mut pair.b, &mut b_sent, TOTAL);
        // A 200-byte unreliable snapshot per tick each way, like a game.
        if pair.next_wakeup() == Some(start + tick * ticks) {
            snapshot[..4].copy_from_slice(&ticks.to_le_bytes());
            pair.a.send_unreliable(&snapshot).unwrap();
            pair.b.send_unreliable(&snapshot).unwrap();
            ticks += 1;
        }
        pair.step();
        drain(&mut pair.b, &mut b_got, &mut b_snapshots);
        drain(&mut pair.a, &mut a_got, &mut a_snapshots);
    }
    // Nothing more arrives later: every message was delivered exactly once.
    pair.run_until(pair.now() + Duration::from_secs(5));
    drain(&mut pair.b, &mut b_got, &mut b_snapshots);
    drain(&mut pair.a, &mut a_got, &mut a_snapshots);
    assert_eq!((a_got, b_got), (TOTAL, TOTAL));
    assert_eq!(pair.a.reliable_in_flight(), 0, "everything acknowledged");
    assert_eq!(pair.b.reliable_in_flight(), 0, "everything acknowledged");

    for (endpoint, snapshots) in [(&pair.a, &a_snapshots), (&pair.b, &b_snapshots)] {
        let stats = endpoint.stats();
        assert_eq!(stats.reliable_received, u64::from(TOTAL));
        assert!(stats.pieces_resent > 0, "losses forced resends: {stats:?}");
        assert!(
            stats.duplicates > 0,
            "duplicated datagrams were dropped: {stats:?}"
        );
        assert_eq!(stats.dropped_malformed, 0);
        // Unreliable snapshots: roughly the 80% that got through, each once.
        let share = snapshots.len() as f64 / f64::from(ticks);
        assert!((0.7..0.9).contains(&share), "snapshot share {share}");
    }
    let link = pair.a_to_b.stats();
    assert!(
        link.lost > 0 && link.duplicated > 0 && link.reordered > 0,
        "{link:?}"
    );
}

#[test]
fn a_60_kib_message_arrives_intact_at_10_percent_loss() {
    let start = Instant::now();
    let mut pair = PacketPair::new(
        &PacketConfig::default(),
        lossy(3, 0.1),
        lossy(4, 0.1),
        Some(Duration::from_millis(8)),
        start,
    );
    let big: Vec<u8> = (0..60 * 1024u32).map(|i| (i * 7 + i / 251) as u8).collect();
    pair.a.send_reliable(b"before").unwrap();
    pair.a.send_reliable(&big).unwrap();
    pair.a.send_reliable(b"after").unwrap();
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while got.len() < 3 {
        assert!(pair.now() - start < Duration::from_secs(60), "stalled");
        pair.step();
        while let Some(m) = pair.b.poll_message(&mut buf) {
            assert_eq!(m.channel, Channel::Reliable);
            got.push(buf[..m.len].to_vec());
        }
    }
    assert_eq!(got[0], b"before");
    assert!(got[1] == big, "60 KiB message corrupted");
    assert_eq!(got[2], b"after");
    assert!(
        pair.a.stats().pieces_resent > 0,
        "some fragments were resent"
    );
}

#[test]
fn large_messages_stream_both_ways_through_loss_and_reordering() {
    const LARGE: u32 = 6;
    let start = Instant::now();
    let mut pair = PacketPair::new(
        &PacketConfig::default(),
        lossy(5, 0.1),
        lossy(6, 0.1),
        None,
        start,
    );
    let large = |n: u32| -> Vec<u8> {
        let len = 20_000 + n as usize * 7_000;
        (0..len)
            .map(|i| (i as u32 ^ n.wrapping_mul(2_654_435_761)) as u8)
            .collect()
    };
    let (mut a_sent, mut b_sent) = (0u32, 0u32);
    let (mut a_got, mut b_got) = (0u32, 0u32);
    let mut buf = vec![0u8; 64 * 1024];
    while a_got < LARGE || b_got < LARGE {
        assert!(pair.now() - start < Duration::from_secs(120), "stalled");
        for (endpoint, sent) in [(&mut pair.a, &mut a_sent), (&mut pair.b, &mut b_sent)] {
            while *sent < LARGE && endpoint.send_reliable(&large(*sent)).is_ok() {
                *sent += 1;
            }
        }
        pair.step();
        for (endpoint, got) in [(&mut pair.a, &mut a_got), (&mut pair.b, &mut b_got)] {
            while let Some(m) = endpoint.poll_message(&mut buf) {
                assert!(
                    buf[..m.len] == large(*got)[..],
                    "large message {got} corrupted"
                );
                *got += 1;
            }
        }
    }
}

#[test]
fn a_receiver_that_stops_polling_applies_backpressure_without_losing_messages() {
    let start = Instant::now();
    let config = PacketConfig {
        message_window: 16,
        ..PacketConfig::default()
    };
    let mut pair = PacketPair::new(&config, lossy(7, 0.1), lossy(8, 0.1), None, start);
    const TOTAL: u32 = 400;
    let mut sent = 0;
    // b does not poll for a while: a's queue fills and stays full.
    while pair.now() - start < Duration::from_secs(2) {
        queue(&mut pair.a, &mut sent, TOTAL);
        pair.step();
    }
    assert!(sent < 40, "the window bounds what is queued: {sent}");
    assert!(
        pair.b.stats().dropped_window_full > 0,
        "{:?}",
        pair.b.stats()
    );
    // Once b polls again everything flows, in order, exactly once.
    let (mut got, mut snapshots) = (0, HashSet::new());
    while got < TOTAL {
        assert!(
            pair.now() - start < Duration::from_secs(120),
            "stalled at {got}"
        );
        queue(&mut pair.a, &mut sent, TOTAL);
        pair.step();
        drain(&mut pair.b, &mut got, &mut snapshots);
    }
}
