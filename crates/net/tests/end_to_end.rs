//! Client and server with the packet layer inside the secure layer, over bad
//! simulated links: reliable delivery exactly once and in order at 20% loss
//! with jitter, duplication and reordering; a 60 KiB message at 10% loss;
//! a delivery notification for every packet sent.

mod secure_pair;

use std::collections::HashSet;
use std::time::Duration;

use hightick_net::DeliveryOutcome;
use hightick_net::PacketError;
use hightick_net::{DropKind, NetError};
use rand::{Rng, SeedableRng};
use secure_pair::{Pair, lossy_link};

const TICK: Duration = Duration::from_millis(16);

/// A connected pair over lossless 5 ms links, seeded by `seed`.
fn clean_pair(seed: u64) -> Pair {
    Pair::connected(
        seed,
        secure_pair::clean_link(5, seed),
        secure_pair::clean_link(5, seed + 1),
    )
}

/// Message `index` of a stream: its index, then bytes derived from it. Sizes
/// vary from 4 to 700 bytes, so some travel whole and some in fragments.
fn message(index: u32) -> Vec<u8> {
    let len = 4 + (index as usize * 37) % 697;
    let mut m = index.to_le_bytes().to_vec();
    m.extend((4..len).map(|i| (index as usize * 7 + i) as u8));
    m
}

/// Reliable streams both ways at 20% loss, with the packet layer's and the
/// secure layer's own traffic (acks, keep-alives) exposed to the same loss.
#[test]
fn reliable_channel_delivers_everything_once_in_order_at_20_percent_loss() {
    const N: u32 = 300;
    let mut pair = Pair::connected(31, lossy_link(0.2, 31), lossy_link(0.2, 32));
    let (mut sent_up, mut sent_down) = (0u32, 0u32);
    let (mut got_up, mut got_down) = (0u32, 0u32);
    let mut out = vec![0u8; 1024];
    let mut next_tick = pair.now;
    while got_up < N || got_down < N {
        assert!(
            pair.elapsed() < Duration::from_secs(300),
            "stalled at {got_up}/{got_down}"
        );
        assert!(pair.client.is_connected(), "{:?}", pair.client.state());
        if pair.now >= next_tick {
            next_tick += TICK;
            for _ in 0..4 {
                if sent_up < N {
                    match pair.client.send_reliable(&message(sent_up)) {
                        Ok(()) => sent_up += 1,
                        Err(NetError::Packet(PacketError::SendQueueFull)) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                if sent_down < N {
                    match pair.server.send_reliable(0, &message(sent_down)) {
                        Ok(()) => sent_down += 1,
                        Err(NetError::Packet(PacketError::SendQueueFull)) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }
        while let Some(m) = pair.server.poll_message(0, &mut out) {
            assert_eq!(
                out[..m.len],
                message(got_up)[..],
                "client->server message {got_up}"
            );
            got_up += 1;
        }
        while let Some(m) = pair.client.poll_message(&mut out) {
            assert_eq!(
                out[..m.len],
                message(got_down)[..],
                "server->client message {got_down}"
            );
            got_down += 1;
        }
        pair.step(Some(next_tick));
    }
    // Nothing more, ever: no duplicate turns up later.
    pair.run_until(Duration::from_secs(3), |_| false);
    assert!(pair.server.poll_message(0, &mut out).is_none());
    assert!(pair.client.poll_message(&mut out).is_none());
    assert_eq!((got_up, got_down), (N, N));
    // The link really was bad, and duplicates were stopped by replay protection.
    let up = pair.to_server.stats();
    assert!(up.lost as f64 > 0.15 * up.sent as f64, "{up:?}");
    assert!(up.duplicated > 0 && up.reordered > 0, "{up:?}");
    assert!(pair.server.counters().get(DropKind::Replayed) > 0);
    let loss = pair.server.endpoint(0).unwrap().packet_loss();
    assert!((0.05..0.5).contains(&loss), "estimated loss {loss}");
}

#[test]
fn a_60_kib_message_arrives_intact_at_10_percent_loss() {
    let mut pair = Pair::connected(33, lossy_link(0.1, 33), lossy_link(0.1, 34));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    let big: Vec<u8> = (0..60 * 1024).map(|_| rng.random()).collect();
    pair.server.send_reliable(0, &big).unwrap();
    pair.client.send_reliable(&big).unwrap();
    let mut out = vec![0u8; 64 * 1024];
    let (mut down, mut up) = (None, None);
    assert!(pair.run_until(Duration::from_secs(60), |p| {
        if let Some(m) = p.client.poll_message(&mut out) {
            down = Some(out[..m.len].to_vec());
        }
        if let Some(m) = p.server.poll_message(0, &mut out) {
            up = Some(out[..m.len].to_vec());
        }
        down.is_some() && up.is_some()
    }));
    assert!(
        down.as_deref() == Some(&big[..]),
        "server->client copy differs"
    );
    assert!(
        up.as_deref() == Some(&big[..]),
        "client->server copy differs"
    );
    assert!(pair.to_client.stats().lost > 0);
}

/// Every packet either end sends is reported exactly once, acked or presumed
/// lost: what the replication writer builds on.
#[test]
fn every_sent_packet_gets_one_delivery_notification() {
    let mut pair = Pair::connected(35, lossy_link(0.2, 35), lossy_link(0.2, 36));
    let mut seen_server = HashSet::new();
    let mut seen_client = HashSet::new();
    let (mut acked, mut lost) = (0u64, 0u64);
    let mut next_tick = pair.now;
    let end = pair.now + Duration::from_secs(10);
    let mut out = vec![0u8; 256];
    let mut record = |pair: &mut Pair| {
        while let Some(d) = pair.server.poll_delivery(0) {
            assert!(
                seen_server.insert(d.sequence),
                "packet {} reported twice",
                d.sequence
            );
            match d.outcome {
                DeliveryOutcome::Acked => acked += 1,
                DeliveryOutcome::Lost => lost += 1,
            }
        }
        while let Some(d) = pair.client.poll_delivery() {
            assert!(
                seen_client.insert(d.sequence),
                "packet {} reported twice",
                d.sequence
            );
        }
    };
    while pair.now < end {
        if pair.now >= next_tick {
            next_tick += TICK;
            // A snapshot-like unreliable message per tick each way.
            pair.server.send_unreliable(0, &[7u8; 120]).unwrap();
            pair.client.send_unreliable(&[9u8; 40]).unwrap();
        }
        while pair.server.poll_message(0, &mut out).is_some() {}
        while pair.client.poll_message(&mut out).is_some() {}
        pair.step(Some(next_tick));
        record(&mut pair);
    }
    // Quiet period: every outstanding packet is acked or times out as lost.
    pair.run_until(Duration::from_secs(2), |p| {
        record(p);
        false
    });
    record(&mut pair);
    let sent = pair.server.endpoint(0).unwrap().stats().packets_sent;
    assert_eq!(seen_server.len() as u64, sent);
    assert_eq!(
        seen_client.len() as u64,
        pair.client.endpoint().stats().packets_sent
    );
    assert!(acked > 0 && lost > 0, "acked {acked}, lost {lost}");
    assert!(sent > 500, "one packet per tick for 10 s: {sent}");
}

/// A payload makes its slot readable once; the message is then there to poll.
#[test]
fn a_payload_makes_its_slot_readable_once() {
    let mut pair = clean_pair(41);
    while pair.server.poll_readable().is_some() {}
    pair.client.send_unreliable(b"input").unwrap();
    pair.client.send_unreliable(b"more input").unwrap();
    let readable = pair.run_until(Duration::from_secs(1), |p| {
        p.server.poll_readable() == Some(0)
    });
    assert!(readable, "the payload never made slot 0 readable");
    assert_eq!(pair.server.poll_readable(), None);
    let mut out = vec![0u8; 64];
    let m = pair
        .server
        .poll_message(0, &mut out)
        .expect("the message waits");
    assert_eq!(&out[..m.len], b"input");
}

/// A server with no connection has no timers to run; a connected one has.
#[test]
fn a_server_is_idle_only_with_nothing_connected_or_connecting() {
    let mut pair = clean_pair(45);
    assert!(!pair.server.is_idle());
    let fresh = secure_pair::Gateway::new(47).server(4, pair.now);
    assert!(fresh.is_idle());
    // Closing: still busy while its farewells go out, idle once the slot is free.
    pair.server.disconnect(0).unwrap();
    assert!(
        !pair.server.is_idle(),
        "the closing slot has farewells to send"
    );
    let idle = pair.run_until(Duration::from_secs(2), |p| p.server.is_idle());
    assert!(idle, "the slot never freed");
}

/// A packet the timers presume lost makes its slot readable too: a host that
/// polls only readable slots still hears of every loss.
#[test]
fn a_packet_presumed_lost_makes_its_slot_readable() {
    let mut pair = clean_pair(43);
    while pair.server.poll_readable().is_some() {}
    while pair.server.poll_delivery(0).is_some() {}
    pair.server.send_unreliable(0, b"snapshot").unwrap();
    let mut buf = vec![0u8; 2048];
    let (_dropped, sequence) = pair
        .server
        .transmit_payload(pair.now, 0, &mut buf)
        .expect("a payload to send");
    assert_eq!(pair.server.poll_readable(), None, "nothing known yet");
    let readable = pair.run_until(Duration::from_secs(5), |p| {
        p.server.poll_readable() == Some(0)
    });
    assert!(readable, "the loss never made slot 0 readable");
    let delivery = pair.server.poll_delivery(0).expect("the loss waits");
    assert_eq!(delivery.sequence, sequence);
    assert_eq!(delivery.outcome, DeliveryOutcome::Lost);
    assert!(pair.server.is_connected(0));
}
