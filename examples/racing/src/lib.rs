//! Racing, a second game on hightick of another shape than tag: 12 cars at
//! 120 Hz on a ring track, analog input (throttle and steering), continuous
//! physics, laps, a finishing order as the result.
//!
//! How it differs from tag, and why it matters: its input is two analog
//! axes delta-coded field by field ([`Controls`] overrides
//! [`InputPayload::encode_delta`]); every car is relevant to every driver
//! within 120 m plus the race leader (relevance by distance and by rank);
//! its replicated state is quantized floats (position to the centimetre,
//! heading in 16 bits); a match ends when the first car has done its laps
//! and the others finish theirs, and the result hook turns the finishing
//! order into a win for the first and points for everyone.
//!
//! Run with: `cargo run --release -p hightick-example-racing -- demo`.

use std::f32::consts::{PI, TAU};

use hightick_engine::bot::{Bot, BotGame};
use hightick_engine::events::ReliableEvent;
use hightick_engine::input::InputSource;
use hightick_engine::mode::{HostedGame, MatchReport, MatchStatus, Mode, Outcome, PlayerReport};
use hightick_engine::replication::{ClientWorld, Replica, ReplicationSource};
use hightick_engine::tick::Tick;
use hightick_engine::world::{Archetype, GroupMask, ReplicationWorld};
use hightick_engine::{
    EntityId, Game, InterestSet, JoinRefused, MatchConfig, PlayerId, TickContext,
};
use hightick_proto::message::{read_entity_id, write_entity_id};
use hightick_proto::quantize::{dequantize_angle, quantize_angle};
use hightick_proto::{BitReader, BitWriter, InputCommand, InputPayload, ProtoError};
use serde::{Deserialize, Serialize};

/// The track is the ring between these radii around the origin, metres.
pub const INNER_RADIUS: f32 = 70.0;
/// Outer wall.
pub const OUTER_RADIUS: f32 = 90.0;
const MID_RADIUS: f32 = (INNER_RADIUS + OUTER_RADIUS) / 2.0;
const TOP_SPEED: f32 = 45.0;
const ACCELERATION: f32 = 12.0;
const BRAKING: f32 = 25.0;
const DRAG: f32 = 0.02;
/// Radians per second at full lock (less at speed).
const TURN_RATE: f32 = 1.6;
const VIEW_RADIUS: f32 = 120.0;
/// Centimetres per position unit on the wire.
const POSITION_SCALE: f32 = 100.0;

/// The game's modes.
pub const MODES: &[Mode] = &[
    Mode {
        name: "race12",
        players: 12,
        tick_rate_hz: 120,
        summary: "12 cars, ring track, 10 laps",
    },
    Mode {
        name: "race4",
        players: 4,
        tick_rate_hz: 60,
        summary: "4 cars at 60 Hz, 3 laps",
    },
];

/// The only archetype: a car. Group 0 is its motion (position, heading,
/// speed), changed every tick it moves; group 1 its race (laps done,
/// finished), changed once a lap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Car;

impl Archetype for Car {
    fn wire_id(self) -> u8 {
        0
    }
    fn from_wire_id(id: u8) -> Option<Self> {
        (id == 0).then_some(Car)
    }
    fn groups(self) -> GroupMask {
        GroupMask::first(2)
    }
}

/// A driver's controls for one tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Controls {
    /// -1 (full brake) to 1 (full throttle), 8 bits on the wire.
    pub throttle: f32,
    /// -1 (full left) to 1 (full right), 8 bits on the wire.
    pub steer: f32,
}

fn axis_code(v: f32, field: &'static str) -> Result<u8, ProtoError> {
    if !v.is_finite() {
        return Err(ProtoError::invalid(field));
    }
    Ok((v.clamp(-1.0, 1.0) * 127.0).round() as i8 as u8)
}

fn axis_value(code: u8) -> f32 {
    f32::from(code as i8) / 127.0
}

impl InputPayload for Controls {
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let (t, s) = (
            axis_code(self.throttle, "throttle")?,
            axis_code(self.steer, "steer")?,
        );
        w.all_or_nothing(|w| {
            w.write_u8(t)?;
            w.write_u8(s)
        })
    }

    fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(Self {
            throttle: axis_value(r.read_u8()?),
            steer: axis_value(r.read_u8()?),
        })
    }

    /// One bit per axis when it did not change: a driver holds the
    /// throttle far longer than it moves it.
    fn encode_delta(&self, newer: &Self, w: &mut BitWriter) -> Result<(), ProtoError> {
        let mine = [
            axis_code(self.throttle, "throttle")?,
            axis_code(self.steer, "steer")?,
        ];
        let theirs = [
            axis_code(newer.throttle, "throttle")?,
            axis_code(newer.steer, "steer")?,
        ];
        w.all_or_nothing(|w| {
            for (m, t) in mine.into_iter().zip(theirs) {
                w.write_bool(m != t)?;
                if m != t {
                    w.write_u8(m)?;
                }
            }
            Ok(())
        })
    }

    fn decode_delta(newer: &Self, r: &mut BitReader) -> Result<Self, ProtoError> {
        let mut axis = |v: f32| -> Result<f32, ProtoError> {
            if r.read_bool()? {
                Ok(axis_value(r.read_u8()?))
            } else {
                Ok(v)
            }
        };
        let throttle = axis(newer.throttle)?;
        let steer = axis(newer.steer)?;
        Ok(Self { throttle, steer })
    }
}

/// What the race tells its drivers reliably.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceEvent {
    /// To one driver when it (re)connects: "you drive this car".
    You {
        /// The driver's own car.
        car: EntityId,
    },
    /// To everyone: a car completed a lap.
    Lap {
        /// The car.
        car: EntityId,
        /// Laps it has done now.
        laps: u8,
    },
    /// To everyone: a car finished, in this place (1 = won).
    Finished {
        /// The car.
        car: EntityId,
        /// Its place.
        place: u8,
    },
    /// To everyone: the race is over.
    Over,
}

impl ReliableEvent for RaceEvent {
    const KINDS: &'static [&'static str] = &["you", "lap", "finished", "over"];

    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.all_or_nothing(|w| {
            w.write_bits(self.kind() as u32, 2)?;
            match *self {
                RaceEvent::You { car } => write_entity_id(w, car),
                RaceEvent::Lap { car, laps } => {
                    write_entity_id(w, car)?;
                    w.write_u8(laps)
                }
                RaceEvent::Finished { car, place } => {
                    write_entity_id(w, car)?;
                    w.write_u8(place)
                }
                RaceEvent::Over => Ok(()),
            }
        })
    }

    fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(match r.read_bits(2)? {
            0 => RaceEvent::You {
                car: read_entity_id(r)?,
            },
            1 => RaceEvent::Lap {
                car: read_entity_id(r)?,
                laps: r.read_u8()?,
            },
            2 => RaceEvent::Finished {
                car: read_entity_id(r)?,
                place: r.read_u8()?,
            },
            _ => RaceEvent::Over,
        })
    }

    fn kind(&self) -> usize {
        match self {
            RaceEvent::You { .. } => 0,
            RaceEvent::Lap { .. } => 1,
            RaceEvent::Finished { .. } => 2,
            RaceEvent::Over => 3,
        }
    }
}

/// A client's copy of a car.
#[derive(Debug, Default, Clone, Copy)]
pub struct CarView {
    /// Metres, x and z.
    pub position: [f32; 2],
    /// Radians.
    pub heading: f32,
    /// Metres per second.
    pub speed: f32,
    /// Laps done.
    pub laps: u8,
    /// Whether it finished.
    pub finished: bool,
}

impl Replica for CarView {
    type Archetype = Car;
    fn read_group(&mut self, _: Car, group: u8, r: &mut BitReader) -> Result<(), ProtoError> {
        match group {
            0 => {
                let x = r.read_signed_varint()? as f32 / POSITION_SCALE;
                let z = r.read_signed_varint()? as f32 / POSITION_SCALE;
                self.position = [x, z];
                self.heading = dequantize_angle(r.read_u16()?);
                self.speed = f32::from(r.read_u8()?) / 4.0;
            }
            _ => {
                self.laps = r.read_u8()?;
                self.finished = r.read_bool()?;
            }
        }
        Ok(())
    }
}

/// One car on the server.
#[derive(Debug, Clone, Copy, Default)]
struct CarState {
    position: [f32; 2],
    heading: f32,
    speed: f32,
    /// Angle around the ring travelled, radians (a lap is TAU).
    travelled: f32,
    /// The last angle around the ring.
    angle: f32,
    laps: u8,
    finished_at: Option<u8>,
}

/// What a create-match request may change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RaceSettings {
    /// Laps to race, 1 to 200 (default: the mode's).
    pub laps: Option<u8>,
}

/// The race, server side.
#[derive(Debug)]
pub struct Race {
    cars: Vec<CarState>,
    /// Replicated copies (what the setters stamp).
    motion: Vec<[i32; 4]>,
    standing: Vec<(u8, bool)>,
    car_of: Vec<Option<EntityId>>,
    laps: u8,
    finishers: u8,
    over: bool,
}

impl Race {
    /// A race of `laps` laps for `players` cars in `entities` slots.
    pub fn new(players: usize, entities: usize, laps: u8) -> Self {
        Self {
            cars: vec![CarState::default(); entities],
            motion: vec![[0; 4]; entities],
            standing: vec![(0, false); entities],
            car_of: vec![None; players],
            laps,
            finishers: 0,
            over: false,
        }
    }

    fn leader(&self) -> Option<EntityId> {
        self.car_of.iter().flatten().copied().max_by(|a, b| {
            let (a, b) = (&self.cars[usize::from(a.0)], &self.cars[usize::from(b.0)]);
            a.travelled.total_cmp(&b.travelled)
        })
    }

    fn publish(&mut self, ctx: &mut TickContext<'_, Self>, e: EntityId) {
        let i = usize::from(e.0);
        let c = self.cars[i];
        let motion = [
            (c.position[0] * POSITION_SCALE).round() as i32,
            (c.position[1] * POSITION_SCALE).round() as i32,
            i32::from(quantize_angle(c.heading).unwrap_or(0)),
            (c.speed * 4.0).round().clamp(0.0, 255.0) as i32,
        ];
        ctx.world.set(e, 0, &mut self.motion[i], motion);
        let standing = (c.laps, c.finished_at.is_some());
        ctx.world.set(e, 1, &mut self.standing[i], standing);
    }
}

impl ReplicationSource for Race {
    type Archetype = Car;
    fn write_group(
        &self,
        e: EntityId,
        _: Car,
        group: u8,
        w: &mut BitWriter,
    ) -> Result<(), ProtoError> {
        let i = usize::from(e.0);
        match group {
            0 => {
                let [x, z, heading, speed] = self.motion[i];
                w.write_signed_varint(x)?;
                w.write_signed_varint(z)?;
                w.write_u16(heading as u16)?;
                w.write_u8(speed as u8)
            }
            _ => {
                let (laps, finished) = self.standing[i];
                w.write_u8(laps)?;
                w.write_bool(finished)
            }
        }
    }
}

impl Game for Race {
    type Input = Controls;
    type Event = RaceEvent;
    type Replica = CarView;
    /// Cars' slots in finishing order.
    type MatchResult = Vec<PlayerId>;

    fn join(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) -> Result<(), JoinRefused> {
        let e = ctx
            .world
            .spawn(Car)
            .map_err(|_| JoinRefused("the grid is full"))?;
        // A staggered grid behind the line at angle 0, facing along the ring.
        let row = f32::from(p.0 / 2);
        let lane = if p.0.is_multiple_of(2) { -4.0 } else { 4.0 };
        let angle = -(row * 8.0 + 4.0) / MID_RADIUS;
        let radius = MID_RADIUS + lane;
        self.cars[usize::from(e.0)] = CarState {
            position: [radius * angle.cos(), radius * angle.sin()],
            heading: angle + PI / 2.0,
            angle,
            ..CarState::default()
        };
        self.car_of[usize::from(p.0)] = Some(e);
        self.publish(ctx, e);
        Ok(())
    }

    fn leave(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) {
        if let Some(e) = self.car_of[usize::from(p.0)].take() {
            ctx.world.despawn(e);
        }
    }

    fn reconnect(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) {
        if let Some(car) = self.car_of[usize::from(p.0)] {
            ctx.send_event(p, RaceEvent::You { car });
        }
    }

    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        p: PlayerId,
        cmd: &InputCommand<Controls>,
        _: InputSource,
    ) {
        let Some(e) = self.car_of[usize::from(p.0)] else {
            return;
        };
        let dt = ctx.dt();
        let c = &mut self.cars[usize::from(e.0)];
        if c.finished_at.is_some() || self.over {
            c.speed = (c.speed - BRAKING * dt).max(0.0);
        } else {
            let Controls { throttle, steer } = cmd.payload;
            let push = if throttle >= 0.0 {
                throttle * ACCELERATION
            } else {
                throttle * BRAKING
            };
            c.speed = (c.speed + (push - DRAG * c.speed * c.speed) * dt).clamp(0.0, TOP_SPEED);
            let grip = 1.0 - 0.5 * c.speed / TOP_SPEED;
            c.heading = (c.heading + steer.clamp(-1.0, 1.0) * TURN_RATE * grip * dt) % TAU;
        }
        let (sin, cos) = c.heading.sin_cos();
        let mut x = c.position[0] + cos * c.speed * dt;
        let mut z = c.position[1] + sin * c.speed * dt;
        // The walls: pushed back onto the track, and scraping costs speed.
        let r = x.hypot(z).max(1e-3);
        let clamped = r.clamp(INNER_RADIUS, OUTER_RADIUS);
        if clamped != r {
            x *= clamped / r;
            z *= clamped / r;
            c.speed *= 0.98;
        }
        c.position = [x, z];
        let angle = z.atan2(x);
        let mut step = angle - c.angle;
        if step > PI {
            step -= TAU;
        } else if step < -PI {
            step += TAU;
        }
        c.angle = angle;
        c.travelled += step;
        self.publish(ctx, e);
    }

    fn tick(&mut self, ctx: &mut TickContext<'_, Self>) {
        if self.over {
            return;
        }
        for p in 0..self.car_of.len() {
            let Some(e) = self.car_of[p] else { continue };
            let c = &mut self.cars[usize::from(e.0)];
            let done = (c.travelled / TAU).max(0.0) as u8;
            if done > c.laps && c.finished_at.is_none() {
                c.laps = done;
                ctx.broadcast_event(RaceEvent::Lap { car: e, laps: done });
                if done >= self.laps {
                    self.finishers += 1;
                    c.finished_at = Some(self.finishers);
                    ctx.broadcast_event(RaceEvent::Finished {
                        car: e,
                        place: self.finishers,
                    });
                }
                self.publish(ctx, e);
            }
        }
        let racing = self
            .car_of
            .iter()
            .enumerate()
            .filter(|(p, e)| e.is_some() && ctx.is_connected(PlayerId(*p as u16)))
            .any(|(_, e)| e.is_some_and(|e| self.cars[usize::from(e.0)].finished_at.is_none()));
        if self.finishers > 0 && !racing {
            self.over = true;
            ctx.broadcast_event(RaceEvent::Over);
        }
    }

    fn relevance(
        &mut self,
        viewer: PlayerId,
        world: &ReplicationWorld<Car>,
        relevant: &mut InterestSet,
    ) {
        let Some(me) = self.car_of[usize::from(viewer.0)] else {
            return;
        };
        let [mx, mz] = self.cars[usize::from(me.0)].position;
        let leader = self.leader();
        for e in world.alive().iter() {
            let [x, z] = self.cars[usize::from(e.0)].position;
            if (x - mx).hypot(z - mz) <= VIEW_RADIUS || Some(e) == leader {
                relevant.insert(e);
            }
        }
    }

    fn result(&self) -> Option<Vec<PlayerId>> {
        if !self.over {
            return None;
        }
        let mut order: Vec<(u8, f32, PlayerId)> = self
            .car_of
            .iter()
            .enumerate()
            .filter_map(|(p, e)| {
                let c = &self.cars[usize::from((*e)?.0)];
                Some((
                    c.finished_at.unwrap_or(u8::MAX),
                    -c.travelled,
                    PlayerId(p as u16),
                ))
            })
            .collect();
        order.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        Some(order.into_iter().map(|(_, _, p)| p).collect())
    }
}

impl HostedGame for Race {
    const NAME: &'static str = "racing";
    type Settings = RaceSettings;

    fn short_settings(_mode: &Mode) -> RaceSettings {
        RaceSettings { laps: Some(1) }
    }

    fn modes() -> &'static [Mode] {
        MODES
    }

    fn create(
        mode: &Mode,
        settings: &RaceSettings,
        tick_rate_hz: u32,
        _seed: u64,
    ) -> Result<(MatchConfig, Self), String> {
        let default_laps = if mode.name == "race4" { 3 } else { 10 };
        let laps = settings.laps.unwrap_or(default_laps);
        if !(1..=200).contains(&laps) {
            return Err("laps: must be between 1 and 200".to_owned());
        }
        let players = mode.players;
        let entities = usize::from(players);
        let config = MatchConfig {
            tick_rate_hz,
            max_players: players,
            max_entities: entities as u16,
            ..MatchConfig::default()
        };
        Ok((config, Race::new(usize::from(players), entities, laps)))
    }

    fn status(&self) -> MatchStatus {
        let leader_laps = self
            .leader()
            .map_or(0, |e| self.cars[usize::from(e.0)].laps);
        MatchStatus {
            phase: if self.over { "over" } else { "racing" },
            round: u32::from(leader_laps),
            score: self
                .car_of
                .iter()
                .map(|e| e.map_or(0, |e| i64::from(self.cars[usize::from(e.0)].laps)))
                .collect(),
        }
    }

    fn report(&self, result: Option<&Vec<PlayerId>>, players: &[PlayerId]) -> MatchReport {
        let place = |p: PlayerId| result.and_then(|order| order.iter().position(|&q| q == p));
        MatchReport {
            winner: result
                .and_then(|order| order.first())
                .map(|p| format!("player {}", p.0)),
            summary: vec![("laps", i64::from(self.laps))],
            players: players
                .iter()
                .map(|&p| {
                    let laps = self.car_of[usize::from(p.0)]
                        .map_or(0, |e| i64::from(self.cars[usize::from(e.0)].laps));
                    let place = place(p);
                    PlayerReport {
                        player: p,
                        team: 0,
                        outcome: match place {
                            Some(0) => Outcome::Win,
                            Some(_) => Outcome::Loss,
                            None => Outcome::Draw,
                        },
                        // Points by place: 25 for the winner, 1 less per place.
                        score: place.map_or(0, |i| 25 - i as i64),
                        stats: vec![("laps", laps), ("place", place.map_or(0, |i| i as i64 + 1))],
                    }
                })
                .collect(),
        }
    }
}

/// A driver bot: it aims at a point a little ahead on the ring, at its own
/// line (bots spread across the track by index), full throttle, lifting
/// when the turn is sharp. It checks that no car's laps go backwards.
#[derive(Debug)]
pub struct DriverBot {
    me: Option<EntityId>,
    line: f32,
    over: bool,
    laps_seen: Vec<u8>,
}

impl DriverBot {
    /// The `index`th bot of a fleet, in a world of `entities` slots.
    pub fn new(index: u16, entities: usize) -> Self {
        Self {
            me: None,
            line: MID_RADIUS + (f32::from(index % 5) - 2.0) * 2.5,
            over: false,
            laps_seen: vec![0; entities],
        }
    }
}

impl Bot<Race> for DriverBot {
    fn observe(&mut self, event: &RaceEvent) -> bool {
        match *event {
            RaceEvent::You { car } => self.me = Some(car),
            RaceEvent::Over => self.over = true,
            RaceEvent::Lap { .. } | RaceEvent::Finished { .. } => {}
        }
        true
    }

    fn check_world(&mut self, world: &ClientWorld<CarView>) -> u64 {
        let mut found = 0;
        for car in world.iter() {
            if let Some(seen) = self.laps_seen.get_mut(usize::from(car.entity.0)) {
                found += u64::from(car.state.laps < *seen);
                *seen = car.state.laps;
            }
        }
        found
    }

    fn command(&mut self, world: &ClientWorld<CarView>, tick: Tick) -> InputCommand<Controls> {
        let mut cmd = InputCommand::new(tick, world.server_tick(), Controls::default());
        let Some(me) = self.me.and_then(|e| world.get(e)) else {
            return cmd;
        };
        let [x, z] = me.state.position;
        let ahead = z.atan2(x) + 12.0 / self.line;
        let goal = [self.line * ahead.cos(), self.line * ahead.sin()];
        let want = (goal[1] - z).atan2(goal[0] - x);
        let mut turn = want - me.state.heading;
        while turn > PI {
            turn -= TAU;
        }
        while turn < -PI {
            turn += TAU;
        }
        cmd.payload = Controls {
            throttle: if turn.abs() > 0.5 { 0.3 } else { 1.0 },
            steer: (turn * 2.0).clamp(-1.0, 1.0),
        };
        cmd
    }

    fn match_over(&self) -> bool {
        self.over
    }
}

impl BotGame for Race {
    type Bot = DriverBot;

    fn bot(
        mode: &Mode,
        _settings: &RaceSettings,
        _tick_rate_hz: u32,
        index: u16,
        _seed: u64,
    ) -> Result<DriverBot, String> {
        Ok(DriverBot::new(index, usize::from(mode.players)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_engine::Match;
    use hightick_proto::InputBatch;

    #[test]
    fn held_controls_cost_two_bits_a_redundant_copy() {
        let held = Controls {
            throttle: 1.0,
            steer: -0.25,
        };
        let batch = InputBatch::from_commands(&[
            InputCommand::new(10, 9, held),
            InputCommand::new(9, 8, held),
        ])
        .unwrap();
        let mut buf = [0u8; 32];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w).unwrap();
        // len 2 + tick 32 + aim lag 5 + 16 payload; then 1 + 1 + 2 bits.
        assert_eq!(w.bits_written(), 2 + 32 + 5 + 16 + 4);
        let len = w.finish();
        let back = InputBatch::<Controls>::decode(&mut BitReader::new(&buf[..len])).unwrap();
        assert_eq!(back.as_slice()[1].payload, held.quantized().unwrap());
        let bad = InputCommand::new(
            1,
            1,
            Controls {
                throttle: f32::NAN,
                steer: 0.0,
            },
        );
        let mut w = BitWriter::new(&mut buf);
        assert_eq!(
            InputBatch::from_commands(&[bad]).unwrap().encode(&mut w),
            Err(ProtoError::invalid("throttle"))
        );
    }

    #[test]
    fn bots_finish_a_short_race_in_order() {
        let mode = Race::mode("race4").unwrap();
        let settings = RaceSettings { laps: Some(1) };
        let (config, race) = Race::create(mode, &settings, 60, 1).unwrap();
        let entities = usize::from(config.max_entities);
        let mut m = Match::new(config, race).unwrap();
        let players: Vec<PlayerId> = (0..4).map(|_| m.join().unwrap()).collect();
        let mut bots: Vec<DriverBot> = (0..4).map(|i| DriverBot::new(i, entities)).collect();
        let mut views: Vec<ClientWorld<CarView>> =
            (0..4).map(|_| ClientWorld::new(entities)).collect();
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
                m.packet_sent(p, tick as u16);
                m.on_delivery(
                    p,
                    tick as u16,
                    hightick_engine::replication::PacketFate::Acked,
                );
                while let Some(e) = m.pop_event(p) {
                    assert!(bots[i].observe(&e));
                }
                assert_eq!(bots[i].check_world(&views[i]), 0);
            }
            if m.result().is_some() {
                break;
            }
        }
        let order = m.result().expect("the race ends within two minutes");
        assert_eq!(order.len(), 4);
        assert!(bots.iter().all(|b| b.match_over()));
        let report = m.game().report(Some(&order), &players);
        let winners = report
            .players
            .iter()
            .filter(|p| p.outcome == Outcome::Win)
            .count();
        assert_eq!(winners, 1);
        assert!(report.players.iter().all(|p| p.stats[0] == ("laps", 1)));
    }
}
