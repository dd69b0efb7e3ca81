//! A 5v5 bot match plays real rounds: purchases, hits and kills happen, and
//! the match reaches a result record that adds up.

use hightick_arena::Team;
use hightick_arena::event::ArenaEvent;
use hightick_arena::game::{ArenaReplica, Phase};
use hightick_arena::scenario::Scenario;
use hightick_engine::replication::{ClientWorld, PacketFate};

#[test]
fn bots_play_a_5v5_match_to_a_result() {
    let mut scenario = Scenario::five_v_five();
    scenario.arena.rounds_to_win = 2;
    scenario.arena.combat_ticks = 128 * 40;
    let mut m = scenario.bot_match(3).expect("scenario");
    let players: Vec<_> = m.players().collect();
    let (mut purchases, mut hits, mut kills, mut round_ends) = (0, 0, 0, 0);
    let mut ticks = 0u32;
    while m.game.result().is_none() {
        m.step();
        ticks += 1;
        assert!(ticks < 128 * 60 * 6, "match did not end");
        for &p in &players {
            while let Some(e) = m.game.pop_event(p) {
                if p == players[0] {
                    match e {
                        ArenaEvent::Purchase { .. } => purchases += 1,
                        ArenaEvent::ShotHit { .. } => hits += 1,
                        ArenaEvent::Kill { .. } => kills += 1,
                        ArenaEvent::RoundEnd { .. } => round_ends += 1,
                        _ => {}
                    }
                }
            }
        }
    }
    let record = m.game.result().expect("result");
    assert_eq!(m.game.game().clock().phase, Phase::MatchOver);
    assert_eq!(record.score[record.winner.index()], 2);
    assert!(record.score[record.winner.other().index()] < 2);
    assert_eq!(
        u32::from(record.rounds),
        u32::from(record.score[0] + record.score[1])
    );
    assert_eq!(round_ends, record.rounds);
    assert_eq!(record.players.len(), 10);
    let total_kills: u32 = record.players.iter().map(|p| p.kills).sum();
    let total_deaths: u32 = record.players.iter().map(|p| p.deaths).sum();
    assert!(total_kills > 0, "no kills in {} rounds", record.rounds);
    assert_eq!(total_kills, total_deaths);
    // Player 0's reliable channel saw every kill (kill events go to all).
    assert_eq!(kills, total_kills);
    assert!(hits >= kills);
    assert!(purchases > 0, "nobody on player 0's team bought anything");
    for team in Team::ALL {
        assert_eq!(record.players.iter().filter(|p| p.team == team).count(), 5);
    }
}

#[test]
fn clients_never_hold_enemies_out_of_sight_and_money_stays_in_the_team() {
    let mut m = Scenario::five_v_five().bot_match(11).expect("scenario");
    let players: Vec<_> = m.players().collect();
    let mut clients: Vec<ClientWorld<ArenaReplica>> =
        players.iter().map(|_| ClientWorld::new(32)).collect();
    let mut seq = 0u16;
    for _ in 0..128 * 12 {
        m.step();
        m.drain_events();
        for (k, &p) in players.iter().enumerate() {
            let snapshot = m.game.snapshot(p).to_vec();
            clients[k].apply(&snapshot).expect("snapshot applies");
            seq = seq.wrapping_add(1);
            m.game.packet_sent(p, seq);
            m.game.on_delivery(p, seq, PacketFate::Acked);
            let arena = m.game.game();
            let me = arena.fighter(p).expect("player");
            for held in clients[k].iter() {
                let owner = arena.owner(held.entity).expect("held entity has an owner");
                let other = arena.fighter(owner).expect("owner plays");
                if other.team != me.team {
                    assert!(held.state.money.is_none(), "enemy money leaked");
                    assert!(arena.sees(p, owner), "enemy held without sight");
                }
            }
        }
    }
}
