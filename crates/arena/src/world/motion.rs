//! One player's step of movement from one input: the function the server
//! runs for every player every tick, and the one a client runs to predict
//! its own player ([`hightick_engine::prediction::Predict`]). One definition,
//! so that prediction and authority agree bit for bit.
//!
//! - [`Stage`]: what a step reads besides the player (the map, movement
//!   tuning, the server's movement limits).
//! - [`MoveRule`]: what the round allows (stand still, move, move inside the
//!   team's buy zone).
//! - [`ArenaMotion`]: everything a step reads and writes of one player; the
//!   server replicates it to the player's own client only.
//! - [`stride`]: the step.

use std::sync::Arc;

use glam::Vec3;

use crate::error::MapError;
use crate::input::{ArenaInput, Buttons};
use crate::team::Team;
use crate::world::map::Map;
use crate::world::movement::{MoveInput, MoveOutcome, MoveState, MovementParams};
use crate::world::validation::{MovementLimits, check_displacement};

/// What a movement step reads besides the player: the map, the tuning and
/// the limits the server holds every move to.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The map moved on.
    pub map: Arc<Map>,
    /// Movement tuning.
    pub params: MovementParams,
    /// The fastest a move may legitimately go.
    pub limits: MovementLimits,
}

impl Stage {
    /// The stage of built-in map `map` with the default tuning: what an
    /// arena match of that map moves on (`ArenaConfig::map`).
    pub fn builtin(map: &str) -> Result<Self, MapError> {
        let params = MovementParams::default();
        Ok(Self {
            map: Map::builtin_shared(map)?,
            limits: MovementLimits::from_params(&params),
            params,
        })
    }
}

/// What the round lets a player do with its movement input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MoveRule {
    /// Nothing moves (dead, waiting for players, match over).
    #[default]
    Still,
    /// Free movement.
    Free,
    /// Movement fenced inside the team's buy zone (the buy phase).
    Fenced(Team),
}

/// Everything a movement step reads and writes of one player. The server
/// replicates it exactly (no quantization) to the player's own client, the
/// state a client predicts from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArenaMotion {
    /// Position, velocity, crouch, ground contact.
    pub state: MoveState,
    /// View yaw, radians: the direction the input's stick axes are taken in.
    pub yaw: f32,
    /// What the round allows on the next step.
    pub rule: MoveRule,
    /// Counts the player's spawns (wrapping): a new life is a teleport, not
    /// a move.
    pub life: u8,
}

impl Default for ArenaMotion {
    fn default() -> Self {
        Self {
            state: MoveState::at(Vec3::ZERO),
            yaw: 0.0,
            rule: MoveRule::Still,
            life: 0,
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stride {
    /// What the movement met (walls, jumps, landings).
    pub outcome: MoveOutcome,
    /// The move broke the server's limits and was undone.
    pub refused: bool,
}

/// Stick axis code to `[-1, 1]`.
fn axis(v: i8) -> f32 {
    f32::from(v.max(-127)) / 127.0
}

/// Advances `state` (and `yaw`) by one tick of `dt` seconds of `input`
/// under `rule`: view yaw from the input, stick axes relative to it,
/// jump/crouch/walk buttons, the buy-zone fence, then the server's own
/// displacement check (a move the limits call impossible is undone and
/// stops the player). `None` when the rule keeps the player still.
pub fn stride(
    stage: &Stage,
    rule: MoveRule,
    state: &mut MoveState,
    yaw: &mut f32,
    input: &ArenaInput,
    dt: f32,
) -> Option<Stride> {
    if rule == MoveRule::Still {
        return None;
    }
    // View angles: any finite value wraps; anything else keeps the old view.
    if input.yaw.is_finite() && input.pitch.is_finite() {
        *yaw = crate::wrap_angle(input.yaw);
    }
    let mut wish = MoveInput::from_axes(*yaw, axis(input.move_y), axis(input.move_x));
    wish.jump = input.buttons.contains(Buttons::JUMP);
    wish.crouch = input.buttons.contains(Buttons::CROUCH);
    wish.walk = input.buttons.contains(Buttons::WALK);
    let before = *state;
    let (map, params) = (&*stage.map, &stage.params);
    let fence = match rule {
        MoveRule::Fenced(team) => map.buy_zone(team),
        _ => None,
    };
    let outcome = match fence {
        Some(zone) => crate::move_and_slide_within(map, params, state, &wish, dt, zone),
        None => crate::move_and_slide(map, params, state, &wish, dt),
    };
    let capsule = params.capsule(state.crouch);
    let refused = match check_displacement(
        map,
        &stage.limits,
        capsule,
        before.position,
        state.position,
        dt,
    ) {
        Ok(verdict) => {
            state.position = verdict.position();
            false
        }
        Err(_) => {
            *state = before;
            state.velocity = Vec3::ZERO;
            true
        }
    };
    Some(Stride { outcome, refused })
}

/// A scripted input for tests and benches: at tick `t` the stick and the
/// view sweep round (the view by `yaw_rate` radians a tick), with jumps,
/// crouches and walks on rhythms of their own, so that a player runs into
/// walls and boxes at many angles.
pub fn wander_input(t: u32, yaw_rate: f32) -> ArenaInput {
    let mut buttons = Buttons::default();
    if t % 97 < 3 {
        buttons |= Buttons::JUMP;
    }
    if t % 331 > 250 {
        buttons |= Buttons::CROUCH;
    }
    if t % 503 > 440 {
        buttons |= Buttons::WALK;
    }
    ArenaInput {
        move_x: [-127, 0, 127][((t / 64) % 3) as usize],
        move_y: if t % 700 < 600 { 127 } else { -127 },
        yaw: t as f32 * yaw_rate,
        pitch: 0.0,
        buttons,
        weapon_slot: 0,
    }
}

impl ArenaMotion {
    /// The motion's numbers in a fixed order: position, velocity, crouch,
    /// yaw (what the wire carries exactly, and what a golden test hashes).
    pub fn floats(&self) -> [f32; 8] {
        let s = &self.state;
        [
            s.position.x,
            s.position.y,
            s.position.z,
            s.velocity.x,
            s.velocity.y,
            s.velocity.z,
            s.crouch,
            self.yaw,
        ]
    }

    /// One step of `input`: [`stride`] on this motion. The locomotion
    /// cycle stays 0: it is for drawing, no step reads it, and the server
    /// does not send it.
    pub fn step(&mut self, stage: &Stage, input: &ArenaInput, dt: f32) -> Option<Stride> {
        let stride = stride(stage, self.rule, &mut self.state, &mut self.yaw, input, dt);
        self.state.locomotion_phase = 0.0;
        stride
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_still_player_does_not_turn_or_move() {
        let stage = Stage::builtin("dust_corners").unwrap();
        let mut m = ArenaMotion {
            state: MoveState::at(Vec3::new(10.0, 0.0, 10.0)),
            yaw: 0.5,
            rule: MoveRule::Still,
            life: 0,
        };
        let before = m;
        let run = ArenaInput {
            move_y: 127,
            yaw: 2.0,
            ..ArenaInput::default()
        };
        assert_eq!(m.step(&stage, &run, 1.0 / 128.0), None);
        assert_eq!(m, before);
        m.rule = MoveRule::Free;
        assert!(m.step(&stage, &run, 1.0 / 128.0).is_some());
        assert_eq!(m.yaw, crate::wrap_angle(2.0));
        assert_ne!(m.state.position, before.state.position);
    }
}
