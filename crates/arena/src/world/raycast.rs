//! Rays against the world (boxes, floor, side walls) and shots that must get
//! past the world to reach a body.

use std::ops::ControlFlow;

use glam::Vec3;

use crate::world::aabb::inverse_direction;
use crate::world::hitbox::{BodyHit, Hitboxes, raycast_hitboxes};
use crate::world::map::Map;

/// What a world ray stopped at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Box `index` of [`Map::boxes`].
    Box(u32),
    /// The floor (the bottom of the bounds).
    Floor,
    /// One of the world's side walls.
    Boundary,
}

/// A ray's hit on the world.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Distance along the ray.
    pub distance: f32,
    /// The point hit.
    pub point: Vec3,
    /// Surface normal at the point (axis-aligned).
    pub normal: Vec3,
    /// What was hit.
    pub surface: Surface,
}

/// The nearest world surface along `origin + dir * t`, `t` in `[0, max_dist]`
/// (`dir` is normalised here; a zero direction hits nothing). Boxes come
/// through the map's grid, so only boxes near the ray are tested. The sky
/// (above the bounds) is open; a ray starting inside a box hits it at 0.
pub fn raycast_world(map: &Map, origin: Vec3, dir: Vec3, max_dist: f32) -> Option<Hit> {
    let dir = dir.normalize_or_zero();
    if dir == Vec3::ZERO || !origin.is_finite() || max_dist.is_nan() || max_dist < 0.0 {
        return None;
    }
    let mut best = bounds_hit(map, origin, dir, max_dist);
    let mut best_t = best.map_or(max_dist, |h| h.distance);
    let inv_dir = inverse_direction(dir);
    let boxes = map.boxes();
    let _ = map
        .grid()
        .walk_ray::<()>(origin, dir, best_t, |cell, _, t_exit| {
            for &i in cell {
                if let Some(hit) = boxes[i as usize].ray_enter(origin, inv_dir, best_t) {
                    // Strictly nearer, or as near and earlier in the file: order-independent.
                    let nearer = hit.t < best_t
                        || (hit.t == best_t
                            && matches!(best, Some(Hit { surface: Surface::Box(j), .. }) if i < j));
                    if nearer {
                        best_t = hit.t;
                        best = Some(Hit {
                            distance: hit.t,
                            point: origin + dir * hit.t,
                            normal: hit.normal,
                            surface: Surface::Box(i),
                        });
                    }
                }
            }
            // Cells are visited in order: a hit before this cell's exit is final.
            if best.is_some() && best_t < t_exit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
    best
}

/// The floor or a side wall, whichever the ray meets first within `max_dist`.
fn bounds_hit(map: &Map, origin: Vec3, dir: Vec3, max_dist: f32) -> Option<Hit> {
    let b = map.bounds();
    let mut best: Option<Hit> = None;
    let mut consider = |t: f32, normal: Vec3, surface: Surface| {
        if t >= 0.0 && t <= max_dist && best.is_none_or(|h| t < h.distance) {
            best = Some(Hit {
                distance: t,
                point: origin + dir * t,
                normal,
                surface,
            });
        }
    };
    if dir.y < 0.0 && origin.y >= b.min.y {
        consider((b.min.y - origin.y) / dir.y, Vec3::Y, Surface::Floor);
    }
    for axis in [0usize, 2] {
        let (wall, normal) = if dir[axis] > 0.0 {
            (b.max[axis], -1.0)
        } else if dir[axis] < 0.0 {
            (b.min[axis], 1.0)
        } else {
            continue;
        };
        let t = (wall - origin[axis]) / dir[axis];
        let y = origin.y + dir.y * t;
        if y <= b.max.y {
            let mut n = Vec3::ZERO;
            n[axis] = normal;
            consider(t, n, Surface::Boundary);
        }
    }
    best
}

/// What a shot did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ShotOutcome<T> {
    /// It hit body `target` before any wall.
    Body {
        /// The caller's id of the body hit.
        target: T,
        /// Where on the body.
        hit: BodyHit,
    },
    /// It hit the world first (or only the world).
    World(Hit),
    /// It hit nothing within range.
    Miss,
}

/// Resolves a shot: the nearest body among `targets` (`(id, hitboxes)`
/// pairs, e.g. targets rewound to the tick the shooter saw) unless a wall is
/// nearer. Ties between bodies go to the one listed first. No allocation.
pub fn trace_shot<'h, T: Copy>(
    map: &Map,
    origin: Vec3,
    dir: Vec3,
    max_dist: f32,
    targets: impl IntoIterator<Item = (T, &'h Hitboxes)>,
) -> ShotOutcome<T> {
    let wall = raycast_world(map, origin, dir, max_dist);
    let reach = wall.map_or(max_dist, |h| h.distance);
    let mut best: Option<(T, BodyHit)> = None;
    for (id, body) in targets {
        if let Some(hit) = raycast_hitboxes(body, origin, dir, reach) {
            let blocked = wall.is_some_and(|w| w.distance <= hit.distance);
            if !blocked && best.is_none_or(|(_, b)| hit.distance < b.distance) {
                best = Some((id, hit));
            }
        }
    }
    match (best, wall) {
        (Some((target, hit)), _) => ShotOutcome::Body { target, hit },
        (None, Some(w)) => ShotOutcome::World(w),
        (None, None) => ShotOutcome::Miss,
    }
}
