//! A steady-state arena match tick allocates nothing: bots' commands, the
//! game's tick (movement, poses, shots, rules, fog of war), the snapshot of
//! every client, and each client's packet built through `hightick-net`,
//! sealed, opened, read and acknowledged, in the combat phase.

use hightick_arena::game::Phase;
use hightick_arena::scenario::Scenario;
use std::time::{Duration, Instant};

use hightick_net::crypto::PacketCipher;
use hightick_net::wire::{self, MAX_PACKET_BYTES, PacketKind};
use hightick_net::{Key, PacketConfig, PacketEndpoint};
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};

#[global_allocator]
static A: CountingAllocator = CountingAllocator;

#[test]
fn combat_ticks_allocate_nothing() {
    let mut m = Scenario::five_v_five().bot_match(5).expect("scenario");
    let players: Vec<_> = m.players().collect();
    let start = Instant::now();
    let config = PacketConfig::default();
    let mut links: Vec<(PacketEndpoint, PacketEndpoint, u64)> = players
        .iter()
        .map(|_| {
            (
                PacketEndpoint::new(&config, start),
                PacketEndpoint::new(&config, start),
                0,
            )
        })
        .collect();
    let cipher = PacketCipher::new(&Key::from_bytes([3; 32]), 1);
    let mut datagram = vec![0u8; MAX_PACKET_BYTES];
    let mut ack = vec![0u8; MAX_PACKET_BYTES];
    let mut scratch = vec![0u8; 64 * 1024];
    let mut step = |m: &mut hightick_arena::scenario::BotMatch| {
        m.step();
        let now = start + Duration::from_micros(7_812) * m.game.tick_number();
        for (i, &p) in players.iter().enumerate() {
            let (server, client, seq) = &mut links[i];
            *seq += 1;
            let off = wire::body_offset(*seq);
            let body = &mut datagram[off..off + wire::MAX_PAYLOAD_BYTES];
            let Ok(Some(len)) = m.game.send_tick(p, server, now, body) else {
                continue;
            };
            let Some(n) = wire::seal_packet(&mut datagram, PacketKind::Payload, *seq, len, &cipher)
            else {
                continue;
            };
            let d = &mut datagram[..n];
            let header = wire::read_header(d).expect("own packet");
            wire::open_packet(d, &header, &cipher).expect("own packet opens");
            client
                .read_packet(now, &d[header.body.clone()])
                .expect("reads");
            while client.poll_message(&mut scratch).is_some() {}
            if let Some((_, k)) = client.write_packet(now, &mut ack) {
                server.read_packet(now, &ack[..k]).expect("ack reads");
            }
            m.game.absorb_deliveries(p, server);
        }
    };
    // Warm up into the combat phase, and a little beyond.
    while m.game.game().clock().phase != Phase::Combat {
        step(&mut m);
    }
    for _ in 0..256 {
        step(&mut m);
    }
    let mut measured = 0;
    for _ in 0..512 {
        if m.game.game().clock().phase != Phase::Combat {
            break;
        }
        let allocations = count_allocations(|| step(&mut m));
        assert_eq!(allocations, 0, "tick {} allocated", m.game.tick_number());
        measured += 1;
    }
    assert!(measured >= 64, "too few combat ticks measured: {measured}");
}
