//! Transform deltas hold over a bad link: snapshots lost, delayed and
//! reordered, acks late. Every snapshot applies (no delta misses its base),
//! every transform a client holds is one the server had, and once the link
//! heals every client holds the server's transforms exactly.

use std::collections::HashMap;

use hightick_arena::game::{ArenaReplica, ReplicaTransform, TransformCodec};
use hightick_arena::scenario::{BotMatch, Scenario};
use hightick_engine::replication::{ClientWorld, PacketFate};
use hightick_engine::{EntityId, PlayerId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A snapshot in flight, or the news of its fate on the way back.
struct InFlight {
    at: u32,
    seq: u16,
    bytes: Option<Vec<u8>>,
}

/// Every body's transform as the server would send it now.
fn truth(m: &BotMatch, codec: &TransformCodec) -> HashMap<u16, ReplicaTransform> {
    let arena = m.game.game();
    m.players()
        .filter_map(|p| arena.fighter(p))
        .map(|f| {
            let p = f.movement.position;
            let codes = codec.encode([p.x, p.y, p.z], f.yaw, f.pitch, f.movement.crouch);
            (f.body.0, codec.decode(&codes))
        })
        .collect()
}

/// `exact_at_end`: the budget carries every change, so after the link heals
/// every client holds the server's transforms exactly.
fn run(scenario: Scenario, ticks: u32, loss: f64, seed: u64, exact_at_end: bool) {
    let codec = TransformCodec::world().unwrap();
    let mut m = scenario.bot_match(seed).expect("scenario");
    let players: Vec<PlayerId> = m.players().collect();
    let entities = usize::from(scenario.match_config.max_entities);
    let mut clients: Vec<ClientWorld<ArenaReplica>> =
        players.iter().map(|_| ClientWorld::new(entities)).collect();
    let mut links: Vec<Vec<InFlight>> = players.iter().map(|_| Vec::new()).collect();
    let mut fates: Vec<Vec<(u32, u16, PacketFate)>> = players.iter().map(|_| Vec::new()).collect();
    let mut seqs = vec![0u16; players.len()];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Per tick, every body's transform then: what a client may hold.
    let mut history: Vec<HashMap<u16, ReplicaTransform>> = Vec::new();
    let heal_at = ticks - 64;
    for now in 0..ticks {
        m.step();
        m.drain_events();
        history.push(truth(&m, &codec));
        let bad = now < heal_at;
        for (k, &p) in players.iter().enumerate() {
            let bytes = m.game.snapshot(p).to_vec();
            seqs[k] = seqs[k].wrapping_add(1);
            let seq = seqs[k];
            m.game.packet_sent(p, seq);
            if bad && rng.random_bool(loss) {
                fates[k].push((now + rng.random_range(1..6), seq, PacketFate::Lost));
            } else {
                let delay = if bad { rng.random_range(0..5) } else { 0 };
                links[k].push(InFlight {
                    at: now + delay,
                    seq,
                    bytes: Some(bytes),
                });
            }
            // Deliver what is due, in the order the link shuffled it.
            let mut due: Vec<InFlight> = Vec::new();
            links[k].retain_mut(|f| {
                if f.at <= now {
                    due.push(InFlight {
                        at: f.at,
                        seq: f.seq,
                        bytes: f.bytes.take(),
                    });
                    false
                } else {
                    true
                }
            });
            for f in due {
                let bytes = f.bytes.expect("a snapshot");
                clients[k]
                    .apply(&bytes)
                    .unwrap_or_else(|e| panic!("tick {now}, client {k}: {e}"));
                let ack_delay = if bad { rng.random_range(0..4) } else { 0 };
                fates[k].push((now + ack_delay, f.seq, PacketFate::Acked));
            }
            fates[k].sort_by_key(|f| f.0);
            while fates[k].first().is_some_and(|f| f.0 <= now) {
                let (_, seq, fate) = fates[k].remove(0);
                m.game.on_delivery(p, seq, fate);
            }
            // Every transform held is one the server had lately.
            for held in clients[k].iter() {
                let Some(t) = held.state.transform else {
                    continue;
                };
                let known = history
                    .iter()
                    .rev()
                    .take(256)
                    .any(|h| h.get(&held.entity.0) == Some(&t));
                assert!(
                    known,
                    "tick {now}: client {k} holds a transform of entity {} the server never had",
                    held.entity.0
                );
            }
        }
    }
    if !exact_at_end {
        return;
    }
    // Healed for 64 ticks: every client holds the bodies it sees exactly.
    let now = history.last().unwrap();
    let arena = m.game.game();
    let mut checked = 0;
    for (k, &p) in players.iter().enumerate() {
        for (&body, t) in now {
            let owner = arena.owner(EntityId(body)).unwrap();
            if !arena.sees(p, owner) {
                continue;
            }
            let held = clients[k]
                .get(EntityId(body))
                .and_then(|e| e.state.transform);
            assert_eq!(held, Some(*t), "client {k}, body {body}");
            checked += 1;
        }
    }
    assert!(checked >= players.len(), "only {checked} bodies checked");
}

#[test]
fn five_v_five_deltas_survive_loss_delay_and_reordering() {
    for seed in [7, 8, 9] {
        run(Scenario::five_v_five(), 128 * 14, 0.2, seed, true);
    }
}

#[test]
fn plaza_deltas_survive_loss_delay_and_reordering_under_a_budget() {
    let mut s = Scenario::plaza100(128);
    s.players = 24;
    s.match_config.max_players = 24;
    s.match_config.max_entities = 64;
    s.match_config.snapshot_budget_bytes = 160;
    for seed in [3, 4] {
        run(s.clone(), 128 * 8, 0.1, seed, false);
    }
}
