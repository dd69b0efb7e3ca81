//! Vertical capsules against the map: overlap, horizontal sweeps, support
//! and ceiling heights, and push-out. The building blocks of movement.
//!
//! For contact the capsule is treated as the upright cylinder around it (its
//! exact shape seen from above, square at the feet and head). That shape is
//! never smaller than the capsule, so a cylinder that is clear of a box
//! implies a capsule clear of it.

use std::ops::ControlFlow;

use glam::{Vec2, Vec3};

use crate::world::aabb::Aabb;
use crate::world::map::Map;

/// Touching within this distance is contact, not overlap (metres).
pub const CONTACT_EPSILON: f32 = 1e-4;
/// The gap movement keeps between a capsule and the surfaces it stops at.
pub const SKIN: f32 = 2e-3;

/// An upright capsule standing on its lowest point (the "feet").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capsule {
    /// Radius of the capsule, metres.
    pub radius: f32,
    /// Full height from feet to the top of the head, metres (`>= 2 * radius`).
    pub height: f32,
}

/// A horizontal contact found by a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SweepHit {
    /// Fraction of the displacement travelled before contact, in `[0, 1]`.
    pub(crate) t: f32,
    /// Outward surface normal on the ground plane (unit length).
    pub(crate) normal: Vec2,
}

fn ground(p: Vec3) -> Vec2 {
    Vec2::new(p.x, p.z)
}

/// Whether the vertical extents overlap by more than the contact epsilon.
fn overlaps_vertically(feet_y: f32, height: f32, b: &Aabb) -> bool {
    feet_y < b.max.y - CONTACT_EPSILON && feet_y + height > b.min.y + CONTACT_EPSILON
}

/// Whether the circle of radius `r` around `c` overlaps the box footprint.
fn overlaps_footprint(c: Vec2, r: f32, b: &Aabb) -> bool {
    c.distance_squared(b.closest_footprint_point(c)) < squared(r - CONTACT_EPSILON)
}

impl Map {
    /// Whether a capsule with its feet at `feet` is clear of every box, above
    /// the floor and inside the world bounds (contact is allowed).
    pub fn capsule_fits(&self, feet: Vec3, capsule: Capsule) -> bool {
        let b = self.bounds();
        let r = capsule.radius - CONTACT_EPSILON;
        if !feet.is_finite()
            || feet.y < b.min.y - CONTACT_EPSILON
            || feet.y + capsule.height > b.max.y + CONTACT_EPSILON
            || feet.x - r < b.min.x
            || feet.x + r > b.max.x
            || feet.z - r < b.min.z
            || feet.z + r > b.max.z
        {
            return false;
        }
        let c = ground(feet);
        let boxes = self.boxes();
        self.grid()
            .for_each_in_area(c - capsule.radius, c + capsule.radius, |i| {
                let bx = &boxes[i];
                if overlaps_vertically(feet.y, capsule.height, bx)
                    && overlaps_footprint(c, capsule.radius, bx)
                {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .is_continue()
    }

    /// How deep the exact capsule shape reaches into the deepest box it
    /// overlaps, in metres (0 when clear). For tests and diagnostics.
    pub fn capsule_penetration(&self, feet: Vec3, capsule: Capsule) -> f32 {
        let r = capsule.radius;
        let seg = (feet.y + r, feet.y + (capsule.height - r).max(r));
        let c = ground(feet);
        let mut deepest = 0.0f32;
        let _ = self.grid().for_each_in_area::<()>(c - r, c + r, |i| {
            let b = &self.boxes()[i];
            let q = b.closest_footprint_point(c);
            let dxz = c.distance(q);
            let dy = (b.min.y - seg.1).max(seg.0 - b.max.y).max(0.0);
            let d = (dxz * dxz + dy * dy).sqrt();
            let depth = if d > 0.0 {
                r - d
            } else {
                // The axis is inside the box: depth to the nearest side, plus r.
                let (lo, hi) = b.footprint();
                let inner = (c - lo).min(hi - c).min_element();
                r + inner
            };
            deepest = deepest.max(depth);
            ControlFlow::Continue(())
        });
        deepest
    }

    /// The first contact of a capsule sliding its feet from `feet` by `delta`
    /// on the ground plane, against boxes it overlaps vertically and the
    /// world's side walls. A capsule already overlapping a box reports contact
    /// at `t = 0` only when moving further into it.
    pub(crate) fn sweep_horizontal(
        &self,
        feet: Vec3,
        capsule: Capsule,
        delta: Vec2,
    ) -> Option<SweepHit> {
        let r = capsule.radius;
        let c = ground(feet);
        let mut best = bounds_sweep(self.bounds(), c, r, delta);
        let lo = c.min(c + delta) - r;
        let hi = c.max(c + delta) + r;
        let boxes = self.boxes();
        let _ = self.grid().for_each_in_area::<()>(lo, hi, |i| {
            let b = &boxes[i];
            if overlaps_vertically(feet.y, capsule.height, b) {
                let (blo, bhi) = b.footprint();
                if let Some(hit) = sweep_circle_rect(c, delta, r, blo, bhi)
                    && best.is_none_or(|h| hit.t < h.t)
                {
                    best = Some(hit);
                }
            }
            ControlFlow::Continue(())
        });
        best
    }

    /// The highest surface (box top or floor) under the capsule's footprint
    /// with its top between `feet.y - drop` and `feet.y + reach`.
    pub(crate) fn support_height(
        &self,
        feet: Vec3,
        radius: f32,
        drop: f32,
        reach: f32,
    ) -> Option<f32> {
        let range = (feet.y - drop)..=(feet.y + reach);
        let floor = self.bounds().min.y;
        let start = range.contains(&floor).then_some(floor);
        self.nearest_face(feet, radius, start, |b| b.max.y, |h, best| h > best, range)
    }

    /// The lowest box bottom (or the world's ceiling) over the capsule's
    /// footprint between `head_y - reach` and `head_y + rise`.
    pub(crate) fn ceiling_height(
        &self,
        feet: Vec3,
        capsule: Capsule,
        rise: f32,
        reach: f32,
    ) -> Option<f32> {
        let head = feet.y + capsule.height;
        let range = (head - reach)..=(head + rise);
        let sky = self.bounds().max.y;
        let start = (sky <= head + rise).then_some(sky);
        self.nearest_face(
            feet,
            capsule.radius,
            start,
            |b| b.min.y,
            |h, best| h < best,
            range,
        )
    }

    /// The horizontal face (`face` of each box) within `range` over the
    /// capsule's footprint that `better` prefers, starting from `start`.
    fn nearest_face(
        &self,
        feet: Vec3,
        radius: f32,
        start: Option<f32>,
        face: impl Fn(&Aabb) -> f32,
        better: impl Fn(f32, f32) -> bool,
        range: std::ops::RangeInclusive<f32>,
    ) -> Option<f32> {
        let c = ground(feet);
        let mut best = start;
        let _ = self
            .grid()
            .for_each_in_area::<()>(c - radius, c + radius, |i| {
                let b = &self.boxes()[i];
                let h = face(b);
                if range.contains(&h)
                    && best.is_none_or(|x| better(h, x))
                    && overlaps_footprint(c, radius, b)
                {
                    best = Some(h);
                }
                ControlFlow::Continue(())
            });
        best
    }

    /// Pushes a capsule out of the boxes it overlaps, by the shortest of a
    /// horizontal push or a short lift onto the box (at most `max_lift`).
    /// Returns whether the capsule fits afterwards.
    pub(crate) fn push_out(&self, feet: &mut Vec3, capsule: Capsule, max_lift: f32) -> bool {
        for _ in 0..4 {
            self.clamp_to_bounds(feet, capsule);
            if self.capsule_fits(*feet, capsule) {
                return true;
            }
            let c = ground(*feet);
            let r = capsule.radius;
            // The smallest correction for the first overlapping box found.
            let mut fix: Option<Vec3> = None;
            let _ = self.grid().for_each_in_area(c - r, c + r, |i| {
                let b = &self.boxes()[i];
                if !(overlaps_vertically(feet.y, capsule.height, b) && overlaps_footprint(c, r, b))
                {
                    return ControlFlow::Continue(());
                }
                let (lo, hi) = b.footprint();
                let q = c.clamp(lo, hi);
                let off = c - q;
                let dist = off.length();
                let horizontal = if dist > 1e-6 {
                    off / dist * (r - dist + SKIN)
                } else {
                    // Centre inside the footprint: leave by the nearest side.
                    let exits = [
                        Vec2::new(lo.x - c.x - r - SKIN, 0.0),
                        Vec2::new(hi.x - c.x + r + SKIN, 0.0),
                        Vec2::new(0.0, lo.y - c.y - r - SKIN),
                        Vec2::new(0.0, hi.y - c.y + r + SKIN),
                    ];
                    let mut best = exits[0];
                    for e in &exits[1..] {
                        if e.length_squared() < best.length_squared() {
                            best = *e;
                        }
                    }
                    best
                };
                let lift = b.max.y - feet.y;
                fix = Some(if lift <= max_lift && lift < horizontal.length() {
                    Vec3::new(0.0, lift, 0.0)
                } else {
                    Vec3::new(horizontal.x, 0.0, horizontal.y)
                });
                ControlFlow::Break(())
            });
            match fix {
                Some(f) => *feet += f,
                None => break,
            }
        }
        self.clamp_to_bounds(feet, capsule);
        self.capsule_fits(*feet, capsule)
    }

    fn clamp_to_bounds(&self, feet: &mut Vec3, capsule: Capsule) {
        let b = self.bounds();
        let r = capsule.radius;
        feet.x = feet.x.clamp(b.min.x + r, b.max.x - r);
        feet.z = feet.z.clamp(b.min.z + r, b.max.z - r);
        feet.y = feet.y.max(b.min.y);
    }
}

/// A circle of radius `r` moving from `c` by `d` against the inside of the
/// world's side walls.
fn bounds_sweep(b: &Aabb, c: Vec2, r: f32, d: Vec2) -> Option<SweepHit> {
    let (lo, hi) = b.footprint();
    let (lo, hi) = (lo + r, hi - r);
    let mut best: Option<SweepHit> = None;
    for axis in 0..2 {
        let (limit, normal) = if d[axis] > 0.0 {
            (hi[axis], -1.0)
        } else if d[axis] < 0.0 {
            (lo[axis], 1.0)
        } else {
            continue;
        };
        let t = ((limit - c[axis]) / d[axis]).max(0.0);
        if t <= 1.0 && best.is_none_or(|h| t < h.t) {
            let mut n = Vec2::ZERO;
            n[axis] = normal;
            best = Some(SweepHit { t, normal: n });
        }
    }
    best
}

/// A capsule moving its feet from `feet` by `delta` against the inside of a
/// fence's sides (a buy zone during the buy phase).
pub(crate) fn fence_sweep(fence: &Aabb, feet: Vec3, radius: f32, delta: Vec2) -> Option<SweepHit> {
    bounds_sweep(fence, ground(feet), radius, delta)
}

/// A circle of radius `r` moving from `c` by `d` (t in `[0, 1]`) against the
/// rectangle `lo..hi`: the rounded rectangle swept test (slab test on the
/// rectangle grown by `r`, then the corner circles).
pub(crate) fn sweep_circle_rect(c: Vec2, d: Vec2, r: f32, lo: Vec2, hi: Vec2) -> Option<SweepHit> {
    let q = c.clamp(lo, hi);
    let off = c - q;
    let dist2 = off.length_squared();
    if dist2 < squared(r - CONTACT_EPSILON) {
        // Already overlapping: block only motion that goes deeper.
        let normal = if dist2 > 1e-12 {
            off / dist2.sqrt()
        } else {
            nearest_side_normal(c, lo, hi)
        };
        return (d.dot(normal) < 0.0).then_some(SweepHit { t: 0.0, normal });
    }
    let (elo, ehi) = (lo - r, hi + r);
    let mut t_enter = f32::NEG_INFINITY;
    let mut t_exit = f32::INFINITY;
    let mut entry_axis = 0;
    for axis in 0..2 {
        if d[axis] == 0.0 {
            if c[axis] <= elo[axis] || c[axis] >= ehi[axis] {
                return None;
            }
            continue;
        }
        let inv = d[axis].recip();
        let a = (elo[axis] - c[axis]) * inv;
        let b = (ehi[axis] - c[axis]) * inv;
        let (near, far) = if a < b { (a, b) } else { (b, a) };
        if near > t_enter {
            t_enter = near;
            entry_axis = axis;
        }
        t_exit = t_exit.min(far);
    }
    if t_enter >= t_exit || t_exit <= 0.0 || t_enter > 1.0 {
        return None;
    }
    if t_enter >= 0.0 {
        let p = c + d * t_enter;
        let other = 1 - entry_axis;
        if p[other] >= lo[other] && p[other] <= hi[other] {
            let mut normal = Vec2::ZERO;
            normal[entry_axis] = -d[entry_axis].signum();
            return Some(SweepHit { t: t_enter, normal });
        }
        let corner = p.clamp(lo, hi);
        return sweep_circle_point(c, d, r, corner);
    }
    // Starting inside the grown rectangle but clear of the rounded shape: in
    // a corner square, so only that corner's circle can be hit.
    sweep_circle_point(c, d, r, q)
}

/// A circle of radius `r` moving from `c` by `d` against a point.
fn sweep_circle_point(c: Vec2, d: Vec2, r: f32, p: Vec2) -> Option<SweepHit> {
    let m = c - p;
    let a = d.dot(d);
    let b = m.dot(d);
    let k = m.dot(m) - r * r;
    if a == 0.0 || b >= 0.0 {
        return None; // not moving, or moving away
    }
    let disc = b * b - a * k;
    if disc < 0.0 {
        return None;
    }
    let t = ((-b - disc.sqrt()) / a).max(0.0);
    if t > 1.0 {
        return None;
    }
    let normal = (m + d * t).normalize_or(-d.normalize_or_zero());
    Some(SweepHit { t, normal })
}

fn nearest_side_normal(c: Vec2, lo: Vec2, hi: Vec2) -> Vec2 {
    let gaps = [c.x - lo.x, hi.x - c.x, c.y - lo.y, hi.y - c.y];
    let normals = [Vec2::NEG_X, Vec2::X, Vec2::NEG_Y, Vec2::Y];
    let mut best = 0;
    for i in 1..4 {
        if gaps[i] < gaps[best] {
            best = i;
        }
    }
    normals[best]
}

/// `x * x`, spelled out: `powi` is left to the platform's math library.
fn squared(x: f32) -> f32 {
    x * x
}

#[cfg(test)]
mod tests {
    use super::*;

    const LO: Vec2 = Vec2::new(0.0, 0.0);
    const HI: Vec2 = Vec2::new(2.0, 2.0);

    #[test]
    fn circle_hits_a_side_head_on() {
        let hit =
            sweep_circle_rect(Vec2::new(-1.0, 1.0), Vec2::new(2.0, 0.0), 0.5, LO, HI).unwrap();
        assert!((hit.t - 0.25).abs() < 1e-6);
        assert_eq!(hit.normal, Vec2::NEG_X);
    }

    #[test]
    fn circle_rounds_a_corner() {
        // Passes the corner (0, 0) at a distance of 0.3: touches its circle.
        let hit = sweep_circle_rect(Vec2::new(-1.0, -0.3), Vec2::new(2.0, 0.0), 0.5, LO, HI);
        let hit = hit.expect("touches the corner");
        assert!((hit.t - 0.3).abs() < 1e-5, "{hit:?}");
        assert!(hit.normal.x < 0.0 && hit.normal.y < 0.0);
        // Cuts across the grown square's corner, 0.64 from the corner: misses.
        let c = Vec2::new(-0.6, -0.3);
        assert!(sweep_circle_rect(c, Vec2::new(0.3, -0.3), 0.5, LO, HI).is_none());
    }

    #[test]
    fn parallel_motion_alongside_misses_and_moving_away_is_free() {
        assert!(
            sweep_circle_rect(Vec2::new(-0.5, 1.0), Vec2::new(0.0, 3.0), 0.5, LO, HI).is_none()
        );
        assert!(
            sweep_circle_rect(Vec2::new(-0.5, 1.0), Vec2::new(-1.0, 0.0), 0.5, LO, HI).is_none()
        );
    }

    #[test]
    fn overlapping_circle_may_leave_but_not_go_deeper() {
        let c = Vec2::new(-0.3, 1.0);
        assert!(sweep_circle_rect(c, Vec2::new(-1.0, 0.0), 0.5, LO, HI).is_none());
        assert_eq!(
            sweep_circle_rect(c, Vec2::new(1.0, 0.0), 0.5, LO, HI)
                .unwrap()
                .t,
            0.0
        );
    }
}
