//! Hostile and broken payloads: random and mutated bytes never panic, and
//! fragment bombs (absurd counts, out-of-range indices, mismatched totals, a
//! flood of fragments) are rejected or bounded without growing memory.

use std::time::{Duration, Instant};

use hightick_net::{Malformed, PacketConfig, PacketEndpoint, PacketError};
use proptest::prelude::*;

const TAG_RELIABLE: u8 = 2;
const TAG_FRAGMENT: u8 = 3;

fn header(sequence: u16) -> Vec<u8> {
    let mut p = vec![0u8; 9];
    p[1..3].copy_from_slice(&sequence.to_le_bytes());
    p
}

fn fragment(p: &mut Vec<u8>, id: u16, index: u16, count: u16, len: u16) {
    p.push(TAG_FRAGMENT);
    for v in [id, index, count, len] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    p.extend(std::iter::repeat_n(0xab, usize::from(len)));
}

/// A few valid payloads from a real endpoint: reliable (whole and
/// fragmented), unreliable, acks.
fn valid_payloads() -> Vec<Vec<u8>> {
    let now = Instant::now();
    let config = PacketConfig::default();
    let mut a = PacketEndpoint::new(&config, now);
    let mut b = PacketEndpoint::new(&config, now);
    let mut out = Vec::new();
    let mut buf = [0u8; 1200];
    a.send_reliable(b"event").unwrap();
    a.send_reliable(&[9; 700]).unwrap();
    a.send_unreliable(b"snapshot").unwrap();
    for _ in 0..3 {
        while let Some((_, n)) = a.write_packet(now, &mut buf) {
            b.read_packet(now, &buf[..n]).unwrap();
            out.push(buf[..n].to_vec());
        }
        while let Some((_, n)) = b.write_packet(now, &mut buf) {
            a.read_packet(now, &buf[..n]).unwrap();
            out.push(buf[..n].to_vec());
        }
        a.send_reliable(b"more").unwrap();
    }
    out
}

fn feed(endpoint: &mut PacketEndpoint, payload: &[u8]) {
    let before = endpoint.stats();
    let result = endpoint.read_packet(Instant::now(), payload);
    let after = endpoint.stats();
    if let Err(PacketError::Malformed(_)) = result {
        assert_eq!(after.dropped_malformed, before.dropped_malformed + 1);
        assert_eq!(after.packets_received, before.packets_received);
    }
    let mut out = [0u8; 64 * 1024];
    while endpoint.poll_message(&mut out).is_some() {}
    while endpoint.poll_delivery().is_some() {}
    let _ = endpoint.write_packet(Instant::now(), &mut out[..1200]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_payloads_never_panic(payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..1300), 1..8)) {
        let mut endpoint = PacketEndpoint::new(&PacketConfig::default(), Instant::now());
        for payload in &payloads {
            feed(&mut endpoint, payload);
        }
    }

    #[test]
    fn payloads_built_from_valid_blocks_never_panic(
        sequence: u16,
        blocks in proptest::collection::vec((1u8..=3, any::<u16>(), any::<u16>(), any::<u16>(), 0u16..300), 0..12),
    ) {
        // Structurally plausible blocks with arbitrary ids, indices and counts.
        let mut p = header(sequence);
        for (tag, id, index, count, len) in blocks {
            match tag {
                1 => { p.push(1); p.extend_from_slice(&len.to_le_bytes()); p.extend(std::iter::repeat_n(1, usize::from(len))); }
                2 => { p.push(TAG_RELIABLE); p.extend_from_slice(&id.to_le_bytes()); p.extend_from_slice(&len.to_le_bytes()); p.extend(std::iter::repeat_n(2, usize::from(len))); }
                _ => fragment(&mut p, id % 8, index % 8, count % 10, len),
            }
        }
        let mut endpoint = PacketEndpoint::new(&PacketConfig::default(), Instant::now());
        feed(&mut endpoint, &p);
    }

    #[test]
    fn mutated_valid_payloads_never_panic(
        which in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate: bool,
    ) {
        let payloads = valid_payloads();
        let mut payload = payloads[which.index(payloads.len())].clone();
        for (at, value) in flips {
            let i = at.index(payload.len());
            payload[i] ^= value;
        }
        if truncate {
            payload.truncate(cut.index(payload.len() + 1));
        }
        let mut endpoint = PacketEndpoint::new(&PacketConfig::default(), Instant::now());
        // Replay the valid prefix of the conversation first, then the mutant.
        for valid in payloads.iter().take(which.index(payloads.len())) {
            let _ = endpoint.read_packet(Instant::now(), valid);
        }
        feed(&mut endpoint, &payload);
    }
}

#[test]
fn fragment_bombs_are_rejected_before_touching_state() {
    let mut endpoint = PacketEndpoint::new(&PacketConfig::default(), Instant::now());
    // (fragments as (id, index, count, len), then raw trailing bytes)
    type Case = (&'static [(u16, u16, u16, u16)], &'static [u8], Malformed);
    let cases: [Case; 9] = [
        // Absurd fragment count; a count of one (a whole message in disguise) or zero.
        (&[(0, 0, 60_000, 256)], &[], Malformed::FragmentCount),
        (&[(0, 0, 1, 256)], &[], Malformed::FragmentCount),
        (&[(0, 0, 0, 256)], &[], Malformed::FragmentCount),
        // Index out of range.
        (&[(0, 5, 5, 10)], &[], Malformed::FragmentIndex),
        // A short middle fragment, an empty last one.
        (&[(0, 0, 3, 100)], &[], Malformed::FragmentLength),
        (&[(0, 2, 3, 0)], &[], Malformed::FragmentLength),
        // Mismatched totals inside one packet; whole and fragmented under one id.
        (
            &[(0, 0, 3, 256), (0, 1, 4, 256)],
            &[],
            Malformed::FragmentMismatch,
        ),
        (
            &[(0, 0, 3, 256)],
            &[TAG_RELIABLE, 0, 0, 1, 0, 9],
            Malformed::FragmentMismatch,
        ),
        // A length running past the end.
        (
            &[],
            &[TAG_RELIABLE, 0, 0, 200, 0, 1, 2],
            Malformed::Truncated,
        ),
    ];
    let cases = cases
        .iter()
        .enumerate()
        .map(|(sequence, (fragments, tail, want))| {
            let mut p = header(sequence as u16);
            for &(id, index, count, len) in *fragments {
                fragment(&mut p, id, index, count, len);
            }
            p.extend_from_slice(tail);
            (p, *want)
        });
    for (payload, want) in cases {
        assert_eq!(
            endpoint.read_packet(Instant::now(), &payload),
            Err(PacketError::Malformed(want))
        );
    }
    assert_eq!(endpoint.stats().dropped_malformed, 9);
    assert_eq!(endpoint.stats().packets_received, 0);
    assert_eq!(
        endpoint.write_packet(Instant::now(), &mut [0u8; 1200]),
        None,
        "no ack owed"
    );

    // A fragment consistent with an earlier one is accepted; a later fragment
    // of the same message with another count is malformed.
    let mut p = header(20);
    fragment(&mut p, 0, 0, 3, 256);
    assert_eq!(endpoint.read_packet(Instant::now(), &p), Ok(()));
    let mut p = header(21);
    fragment(&mut p, 0, 1, 200, 256);
    assert_eq!(
        endpoint.read_packet(Instant::now(), &p),
        Err(PacketError::Malformed(Malformed::FragmentMismatch))
    );
}

#[test]
fn a_flood_of_fragments_fills_bounded_storage_then_is_refused() {
    let now = Instant::now();
    let config = PacketConfig::default();
    let mut endpoint = PacketEndpoint::new(&config, now);
    // First fragments of many different fragmented messages: only
    // `max_fragmented_in_flight` can be reassembled at once, and ids past the
    // message window are refused too.
    let mut refused = 0;
    for sequence in 0..200u16 {
        let mut p = header(sequence);
        let id = sequence;
        for index in 0..4 {
            fragment(&mut p, id, index, 256, 256);
        }
        match endpoint.read_packet(now + Duration::from_millis(u64::from(sequence)), &p) {
            Ok(()) => {}
            Err(PacketError::ReceiveWindowFull) => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    let slots = config.max_fragmented_in_flight;
    assert_eq!(
        refused,
        200 - slots,
        "only the first messages get reassembly slots"
    );
    assert_eq!(endpoint.stats().dropped_window_full, 200 - slots as u64);
    // The accepted packets are acked; the refused ones are not.
    let mut out = [0u8; 1200];
    let (_, n) = endpoint.write_packet(now, &mut out).unwrap();
    let last = slots as u16 - 1;
    assert_eq!(
        &out[..5],
        &[1, 0, 0, last as u8, 0],
        "acks the last accepted sequence"
    );
    assert_eq!(
        u32::from_le_bytes(out[5..9].try_into().unwrap()),
        (1 << last) - 1
    );
    assert_eq!(n, 9);
}
