//! Replication on the server's send path (`Match::transmit_tick` and
//! `Match::absorb_deliveries` on a `hightick_net::Server`) to real
//! `hightick_net::Client`s, every packet sealed, over `hightick-net`'s
//! simulated link: 20% loss both ways, latency, jitter, reordering and
//! duplication, driven by a virtual clock. Inputs go up, snapshots and
//! reliable events come down, acks drive the replication writer.

mod support;

use std::time::{Duration, Instant};

use hightick_engine::events::ReliableEvent;
use hightick_engine::replication::{ClientWorld, SnapshotReader};
use hightick_engine::{Match, MatchConfig, PlayerId};
use hightick_net::Channel;
use hightick_net::sim_link::{SimLink, SimLinkConfig};
use hightick_net::sim_server::SimServer;
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_proto::{
    Avatar, BitReader, BitWriter, InputBatch, InputCommand, MessageKind, SchemaHash, SnapshotKind,
};
use support::{Note, Stick, Toy, ToyReplica, assert_converged, stick};

const PLAYERS: u16 = 3;
/// Ticks ahead of the server a client sends its input (about 94 ms).
const INPUT_LEAD: u32 = 12;

/// One client's links and what it saw.
struct Remote {
    down: SimLink,
    up: SimLink,
    world: ClientWorld<ToyReplica>,
    rounds: Vec<u16>,
    first_kind: Option<SnapshotKind>,
    /// Schema hashes received (one per connection).
    hashes: u32,
    /// Avatar messages received.
    avatars: u32,
}

fn link(seed: u64) -> SimLink {
    SimLink::new(SimLinkConfig {
        loss: 0.2,
        latency: Duration::from_millis(25),
        jitter: Duration::from_millis(10),
        duplicate: 0.02,
        reorder: 0.05,
        seed,
        max_datagram: MAX_PACKET_BYTES,
        ..SimLinkConfig::default()
    })
}

impl Remote {
    fn new(seed: u64) -> Self {
        Self {
            down: link(seed),
            up: link(seed + 1),
            world: ClientWorld::new(128),
            rounds: Vec::new(),
            first_kind: None,
            hashes: 0,
            avatars: 0,
        }
    }
}

struct Net {
    m: Match<Toy>,
    /// The server and client `p` of player `p`.
    sim: SimServer,
    remotes: Vec<Remote>,
    now: Instant,
    period: Duration,
    datagram: [u8; MAX_PACKET_BYTES],
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
        let sim = SimServer::connect(usize::from(PLAYERS), 40, now).unwrap();
        let remotes = (0..PLAYERS)
            .map(|p| {
                m.join().unwrap();
                Remote::new(40 + 2 * u64::from(p))
            })
            .collect();
        Self {
            period: Duration::from_nanos(1_000_000_000 / 128),
            m,
            sim,
            remotes,
            now,
            datagram: [0; MAX_PACKET_BYTES],
            message: [0; 1500],
        }
    }

    fn step(&mut self) {
        let now = self.now;
        let next = self.m.tick_number() + 1;
        for (p, r) in self.remotes.iter_mut().enumerate() {
            let player = PlayerId(p as u16);
            let (slot, from) = (self.sim.slot(p), self.sim.client_address(p));
            // Client: inputs for a tick far enough ahead to arrive in time,
            // and the three before; the packet also carries the client's acks.
            let ahead = next + INPUT_LEAD;
            let commands: Vec<InputCommand<Stick>> = (0..4u32)
                .map(|back| {
                    stick(
                        ahead - back,
                        if (next / 100).is_multiple_of(2) {
                            2
                        } else {
                            -2
                        },
                        0,
                    )
                })
                .collect();
            let mut w = BitWriter::new(&mut self.message);
            MessageKind::InputBatch.encode(&mut w).unwrap();
            InputBatch::from_commands(&commands)
                .unwrap()
                .encode(&mut w)
                .unwrap();
            let n = w.finish();
            let client = &mut self.sim.clients[p];
            client.send_unreliable(&self.message[..n]).unwrap();
            while let Some(t) = client.poll_transmit(now, &mut self.datagram) {
                r.up.send(now, &self.datagram[..t.len]);
            }
            // Server: what arrived from the client (duplicates and replays
            // are dropped by the secure layer).
            while let Some(n) = r.up.poll_deliver(now, &mut self.datagram) {
                self.sim
                    .server
                    .handle_datagram(now, from, &mut self.datagram[..n]);
            }
            while let Some(msg) = self.sim.server.poll_message(slot, &mut self.message) {
                self.m
                    .handle_message(player, &self.message[..msg.len])
                    .unwrap();
            }
        }
        // The secure layer's timers (losses, keep-alives) and its own packets.
        self.sim.server.handle_timeout(now);
        if let Some(event) = self.sim.server.poll_event() {
            panic!("a connection changed: {event:?}");
        }
        while let Some(t) = self.sim.server.poll_transmit(now, &mut self.datagram) {
            let i = self
                .sim
                .client_at(t.destination)
                .expect("a client's address");
            self.remotes[i].down.send(now, &self.datagram[..t.len]);
        }
        for p in 0..self.remotes.len() {
            let slot = self.sim.slot(p);
            self.m
                .absorb_deliveries(PlayerId(p as u16), &mut self.sim.server, slot);
        }
        self.m.tick();
        for (p, r) in self.remotes.iter_mut().enumerate() {
            let player = PlayerId(p as u16);
            let slot = self.sim.slot(p);
            if let Some(t) =
                self.m
                    .transmit_tick(player, &mut self.sim.server, slot, now, &mut self.datagram)
            {
                r.down.send(now, &self.datagram[..t.len]);
            }
            // Client: snapshots and events.
            let client = &mut self.sim.clients[p];
            while let Some(n) = r.down.poll_deliver(now, &mut self.datagram) {
                client.handle_datagram(now, SimServer::address(), &mut self.datagram[..n]);
            }
            while let Some(msg) = client.poll_message(&mut self.message) {
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
                        match MessageKind::decode(&mut reader).unwrap() {
                            // Each connection's first reliable message.
                            MessageKind::SchemaHash => {
                                let hash = SchemaHash::decode(&mut reader).unwrap();
                                assert_eq!(hash.0, self.m.schema_hash());
                                r.hashes += 1;
                            }
                            MessageKind::Avatar => {
                                let Avatar(avatar) = Avatar::decode(&mut reader).unwrap();
                                r.world.set_avatar(avatar);
                                r.avatars += 1;
                            }
                            kind => {
                                assert_eq!(kind, MessageKind::Event);
                                let Note(round) = Note::decode(&mut reader).unwrap();
                                r.rounds.push(round);
                            }
                        }
                    }
                }
            }
            client.handle_timeout(now);
            while client.poll_delivery().is_some() {}
            assert!(client.is_connected(), "client {p}: {:?}", client.state());
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
        // The client was told its avatar once, and holds it.
        assert_eq!(r.avatars, 1);
        assert_eq!(r.world.avatar(), net.m.world().avatar(player));
        assert!(r.world.mine().is_some());
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
    // Player 1's connection is replaced: a new client (a new connection
    // on the server) and new links; the client keeps its stale world and
    // expects a full resync.
    let p1 = PlayerId(1);
    net.sim.reconnect(1, net.now).unwrap();
    let mut fresh = Remote::new(99);
    std::mem::swap(&mut fresh.world, &mut net.remotes[1].world);
    net.remotes[1] = fresh;
    net.remotes[1].world.expect_full_resync();
    net.m.reconnect(p1).unwrap();
    for _ in 0..200 {
        net.step();
    }
    assert_eq!(net.remotes[1].first_kind, Some(SnapshotKind::FullResync));
    // The new connection was told the schema hash first, once, then its
    // avatar again.
    assert_eq!(net.remotes[1].hashes, 1);
    assert_eq!(net.remotes[1].avatars, 1);
    assert_eq!(net.remotes[1].world.avatar(), net.m.world().avatar(p1));
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
