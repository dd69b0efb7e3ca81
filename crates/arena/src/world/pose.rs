//! A player's pose: the few numbers that drive the skeleton, recorded for lag
//! compensation and interpolated when a target is rewound.

use std::f32::consts::{PI, TAU};

use glam::Vec3;

use crate::world::movement::{MoveState, MovementParams};

/// Standing or crouching, as seen by the game (a pose blends between them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stance {
    /// Upright.
    #[default]
    Standing,
    /// Crouched.
    Crouching,
}

/// Everything the skeleton needs to place the hitboxes of one player at one
/// tick. Small and `Copy`, so a history ring can store one per player per
/// recorded tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    /// Feet position.
    pub position: Vec3,
    /// View yaw, radians in `[-pi, pi)`; 0 looks along +z, pi/2 along +x.
    pub yaw: f32,
    /// View pitch, radians; positive looks up. Within `+-MAX_PITCH`.
    pub pitch: f32,
    /// Crouch amount: 0 standing, 1 crouched. A blend, so that a stance
    /// change interpolates smoothly; see [`Pose::stance`].
    pub crouch: f32,
    /// Locomotion cycle position in `[0, 1)`.
    pub locomotion_phase: f32,
    /// Ground speed, metres per second (drives the stride amplitude).
    pub speed: f32,
}

impl Pose {
    /// Steepest view pitch, radians (89 degrees).
    pub const MAX_PITCH: f32 = 89.0 * PI / 180.0;

    /// The pose of a moving player looking along `yaw`/`pitch`.
    pub fn from_move_state(state: &MoveState, yaw: f32, pitch: f32) -> Self {
        Self {
            position: state.position,
            yaw: wrap_angle(yaw),
            pitch: clamp_pitch(pitch),
            crouch: state.crouch.clamp(0.0, 1.0),
            locomotion_phase: wrap_phase(state.locomotion_phase),
            speed: state.ground_speed(),
        }
    }

    /// Standing or crouching, whichever the crouch blend is nearer.
    pub fn stance(&self) -> Stance {
        if self.crouch >= 0.5 {
            Stance::Crouching
        } else {
            Stance::Standing
        }
    }

    /// The eye (camera) position for this pose.
    pub fn eye(&self, params: &MovementParams) -> Vec3 {
        self.position + Vec3::Y * params.eye_height(self.crouch)
    }

    /// The unit view direction.
    pub fn view_dir(&self) -> Vec3 {
        view_direction(self.yaw, self.pitch)
    }

    /// The pose a fraction `t` of the way from `self` to `to`: positions,
    /// speed and crouch linearly, yaw the short way round the circle, pitch
    /// along its arc, and the locomotion phase the short way round its cycle.
    /// `t = 0` gives `self` and `t = 1` gives `to`, exactly.
    pub fn lerp(&self, to: &Self, t: f32) -> Self {
        if t.is_nan() || t <= 0.0 {
            return *self;
        }
        if t >= 1.0 {
            return *to;
        }
        Self {
            position: self.position.lerp(to.position, t),
            yaw: wrap_angle(self.yaw + wrap_angle(to.yaw - self.yaw) * t),
            pitch: crate::world::movement::lerp(self.pitch, to.pitch, t),
            crouch: crate::world::movement::lerp(self.crouch, to.crouch, t),
            locomotion_phase: wrap_phase(
                self.locomotion_phase + wrap_half(to.locomotion_phase - self.locomotion_phase) * t,
            ),
            speed: crate::world::movement::lerp(self.speed, to.speed, t),
        }
    }

    /// Whether every field is finite.
    pub fn is_finite(&self) -> bool {
        self.position.is_finite()
            && self.yaw.is_finite()
            && self.pitch.is_finite()
            && self.crouch.is_finite()
            && self.locomotion_phase.is_finite()
            && self.speed.is_finite()
    }
}

/// The unit vector looking along `yaw` and `pitch`.
pub fn view_direction(yaw: f32, pitch: f32) -> Vec3 {
    let (sy, cy) = yaw.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    Vec3::new(sy * cp, sp, cy * cp)
}

/// `angle` wrapped into `[-pi, pi)`; a non-finite angle becomes 0.
pub fn wrap_angle(angle: f32) -> f32 {
    if !angle.is_finite() {
        return 0.0;
    }
    let a = (angle + PI).rem_euclid(TAU) - PI;
    // rem_euclid can round up to exactly TAU.
    if a >= PI { a - TAU } else { a }
}

/// A view pitch made safe: finite and within `+-Pose::MAX_PITCH`.
pub fn clamp_pitch(pitch: f32) -> f32 {
    if pitch.is_finite() {
        pitch.clamp(-Pose::MAX_PITCH, Pose::MAX_PITCH)
    } else {
        0.0
    }
}

fn wrap_phase(phase: f32) -> f32 {
    if !phase.is_finite() {
        return 0.0;
    }
    let p = phase.rem_euclid(1.0);
    if p >= 1.0 { 0.0 } else { p }
}

/// A phase difference wrapped into `[-0.5, 0.5)`.
fn wrap_half(d: f32) -> f32 {
    d - (d + 0.5).floor()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angles_wrap_into_half_open_range() {
        assert_eq!(wrap_angle(PI), -PI);
        assert!((wrap_angle(3.0 * PI + 0.1) - (-PI + 0.1)).abs() < 1e-5);
        assert_eq!(wrap_angle(f32::NAN), 0.0);
        assert_eq!(clamp_pitch(10.0), Pose::MAX_PITCH);
        assert_eq!(wrap_half(0.9), 0.9 - 1.0);
    }

    #[test]
    fn view_direction_follows_the_conventions() {
        assert!((view_direction(0.0, 0.0) - Vec3::Z).length() < 1e-6);
        assert!((view_direction(PI / 2.0, 0.0) - Vec3::X).length() < 1e-6);
        assert!(view_direction(0.0, 0.5).y > 0.0);
    }

    #[test]
    fn phase_interpolates_across_the_wrap() {
        let a = Pose {
            locomotion_phase: 0.9,
            ..Pose::default()
        };
        let b = Pose {
            locomotion_phase: 0.1,
            ..Pose::default()
        };
        let mid = a.lerp(&b, 0.5);
        assert!(
            mid.locomotion_phase < 1e-5 || mid.locomotion_phase > 1.0 - 1e-5,
            "{mid:?}"
        );
        assert!((a.lerp(&b, 0.25).locomotion_phase - 0.95).abs() < 1e-5);
    }
}
