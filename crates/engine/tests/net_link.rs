//! Replication through `hightick-net`'s packet layer over its simulated link:
//! 20% loss both ways, latency, jitter, reordering and duplication, driven
//! by a virtual clock. Inputs go up, snapshots and reliable events come down,
//! acks drive the replication writer.

mod support;

use std::time::{Duration, Instant};

use hightick_engine::events::ReliableEvent;
use hightick_engine::replication::{ClientWorld, SnapshotReader};
use hightick_engine::{Match, MatchConfig, PlayerId};
use hightick_net::sim_link::{SimLink, SimLinkConfig};
use hightick_net::{Channel, PacketConfig, PacketEndpoint};
use hightick_proto::{BitReader, BitWriter, InputBatch, InputCommand, MessageKind, SnapshotKind};
use support::{Note, Stick, Toy, ToyReplica, assert_converged, stick};

const PLAYERS: u16 = 3;
/// Ticks ahead of the server a client sends its input (about 94 ms).
const INPUT_LEAD: u32 = 12;

struct Remote {
    server: PacketEndpoint,
    client: PacketEndpoint,
    down: SimLink,
    up: SimLink,
    world: ClientWorld<ToyReplica>,
    rounds: Vec<u16>,
    first_kind: Option<SnapshotKind>,
}

fn link(seed: u64) -> SimLink {
    SimLink::new(SimLinkConfig {
        loss: 0.2,
        latency: Duration::from_millis(25),
        jitter: Duration::from_millis(10),
        duplicate: 0.02,
        reorder: 0.05,
        seed,
        ..SimLinkConfig::default()
    })
}

impl Remote {
    fn new(now: Instant, seed: u64) -> Self {
        let config = PacketConfig::default();
        Self {
            server: PacketEndpoint::new(&config, now),
            client: PacketEndpoint::new(&config, now),
            down: link(seed),
            up: link(seed + 1),
            world: ClientWorld::new(128),
            rounds: Vec::new(),
            first_kind: None,
        }
    }
}

struct Net {
    m: Match<Toy>,
    remotes: Vec<Remote>,
    now: Instant,
    period: Duration,
    datagram: [u8; 1500],
    message: [u8; 1500],
}

impl Net {
    fn new() -> Self {
        let config = MatchConfig {
            max_players: PLAYERS,
            max_entities: 128,
            ..MatchConfig::default()
        };
        let mut toy = Toy::new(usize::from(PLAYERS), 128, 30, 21);
        toy.view_radius = Some(600);
        let mut m = Match::new(config, toy).unwrap();
        let now = Instant::now();
        let remotes = (0..PLAYERS)
            .map(|p| {
                m.join().unwrap();
                Remote::new(now, 40 + 2 * u64::from(p))
            })
            .collect();
        Self {
            period: Duration::from_nanos(1_000_000_000 / 128),
            m,
            remotes,
            now,
            datagram: [0; 1500],
            message: [0; 1500],
        }
    }

    fn step(&mut self) {
        let now = self.now;
        let next = self.m.tick_number() + 1;
        for (p, r) in self.remotes.iter_mut().enumerate() {
            let player = PlayerId(p as u16);
            // Client: inputs for a tick far enough ahead to arrive in time,
            // and the three before; the packet also carries the client's acks.
            let ahead = next + INPUT_LEAD;
            let commands: Vec<InputCommand<Stick>> = (0..4u32)
                .map(|back| stick(ahead - back, if (next / 100) % 2 == 0 { 2 } else { -2 }, 0))
                .collect();
            let mut w = BitWriter::new(&mut self.message);
            MessageKind::InputBatch.encode(&mut w).unwrap();
            InputBatch::from_commands(&commands)
                .unwrap()
                .encode(&mut w)
                .unwrap();
            let n = w.finish();
            r.client.send_unreliable(&self.message[..n]).unwrap();
            while let Some((_, len)) = r.client.write_packet(now, &mut self.datagram) {
                r.up.send(now, &self.datagram[..len]);
            }
            // Server: what arrived from the client.
            while let Some(n) = r.up.poll_deliver(now, &mut self.datagram) {
                if r.server.read_packet(now, &self.datagram[..n]).is_err() {
                    continue; // duplicates and stale packets are dropped
                }
                while let Some(msg) = r.server.poll_message(&mut self.message) {
                    self.m
                        .handle_message(player, &self.message[..msg.len])
                        .unwrap();
                }
            }
            r.server.handle_timeout(now);
            self.m.absorb_deliveries(player, &mut r.server);
        }
        self.m.tick();
        for (p, r) in self.remotes.iter_mut().enumerate() {
            let player = PlayerId(p as u16);
            if let Some(len) = self
                .m
                .send_tick(player, &mut r.server, now, &mut self.datagram)
                .unwrap()
            {
                r.down.send(now, &self.datagram[..len]);
            }
            while let Some((_, len)) = r.server.write_packet(now, &mut self.datagram) {
                r.down.send(now, &self.datagram[..len]);
            }
            // Client: snapshots and events.
            while let Some(n) = r.down.poll_deliver(now, &mut self.datagram) {
                if r.client.read_packet(now, &self.datagram[..n]).is_err() {
                    continue;
                }
                while let Some(msg) = r.client.poll_message(&mut self.message) {
                    let bytes = &self.message[..msg.len];
                    match msg.channel {
                        Channel::Unreliable => {
                            let info = r.world.apply(bytes).unwrap();
                            if info.applied && r.first_kind.is_none() {
                                r.first_kind = Some(info.header.kind);
                            }
                        }
                        Channel::Reliable => {
                            let mut reader = BitReader::new(bytes);
                            assert_eq!(
                                MessageKind::decode(&mut reader).unwrap(),
                                MessageKind::Event
                            );
                            let Note(round) = Note::decode(&mut reader).unwrap();
                            r.rounds.push(round);
                        }
                    }
                }
            }
            r.client.handle_timeout(now);
            while r.client.poll_delivery().is_some() {}
        }
        self.now += self.period;
    }
}

#[test]
fn views_converge_and_events_arrive_in_order_over_a_lossy_link() {
    let mut net = Net::new();
    let mut round = 0;
    for tick in 0..1200 {
        if tick % 40 == 0 {
            round += 1;
            let event = Note(round);
            net.m.game_mut().events_to_send.push((None, event));
        }
        net.step();
    }
    net.m.game_mut().frozen = true;
    for _ in 0..100 {
        net.step();
    }
    for (p, r) in net.remotes.iter().enumerate() {
        let player = PlayerId(p as u16);
        assert_converged(net.m.game(), net.m.world(), &r.world, player);
        assert_eq!(r.first_kind, Some(SnapshotKind::FullResync));
        assert_eq!(
            r.rounds,
            (1..=round).collect::<Vec<_>>(),
            "every event once, in order"
        );
        let stats = net.m.replication_stats(player).unwrap();
        assert!(
            stats.packets_lost > 50 && stats.packets_acked > 500,
            "{stats:?}"
        );
        // Inputs made it through too, despite the loss (redundancy).
        let inputs = net.m.input_stats(player).unwrap();
        assert!(inputs.accepted > 1100, "{inputs:?}");
    }
}

#[test]
fn a_client_reconnecting_over_the_link_gets_a_full_state() {
    let mut net = Net::new();
    for _ in 0..300 {
        net.step();
    }
    // Player 1's connection is replaced: new endpoints and links, the
    // client keeps its stale world and expects a full resync.
    let p1 = PlayerId(1);
    let mut fresh = Remote::new(net.now, 99);
    std::mem::swap(&mut fresh.world, &mut net.remotes[1].world);
    net.remotes[1] = fresh;
    net.remotes[1].world.expect_full_resync();
    net.m.reconnect(p1).unwrap();
    for _ in 0..200 {
        net.step();
    }
    assert_eq!(net.remotes[1].first_kind, Some(SnapshotKind::FullResync));
    net.m.game_mut().frozen = true;
    for _ in 0..100 {
        net.step();
    }
    assert_converged(net.m.game(), net.m.world(), &net.remotes[1].world, p1);
    // Snapshot payloads are readable on their own too.
    let snapshot = net.m.snapshot(p1);
    assert_eq!(
        SnapshotReader::new(snapshot).unwrap().header().server_tick,
        net.m.tick_number()
    );
}
