//! Racing's rules and input codec on matches run in memory: held controls
//! cost a bit each in a redundant copy, and bots finish a short race in
//! order, with one winner.

use hightick_engine::Match;
use hightick_engine::bot::{Bot, BotGame};
use hightick_engine::events::ReliableEvent;
use hightick_engine::mode::{HostedGame, Outcome};
use hightick_engine::replication::{ClientWorld, PacketFate};
use hightick_engine::{PlayerId, ReplicationSource};
use hightick_example_racing::{CarView, Controls, Race, RaceSettings};
use hightick_proto::{BitReader, BitWriter, InputBatch, InputCommand};

#[test]
fn held_controls_cost_two_bits_a_redundant_copy() {
    let held = Controls {
        throttle: 127,
        steer: -32,
    };
    let moved = Controls { steer: 0, ..held };
    let batch = InputBatch::from_commands(&[
        InputCommand::new(11, 10, moved),
        InputCommand::new(10, 9, held),
        InputCommand::new(9, 8, held),
    ])
    .unwrap();
    let mut buf = [0u8; 32];
    let mut w = BitWriter::new(&mut buf);
    batch.encode(&mut w).unwrap();
    // len 2 + tick 32 + aim lag 5 + 16 payload; each redundant copy then
    // 2 bits of envelope and a bit a control, with the steer that changed
    // (8 bits) in the first.
    assert_eq!(w.bits_written(), 2 + 32 + 5 + 16 + (2 + 2 + 8) + (2 + 2));
    let len = w.finish();
    let back = InputBatch::<Controls>::decode(&mut BitReader::new(&buf[..len])).unwrap();
    let payloads: Vec<Controls> = back.as_slice().iter().map(|c| c.payload).collect();
    assert_eq!(payloads, [moved, held, held]);
}

#[test]
fn bots_finish_a_short_race_in_order() {
    let mode = Race::mode("race4").unwrap();
    let settings = RaceSettings { laps: Some(1) };
    let (config, race) = Race::create(mode, &settings, 60, 1).unwrap();
    let entities = usize::from(config.max_entities);
    let mut m = Match::new(config, race).unwrap();
    let players: Vec<PlayerId> = (0..4).map(|_| m.join().unwrap()).collect();
    let mut bots: Vec<_> = (0..4)
        .map(|i| Race::bot(mode, &settings, 60, i, 1).unwrap())
        .collect();
    let mut views: Vec<ClientWorld<CarView>> = (0..4).map(|_| ClientWorld::new(entities)).collect();
    let mut over = [false; 4];
    for &p in &players {
        m.reconnect(p).unwrap();
    }
    for tick in 1..=60 * 120 {
        for (i, &p) in players.iter().enumerate() {
            m.receive_command(p, &bots[i].command(&views[i], tick))
                .unwrap();
        }
        m.tick();
        for (i, &p) in players.iter().enumerate() {
            views[i].apply(m.snapshot(p)).unwrap();
            // What the engine's avatar message tells a connected client.
            views[i].set_avatar(m.world().avatar(p));
            m.packet_sent(p, tick as u16);
            m.on_delivery(p, tick as u16, PacketFate::Acked);
            while let Some(e) = m.pop_event(p) {
                assert!(bots[i].observe(&e));
                over[i] |= e.ends_match();
            }
            assert_eq!(bots[i].check_world(&views[i]), 0);
        }
        if m.result().is_some() {
            break;
        }
    }
    let order = m.result().expect("the race ends within two minutes");
    assert_eq!(order.len(), 4);
    assert_eq!(over, [true; 4], "every driver was told the race is over");
    let report = m.game().report(Some(&order), &players);
    let winners = report
        .players
        .iter()
        .filter(|p| p.outcome == Outcome::Win)
        .count();
    assert_eq!(winners, 1);
    assert!(report.players.iter().all(|p| p.stats[0] == ("laps", 1)));
    // What the writer sends of a car reads back to the centimetre.
    let mut buf = [0u8; 32];
    let mut w = BitWriter::new(&mut buf);
    let car = views[0].iter().next().unwrap().entity;
    m.game()
        .write_group(car, hightick_example_racing::Car, 0, &mut w)
        .unwrap();
    assert_eq!(w.bits_written(), 2 * 15 + 16 + 8);
}
