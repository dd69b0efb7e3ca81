//! Replication end to end: a toy game in a match, per-client lossy links,
//! client worlds applying the snapshots.

mod support;

use std::collections::HashMap;

use hightick_engine::replication::{
    ChangeDetection, ChangedTicks, ClientWorld, PacketFate, Replica, SnapshotReader,
    ValueComparison,
};
use hightick_engine::world::Archetype;
use hightick_engine::{EntityId, Match, MatchConfig, PlayerId};
use hightick_proto::message::{EntityOp, SnapshotKind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{Kind, LossyLink, Toy, ToyReplica, assert_converged, server_view, stick};

struct Session<D: ChangeDetection> {
    m: Match<Toy, D>,
    clients: Vec<ClientWorld<ToyReplica>>,
    links: Vec<LossyLink>,
    /// Players whose link is down (packets dropped, no fates).
    down: Vec<bool>,
    rng: ChaCha8Rng,
    /// Per player: kind of the first snapshot applied since (re)connecting.
    first_kind: Vec<Option<SnapshotKind>>,
    /// (player, entity) -> tick since which the entity is continuously
    /// relevant (or irrelevant, negated by the bool).
    relevance_since: HashMap<(u16, u16), (bool, u32)>,
    max_payload: usize,
}

fn config(players: u16, budget: u16) -> MatchConfig {
    MatchConfig {
        max_players: players,
        max_entities: 128,
        snapshot_budget_bytes: budget,
        entity_reuse_delay_ticks: 64,
        ..MatchConfig::default()
    }
}

impl<D: ChangeDetection> Session<D> {
    fn new(config: MatchConfig, toy: Toy, detection: D, loss: f64, seed: u64) -> Self {
        let players = usize::from(config.max_players);
        let mut m = Match::with_detection(config, toy, detection).unwrap();
        for _ in 0..players {
            m.join().unwrap();
        }
        Self {
            m,
            clients: (0..players).map(|_| ClientWorld::new(128)).collect(),
            links: (0..players)
                .map(|p| LossyLink::new(seed * 100 + p as u64, loss, 3, 3))
                .collect(),
            down: vec![false; players],
            rng: ChaCha8Rng::seed_from_u64(seed),
            first_kind: vec![None; players],
            relevance_since: HashMap::new(),
            max_payload: 0,
        }
    }

    fn players(&self) -> Vec<PlayerId> {
        self.m.players().collect()
    }

    /// One tick: random inputs, the match tick, then each snapshot over its link.
    fn step(&mut self) {
        let next = self.m.tick_number() + 1;
        for p in self.players() {
            let command = stick(
                next,
                self.rng.random_range(-3..=3),
                self.rng.random_range(-3..=3),
            );
            self.m.receive_command(p, &command).unwrap();
        }
        let report = self.m.tick();
        assert_eq!(report.snapshot_errors, 0);
        let now = self.m.tick_number();
        for p in self.players() {
            let i = usize::from(p.0);
            let payload = self.m.snapshot(p).to_vec();
            self.max_payload = self.max_payload.max(payload.len());
            assert!(
                payload.len() <= usize::from(self.m.config().snapshot_budget_bytes),
                "budget exceeded: {} bytes",
                payload.len()
            );
            self.check_only_relevant_entities(p, &payload);
            self.track_relevance(p, now);
            if self.down[i] {
                continue; // never sent, so never reported: counts as lost
            }
            let seq = self.links[i].send(now, &payload);
            self.m.packet_sent(p, seq);
            for bytes in self.links[i].deliver(now) {
                let info = self.clients[i].apply(&bytes).unwrap();
                if info.applied && self.first_kind[i].is_none() {
                    self.first_kind[i] = Some(info.header.kind);
                }
            }
            for (seq, fate) in self.links[i].fates(now) {
                self.m.on_delivery(p, seq, fate);
            }
        }
    }

    fn track_relevance(&mut self, p: PlayerId, now: u32) {
        let toy = self.m.game();
        for e in 0..128u16 {
            let e = EntityId(e);
            let relevant = self.m.world().is_alive(e) && toy.sees(p, e);
            let entry = self
                .relevance_since
                .entry((p.0, e.0))
                .or_insert((relevant, now));
            if entry.0 != relevant {
                *entry = (relevant, now);
            }
        }
    }

    /// Fog of war: no Enter or Update record names an entity the player
    /// cannot see this tick.
    fn check_only_relevant_entities(&self, p: PlayerId, payload: &[u8]) {
        let toy = self.m.game();
        let world = self.m.world();
        let mut reader = SnapshotReader::new(payload).unwrap();
        let mut scratch = ToyReplica::default();
        while let Some(rec) = reader.next_record().unwrap() {
            let r = reader.groups();
            let archetype = match rec.op {
                EntityOp::Leave => continue,
                EntityOp::Enter { archetype } => Kind::from_wire_id(archetype).unwrap(),
                EntityOp::Update => world.archetype(rec.entity).unwrap(),
            };
            assert!(
                toy.sees(p, rec.entity),
                "player {} was sent entity {} it cannot see",
                p.0,
                rec.entity.0
            );
            for g in 0..8 {
                if rec.group_mask & (1 << g) != 0 {
                    scratch.read_group(archetype, g, r).unwrap();
                }
            }
        }
    }

    /// Every entity relevant for `bound` ticks is held with every change
    /// older than `bound` ticks; every entity irrelevant for `bound` ticks is
    /// not held.
    fn check_bounded_staleness(&self, bound: u32) {
        let now = self.m.tick_number();
        for p in self.players() {
            let i = usize::from(p.0);
            if self.down[i] {
                continue;
            }
            let client = &self.clients[i];
            for e in 0..128u16 {
                let Some(&(relevant, since)) = self.relevance_since.get(&(p.0, e)) else {
                    continue;
                };
                if now - since < bound {
                    continue;
                }
                let e = EntityId(e);
                let held = client.get(e);
                if !relevant {
                    assert!(
                        held.is_none(),
                        "tick {now}: player {} still holds {}",
                        p.0,
                        e.0
                    );
                    continue;
                }
                let held = held.unwrap_or_else(|| {
                    panic!("tick {now}: player {} lacks relevant entity {}", p.0, e.0)
                });
                let server = server_view(self.m.game(), self.m.world(), e);
                if server.motion.moved_at + bound <= now {
                    assert_eq!(
                        held.state.motion, server.motion,
                        "tick {now}: player {} entity {} motion stale",
                        p.0, e.0
                    );
                }
            }
        }
    }

    fn check_converged(&self, p: PlayerId) {
        assert_converged(
            self.m.game(),
            self.m.world(),
            &self.clients[usize::from(p.0)],
            p,
        );
    }
}

fn converges_under_loss<D: ChangeDetection>(detection: D, bound: u32, seed: u64) {
    let mut toy = Toy::new(4, 128, 40, seed);
    toy.view_radius = Some(700);
    let mut s = Session::new(config(4, 1000), toy, detection, 0.2, seed);
    for tick in 0..800 {
        s.step();
        if tick > 100 {
            s.check_bounded_staleness(bound);
        }
    }
    s.m.game_mut().frozen = true;
    for _ in 0..bound {
        s.step();
    }
    for p in s.players() {
        s.check_converged(p);
        assert_eq!(
            s.first_kind[usize::from(p.0)],
            Some(SnapshotKind::FullResync)
        );
        let stats = s.m.replication_stats(p).unwrap();
        assert!(
            stats.packets_lost > 0 && stats.packets_acked > 0,
            "{stats:?}"
        );
        let applied = s.clients[usize::from(p.0)].stats();
        assert!(applied.records_applied > 0);
    }
}

#[test]
fn push_views_converge_under_20_percent_loss() {
    converges_under_loss(ChangedTicks, 40, 1);
    converges_under_loss(ChangedTicks, 40, 2);
}

#[test]
fn polling_writer_snapshots_apply_and_converge_too() {
    converges_under_loss(ValueComparison::default(), 120, 3);
}

#[test]
fn leaving_relevance_and_despawning_remove_entities_on_the_client() {
    let mut toy = Toy::new(2, 128, 6, 7);
    toy.view_radius = Some(300);
    toy.frozen = true;
    let mut s = Session::new(config(2, 1000), toy, ChangedTicks, 0.2, 7);
    let (p0, p1) = (PlayerId(0), PlayerId(1));
    let me = s.m.game().avatars[0].unwrap();
    let home = s.m.game().motion[usize::from(me.0)];
    let orb = s.m.game().orbs[0];
    let move_away = |s: &mut Session<ChangedTicks>, dx: i32| {
        s.m.game_mut()
            .teleports
            .push((orb, home.x + dx, home.y + 5_000));
        for _ in 0..40 {
            s.step();
        }
    };
    // Far from everyone, near player 0 (player 1 sits 50 units to the
    // side, so it sees it too), far again, near again.
    move_away(&mut s, 20_000);
    assert!(!s.clients[0].contains(orb) && !s.clients[1].contains(orb));
    s.m.game_mut().teleports.push((orb, home.x + 10, home.y));
    for _ in 0..40 {
        s.step();
    }
    assert!(s.clients[0].contains(orb), "orb entered");
    move_away(&mut s, 0);
    assert!(!s.clients[0].contains(orb), "orb left");
    assert!(
        !s.m.writer().may_know(p0, orb),
        "the Leave was acknowledged"
    );
    s.m.game_mut().teleports.push((orb, home.x - 10, home.y));
    for _ in 0..40 {
        s.step();
    }
    assert!(s.clients[0].contains(orb), "orb entered again");
    assert_eq!(
        s.clients[0].get(orb).unwrap().state.motion,
        s.m.game().motion[usize::from(orb.0)]
    );
    // Despawned: removed on every client that held it.
    assert!(s.clients[1].contains(orb));
    s.m.game_mut().pending_despawn.push(orb);
    for _ in 0..40 {
        s.step();
    }
    assert!(!s.clients[0].contains(orb) && !s.clients[1].contains(orb));
    assert!(!s.m.writer().may_know(p0, orb) && !s.m.writer().may_know(p1, orb));
    s.check_converged(p0);
    s.check_converged(p1);
}

#[test]
fn a_reconnecting_client_gets_full_state() {
    let mut toy = Toy::new(3, 128, 30, 11);
    toy.view_radius = Some(600);
    let mut s = Session::new(config(3, 1000), toy, ChangedTicks, 0.2, 11);
    for _ in 0..200 {
        s.step();
    }
    let p1 = PlayerId(1);
    // The link goes down while the world moves on (orbs wander in and out
    // of view): the client's world goes stale.
    s.down[1] = true;
    for _ in 0..300 {
        s.step();
    }
    let stale = s.clients[1].len();
    assert!(stale > 0);
    // Reconnect: a new connection, the server forgets the client's acks, the
    // client keeps its (stale) world and waits for the full resync.
    s.down[1] = false;
    s.links[1] = LossyLink::new(999, 0.2, 3, 3);
    s.m.reconnect(p1).unwrap();
    s.clients[1].expect_full_resync();
    s.first_kind[1] = None;
    let resyncs_before = s.clients[1].stats().resyncs;
    for _ in 0..60 {
        s.step();
    }
    assert_eq!(s.first_kind[1], Some(SnapshotKind::FullResync));
    assert_eq!(s.clients[1].stats().resyncs, resyncs_before + 1);
    assert_eq!(s.m.replication_stats(p1).unwrap().full_resyncs, 2);
    s.m.game_mut().frozen = true;
    for _ in 0..40 {
        s.step();
    }
    for p in s.players() {
        s.check_converged(p);
    }
}

#[test]
fn the_budget_is_never_exceeded_and_starved_entities_are_sent() {
    let mut toy = Toy::new(1, 128, 60, 5);
    toy.move_period = 1; // every orb changes every tick
    // Ten orbs matter far more than the rest.
    for k in 0..10 {
        let e = k + 1; // slot 0..59 are orbs in spawn order, avatar is 60
        toy.weights[e] = 20.0;
    }
    let budget = 160;
    let mut s = Session::new(config(1, budget), toy, ChangedTicks, 0.0, 5);
    let mut last_change_seen: HashMap<u16, u32> = HashMap::new();
    let mut max_staleness: HashMap<u16, u32> = HashMap::new();
    for _ in 0..2000 {
        s.step();
        let now = s.m.tick_number();
        if now < 200 {
            continue;
        }
        for held in s.clients[0].iter() {
            let seen = held.state.motion.moved_at;
            last_change_seen.insert(held.entity.0, seen);
            let st = max_staleness.entry(held.entity.0).or_default();
            *st = (*st).max(now - seen);
        }
    }
    assert!(s.max_payload <= usize::from(budget));
    let stats = s.m.replication_stats(PlayerId(0)).unwrap();
    assert!(stats.deferred > 1000, "the budget was short: {stats:?}");
    let orbs = s.m.game().orbs.clone();
    for (k, orb) in orbs.iter().enumerate() {
        let staleness = max_staleness[&orb.0];
        assert!(staleness <= 150, "orb {k} starved for {staleness} ticks");
        if (1..=10).contains(&usize::from(orb.0)) {
            assert!(
                staleness <= 12,
                "important orb {k} waited {staleness} ticks"
            );
        }
    }
}

#[test]
fn late_joiners_start_with_a_full_resync() {
    let mut toy = Toy::new(3, 128, 10, 13);
    toy.view_radius = None;
    let mut cfg = config(3, 1000);
    cfg.max_players = 3;
    let mut s = Session::new(cfg, toy, ChangedTicks, 0.2, 13);
    for _ in 0..100 {
        s.step();
    }
    let p2 = PlayerId(2);
    s.m.leave(p2).unwrap();
    for _ in 0..20 {
        s.step();
    }
    let again = s.m.join().unwrap();
    assert_eq!(again, p2);
    s.clients[2] = ClientWorld::new(128);
    s.links[2] = LossyLink::new(77, 0.2, 3, 3);
    s.first_kind[2] = None;
    assert!(s.m.writer().is_resyncing(p2));
    for _ in 0..60 {
        s.step();
    }
    assert_eq!(s.first_kind[2], Some(SnapshotKind::FullResync));
    assert!(!s.m.writer().is_resyncing(p2));
    s.m.game_mut().frozen = true;
    for _ in 0..40 {
        s.step();
    }
    s.check_converged(p2);
    // Deliveries for sequences never sent are ignored.
    s.m.on_delivery(p2, 60_000, PacketFate::Acked);
}
