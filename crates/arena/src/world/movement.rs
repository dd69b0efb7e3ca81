//! Player movement: acceleration, friction, gravity, jumping, crouching and
//! walking, with the capsule sliding along whatever it meets.
//!
//! The model is the classic one of competitive shooters (Quake lineage):
//! friction on the ground, acceleration toward a wish direction capped at the
//! stance's speed, a little air control, gravity, and a collide-and-slide
//! loop that removes the part of the motion going into a surface and keeps
//! the part along it.

use glam::{Vec2, Vec3};

use crate::world::aabb::Aabb;
use crate::world::collision::{Capsule, SKIN};
use crate::world::map::Map;
use crate::world::spawn::SpawnPoint;

/// Capsule radius of a player, metres.
pub const PLAYER_RADIUS: f32 = 0.4;
/// Capsule height of a standing player, metres.
pub const STAND_HEIGHT: f32 = 1.8;
/// Capsule height of a crouching player, metres.
pub const CROUCH_HEIGHT: f32 = 1.35;
/// The capsule of a standing player.
pub const STANDING_CAPSULE: Capsule = Capsule {
    radius: PLAYER_RADIUS,
    height: STAND_HEIGHT,
};

/// Most slide iterations per move: enough for a corner between two walls and the floor.
const MAX_SLIDES: usize = 4;
/// How far a tick's worth of movement may lift a capsule out of a box it ended in.
const MAX_PUSH_LIFT: f32 = 0.25;
/// Longest time step a single move integrates, seconds.
pub const MAX_STEP: f32 = 0.1;

/// Tuning of player movement. Units: metres, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MovementParams {
    /// Capsule radius.
    pub radius: f32,
    /// Capsule height standing.
    pub stand_height: f32,
    /// Capsule height fully crouched.
    pub crouch_height: f32,
    /// Eye height above the feet, standing.
    pub stand_eye_height: f32,
    /// Eye height above the feet, crouched.
    pub crouch_eye_height: f32,
    /// Top speed running.
    pub run_speed: f32,
    /// Top speed walking (the quiet walk key).
    pub walk_speed: f32,
    /// Top speed fully crouched.
    pub crouch_speed: f32,
    /// Ground acceleration, in multiples of the target speed per second.
    pub ground_accel: f32,
    /// Air acceleration, in multiples of the target speed per second.
    pub air_accel: f32,
    /// Ground friction, per second.
    pub friction: f32,
    /// Below this speed friction acts as if moving at it (quick stops).
    pub stop_speed: f32,
    /// Downward acceleration.
    pub gravity: f32,
    /// Upward speed given by a jump.
    pub jump_speed: f32,
    /// Fastest fall.
    pub max_fall_speed: f32,
    /// Crouch amount change per second (1 / time to crouch fully).
    pub crouch_rate: f32,
    /// Distance covered by one full locomotion cycle (two steps).
    pub stride_length: f32,
}

impl Default for MovementParams {
    fn default() -> Self {
        Self {
            radius: PLAYER_RADIUS,
            stand_height: STAND_HEIGHT,
            crouch_height: CROUCH_HEIGHT,
            stand_eye_height: 1.64,
            crouch_eye_height: 1.18,
            run_speed: 6.0,
            walk_speed: 3.2,
            crouch_speed: 2.2,
            ground_accel: 10.0,
            air_accel: 1.5,
            friction: 5.2,
            stop_speed: 2.0,
            gravity: 20.0,
            jump_speed: 6.0,
            max_fall_speed: 40.0,
            crouch_rate: 8.0,
            stride_length: 1.6,
        }
    }
}

impl MovementParams {
    /// The collision capsule at crouch amount `crouch` (0 standing, 1 crouched).
    pub fn capsule(&self, crouch: f32) -> Capsule {
        Capsule {
            radius: self.radius,
            height: lerp(
                self.stand_height,
                self.crouch_height,
                crouch.clamp(0.0, 1.0),
            ),
        }
    }

    /// Eye height above the feet at crouch amount `crouch`.
    pub fn eye_height(&self, crouch: f32) -> f32 {
        lerp(
            self.stand_eye_height,
            self.crouch_eye_height,
            crouch.clamp(0.0, 1.0),
        )
    }

    /// The speed the player accelerates toward with a full wish direction.
    pub fn target_speed(&self, crouch: f32, walk: bool) -> f32 {
        let upright = if walk {
            self.walk_speed
        } else {
            self.run_speed
        };
        lerp(
            upright,
            self.crouch_speed.min(upright),
            crouch.clamp(0.0, 1.0),
        )
    }
}

pub(crate) fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a * (1.0 - t) + b * t
}

/// What a player asks for in one tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MoveInput {
    /// Desired direction on the ground plane as world (x, z), length <= 1
    /// (shorter means slower, as with an analogue stick).
    pub wish_dir: Vec2,
    /// Jump (takes effect when on the ground).
    pub jump: bool,
    /// Crouch while held.
    pub crouch: bool,
    /// Walk quietly while held.
    pub walk: bool,
}

impl MoveInput {
    /// An input from view yaw and stick axes: `forward` and `right` in `[-1, 1]`.
    pub fn from_axes(yaw: f32, forward: f32, right: f32) -> Self {
        // libm, not the platform's sin/cos: the same bits on every machine,
        // so a client predicting this move on ARM agrees with an x86 server.
        let (s, c) = libm::sincosf(yaw);
        let fwd = Vec2::new(s, c);
        let rgt = Vec2::new(-c, s);
        Self {
            wish_dir: fwd * forward + rgt * right,
            ..Self::default()
        }
        .sanitized()
    }

    /// The input with a finite wish direction of length at most 1; a
    /// malformed direction becomes "no movement".
    pub fn sanitized(&self) -> Self {
        let wish_dir = if self.wish_dir.is_finite() {
            self.wish_dir.clamp_length_max(1.0)
        } else {
            Vec2::ZERO
        };
        Self { wish_dir, ..*self }
    }
}

/// A player's movement state, advanced by [`move_and_slide`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoveState {
    /// Feet position (the bottom of the capsule).
    pub position: Vec3,
    /// Velocity, metres per second.
    pub velocity: Vec3,
    /// Crouch amount: 0 standing, 1 fully crouched, eased in between.
    pub crouch: f32,
    /// Standing on the floor or a box.
    pub on_ground: bool,
    /// Locomotion cycle position in `[0, 1)`, advanced by distance walked.
    pub locomotion_phase: f32,
}

impl MoveState {
    /// A player standing still at `position`.
    pub fn at(position: Vec3) -> Self {
        Self {
            position,
            velocity: Vec3::ZERO,
            crouch: 0.0,
            on_ground: true,
            locomotion_phase: 0.0,
        }
    }

    /// A player standing still at a spawn point.
    pub fn spawned(point: &SpawnPoint) -> Self {
        Self::at(point.position)
    }

    /// Speed on the ground plane.
    pub fn ground_speed(&self) -> f32 {
        Vec2::new(self.velocity.x, self.velocity.z).length()
    }
}

/// What happened during one move, for footsteps, sounds and statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MoveOutcome {
    /// The capsule met a wall (or a fence) and slid.
    pub blocked: bool,
    /// The player jumped this tick.
    pub jumped: bool,
    /// The player touched the ground after being in the air.
    pub landed: bool,
    /// The move ended overlapping geometry and was undone.
    pub reverted: bool,
}

/// Advances `state` by `dt` seconds of `input` on `map`. Deterministic and
/// allocation-free; a capsule that starts clear of the map ends clear of it.
pub fn move_and_slide(
    map: &Map,
    params: &MovementParams,
    state: &mut MoveState,
    input: &MoveInput,
    dt: f32,
) -> MoveOutcome {
    advance(map, params, state, input, dt, None)
}

/// [`move_and_slide`] inside a fence: the sides of `fence` (on the ground
/// plane) act as walls, as a buy zone does during the buy phase. A player
/// outside the fence may move toward it but not further away.
pub fn move_and_slide_within(
    map: &Map,
    params: &MovementParams,
    state: &mut MoveState,
    input: &MoveInput,
    dt: f32,
    fence: &Aabb,
) -> MoveOutcome {
    advance(map, params, state, input, dt, Some(fence))
}

fn advance(
    map: &Map,
    params: &MovementParams,
    state: &mut MoveState,
    input: &MoveInput,
    dt: f32,
    fence: Option<&Aabb>,
) -> MoveOutcome {
    let input = input.sanitized();
    let dt = if dt.is_finite() {
        dt.clamp(0.0, MAX_STEP)
    } else {
        0.0
    };
    let start = *state;
    let mut outcome = MoveOutcome::default();

    update_crouch(map, params, state, input.crouch, dt);
    let capsule = params.capsule(state.crouch);
    let mut v = next_velocity(params, state, &input, dt, &mut outcome);
    let mut pos = state.position;
    slide_horizontally(map, capsule, fence, dt, &mut pos, &mut v, &mut outcome);
    let on_ground = move_vertically(map, capsule, dt, &mut pos, &mut v);

    // Safety net: never end inside a box.
    if !map.capsule_fits(pos, capsule) && !map.push_out(&mut pos, capsule, MAX_PUSH_LIFT) {
        let start_capsule = params.capsule(start.crouch);
        if map.capsule_fits(start.position, start_capsule) {
            pos = start.position;
            v = Vec3::new(0.0, v.y.min(0.0), 0.0);
            state.crouch = start.crouch;
            outcome.reverted = true;
        }
    }

    let moved = Vec2::new(pos.x - start.position.x, pos.z - start.position.z).length();
    if params.stride_length > 0.0 {
        state.locomotion_phase = (state.locomotion_phase + moved / params.stride_length).fract();
    }
    outcome.landed = on_ground && !start.on_ground;
    state.position = pos;
    state.velocity = v;
    state.on_ground = on_ground;
    outcome
}

/// The velocity after this step's friction, jump, acceleration and gravity.
fn next_velocity(
    params: &MovementParams,
    state: &MoveState,
    input: &MoveInput,
    dt: f32,
    outcome: &mut MoveOutcome,
) -> Vec3 {
    let mut v = state.velocity;
    let mut ground_accel = state.on_ground;
    if state.on_ground {
        apply_friction(&mut v, params, dt);
        if input.jump {
            v.y = params.jump_speed;
            outcome.jumped = true;
            ground_accel = false;
        }
    }
    let wish_len = input.wish_dir.length();
    if wish_len > 0.0 {
        let wish_dir = input.wish_dir / wish_len;
        let wish_speed = params.target_speed(state.crouch, input.walk) * wish_len;
        let accel = if ground_accel {
            params.ground_accel
        } else {
            params.air_accel
        };
        // Acceleration never takes the ground-plane speed past the stance's
        // top speed (or the speed already had): no boost from wall sliding
        // or strafing.
        let cap = params
            .target_speed(state.crouch, input.walk)
            .max(horizontal_speed(v));
        accelerate(&mut v, wish_dir, wish_speed, accel, dt);
        let speed = horizontal_speed(v);
        if speed > cap {
            v.x *= cap / speed;
            v.z *= cap / speed;
        }
    }
    v.y = (v.y - params.gravity * dt).max(-params.max_fall_speed);
    v
}

/// Moves `pos` on the ground plane by `v` for `dt`, colliding with the
/// map's walls (and `fence`'s sides) and sliding along them; the velocity
/// loses what pushed into a wall.
fn slide_horizontally(
    map: &Map,
    capsule: Capsule,
    fence: Option<&Aabb>,
    dt: f32,
    pos: &mut Vec3,
    v: &mut Vec3,
    outcome: &mut MoveOutcome,
) {
    let mut ground_v = Vec2::new(v.x, v.z);
    let mut rest = ground_v * dt;
    for _ in 0..MAX_SLIDES {
        if rest.length_squared() < 1e-12 {
            break;
        }
        let hit = {
            let wall = map.sweep_horizontal(*pos, capsule, rest);
            let fenced = fence
                .and_then(|f| crate::world::collision::fence_sweep(f, *pos, capsule.radius, rest));
            match (wall, fenced) {
                (Some(a), Some(b)) => Some(if b.t < a.t { b } else { a }),
                (a, b) => a.or(b),
            }
        };
        let Some(hit) = hit else {
            pos.x += rest.x;
            pos.z += rest.y;
            break;
        };
        outcome.blocked = true;
        let into = -rest.dot(hit.normal);
        let t = if into > 0.0 {
            (hit.t - SKIN / into).max(0.0)
        } else {
            hit.t
        };
        pos.x += rest.x * t;
        pos.z += rest.y * t;
        rest *= 1.0 - t;
        let rn = rest.dot(hit.normal);
        if rn < 0.0 {
            rest -= hit.normal * rn;
        }
        let vn = ground_v.dot(hit.normal);
        if vn < 0.0 {
            ground_v -= hit.normal * vn;
        }
    }
    v.x = ground_v.x;
    v.z = ground_v.y;
}

/// Moves `pos` up or down by `v.y` for `dt`: lands on a support or bumps a
/// ceiling (stopping the vertical speed). Whether it stands on ground.
fn move_vertically(map: &Map, capsule: Capsule, dt: f32, pos: &mut Vec3, v: &mut Vec3) -> bool {
    let dy = v.y * dt;
    if dy <= 0.0 {
        match map.support_height(*pos, capsule.radius, -dy, 0.01) {
            Some(top) => {
                pos.y = top;
                v.y = 0.0;
                return true;
            }
            None => pos.y += dy,
        }
    } else {
        match map.ceiling_height(*pos, capsule, dy, 0.01) {
            Some(ceiling) => {
                pos.y = pos.y.max(ceiling - capsule.height - SKIN);
                v.y = 0.0;
            }
            None => pos.y += dy,
        }
    }
    false
}

/// Eases the crouch amount toward the input; standing up needs headroom.
fn update_crouch(map: &Map, params: &MovementParams, state: &mut MoveState, crouch: bool, dt: f32) {
    let target = if crouch { 1.0 } else { 0.0 };
    let step = params.crouch_rate * dt;
    let next = if state.crouch < target {
        (state.crouch + step).min(target)
    } else {
        (state.crouch - step).max(target)
    };
    if next >= state.crouch || map.capsule_fits(state.position, params.capsule(next)) {
        state.crouch = next;
    }
}

fn horizontal_speed(v: Vec3) -> f32 {
    Vec2::new(v.x, v.z).length()
}

fn apply_friction(v: &mut Vec3, params: &MovementParams, dt: f32) {
    let speed = Vec2::new(v.x, v.z).length();
    if speed <= 0.0 {
        return;
    }
    let drop = speed.max(params.stop_speed) * params.friction * dt;
    let scale = (speed - drop).max(0.0) / speed;
    v.x *= scale;
    v.z *= scale;
}

fn accelerate(v: &mut Vec3, wish_dir: Vec2, wish_speed: f32, accel: f32, dt: f32) {
    let current = v.x * wish_dir.x + v.z * wish_dir.y;
    let add = wish_speed - current;
    if add <= 0.0 {
        return;
    }
    let gain = (accel * wish_speed * dt).min(add);
    v.x += gain * wish_dir.x;
    v.z += gain * wish_dir.y;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_follow_stance_and_walk() {
        let p = MovementParams::default();
        assert_eq!(p.target_speed(0.0, false), p.run_speed);
        assert_eq!(p.target_speed(0.0, true), p.walk_speed);
        assert_eq!(p.target_speed(1.0, false), p.crouch_speed);
        assert_eq!(p.capsule(1.0).height, p.crouch_height);
    }

    #[test]
    fn axes_turn_with_yaw_and_never_exceed_one() {
        let f = MoveInput::from_axes(0.0, 1.0, 0.0);
        assert!((f.wish_dir - Vec2::new(0.0, 1.0)).length() < 1e-6);
        let r = MoveInput::from_axes(std::f32::consts::FRAC_PI_2, 1.0, 1.0);
        assert!((r.wish_dir.length() - 1.0).abs() < 1e-6);
        let bad = MoveInput {
            wish_dir: Vec2::new(f32::NAN, 1.0),
            ..MoveInput::default()
        };
        assert_eq!(bad.sanitized().wish_dir, Vec2::ZERO);
    }

    #[test]
    fn friction_stops_and_acceleration_caps_at_target_speed() {
        let p = MovementParams::default();
        let mut v = Vec3::new(0.1, 0.0, 0.0);
        apply_friction(&mut v, &p, 0.1);
        assert_eq!(v.x, 0.0);
        let mut v = Vec3::ZERO;
        for _ in 0..200 {
            accelerate(&mut v, Vec2::X, 6.0, 10.0, 1.0 / 128.0);
        }
        assert!((v.x - 6.0).abs() < 1e-4);
    }
}
