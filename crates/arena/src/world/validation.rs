//! Checking movement a client claims against what movement allows.
//!
//! The server simulates movement itself from inputs ([`crate::MoveInput`] is
//! sanitised there); this check is for positions a client reports, e.g. with
//! client-side prediction or a reconciliation step: a claimed displacement
//! that is a little too long is clamped, one that is impossible (through a
//! wall, into a box, out of the world, a teleport) is rejected with the
//! reason.

use glam::{Vec2, Vec3};

use crate::world::collision::Capsule;
use crate::world::map::Map;
use crate::world::movement::MovementParams;

/// The fastest a player may legitimately move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MovementLimits {
    /// Fastest ground-plane speed, m/s.
    pub max_horizontal_speed: f32,
    /// Fastest rise, m/s (a jump's take-off speed).
    pub max_rise_speed: f32,
    /// Fastest fall, m/s.
    pub max_fall_speed: f32,
    /// Slack allowed per check for rounding and timing jitter, metres.
    pub tolerance: f32,
    /// A displacement over this many times the allowed one is a teleport
    /// (rejected); between 1 and this it is clamped.
    pub teleport_factor: f32,
}

impl MovementLimits {
    /// Limits matching `params`, with 10 % headroom on speeds.
    pub fn from_params(params: &MovementParams) -> Self {
        Self {
            max_horizontal_speed: params.run_speed * 1.1,
            max_rise_speed: params.jump_speed * 1.1,
            max_fall_speed: params.max_fall_speed,
            tolerance: 0.05,
            teleport_factor: 3.0,
        }
    }
}

impl Default for MovementLimits {
    fn default() -> Self {
        Self::from_params(&MovementParams::default())
    }
}

/// Why a claimed move is not allowed as it is.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum MoveViolation {
    /// A coordinate or the time step is not a finite number (or dt <= 0).
    #[error("non-finite position or time step")]
    NotFinite,
    /// Faster than the horizontal limit.
    #[error("moved at {speed:.2} m/s on the ground plane, limit {max:.2} m/s")]
    TooFast {
        /// Claimed speed.
        speed: f32,
        /// Allowed speed.
        max: f32,
    },
    /// Rose or fell faster than allowed.
    #[error("moved vertically at {speed:.2} m/s, limit {max:.2} m/s")]
    VerticalTooFast {
        /// Claimed vertical speed (negative: falling).
        speed: f32,
        /// Allowed speed in that direction.
        max: f32,
    },
    /// Far beyond any legitimate move.
    #[error("teleport of {distance:.2} m, limit {max:.2} m")]
    Teleport {
        /// Claimed distance.
        distance: f32,
        /// Allowed distance.
        max: f32,
    },
    /// The path crosses a wall.
    #[error("path passes through a wall")]
    ThroughWall,
    /// The end position overlaps a box.
    #[error("ends inside geometry")]
    InsideGeometry,
    /// The end position is outside the world bounds.
    #[error("ends outside the world")]
    OutOfBounds,
}

/// The verdict on an acceptable claimed move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MoveVerdict {
    /// The claim is within the limits.
    Accepted(Vec3),
    /// The claim was too long and was shortened to `position`.
    Clamped {
        /// The position to use instead.
        position: Vec3,
        /// What was exceeded.
        violation: MoveViolation,
    },
}

impl MoveVerdict {
    /// The position to use.
    pub fn position(&self) -> Vec3 {
        match *self {
            Self::Accepted(p) | Self::Clamped { position: p, .. } => p,
        }
    }
}

/// Checks a claimed move of a capsule's feet from `from` to `to` over `dt`
/// seconds: clamps a slightly too long step, rejects an impossible one.
pub fn check_displacement(
    map: &Map,
    limits: &MovementLimits,
    capsule: Capsule,
    from: Vec3,
    to: Vec3,
    dt: f32,
) -> Result<MoveVerdict, MoveViolation> {
    if !(from.is_finite() && to.is_finite() && dt.is_finite() && dt > 0.0) {
        return Err(MoveViolation::NotFinite);
    }
    let mut violation = None;
    let mut end = to;

    let step = Vec2::new(to.x - from.x, to.z - from.z);
    let distance = step.length();
    let allowed = limits.max_horizontal_speed * dt + limits.tolerance;
    if distance > allowed * limits.teleport_factor {
        return Err(MoveViolation::Teleport {
            distance,
            max: allowed,
        });
    }
    if distance > allowed {
        let clamped = step * (allowed / distance);
        end.x = from.x + clamped.x;
        end.z = from.z + clamped.y;
        violation = Some(MoveViolation::TooFast {
            speed: distance / dt,
            max: limits.max_horizontal_speed,
        });
    }

    let dy = to.y - from.y;
    let (max_speed, max_dy) = if dy >= 0.0 {
        (
            limits.max_rise_speed,
            limits.max_rise_speed * dt + limits.tolerance,
        )
    } else {
        (
            limits.max_fall_speed,
            limits.max_fall_speed * dt + limits.tolerance,
        )
    };
    if dy.abs() > max_dy * limits.teleport_factor {
        return Err(MoveViolation::Teleport {
            distance: dy.abs(),
            max: max_dy,
        });
    }
    if dy.abs() > max_dy {
        end.y = from.y + max_dy.copysign(dy);
        violation.get_or_insert(MoveViolation::VerticalTooFast {
            speed: dy / dt,
            max: max_speed,
        });
    }

    if !map.bounds().contains(end) {
        return Err(MoveViolation::OutOfBounds);
    }
    // The path, with a capsule thinned by the tolerance so that sliding round
    // a corner within one step still passes.
    let thin = Capsule {
        radius: (capsule.radius - limits.tolerance).max(0.01),
        height: capsule.height,
    };
    let path = Vec2::new(end.x - from.x, end.z - from.z);
    let low = Vec3::new(from.x, from.y.max(end.y), from.z);
    if map
        .sweep_horizontal(low, thin, path)
        .is_some_and(|h| h.t < 1.0)
    {
        return Err(MoveViolation::ThroughWall);
    }
    if !map.capsule_fits(end, thin) {
        return Err(MoveViolation::InsideGeometry);
    }
    Ok(match violation {
        Some(violation) => MoveVerdict::Clamped {
            position: end,
            violation,
        },
        None => MoveVerdict::Accepted(end),
    })
}
