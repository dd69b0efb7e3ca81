//! Delayed acks: with `PacketConfig::ack_delay`, an ack waits for data to ride
//! on, and makes a packet of its own only once the delay has passed.

use std::time::{Duration, Instant};

use hightick_net::{PacketConfig, PacketEndpoint, PacketHeader};

const DELAY: Duration = Duration::from_millis(10);

/// `b` (with the ack delay) has just received one packet from `a` at `start`.
fn received_one() -> (PacketEndpoint, PacketEndpoint, Instant, u16) {
    let start = Instant::now();
    let mut a = PacketEndpoint::new(&PacketConfig::default(), start);
    let config = PacketConfig {
        ack_delay: DELAY,
        ..PacketConfig::default()
    };
    let mut b = PacketEndpoint::new(&config, start);
    let mut buf = [0u8; 1200];
    a.send_unreliable(b"input").unwrap();
    let (sequence, n) = a.write_packet(start, &mut buf).unwrap();
    b.read_packet(start, &buf[..n]).unwrap();
    (a, b, start, sequence)
}

#[test]
fn an_owed_ack_alone_waits_for_the_delay() {
    let (_a, mut b, start, sequence) = received_one();
    let mut buf = [0u8; 1200];
    assert_eq!(b.poll_timeout(), Some(start + DELAY));
    assert!(b.write_packet(start + DELAY / 2, &mut buf).is_none());
    let (_, n) = b.write_packet(start + DELAY, &mut buf).unwrap();
    let (header, _) = PacketHeader::read(&buf[..n]).unwrap();
    assert_eq!(header.ack.map(|(latest, _)| latest), Some(sequence));
    assert!(b.write_packet(start + DELAY * 2, &mut buf).is_none());
    // What is left to wait for is the sent packet's loss timeout, not an ack.
    assert!(b.poll_timeout() > Some(start + DELAY * 2));
}

#[test]
fn an_owed_ack_rides_on_the_next_data_packet() {
    let (_a, mut b, start, sequence) = received_one();
    let mut buf = [0u8; 1200];
    b.send_unreliable(b"snapshot").unwrap();
    let (_, n) = b.write_packet(start + DELAY / 4, &mut buf).unwrap();
    let (header, _) = PacketHeader::read(&buf[..n]).unwrap();
    assert_eq!(header.ack.map(|(latest, _)| latest), Some(sequence));
    // Nothing more is owed: no ack-only packet follows at the delay.
    assert!(b.write_packet(start + DELAY, &mut buf).is_none());
}
