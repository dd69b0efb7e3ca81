//! The tick runtime: joins, inputs by tick, reliable events, client messages.

mod support;

use hightick_engine::input::{InputArrival, InputSource};
use hightick_engine::runtime::{ClientMessage, InputReceipt};
use hightick_engine::{EngineError, Match, MatchConfig, PlayerId};
use hightick_proto::message::{ResyncReason, ResyncRequest};
use hightick_proto::{BitWriter, InputBatch, InputCommand, MessageKind};
use support::{Note, Stick, Toy, WELCOME, stick};

fn toy_match(players: u16) -> Match<Toy> {
    let config = MatchConfig {
        max_players: players,
        max_entities: 64,
        input_window_ticks: 16,
        ..MatchConfig::default()
    };
    Match::new(config, Toy::new(usize::from(players), 64, 4, 1)).unwrap()
}

fn command(tick: u32, move_x: i8) -> InputCommand<Stick> {
    stick(tick, move_x, 0)
}

fn encode_batch(commands: &[InputCommand<Stick>]) -> Vec<u8> {
    let batch = InputBatch::from_commands(commands).unwrap();
    let mut buf = vec![0u8; 256];
    let mut w = BitWriter::new(&mut buf);
    MessageKind::InputBatch.encode(&mut w).unwrap();
    batch.encode(&mut w).unwrap();
    let n = w.finish();
    buf.truncate(n);
    buf
}

#[test]
fn joins_fill_the_lowest_free_slot_and_a_full_match_refuses() {
    let mut m = toy_match(2);
    assert_eq!(m.join().unwrap(), PlayerId(0));
    assert_eq!(m.join().unwrap(), PlayerId(1));
    assert!(matches!(
        m.join(),
        Err(EngineError::MatchFull { capacity: 2 })
    ));
    m.leave(PlayerId(0)).unwrap();
    assert!(m.leave(PlayerId(0)).is_err());
    assert_eq!(m.join().unwrap(), PlayerId(0));
    assert_eq!(m.players().count(), 2);
}

#[test]
fn redundant_inputs_are_deduplicated_late_ones_dropped_missing_ones_repeated() {
    let mut m = toy_match(1);
    let p = m.join().unwrap();
    // A batch for ticks 1..=3, then the next one repeating 2 and 3.
    let first = m
        .receive_inputs(
            p,
            &InputBatch::from_commands(&[command(3, 3), command(2, 2), command(1, 1)]).unwrap(),
        )
        .unwrap();
    assert_eq!(
        first,
        InputReceipt {
            accepted: 3,
            ..InputReceipt::default()
        }
    );
    let again = m
        .receive_inputs(
            p,
            &InputBatch::from_commands(&[command(4, 4), command(3, 9), command(2, 9)]).unwrap(),
        )
        .unwrap();
    assert_eq!(
        again,
        InputReceipt {
            accepted: 1,
            duplicates: 2,
            ..InputReceipt::default()
        }
    );

    for tick in 1..=4 {
        m.tick();
        assert_eq!(
            m.game().last_input[0],
            Some((tick, tick, InputSource::Fresh))
        );
    }
    let avatar = m.game().avatars[0].unwrap();
    assert_eq!(
        m.game().motion[usize::from(avatar.0)].x,
        1 + 2 + 3 + 4,
        "first copies won"
    );

    // Tick 5 arrives late (after tick 5 ran): dropped; tick 5 repeated tick 4.
    m.tick();
    assert_eq!(m.game().last_input[0], Some((5, 4, InputSource::Repeated)));
    assert_eq!(
        m.receive_command(p, &command(5, 5)).unwrap(),
        InputArrival::Late
    );
    assert_eq!(
        m.receive_command(p, &command(500, 5)).unwrap(),
        InputArrival::TooEarly
    );
    let stats = m.input_stats(p).unwrap();
    assert_eq!(
        (
            stats.accepted,
            stats.duplicates,
            stats.late,
            stats.too_early,
            stats.missing
        ),
        (4, 2, 1, 1, 1)
    );

    // The snapshot header acknowledges the newest input received.
    let snapshot = m.snapshot(p);
    let mut r = hightick_proto::BitReader::new(snapshot);
    MessageKind::decode(&mut r).unwrap();
    let header = hightick_proto::SnapshotHeader::decode(&mut r).unwrap();
    assert_eq!((header.server_tick, header.input_ack_tick), (5, 4));
}

#[test]
fn client_messages_are_decoded_and_malformed_ones_counted() {
    let mut m = toy_match(1);
    let p = m.join().unwrap();
    let bytes = encode_batch(&[command(2, 1), command(1, 1)]);
    assert_eq!(
        m.handle_message(p, &bytes).unwrap(),
        ClientMessage::Inputs(InputReceipt {
            accepted: 2,
            ..InputReceipt::default()
        })
    );
    // Truncated, unknown kind, empty, and a server-to-client kind.
    for bad in [
        &bytes[..2],
        &[0xEEu8][..],
        &[][..],
        &[MessageKind::Snapshot.as_u8()][..],
    ] {
        assert!(m.handle_message(p, bad).is_err());
    }
    assert_eq!(m.stats().malformed_messages, 4);
    assert!(matches!(
        m.handle_message(PlayerId(7), &bytes),
        Err(EngineError::UnknownPlayer(7))
    ));

    // A resync request makes the next snapshots full.
    for _ in 0..20 {
        m.tick();
        let seq = m.tick_number() as u16;
        m.packet_sent(p, seq);
        m.on_delivery(p, seq, hightick_engine::replication::PacketFate::Acked);
    }
    assert!(!m.writer().is_resyncing(p));
    let request = ResyncRequest {
        reason: ResyncReason::Desync,
        last_server_tick: Some(12),
    };
    let mut buf = [0u8; 32];
    let mut w = BitWriter::new(&mut buf);
    MessageKind::ResyncRequest.encode(&mut w).unwrap();
    request.encode(&mut w).unwrap();
    let n = w.finish();
    assert_eq!(
        m.handle_message(p, &buf[..n]).unwrap(),
        ClientMessage::Resync(request)
    );
    assert!(m.writer().is_resyncing(p));
}

#[test]
fn events_reach_the_recipients_the_game_chooses() {
    let mut m = toy_match(3);
    for _ in 0..3 {
        m.join().unwrap();
    }
    let ev = Note(1);
    m.game_mut().events_to_send.push((None, ev));
    m.game_mut().events_to_send.push((Some(PlayerId(1)), ev));
    m.tick();
    assert_eq!(m.pop_event(PlayerId(0)), Some(ev));
    assert_eq!(m.pop_event(PlayerId(0)), None);
    assert_eq!(m.peek_event(PlayerId(1)), Some(&ev));
    assert_eq!(m.pop_event(PlayerId(1)), Some(ev));
    assert_eq!(m.pop_event(PlayerId(1)), Some(ev));
    assert_eq!(m.pop_event(PlayerId(2)), Some(ev));
    assert_eq!(m.pop_event(PlayerId(2)), None);
}

#[test]
fn changes_made_between_ticks_reach_clients_that_acked_the_last_tick() {
    use hightick_engine::replication::{ClientWorld, PacketFate};
    let mut m = toy_match(2);
    let p0 = m.join().unwrap();
    let mut client = ClientWorld::<support::ToyReplica>::new(64);
    m.game_mut().frozen = true;
    let run = |m: &mut Match<Toy>, client: &mut ClientWorld<support::ToyReplica>| {
        m.tick();
        client.apply(m.snapshot(p0)).unwrap();
        let seq = m.tick_number() as u16;
        m.packet_sent(p0, seq);
        m.on_delivery(p0, seq, PacketFate::Acked);
    };
    let orb = m.game().orbs[0];
    for _ in 0..4 {
        run(&mut m, &mut client);
    }
    // The orb moves at tick 5, is carried in its snapshot, and that packet
    // is acked: the client's acked tick for the orb is 5.
    m.game_mut().teleports.push((orb, 7, 7));
    run(&mut m, &mut client);
    assert_eq!(client.get(orb).unwrap().state.motion.moved_at, 5);
    m.game_mut().nudge_on_join = Some(orb);
    m.join().unwrap();
    run(&mut m, &mut client);
    let held = client.get(orb).unwrap().state.motion;
    assert_eq!(held, m.game().motion[usize::from(orb.0)]);
    assert_eq!(held.moved_at, 6, "stamped with the tick after the join");
}

#[test]
fn an_overflowing_event_queue_turns_into_a_full_resync_and_a_welcome() {
    let config = MatchConfig {
        max_players: 2,
        max_entities: 64,
        max_events_per_player: 4,
        ..MatchConfig::default()
    };
    let mut m = Match::new(config, Toy::new(2, 64, 4, 1)).unwrap();
    let (p, q) = (m.join().unwrap(), m.join().unwrap());
    m.tick();
    assert!(
        m.writer().is_resyncing(p),
        "a newcomer starts with full state"
    );
    // Acknowledge nothing, but leave the join's full state behind: a
    // reconnect-free resync is what we look for next.
    while m.pop_event(p).is_some() {}
    // The queue holds 2 * 2 players + 16 = 20 (more than the 4 asked for).
    assert_eq!(m.config().event_queue_capacity(), 20);
    for n in 0..22 {
        m.game_mut().events_to_send.push((Some(p), Note(n)));
    }
    m.game_mut().events_to_send.push((Some(q), Note(100)));
    m.tick();
    assert_eq!(m.events_dropped(), 2);
    assert_eq!(m.event_overflows(), 1);
    assert_eq!(m.game().reconnects, vec![p], "the reconnect hook ran for p");
    assert!(m.writer().is_resyncing(p));
    // What p holds now: the welcome only (the twenty kept events were
    // superseded by the full state); q is untouched.
    assert_eq!(m.pop_event(p), Some(WELCOME));
    assert_eq!(m.pop_event(p), None);
    assert_eq!(m.pop_event(q), Some(Note(100)));
    // The mark was taken: the next tick resyncs no one.
    m.tick();
    assert_eq!(m.game().reconnects.len(), 1);
    assert_eq!(m.event_overflows(), 1);
}

#[test]
fn a_lost_link_queues_nothing_and_a_released_seat_tells_the_game() {
    let mut m = toy_match(2);
    let p = m.join().unwrap();
    m.link_lost(p).unwrap();
    for n in 0..100 {
        m.game_mut().events_to_send.push((Some(p), Note(n)));
    }
    m.tick();
    assert_eq!(
        m.pop_event(p),
        None,
        "nothing queued for a player who is away"
    );
    assert_eq!((m.events_dropped(), m.event_overflows()), (0, 0));
    m.release_seat(p).unwrap();
    assert_eq!(m.game().released, vec![p]);
    assert!(m.release_seat(PlayerId(1)).is_err(), "no player there");
    // It comes back: events flow again, starting with the welcome.
    m.reconnect(p).unwrap();
    m.game_mut().events_to_send.push((Some(p), Note(1)));
    m.tick();
    assert_eq!(m.pop_event(p), Some(WELCOME));
    assert_eq!(m.pop_event(p), Some(Note(1)));
}

#[test]
fn a_lowered_snapshot_budget_holds_one_player_and_defers_the_rest() {
    use hightick_engine::MIN_SNAPSHOT_BUDGET_BYTES;
    let mut m = toy_match(2);
    let p0 = m.join().unwrap();
    let p1 = m.join().unwrap();
    let most = m.config().snapshot_budget_bytes;
    assert_eq!(
        m.set_snapshot_budget(p0, 1).unwrap(),
        MIN_SNAPSHOT_BUDGET_BYTES
    );
    assert_eq!(m.set_snapshot_budget(p0, u16::MAX).unwrap(), most);
    assert_eq!(m.set_snapshot_budget(p0, 48).unwrap(), 48);
    assert!(m.set_snapshot_budget(PlayerId(9), 48).is_err());
    let report = m.tick();
    assert!(m.snapshot(p0).len() <= 48, "{}", m.snapshot(p0).len());
    assert!(
        m.snapshot(p1).len() > 48,
        "the other player keeps the full budget"
    );
    assert!(report.deferred > 0, "what did not fit waits");
    assert_eq!(m.snapshot_budget(p0), Some(48));
    assert_eq!(m.snapshot_budget(p1), Some(most));
}
