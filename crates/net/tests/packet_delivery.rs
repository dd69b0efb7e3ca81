//! End-to-end: per-packet delivery notifications. Every packet an endpoint
//! sends is reported exactly once, acked or presumed lost, and a packet
//! reported acked really arrived at the peer.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use hightick_net::sim_link::{PacketPair, PairEvent, Side, SimLinkConfig};
use hightick_net::{DeliveryOutcome, PacketConfig, PacketEndpoint, PacketHeader};

#[derive(Default)]
struct Ledger {
    /// Sent and not yet reported: sequence -> arrived at the peer.
    outstanding: HashMap<u16, bool>,
    sent: u64,
    acked: u64,
    lost: u64,
    lost_but_arrived: u64,
}

impl Ledger {
    fn sent(&mut self, sequence: u16) {
        assert!(
            self.outstanding.insert(sequence, false).is_none(),
            "sequence {sequence} reused while unreported"
        );
        self.sent += 1;
    }

    fn arrived(&mut self, sequence: u16) {
        if let Some(arrived) = self.outstanding.get_mut(&sequence) {
            *arrived = true;
        }
    }

    fn drain(&mut self, endpoint: &mut PacketEndpoint) {
        while let Some(d) = endpoint.poll_delivery() {
            let arrived = self
                .outstanding
                .remove(&d.sequence)
                .unwrap_or_else(|| panic!("packet {} reported twice or never sent", d.sequence));
            match d.outcome {
                DeliveryOutcome::Acked => {
                    assert!(
                        arrived,
                        "packet {} reported acked but never arrived",
                        d.sequence
                    );
                    self.acked += 1;
                }
                DeliveryOutcome::Lost => {
                    self.lost += 1;
                    self.lost_but_arrived += u64::from(arrived);
                }
            }
        }
    }
}

fn observe(a: &mut Ledger, b: &mut Ledger, event: PairEvent) {
    match event {
        PairEvent::Sent {
            side: Side::A,
            sequence,
        } => a.sent(sequence),
        PairEvent::Sent {
            side: Side::B,
            sequence,
        } => b.sent(sequence),
        PairEvent::Read {
            side,
            sequence: Some(sequence),
            result: Ok(()),
        } => match side {
            Side::B => a.arrived(sequence),
            Side::A => b.arrived(sequence),
        },
        PairEvent::Read { .. } => {}
    }
}

fn run(link: SimLinkConfig, tick: Option<Duration>, duration: Duration) -> (Ledger, Ledger) {
    let start = Instant::now();
    let config = PacketConfig::default();
    let reverse = SimLinkConfig {
        seed: link.seed + 1,
        ..link.clone()
    };
    let mut pair = PacketPair::new(&config, link, reverse, tick, start);
    let (mut a, mut b) = (Ledger::default(), Ledger::default());
    let mut buf = [0u8; 2048];
    let mut n = 0u32;
    while pair.now() - start < duration {
        // Traffic: a snapshot every step each way, a reliable event now and then.
        n += 1;
        let _ = pair.a.send_unreliable(&n.to_le_bytes());
        let _ = pair.b.send_unreliable(&n.to_le_bytes());
        if n.is_multiple_of(7) {
            let _ = pair.a.send_reliable(&[7; 40]);
        }
        pair.step_with(|event| observe(&mut a, &mut b, event));
        a.drain(&mut pair.a);
        b.drain(&mut pair.b);
        while pair.a.poll_message(&mut buf).is_some() || pair.b.poll_message(&mut buf).is_some() {}
    }
    // Stop sending: deliver what is still on the links, then let every
    // unreported packet reach its loss timeout.
    let end = pair.now() + Duration::from_secs(2);
    for (link, endpoint, side) in [
        (&mut pair.a_to_b, &mut pair.b, Side::B),
        (&mut pair.b_to_a, &mut pair.a, Side::A),
    ] {
        while let Some(at) = link.next_delivery() {
            let len = link.poll_deliver(at, &mut buf).unwrap();
            let result = endpoint.read_packet(at, &buf[..len]);
            let sequence = PacketHeader::read(&buf[..len])
                .ok()
                .map(|(h, _)| h.sequence);
            observe(
                &mut a,
                &mut b,
                PairEvent::Read {
                    side,
                    sequence,
                    result,
                },
            );
        }
    }
    pair.a.handle_timeout(end);
    pair.b.handle_timeout(end);
    a.drain(&mut pair.a);
    b.drain(&mut pair.b);
    for (ledger, endpoint) in [(&a, &pair.a), (&b, &pair.b)] {
        assert!(
            ledger.outstanding.is_empty(),
            "{} packets never reported",
            ledger.outstanding.len()
        );
        let stats = endpoint.stats();
        assert_eq!(stats.packets_sent, ledger.sent);
        assert_eq!(stats.packets_acked, ledger.acked);
        assert_eq!(stats.packets_lost, ledger.lost);
        assert_eq!(stats.deliveries_dropped, 0);
    }
    (a, b)
}

#[test]
fn every_packet_is_reported_once_and_acked_ones_arrived() {
    let link = SimLinkConfig {
        loss: 0.2,
        latency: Duration::from_millis(40),
        jitter: Duration::from_millis(30),
        duplicate: 0.05,
        reorder: 0.1,
        seed: 11,
        ..SimLinkConfig::default()
    };
    let (a, b) = run(
        link,
        Some(Duration::from_millis(8)),
        Duration::from_secs(20),
    );
    for ledger in [&a, &b] {
        assert!(ledger.sent > 2000);
        let lost = ledger.lost as f64 / ledger.sent as f64;
        assert!((0.15..0.35).contains(&lost), "lost share {lost}");
    }
}

#[test]
fn reports_stay_exact_across_sequence_wraparound() {
    // 1 ms ticks for 70 s: more than 65536 packets each way.
    let link = SimLinkConfig {
        loss: 0.05,
        latency: Duration::from_millis(5),
        jitter: Duration::from_millis(3),
        seed: 21,
        capacity: 256,
        ..SimLinkConfig::default()
    };
    let (a, b) = run(
        link,
        Some(Duration::from_millis(1)),
        Duration::from_secs(70),
    );
    assert!(a.sent > 65536 && b.sent > 65536, "{} {}", a.sent, b.sent);
    assert!(a.acked > 60_000 && b.acked > 60_000);
}

#[test]
fn a_silent_peer_gets_every_packet_presumed_lost() {
    let link = SimLinkConfig {
        loss: 1.0,
        latency: Duration::from_millis(10),
        ..SimLinkConfig::default()
    };
    let (a, b) = run(
        link,
        Some(Duration::from_millis(10)),
        Duration::from_secs(3),
    );
    assert_eq!(a.acked + b.acked, 0);
    assert!(a.lost > 250 && b.lost > 250);
}
