//! Axis-aligned boxes: the only solid shape an arena map is made of.

use glam::{Vec2, Vec3};

/// An axis-aligned box, `min <= max` on every axis. The world is Y-up, in metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// The corner with the smallest coordinates.
    pub min: Vec3,
    /// The corner with the largest coordinates.
    pub max: Vec3,
}

/// Where a ray enters a box: distance along the ray and the surface normal there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SlabHit {
    pub(crate) t: f32,
    pub(crate) normal: Vec3,
}

impl Aabb {
    /// A box from two corners (`min <= max` is the caller's promise).
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// A box from its centre and full size.
    pub fn from_center_size(center: Vec3, size: Vec3) -> Self {
        let half = size * 0.5;
        Self::new(center - half, center + half)
    }

    /// The centre point.
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// The full size along each axis.
    pub fn size(&self) -> Vec3 {
        self.max - self.min
    }

    /// Whether `p` lies inside or on the surface.
    pub fn contains(&self, p: Vec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// Whether `other` lies entirely inside (or on the surface of) `self`.
    pub fn contains_box(&self, other: &Self) -> bool {
        self.contains(other.min) && self.contains(other.max)
    }

    /// Whether the interiors overlap (touching faces do not count).
    pub fn overlaps(&self, other: &Self) -> bool {
        self.min.cmplt(other.max).all() && other.min.cmplt(self.max).all()
    }

    /// The box grown by `margin` on every side.
    pub fn expanded(&self, margin: f32) -> Self {
        Self::new(
            self.min - Vec3::splat(margin),
            self.max + Vec3::splat(margin),
        )
    }

    /// The footprint on the ground plane as (min x/z, max x/z).
    pub fn footprint(&self) -> (Vec2, Vec2) {
        (
            Vec2::new(self.min.x, self.min.z),
            Vec2::new(self.max.x, self.max.z),
        )
    }

    /// The point of the footprint nearest to `p` (x/z).
    pub(crate) fn closest_footprint_point(&self, p: Vec2) -> Vec2 {
        let (lo, hi) = self.footprint();
        p.clamp(lo, hi)
    }

    /// Slab test: where the ray `origin + dir * t`, `t` in `[0, max_t]`, first
    /// enters the box. A ray that starts inside reports `t = 0` with the normal
    /// facing back along the ray.
    pub(crate) fn ray_enter(&self, origin: Vec3, inv_dir: Vec3, max_t: f32) -> Option<SlabHit> {
        let (t_enter, t_exit, axis) = self.slabs(origin, inv_dir, false)?;
        if t_enter > t_exit || t_exit < 0.0 || t_enter > max_t {
            return None;
        }
        if t_enter < 0.0 {
            // Inside: report contact at once, facing back along the ray.
            return Some(SlabHit {
                t: 0.0,
                normal: -inv_dir.recip().normalize_or_zero(),
            });
        }
        let mut normal = Vec3::ZERO;
        normal[axis] = -inv_dir[axis].signum();
        Some(SlabHit { t: t_enter, normal })
    }

    /// Whether the open segment `origin + dir * t`, `t` in `(0, max_t)`, passes
    /// through the interior (grazing a face or an edge does not count).
    pub(crate) fn segment_crosses(&self, origin: Vec3, inv_dir: Vec3, max_t: f32) -> bool {
        self.slabs(origin, inv_dir, true)
            .is_some_and(|(t_enter, t_exit, _)| t_enter.max(0.0) < t_exit.min(max_t))
    }

    /// The ray's parameter range inside the box's three slabs, and the axis
    /// of entry. A ray parallel to a slab is inside it when its origin is
    /// (strictly inside when `open`), otherwise it misses the box.
    fn slabs(&self, origin: Vec3, inv_dir: Vec3, open: bool) -> Option<(f32, f32, usize)> {
        let mut t_enter = f32::NEG_INFINITY;
        let mut t_exit = f32::INFINITY;
        let mut axis = 0;
        for i in 0..3 {
            let (lo, hi, o) = (self.min[i], self.max[i], origin[i]);
            if !inv_dir[i].is_finite() {
                let inside = if open {
                    o > lo && o < hi
                } else {
                    o >= lo && o <= hi
                };
                if !inside {
                    return None;
                }
                continue;
            }
            let a = (lo - o) * inv_dir[i];
            let b = (hi - o) * inv_dir[i];
            let (near, far) = if a < b { (a, b) } else { (b, a) };
            if near > t_enter {
                t_enter = near;
                axis = i;
            }
            t_exit = t_exit.min(far);
        }
        Some((t_enter, t_exit, axis))
    }
}

/// `1 / dir` per axis, with zero components mapped to +/- infinity so the slab
/// test treats a ray parallel to a slab correctly.
pub(crate) fn inverse_direction(dir: Vec3) -> Vec3 {
    Vec3::new(inv(dir.x), inv(dir.y), inv(dir.z))
}

fn inv(x: f32) -> f32 {
    if x == 0.0 {
        // Keep the sign of a negative zero: 1 / -0 = -inf.
        1.0 / x
    } else {
        x.recip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb::new(Vec3::ZERO, Vec3::ONE)
    }

    #[test]
    fn ray_enters_the_facing_side_with_its_normal() {
        let dir = Vec3::X;
        let hit = unit()
            .ray_enter(Vec3::new(-2.0, 0.5, 0.5), inverse_direction(dir), 10.0)
            .unwrap();
        assert_eq!(hit.t, 2.0);
        assert_eq!(hit.normal, Vec3::NEG_X);
    }

    #[test]
    fn ray_parallel_outside_a_slab_misses() {
        let dir = Vec3::Z;
        assert!(
            unit()
                .ray_enter(Vec3::new(1.5, 0.5, -3.0), inverse_direction(dir), 10.0)
                .is_none()
        );
    }

    #[test]
    fn ray_too_short_or_pointing_away_misses() {
        let inv_dir = inverse_direction(Vec3::X);
        assert!(
            unit()
                .ray_enter(Vec3::new(-2.0, 0.5, 0.5), inv_dir, 1.5)
                .is_none()
        );
        assert!(
            unit()
                .ray_enter(Vec3::new(2.0, 0.5, 0.5), inv_dir, 10.0)
                .is_none()
        );
    }

    #[test]
    fn ray_from_inside_hits_at_zero() {
        let hit = unit()
            .ray_enter(Vec3::splat(0.5), inverse_direction(Vec3::Y), 10.0)
            .unwrap();
        assert_eq!(hit.t, 0.0);
    }

    #[test]
    fn grazing_segment_does_not_cross() {
        let inv_dir = inverse_direction(Vec3::X);
        // Runs exactly along the top face.
        assert!(!unit().segment_crosses(Vec3::new(-1.0, 1.0, 0.5), inv_dir, 3.0));
        assert!(unit().segment_crosses(Vec3::new(-1.0, 0.99, 0.5), inv_dir, 3.0));
        // Stops short of the box.
        assert!(!unit().segment_crosses(Vec3::new(-1.0, 0.5, 0.5), inv_dir, 1.0));
    }

    #[test]
    fn overlap_excludes_touching() {
        let a = unit();
        let b = Aabb::new(Vec3::new(1.0, 0.0, 0.0), Vec3::new(2.0, 1.0, 1.0));
        assert!(!a.overlaps(&b));
        assert!(a.overlaps(&a.expanded(-0.1)));
        assert!(a.contains_box(&a.expanded(-0.1)));
    }
}
