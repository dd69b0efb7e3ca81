//! A steady-state match tick allocates nothing: inputs in, the game's tick,
//! snapshots for every client, acks back, events out, and the clients
//! applying their snapshots; and on the server's send path, through the
//! secure layer: `Match::transmit_tick` on a `hightick_net::Server` (queued,
//! written, sealed), real `hightick_net::Client`s opening, reading and
//! answering with inputs and acks, `Match::absorb_deliveries`, and the
//! secure layer's timers.

mod support;

use hightick_engine::lag_comp::LagCompensation;
use hightick_engine::replication::{ClientWorld, PacketFate, ValueComparison};
use hightick_engine::tick::TickTime;
use hightick_engine::{Match, MatchConfig, PlayerId};
use hightick_proto::{BitWriter, InputBatch, MessageKind};
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};
use hightick_telemetry::{FrameRecorder, ModeBudget, RecorderConfig, Subsystem};
use support::{Note, Toy, ToyReplica, stick};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const PLAYERS: u16 = 10;

struct Rig<D: hightick_engine::replication::ChangeDetection> {
    m: Match<Toy, D>,
    clients: Vec<ClientWorld<ToyReplica>>,
    history: LagCompensation<[f32; 3]>,
    input_message: Vec<u8>,
    event_message: [u8; 64],
    sequence: u16,
    recorder: Option<FrameRecorder>,
}

impl<D: hightick_engine::replication::ChangeDetection> Rig<D> {
    fn new(detection: D) -> Self {
        let config = MatchConfig {
            max_players: PLAYERS,
            max_entities: 96,
            ..MatchConfig::default()
        };
        let mut toy = Toy::new(usize::from(PLAYERS), 96, 50, 3);
        toy.view_radius = Some(600);
        toy.move_period = 2;
        let history = LagCompensation::new(usize::from(PLAYERS), config.rewind_limits());
        let mut m = Match::with_detection(config, toy, detection).unwrap();
        for _ in 0..PLAYERS {
            m.join().unwrap();
        }
        Self {
            m,
            clients: (0..PLAYERS).map(|_| ClientWorld::new(96)).collect(),
            history,
            input_message: vec![0; 128],
            event_message: [0; 64],
            sequence: 0,
            recorder: None,
        }
    }

    /// One steady-state tick with everything a host does around it.
    fn tick(&mut self) {
        let next = self.m.tick_number() + 1;
        // Every player's input batch (newest plus three redundant copies),
        // decoded from bytes.
        let commands =
            [0, 1, 2, 3].map(|back| stick(next.saturating_sub(back), (next % 5) as i8 - 2, 1));
        let redundant = (next as usize).min(commands.len());
        let batch = InputBatch::from_commands(&commands[..redundant]).unwrap();
        let mut w = BitWriter::new(&mut self.input_message);
        MessageKind::InputBatch.encode(&mut w).unwrap();
        batch.encode(&mut w).unwrap();
        let n = w.finish();
        for p in 0..PLAYERS {
            self.m
                .handle_message(PlayerId(p), &self.input_message[..n])
                .unwrap();
        }
        self.m.game_mut().events_to_send.push((None, Note(1)));
        match &mut self.recorder {
            Some(recorder) => {
                let frame = recorder.begin(u64::from(next));
                self.m.tick_in(&frame);
                frame.end();
            }
            None => {
                self.m.tick();
            }
        }
        let tick = self.m.tick_number();
        for p in 0..PLAYERS {
            let player = PlayerId(p);
            let seq = self.sequence;
            self.sequence = self.sequence.wrapping_add(1);
            self.m.packet_sent(player, seq);
            // One in ten packets is lost; the rest are acked a few ticks later.
            let old = seq.wrapping_sub(3 * PLAYERS);
            let fate = if old.is_multiple_of(10) {
                PacketFate::Lost
            } else {
                PacketFate::Acked
            };
            self.m.on_delivery(player, old, fate);
            self.clients[usize::from(p)]
                .apply(self.m.snapshot(player))
                .unwrap();
            while let Some(event) = self.m.pop_event(player) {
                use hightick_engine::events::ReliableEvent;
                event.write_message(&mut self.event_message).unwrap();
            }
            if self.history.is_record_tick(tick) {
                self.history.record(player, tick, [tick as f32, 0.0, 1.0]);
            }
            let _ = self
                .history
                .rewind(player, TickTime::new(tick.saturating_sub(7), 0.5), tick);
        }
    }
}

#[test]
fn a_steady_state_push_tick_allocates_nothing() {
    let mut rig = Rig::new(hightick_engine::replication::ChangedTicks);
    rig.recorder =
        Some(FrameRecorder::new(RecorderConfig::default(), ModeBudget::default()).unwrap());
    for _ in 0..300 {
        rig.tick();
    }
    let allocations = count_allocations(|| {
        for _ in 0..200 {
            rig.tick();
        }
    });
    assert_eq!(allocations, 0);
    // The run did real work.
    assert!(rig.clients.iter().all(|c| c.len() > 1));
    let stats = rig.m.replication_stats(PlayerId(0)).unwrap();
    assert!(stats.records > 500 && stats.packets_lost > 0, "{stats:?}");
    // The engine's scopes were recorded (names only: no timing asserted).
    let recorder = rig.recorder.as_mut().unwrap();
    let scopes: Vec<_> = recorder
        .sub_scopes()
        .map(|(_, s, name)| (s, name))
        .collect();
    assert!(
        scopes.contains(&(Subsystem::Replication, "snapshot")),
        "{scopes:?}"
    );
    assert!(
        scopes.contains(&(Subsystem::Fow, "relevance")),
        "{scopes:?}"
    );
    assert_eq!(recorder.summary().frames, 500);
}

#[test]
fn a_steady_state_polling_tick_allocates_nothing() {
    let mut rig = Rig::new(ValueComparison::default());
    for _ in 0..300 {
        rig.tick();
    }
    assert_eq!(count_allocations(|| (0..100).for_each(|_| rig.tick())), 0);
}

#[test]
fn a_steady_state_tick_through_the_secure_layer_allocates_nothing() {
    use hightick_net::Channel;
    use hightick_net::sim_server::SimServer;
    use hightick_net::wire::MAX_PACKET_BYTES;
    use std::time::{Duration, Instant};

    let players = 4u16;
    let config = MatchConfig {
        max_players: players,
        max_entities: 64,
        ..MatchConfig::default()
    };
    let mut toy = Toy::new(usize::from(players), 64, 30, 8);
    toy.view_radius = Some(500);
    let mut m = Match::new(config, toy).unwrap();
    let mut now = Instant::now();
    // Client `p` plays player `p`.
    let mut net = SimServer::connect(usize::from(players), 8, now).unwrap();
    let mut worlds: Vec<ClientWorld<ToyReplica>> = (0..players)
        .map(|_| {
            m.join().unwrap();
            ClientWorld::new(64)
        })
        .collect();
    let mut datagram = [0u8; MAX_PACKET_BYTES];
    let mut message = [0u8; 1500];
    let mut input = [0u8; 128];
    let mut step = |m: &mut Match<Toy>, now: Instant| {
        m.game_mut().events_to_send.push((None, Note(2)));
        m.tick();
        let next = m.tick_number() + 1;
        for (p, world) in worlds.iter_mut().enumerate() {
            let player = PlayerId(p as u16);
            let (slot, from) = (net.slot(p), net.client_address(p));
            // The server's packet, sealed, to the client, which opens it.
            if let Some(t) = m.transmit_tick(player, &mut net.server, slot, now, &mut datagram) {
                net.clients[p].handle_datagram(now, SimServer::address(), &mut datagram[..t.len]);
            }
            let client = &mut net.clients[p];
            while let Some(msg) = client.poll_message(&mut message) {
                if msg.channel == Channel::Unreliable {
                    world.apply(&message[..msg.len]).unwrap();
                }
            }
            // The client's input and acks back.
            let batch = InputBatch::from_commands(&[stick(next, 0, 1)]).unwrap();
            let mut w = BitWriter::new(&mut input);
            MessageKind::InputBatch.encode(&mut w).unwrap();
            batch.encode(&mut w).unwrap();
            let n = w.finish();
            client.send_unreliable(&input[..n]).unwrap();
            while let Some(t) = client.poll_transmit(now, &mut datagram) {
                net.server
                    .handle_datagram(now, from, &mut datagram[..t.len]);
            }
            while client.poll_delivery().is_some() {}
            while let Some(msg) = net.server.poll_message(slot, &mut message) {
                m.handle_message(player, &message[..msg.len]).unwrap();
            }
            m.absorb_deliveries(player, &mut net.server, slot);
        }
        // The secure layer's timers and own packets, as a host runs them
        // between ticks.
        net.server.handle_timeout(now);
        while net.server.poll_event().is_some() {}
        while let Some(t) = net.server.poll_transmit(now, &mut datagram) {
            if let Some(i) = net.client_at(t.destination) {
                net.clients[i].handle_datagram(now, SimServer::address(), &mut datagram[..t.len]);
            }
        }
        for client in &mut net.clients {
            client.handle_timeout(now);
        }
    };
    let period = Duration::from_nanos(7_812_500);
    for _ in 0..300 {
        step(&mut m, now);
        now += period;
    }
    let allocations = count_allocations(|| {
        for _ in 0..200 {
            step(&mut m, now);
            now += period;
        }
    });
    assert_eq!(allocations, 0);
    assert!(net.clients.iter().all(|c| c.is_connected()));
    let stats = m.replication_stats(PlayerId(0)).unwrap();
    assert!(stats.packets_acked > 400, "{stats:?}");
}
