//! A paced server: a burst of reliable messages (what a full resync's
//! introductions or a large message look like) leaves a connection no
//! faster than its token bucket allows, and arrives whole and in order.
//! Without pacing the same burst goes out at once.

mod secure_pair;

use std::time::{Duration, Instant};

use hightick_net::Pacing;
use hightick_net::wire::MAX_PACKET_BYTES;
use secure_pair::{Gateway, Pair, clean_link, server_addr};

const PACING: Pacing = Pacing {
    bytes_per_s: 100_000,
    burst_bytes: 4 * MAX_PACKET_BYTES as u64,
};
/// Messages of 200 bytes: 20 KB in all, many packets' worth.
const MESSAGES: u16 = 100;

/// Sends the burst over a connected pair; returns the server's payload
/// datagrams (time, length) and whether every message arrived in order.
fn burst(pacing: Option<Pacing>) -> (Vec<(Instant, usize)>, bool) {
    let mut gw = Gateway::new(51);
    let now = Instant::now();
    let server = gw.server_with(4, now, |c| c.pacing = pacing);
    let token = gw.token(9, &[server_addr()], 10);
    let client = hightick_net::Client::new(token, Default::default(), now).unwrap();
    let mut pair = Pair::new(server, client, now, clean_link(10, 1), clean_link(10, 2));
    assert!(pair.run_until(Duration::from_secs(2), |p| p.client.is_connected()));
    pair.run_until(Duration::from_millis(500), |_| false);
    pair.capture = true;
    for n in 0..MESSAGES {
        let mut msg = [0u8; 200];
        msg[..2].copy_from_slice(&n.to_le_bytes());
        pair.server.send_reliable(0, &msg).unwrap();
    }
    let mut got = Vec::new();
    let mut out = [0u8; 512];
    pair.run_until(Duration::from_secs(10), |p| {
        while let Some(m) = p.client.poll_message(&mut out) {
            got.push(u16::from_le_bytes([out[0], out[1]]));
            assert_eq!(m.len, 200);
        }
        got.len() == usize::from(MESSAGES)
    });
    let intact = got == (0..MESSAGES).collect::<Vec<_>>();
    // Keep-alives (not paced, tens of bytes) are left out.
    let sent = pair
        .captured_from_server
        .iter()
        .zip(&pair.captured_from_server_at)
        .filter(|(d, _)| d.len() > 64)
        .map(|(d, &at)| (at, d.len()))
        .collect();
    (sent, intact)
}

/// The most bytes sent in any window, over what the bucket allows in it.
fn worst_excess(sent: &[(Instant, usize)], pacing: &Pacing) -> i64 {
    let mut worst = i64::MIN;
    for i in 0..sent.len() {
        let mut bytes = 0i64;
        for j in i..sent.len() {
            bytes += sent[j].1 as i64;
            let window = sent[j].0 - sent[i].0;
            let allowed = pacing.burst_bytes as i64
                + (window.as_secs_f64() * pacing.bytes_per_s as f64) as i64;
            worst = worst.max(bytes - allowed);
        }
    }
    worst
}

#[test]
fn a_paced_burst_never_exceeds_the_bucket_and_arrives_whole() {
    let (sent, intact) = burst(Some(PACING));
    assert!(intact, "every message, in order");
    assert!(sent.len() >= 10, "{} packets", sent.len());
    let excess = worst_excess(&sent, &PACING);
    assert!(excess <= 0, "{excess} bytes over the pacing");

    // The same burst unpaced goes out at once, past that bucket.
    let (unpaced, intact) = burst(None);
    assert!(intact);
    assert!(worst_excess(&unpaced, &PACING) > 0);
}
