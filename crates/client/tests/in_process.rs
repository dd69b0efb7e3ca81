//! The client core against a real `hightick_net::Server` and `Match<Arena>`
//! in process, driven by a virtual clock: it connects, learns who it is,
//! applies snapshots, interpolates, and recovers from a bad snapshot.

mod support;

use std::collections::HashMap;

use hightick_arena::Team;
use hightick_arena::event::ArenaEvent;
use hightick_arena::game::Arena;
use hightick_arena::input::ArenaInput;
use hightick_client::GameClient;
use hightick_engine::{EntityId, PlayerId};
use hightick_proto::{
    BitWriter, EntityOp, EntityRecordHeader, InputCommand, MessageKind, SnapshotHeader,
    SnapshotKind,
};
use support::{Host, PERIOD, downlink, uplink};

const PLAYERS: usize = 4;

struct Run {
    host: Host,
    clients: Vec<GameClient<Arena>>,
    welcomes: Vec<Option<(EntityId, Team)>>,
    events: Vec<HashMap<u32, u32>>,
}

impl Run {
    fn new() -> Self {
        let host = Host::new(PLAYERS, std::time::Instant::now());
        let clients = (0..PLAYERS).map(|i| host.client(i as u64)).collect();
        Self {
            host,
            clients,
            welcomes: vec![None; PLAYERS],
            events: vec![HashMap::new(); PLAYERS],
        }
    }

    /// One 128 Hz step: every client sends an input for a tick a little
    /// ahead of the server, the server ticks, the clients read.
    fn step(&mut self) {
        for (i, c) in self.clients.iter_mut().enumerate() {
            if let Some(estimate) = c.server_tick_estimate(self.host.now) {
                let _ = c.send_input(InputCommand::new(
                    estimate as u32 + 8,
                    estimate as u32 + 8,
                    ArenaInput {
                        move_y: 127,
                        ..ArenaInput::default()
                    },
                ));
            }
            uplink(&mut self.host, i, c);
        }
        self.host.tick();
        for (i, c) in self.clients.iter_mut().enumerate() {
            downlink(&mut self.host, i, c);
            while let Some(e) = c.poll_event() {
                *self.events[i].entry(e.tag()).or_default() += 1;
                if let ArenaEvent::Welcome { player, team } = e {
                    self.welcomes[i] = Some((player, team));
                }
            }
        }
        self.host.now += PERIOD;
    }
}

#[test]
fn clients_connect_learn_who_they_are_and_follow_the_match() {
    let mut run = Run::new();
    for _ in 0..600 {
        run.step();
    }
    for (i, c) in run.clients.iter().enumerate() {
        assert!(c.is_connected(), "client {i}: {:?}", c.state());
        let s = c.stats();
        assert!(s.snapshots_applied > 500, "client {i}: {s:?}");
        assert_eq!(s.decode_errors, 0, "client {i}: {s:?}");
        assert_eq!(s.desyncs, 0, "client {i}: {s:?}");
        assert!(
            s.full_resyncs >= 1,
            "the first snapshot is a full state: {s:?}"
        );
        assert!(
            s.inputs_sent > 500 && s.bytes_out > 0 && s.bytes_in > 0,
            "{s:?}"
        );
        assert!(s.packets_in > 500 && s.packets_out > 500, "{s:?}");
        // Who am I: the Welcome names my body, which the world holds, with
        // the same team in its replicated vitals.
        let (me, team) = run.welcomes[i].expect("a Welcome event");
        let body = c.world().get(me).expect("my body is replicated");
        let vitals = body.state.vitals.expect("vitals");
        assert_eq!(vitals.team, team);
        let server_side = run.host.game.game().fighter(PlayerId(i as u16)).unwrap();
        assert_eq!(server_side.body, me);
        // Every player joined before the clients connected; the host's
        // reconnect on connect replaced what was queued with a fresh
        // introduction: one Welcome, and every other player once.
        assert_eq!(
            run.events[i].get(&5),
            Some(&(PLAYERS as u32 - 1)),
            "{:?}",
            run.events[i]
        );
        assert_eq!(run.events[i].get(&8), Some(&1), "{:?}", run.events[i]);
        // The match took the inputs and the player walked.
        let inputs = run.host.game.input_stats(PlayerId(i as u16)).unwrap();
        assert!(inputs.accepted > 400, "{inputs:?}");
        // Interpolated positions: between the samples, and none for an
        // entity the client does not hold.
        let newest = c.world().server_tick() as f32;
        let at = c.interpolated(me, newest).unwrap();
        let server_pos = server_side.position();
        let d = (at[0] - server_pos.x).abs() + (at[2] - server_pos.z).abs();
        assert!(d < 3.0, "client sees {at:?}, server has {server_pos}");
        assert!(c.interpolated(me, newest - 1.5).is_some());
        assert!(c.interpolated(EntityId(31), newest).is_none());
        assert!(c.snapshot_interarrival().len() > 500);
        let p50 = c.snapshot_interarrival().value_at_quantile(0.5);
        assert!((7_000..9_000).contains(&p50), "inter-arrival p50 {p50} us");
    }
}

#[test]
fn a_snapshot_that_does_not_decode_brings_a_resync() {
    let mut run = Run::new();
    for _ in 0..200 {
        run.step();
    }
    let before = run.clients[0].stats();
    assert_eq!(before.decode_errors, 0);
    // A snapshot for the next tick whose record names an archetype the
    // arena does not have, on the unreliable channel of client 0's slot.
    let slot = run
        .host
        .seats
        .iter()
        .position(|s| *s == Some(PlayerId(0)))
        .unwrap();
    let tick = run.clients[0].world().server_tick() + 1;
    let mut bad = [0u8; 32];
    let mut w = BitWriter::new(&mut bad);
    MessageKind::Snapshot.encode(&mut w).unwrap();
    SnapshotHeader {
        server_tick: tick,
        input_ack_tick: tick,
        kind: SnapshotKind::Delta,
    }
    .encode(&mut w)
    .unwrap();
    EntityRecordHeader {
        entity: EntityId(3),
        op: EntityOp::Enter { archetype: 9 },
        group_mask: 1,
    }
    .encode(&mut w)
    .unwrap();
    let len = w.finish();
    run.host.server.send_unreliable(slot, &bad[..len]).unwrap();
    let mut buf = [0u8; hightick_net::wire::MAX_PACKET_BYTES];
    let t = run
        .host
        .server
        .transmit_payload(run.host.now, slot, &mut buf)
        .unwrap()
        .0;
    run.clients[0].handle_datagram(
        run.host.now,
        support::SERVER.parse().unwrap(),
        &mut buf[..t.len],
    );
    let s = run.clients[0].stats();
    assert_eq!(s.decode_errors, 1, "{s:?}");
    assert_eq!((s.desyncs, s.resyncs_requested), (1, 1), "{s:?}");
    for _ in 0..100 {
        run.step();
    }
    let s = run.clients[0].stats();
    assert_eq!(s.resyncs_requested, 1, "one request per desync: {s:?}");
    assert!(
        s.full_resyncs > before.full_resyncs,
        "a full state came back: {s:?}"
    );
    assert!(s.snapshots_applied > before.snapshots_applied + 50, "{s:?}");
    assert_eq!(s.decode_errors, 1);
}
