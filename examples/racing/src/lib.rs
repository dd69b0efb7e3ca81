//! Racing, a second game on hightick of another shape than tag: 12 cars at
//! 120 Hz on a ring track, analog input (throttle and steering), continuous
//! physics, laps, a finishing order as the result.
//!
//! How it differs from tag, and why it matters: its input is two analog
//! axes delta-coded field by field (`#[input(delta = fields)]`); every car
//! is relevant to every driver within 120 m plus the race leader
//! (relevance by distance and by rank); its replicated state is quantized
//! floats (position to the centimetre, heading in 16 bits), declared once
//! with the derives like tag's; a match ends when the first car has done
//! its laps and the others finish theirs, and the result hook turns the
//! finishing order into a win for the first and points for everyone.
//!
//! Run with: `cargo run --release -p hightick-example-racing -- demo`.

use std::f32::consts::{PI, TAU};

use hightick_engine::prelude::*;
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
// `CarView`'s float ranges are literals: they must hold the track and
// the top speed.
const _: () = assert!(OUTER_RADIUS <= 90.0 && TOP_SPEED <= 45.0);
/// Radians per second at full lock (less at speed).
const TURN_RATE: f32 = 1.6;
const VIEW_RADIUS: f32 = 120.0;

/// The only archetype: a car, carrying a [`CarView`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Archetype)]
#[archetype(groups = CarView)]
pub struct Car;

/// A driver's controls for one tick, each `-127..=127` (a byte on the
/// wire). A redundant copy in an input batch costs a bit per control that
/// did not change: a driver holds the throttle far longer than it moves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, InputPayload)]
#[input(delta = fields)]
pub struct Controls {
    /// Full brake (-127) to full throttle (127).
    pub throttle: i8,
    /// Full left (-127) to full right (127).
    pub steer: i8,
}

/// What the race tells its drivers reliably. (Which car is a driver's
/// own, the engine tells it: [`ReplicationWorld::spawn_avatar`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, ReliableEvent)]
pub enum RaceEvent {
    /// To everyone: `car` completed a lap, `laps` in all.
    Lap { car: EntityId, laps: u8 },
    /// To everyone: `car` finished, in `place` (1 = won).
    Finished { car: EntityId, place: u8 },
    /// To everyone: the race is over.
    #[event(ends_match)]
    Over,
}

/// A car as every driver sees it, the server's replicated copy and the
/// client's alike. Group 0 is its motion, changed every tick it moves;
/// group 1 its race, changed once a lap.
#[derive(Debug, Default, Clone, Copy, PartialEq, Replicated)]
#[replicated(archetype = Car)]
pub struct CarView {
    /// Metres, x and z, to the centimetre.
    #[group(0)]
    #[wire(float(range = -90.0..=90.0, step = 0.01))]
    pub position: [f32; 2],
    /// Radians.
    #[group(0)]
    #[wire(angle)]
    pub heading: f32,
    /// Metres per second.
    #[group(0)]
    #[wire(float(range = 0.0..=45.0, step = 0.25))]
    pub speed: f32,
    /// Laps done.
    #[group(1)]
    pub laps: u8,
    /// Whether it finished.
    #[group(1)]
    pub finished: bool,
}

/// One driver's car physics on the server, beside what it replicates.
#[derive(Debug, Clone, Copy, Default)]
struct CarState {
    /// Whether a driver took this slot (its standing counts).
    driving: bool,
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

/// The race, server side: each driver's car physics by player slot and,
/// by entity slot, what the writer replicates of it. A driver's car is its
/// avatar ([`ReplicationWorld::avatar`]).
#[derive(Debug, ReplicationSource)]
pub struct Race {
    cars: Vec<CarState>,
    #[replicas]
    views: Vec<CarView>,
    laps: u8,
    finishers: u8,
    over: bool,
}

impl Race {
    /// A race of `laps` laps for `players` cars in `entities` slots.
    pub fn new(players: usize, entities: usize, laps: u8) -> Self {
        Self {
            cars: vec![CarState::default(); players],
            views: vec![CarView::default(); entities],
            laps,
            finishers: 0,
            over: false,
        }
    }

    /// The slots a driver took, with their cars.
    fn drivers(&self) -> impl Iterator<Item = (PlayerId, &CarState)> + '_ {
        let cars = self.cars.iter().enumerate();
        cars.filter(|(_, c)| c.driving)
            .map(|(p, c)| (PlayerId(p as u16), c))
    }

    /// The driver farthest round.
    fn leader(&self) -> Option<PlayerId> {
        let leader = self
            .drivers()
            .max_by(|(_, a), (_, b)| a.travelled.total_cmp(&b.travelled));
        leader.map(|(p, _)| p)
    }

    /// Copies player `p`'s car into what its avatar replicates.
    fn publish(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) {
        let Some(e) = ctx.world.avatar(p) else { return };
        let c = self.cars[usize::from(p.0)];
        let view = &mut self.views[usize::from(e.0)];
        view.set_position(ctx.world, e, c.position);
        view.set_heading(ctx.world, e, c.heading);
        view.set_speed(ctx.world, e, c.speed);
        view.set_laps(ctx.world, e, c.laps);
        view.set_finished(ctx.world, e, c.finished_at.is_some());
    }
}

impl Game for Race {
    type Input = Controls;
    type Event = RaceEvent;
    type Replica = CarView;
    /// Cars' slots in finishing order.
    type MatchResult = Vec<PlayerId>;

    fn join(&mut self, ctx: &mut TickContext<'_, Self>, p: PlayerId) -> Result<(), JoinRefused> {
        ctx.world
            .spawn_avatar(p, Car)
            .map_err(|_| JoinRefused("the grid is full"))?;
        // A staggered grid behind the line at angle 0, facing along the ring.
        let row = f32::from(p.0 / 2);
        let lane = if p.0.is_multiple_of(2) { -4.0 } else { 4.0 };
        let angle = -(row * 8.0 + 4.0) / MID_RADIUS;
        let radius = MID_RADIUS + lane;
        self.cars[usize::from(p.0)] = CarState {
            driving: true,
            position: [radius * angle.cos(), radius * angle.sin()],
            heading: angle + PI / 2.0,
            angle,
            ..CarState::default()
        };
        self.publish(ctx, p);
        Ok(())
    }

    fn input(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        p: PlayerId,
        cmd: &InputCommand<Controls>,
        _: InputSource,
    ) {
        let dt = ctx.dt();
        let c = &mut self.cars[usize::from(p.0)];
        if c.finished_at.is_some() || self.over {
            c.speed = (c.speed - BRAKING * dt).max(0.0);
        } else {
            let [throttle, steer] =
                [cmd.payload.throttle, cmd.payload.steer].map(|v| f32::from(v) / 127.0);
            let push = throttle.max(0.0) * ACCELERATION + throttle.min(0.0) * BRAKING;
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
        c.travelled += wrapped(angle - c.angle);
        c.angle = angle;
        self.publish(ctx, p);
    }

    fn tick(&mut self, ctx: &mut TickContext<'_, Self>) {
        if self.over {
            return;
        }
        for p in (0..self.cars.len()).map(|p| PlayerId(p as u16)) {
            let Some(e) = ctx.world.avatar(p) else {
                continue;
            };
            let c = &mut self.cars[usize::from(p.0)];
            let done = (c.travelled / TAU).max(0.0) as u8;
            if done > c.laps && c.finished_at.is_none() {
                c.laps = done;
                ctx.broadcast_event(RaceEvent::Lap { car: e, laps: done });
                if done >= self.laps {
                    self.finishers += 1;
                    let place = self.finishers;
                    c.finished_at = Some(place);
                    ctx.broadcast_event(RaceEvent::Finished { car: e, place });
                }
                self.publish(ctx, p);
            }
        }
        let racing = ctx
            .players()
            .any(|p| self.cars[usize::from(p.0)].finished_at.is_none());
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
        let [mx, mz] = self.cars[usize::from(viewer.0)].position;
        let leader = self.leader().and_then(|p| world.avatar(p));
        for e in world.alive().iter() {
            let [x, z] = self.views[usize::from(e.0)].position;
            if (x - mx).hypot(z - mz) <= VIEW_RADIUS || Some(e) == leader {
                relevant.insert(e);
            }
        }
    }

    fn result(&self) -> Option<Vec<PlayerId>> {
        if !self.over {
            return None;
        }
        // Finishers by place, then the rest by how far round they got.
        let mut order: Vec<_> = self.drivers().collect();
        order.sort_by(|(_, a), (_, b)| {
            let place = |c: &CarState| c.finished_at.unwrap_or(u8::MAX);
            place(a)
                .cmp(&place(b))
                .then(b.travelled.total_cmp(&a.travelled))
        });
        Some(order.into_iter().map(|(p, _)| p).collect())
    }
}

impl HostedGame for Race {
    const NAME: &'static str = "racing";
    const MODES: &'static [Mode] = &[
        Mode::new("race12", 12, 120, "12 cars, ring track, 10 laps"),
        Mode::new("race4", 4, 60, "4 cars at 60 Hz, 3 laps"),
    ];
    type Settings = RaceSettings;

    fn short_settings(_mode: &Mode) -> RaceSettings {
        RaceSettings { laps: Some(1) }
    }

    fn create(
        mode: &Mode,
        s: &RaceSettings,
        hz: u32,
        _: u64,
    ) -> Result<(MatchConfig, Self), String> {
        let laps = s.laps.unwrap_or(if mode.name == "race4" { 3 } else { 10 });
        if !(1..=200).contains(&laps) {
            return Err("laps: must be between 1 and 200".to_owned());
        }
        let config = MatchConfig::sized(hz, mode.players, mode.players);
        let players = usize::from(mode.players);
        Ok((config, Race::new(players, players, laps)))
    }

    fn status(&self) -> MatchStatus {
        let laps: Vec<u8> = self.cars.iter().map(|c| c.laps).collect();
        MatchStatus {
            round: u32::from(self.leader().map_or(0, |p| laps[usize::from(p.0)])),
            ..MatchStatus::scored(if self.over { "over" } else { "racing" }, &laps)
        }
    }

    /// The finishing order: a win for the first, points by place (25 for
    /// the winner, 1 less per place), and each driver's laps.
    fn report(&self, result: Option<&Vec<PlayerId>>, players: &[PlayerId]) -> MatchReport {
        let mut report = MatchReport::by_place(result.map(Vec::as_slice), players, 25);
        report.summary.push(("laps", i64::from(self.laps)));
        for line in &mut report.players {
            let laps = self.cars[usize::from(line.player.0)].laps;
            line.stats.insert(0, ("laps", i64::from(laps)));
        }
        report
    }
}

/// `angle` as the same turn within `-PI..PI`.
fn wrapped(angle: f32) -> f32 {
    (angle + PI).rem_euclid(TAU) - PI
}

/// A driver bot: it aims at a point a little ahead on the ring, at its own
/// line (cars spread across the track by entity id), full throttle, lifting
/// when the turn is sharp. It checks that no car's laps go backwards.
#[derive(Debug, Default)]
pub struct DriverBot {
    /// The most laps seen of each car, by entity id.
    laps_seen: Vec<u8>,
}

impl Bot<Race> for DriverBot {
    fn check_world(&mut self, world: &ClientWorld<CarView>) -> u64 {
        let mut found = 0;
        for car in world.iter() {
            let i = usize::from(car.entity.0);
            if i >= self.laps_seen.len() {
                self.laps_seen.resize(i + 1, 0);
            }
            found += u64::from(car.state.laps < self.laps_seen[i]);
            self.laps_seen[i] = car.state.laps;
        }
        found
    }

    fn command(&mut self, world: &ClientWorld<CarView>, tick: Tick) -> InputCommand<Controls> {
        let mut cmd = InputCommand::new(tick, world.server_tick(), Controls::default());
        let Some(me) = world.mine() else {
            return cmd;
        };
        let line = MID_RADIUS + (f32::from(me.entity.0 % 5) - 2.0) * 2.5;
        let [x, z] = me.state.position;
        let ahead = z.atan2(x) + 12.0 / line;
        let goal = [line * ahead.cos(), line * ahead.sin()];
        let want = (goal[1] - z).atan2(goal[0] - x);
        let turn = wrapped(want - me.state.heading);
        cmd.payload = Controls {
            throttle: if turn.abs() > 0.5 { 38 } else { 127 },
            steer: ((turn * 2.0).clamp(-1.0, 1.0) * 127.0).round() as i8,
        };
        cmd
    }
}

impl BotGame for Race {
    type Bot = DriverBot;
}
