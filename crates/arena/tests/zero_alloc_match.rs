//! A steady-state arena match tick allocates nothing: bots' commands, the
//! game's tick (movement, poses, shots, rules, fog of war), the snapshot of
//! every client, and each client's packet on the server's send path
//! (`Match::transmit_tick` on a `hightick_net::Server`: queued, written,
//! sealed), opened, read and acknowledged by a real `hightick_net::Client`,
//! the acks taken in by the server and their delivery notifications by the
//! match, in the combat phase.

use hightick_arena::game::Phase;
use hightick_arena::scenario::{BotMatch, Scenario};
use std::time::{Duration, Instant};

use hightick_net::sim_server::SimServer;
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};

#[global_allocator]
static A: CountingAllocator = CountingAllocator;

#[test]
fn combat_ticks_allocate_nothing() {
    let mut m = Scenario::five_v_five().bot_match(5).expect("scenario");
    let players: Vec<_> = m.players().collect();
    let start = Instant::now();
    // Client `i` plays `players[i]`.
    let mut net = SimServer::connect(players.len(), 5, start).expect("clients connect");
    let mut datagram = vec![0u8; MAX_PACKET_BYTES];
    let mut sent = 0u64;
    let mut step = |m: &mut BotMatch| {
        m.step();
        let now = start + Duration::from_micros(7_812) * m.game.tick_number();
        for (i, &p) in players.iter().enumerate() {
            let slot = net.slot(i);
            if let Some(t) = m
                .game
                .transmit_tick(p, &mut net.server, slot, now, &mut datagram)
            {
                sent += 1;
                net.acknowledge(now, i, &mut datagram[..t.len]);
            }
            m.game.absorb_deliveries(p, &mut net.server, slot);
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
    // Every tick sent every client a packet, and the acks came back.
    let ticks = u64::from(m.game.tick_number());
    assert_eq!(sent, ticks * players.len() as u64);
    for &p in &players {
        let stats = m.game.replication_stats(p).expect("a player");
        assert!(stats.packets_acked + 4 >= ticks, "{stats:?}");
    }
}
