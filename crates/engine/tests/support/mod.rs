//! A toy game and a deterministic lossy link for the engine's end-to-end tests.
#![allow(dead_code)]

use hightick_engine::events::ReliableEvent;
use hightick_engine::input::InputSource;
use hightick_engine::replication::{PacketFate, Replica, ReplicationSource};
use hightick_engine::world::{Archetype, GroupMask, ReplicationWorld};
use hightick_engine::{EntityId, Game, InterestSet, JoinRefused, PlayerId, TickContext};
use hightick_proto::{BitReader, BitWriter, InputCommand, InputPayload, ProtoError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The toy's input: how far to move along each axis this tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stick {
    pub move_x: i8,
    pub move_y: i8,
}

impl InputPayload for Stick {
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.write_u8(self.move_x as u8)?;
        w.write_u8(self.move_y as u8)
    }
    fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(Self {
            move_x: r.read_u8()? as i8,
            move_y: r.read_u8()? as i8,
        })
    }
}

/// A command for `tick` (viewing `tick`) moving by `(move_x, move_y)`.
pub(crate) fn stick(tick: u32, move_x: i8, move_y: i8) -> InputCommand<Stick> {
    InputCommand::new(tick, tick, Stick { move_x, move_y })
}

/// The toy's reliable event: a numbered note (a round starting, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Note(pub u16);

impl ReliableEvent for Note {
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.write_u16(self.0)
    }
    fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(Self(r.read_u16()?))
    }
    const KINDS: &'static [&'static str] = &["note"];
    fn kind(&self) -> usize {
        0
    }
}

/// What the toy's reconnect hook tells a player (who it is, say).
pub(crate) const WELCOME: Note = Note(u16::MAX);

/// Group 0: position and the tick it last moved. Group 1 (avatars): health.
pub(crate) const MOTION: u8 = 0;
pub(crate) const HEALTH: u8 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Avatar,
    Orb,
}

impl Archetype for Kind {
    fn wire_id(self) -> u8 {
        match self {
            Kind::Avatar => 1,
            Kind::Orb => 2,
        }
    }
    fn from_wire_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(Kind::Avatar),
            2 => Some(Kind::Orb),
            _ => None,
        }
    }
    fn groups(self) -> GroupMask {
        match self {
            Kind::Avatar => GroupMask::first(2),
            Kind::Orb => GroupMask::first(1),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Motion {
    pub x: i32,
    pub y: i32,
    pub moved_at: u32,
}

/// The toy game: one avatar per player moved by input, and orbs that wander.
#[derive(Debug)]
pub(crate) struct Toy {
    pub motion: Vec<Motion>,
    pub health: Vec<u8>,
    pub avatars: Vec<Option<EntityId>>,
    pub orbs: Vec<EntityId>,
    /// Players see entities within this distance of their avatar (and
    /// always their own); `None`: everything.
    pub view_radius: Option<i32>,
    /// Nothing moves when frozen.
    pub frozen: bool,
    /// Every orb moves every this many ticks (staggered).
    pub move_period: u32,
    /// Priority weight per entity slot.
    pub weights: Vec<f32>,
    /// Last input per player: (tick simulated, command tick, source).
    pub last_input: Vec<Option<(u32, u32, InputSource)>>,
    /// Entities to despawn at the next tick.
    pub pending_despawn: Vec<EntityId>,
    /// Entities to move at the next tick (even when frozen).
    pub teleports: Vec<(EntityId, i32, i32)>,
    /// An entity a join nudges (a change made between ticks).
    pub nudge_on_join: Option<EntityId>,
    /// Events to send at the next tick (`None`: to everyone).
    pub events_to_send: Vec<(Option<PlayerId>, Note)>,
    /// Players the reconnect hook ran for, in order (it sends them
    /// [`WELCOME`]).
    pub reconnects: Vec<PlayerId>,
    /// Players whose seat was released, in order.
    pub released: Vec<PlayerId>,
    rng: ChaCha8Rng,
    orb_count: usize,
    spawned: bool,
}

impl Toy {
    pub(crate) fn new(players: usize, entities: usize, orbs: usize, seed: u64) -> Self {
        Self {
            motion: vec![Motion::default(); entities],
            health: vec![100; entities],
            avatars: vec![None; players],
            orbs: Vec::with_capacity(orbs),
            view_radius: None,
            frozen: false,
            move_period: 3,
            weights: vec![1.0; entities],
            last_input: vec![None; players],
            pending_despawn: Vec::with_capacity(entities),
            teleports: Vec::with_capacity(entities),
            events_to_send: Vec::with_capacity(16),
            nudge_on_join: None,
            reconnects: Vec::with_capacity(players),
            released: Vec::with_capacity(players),
            rng: ChaCha8Rng::seed_from_u64(seed),
            orb_count: orbs,
            spawned: false,
        }
    }

    fn spawn_orbs(&mut self, world: &mut ReplicationWorld<Kind>) {
        for _ in 0..self.orb_count {
            let e = world.spawn(Kind::Orb).expect("room for orbs");
            self.motion[usize::from(e.0)] = Motion {
                x: self.rng.random_range(-1000..1000),
                y: self.rng.random_range(-1000..1000),
                moved_at: world.tick(),
            };
            self.orbs.push(e);
        }
        self.spawned = true;
    }

    /// Moves an entity through the world's setter (stamps the group).
    pub(crate) fn move_to(
        &mut self,
        world: &mut ReplicationWorld<Kind>,
        e: EntityId,
        x: i32,
        y: i32,
    ) {
        let m = Motion {
            x,
            y,
            moved_at: world.tick(),
        };
        world.set(e, MOTION, &mut self.motion[usize::from(e.0)], m);
    }

    pub(crate) fn sees(&self, viewer: PlayerId, e: EntityId) -> bool {
        let Some(me) = self.avatars[usize::from(viewer.0)] else {
            return false;
        };
        let Some(r) = self.view_radius else {
            return true;
        };
        if me == e {
            return true;
        }
        let (a, b) = (
            self.motion[usize::from(me.0)],
            self.motion[usize::from(e.0)],
        );
        let (dx, dy) = (i64::from(a.x - b.x), i64::from(a.y - b.y));
        dx * dx + dy * dy <= i64::from(r) * i64::from(r)
    }
}

impl ReplicationSource for Toy {
    type Archetype = Kind;

    fn write_group(
        &self,
        entity: EntityId,
        _archetype: Kind,
        group: u8,
        w: &mut BitWriter,
    ) -> Result<(), ProtoError> {
        let i = usize::from(entity.0);
        match group {
            MOTION => {
                let m = self.motion[i];
                w.write_i32(m.x)?;
                w.write_i32(m.y)?;
                w.write_u32(m.moved_at)
            }
            HEALTH => w.write_u8(self.health[i]),
            _ => Err(ProtoError::invalid("group")),
        }
    }

    fn priority(&self, _viewer: PlayerId, entity: EntityId) -> f32 {
        self.weights[usize::from(entity.0)]
    }
}

impl Game for Toy {
    type Input = Stick;
    type Event = Note;
    type Replica = ToyReplica;
    type MatchResult = u32;

    fn join(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        player: PlayerId,
    ) -> Result<(), JoinRefused> {
        if !self.spawned {
            self.spawn_orbs(ctx.world);
        }
        let e = ctx
            .world
            .spawn_avatar(player, Kind::Avatar)
            .map_err(|_| JoinRefused("no room"))?;
        self.avatars[usize::from(player.0)] = Some(e);
        self.health[usize::from(e.0)] = 100;
        self.move_to(ctx.world, e, i32::from(player.0) * 50, 0);
        if let Some(n) = self.nudge_on_join {
            let m = self.motion[usize::from(n.0)];
            self.move_to(ctx.world, n, m.x + 1, m.y);
        }
        Ok(())
    }

    fn reconnect(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        self.reconnects.push(player);
        ctx.send_event(player, WELCOME);
    }

    fn seat_released(&mut self, _ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        self.released.push(player);
    }

    fn leave(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId) {
        if let Some(e) = self.avatars[usize::from(player.0)].take() {
            ctx.world.despawn(e);
        }
    }

    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        player: PlayerId,
        command: &InputCommand<Stick>,
        source: InputSource,
    ) {
        self.last_input[usize::from(player.0)] = Some((ctx.tick(), command.tick, source));
        if self.frozen {
            return;
        }
        if let Some(e) = self.avatars[usize::from(player.0)] {
            let m = self.motion[usize::from(e.0)];
            let (x, y) = (
                m.x + i32::from(command.payload.move_x),
                m.y + i32::from(command.payload.move_y),
            );
            if (x, y) != (m.x, m.y) {
                self.move_to(ctx.world, e, x, y);
            }
        }
    }

    fn tick(&mut self, ctx: &mut TickContext<'_, Self>) {
        for e in self.pending_despawn.drain(..) {
            ctx.world.despawn(e);
            self.orbs.retain(|&o| o != e);
        }
        while let Some((e, x, y)) = self.teleports.pop() {
            self.move_to(ctx.world, e, x, y);
        }
        for (to, event) in self.events_to_send.drain(..) {
            match to {
                Some(p) => {
                    ctx.send_event(p, event);
                }
                None => ctx.broadcast_event(event),
            }
        }
        if self.frozen {
            return;
        }
        let tick = ctx.tick();
        for k in 0..self.orbs.len() {
            let e = self.orbs[k];
            if (tick + k as u32).is_multiple_of(self.move_period.max(1)) {
                let m = self.motion[usize::from(e.0)];
                let x = (m.x + self.rng.random_range(-40..=40)).clamp(-1000, 1000);
                let y = (m.y + self.rng.random_range(-40..=40)).clamp(-1000, 1000);
                self.move_to(ctx.world, e, x, y);
            }
        }
        if tick % 64 == 0 {
            for k in 0..self.avatars.len() {
                if let Some(e) = self.avatars[k] {
                    let h = &mut self.health[usize::from(e.0)];
                    let next = h.wrapping_sub(1).max(1);
                    ctx.world.set(e, HEALTH, h, next);
                }
            }
        }
    }

    fn relevance(
        &mut self,
        viewer: PlayerId,
        world: &ReplicationWorld<Kind>,
        relevant: &mut InterestSet,
    ) {
        for e in world.alive().iter() {
            if self.sees(viewer, e) {
                relevant.insert(e);
            }
        }
    }

    fn result(&self) -> Option<u32> {
        None
    }
}

/// The client's copy of a toy entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ToyReplica {
    pub motion: Motion,
    pub health: u8,
}

impl Replica for ToyReplica {
    type Archetype = Kind;

    fn read_group(
        &mut self,
        _archetype: Kind,
        group: u8,
        r: &mut BitReader,
    ) -> Result<(), ProtoError> {
        match group {
            MOTION => {
                self.motion = Motion {
                    x: r.read_i32()?,
                    y: r.read_i32()?,
                    moved_at: r.read_u32()?,
                };
                Ok(())
            }
            HEALTH => {
                self.health = r.read_u8()?;
                Ok(())
            }
            _ => Err(ProtoError::invalid("group")),
        }
    }
}

/// The server's value of an entity, as the client should hold it.
pub(crate) fn server_view(toy: &Toy, world: &ReplicationWorld<Kind>, e: EntityId) -> ToyReplica {
    let i = usize::from(e.0);
    ToyReplica {
        motion: toy.motion[i],
        health: if world.archetype(e) == Some(Kind::Avatar) {
            toy.health[i]
        } else {
            0
        },
    }
}

/// A deterministic lossy, delaying, reordering one-way queue of snapshot
/// packets, with the fate of each reported back after a delay (acks are
/// assumed redundant enough never to be lost; a lost packet is reported
/// after a timeout).
#[derive(Debug)]
pub(crate) struct LossyLink {
    rng: ChaCha8Rng,
    pub loss: f64,
    pub latency: u32,
    pub jitter: u32,
    next_sequence: u16,
    in_flight: Vec<(u32, u16, Vec<u8>)>,
    fates: Vec<(u32, u16, PacketFate)>,
}

impl LossyLink {
    pub(crate) fn new(seed: u64, loss: f64, latency: u32, jitter: u32) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
            loss,
            latency,
            jitter,
            next_sequence: 0,
            in_flight: Vec::new(),
            fates: Vec::new(),
        }
    }

    /// Sends a payload at `now`; returns its packet sequence.
    pub(crate) fn send(&mut self, now: u32, payload: &[u8]) -> u16 {
        let seq = self.next_sequence;
        self.next_sequence = seq.wrapping_add(1);
        if self.rng.random_bool(self.loss) {
            self.fates.push((
                now + 2 * (self.latency + self.jitter) + 2,
                seq,
                PacketFate::Lost,
            ));
        } else {
            let at = now + self.latency + self.rng.random_range(0..=self.jitter);
            self.in_flight.push((at, seq, payload.to_vec()));
        }
        seq
    }

    /// Payloads arriving at `now` (in arrival order).
    pub(crate) fn deliver(&mut self, now: u32) -> Vec<Vec<u8>> {
        let mut due = Vec::new();
        let mut i = 0;
        while i < self.in_flight.len() {
            if self.in_flight[i].0 <= now {
                let (_, seq, bytes) = self.in_flight.remove(i);
                self.fates
                    .push((now + self.latency, seq, PacketFate::Acked));
                due.push(bytes);
            } else {
                i += 1;
            }
        }
        due
    }

    /// Fates known at `now`.
    pub(crate) fn fates(&mut self, now: u32) -> Vec<(u16, PacketFate)> {
        let mut due = Vec::new();
        self.fates.retain(|&(at, seq, fate)| {
            if at <= now {
                due.push((seq, fate));
                false
            } else {
                true
            }
        });
        due
    }
}

/// Asserts the client's world is exactly the entities `viewer` sees, with
/// the server's values.
pub(crate) fn assert_converged(
    toy: &Toy,
    world: &ReplicationWorld<Kind>,
    client: &hightick_engine::replication::ClientWorld<ToyReplica>,
    viewer: PlayerId,
) {
    for e in 0..world.capacity() as u16 {
        let e = EntityId(e);
        let relevant = world.is_alive(e) && toy.sees(viewer, e);
        match (relevant, client.get(e)) {
            (true, Some(held)) => {
                assert_eq!(Some(held.archetype), world.archetype(e));
                assert_eq!(*held.state, server_view(toy, world, e), "entity {}", e.0);
            }
            (false, None) => {}
            (true, None) => panic!("player {} lacks entity {}", viewer.0, e.0),
            (false, Some(_)) => panic!("player {} holds irrelevant entity {}", viewer.0, e.0),
        }
    }
}
