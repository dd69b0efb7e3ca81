//! Shadow proofs: one convex occluder hides a whole convex region.
//!
//! The set of points whose line to a fixed point crosses a convex box is
//! convex; so when one occluder crosses the lines from an eye to all eight
//! corners of a box, it hides the whole box from that eye, and when it
//! crosses the 64 lines between the corners of two boxes, it hides every
//! point of one from every point of the other. Fog of war's `can_see` and
//! its held answers are built on these two facts. No allocation.

use glam::Vec3;

use crate::world::aabb::{Aabb, inverse_direction};
use crate::world::map::Map;

/// The lines from an eye to the eight corners of a box, ready for shadow
/// tests.
pub(crate) struct Sight {
    eye: Vec3,
    /// `1 / (corner - eye)` per corner.
    inv: [Vec3; 8],
    /// The box around the eye and the corners: an occluder that does not
    /// overlap it cannot stand across every line.
    hull: Aabb,
}

impl Sight {
    pub(crate) fn new(eye: Vec3, corners: &[Vec3; 8]) -> Self {
        let (lo, hi) = corners
            .iter()
            .fold((eye, eye), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        Self {
            eye,
            inv: corners.map(|c| inverse_direction(c - eye)),
            hull: Aabb::new(lo, hi),
        }
    }

    /// Whether every line passes through the interior of `occluder`: then,
    /// the shadow of a convex box being convex, the whole box is hidden.
    pub(crate) fn shadowed_by(&self, occluder: &Aabb) -> bool {
        occluder.overlaps(&self.hull)
            && self
                .inv
                .iter()
                .all(|&d| occluder.segment_crosses(self.eye, d, 1.0))
    }
}

/// An occluder that blocks the view of every corner, trying them all.
pub(crate) fn any_shadows(map: &Map, sight: &Sight) -> Option<u32> {
    map.occluders()
        .boxes()
        .iter()
        .position(|o| sight.shadowed_by(o))
        .map(|k| k as u32)
}

/// Whether every sight line from any point of `eye_region` to any point of
/// `body_region` passes through one occluder: then nothing in the body
/// region can be seen from anywhere in the eye region. The set of eyes that one
/// convex occluder hides a convex region from is itself convex, so testing
/// the 64 lines between the corners proves it for every pair of points.
pub(crate) fn region_hidden(map: &Map, eye_region: &Aabb, body_region: &Aabb) -> bool {
    let eyes = aabb_corners(eye_region);
    let bodies = aabb_corners(body_region);
    let hull = Aabb::new(
        eye_region.min.min(body_region.min),
        eye_region.max.max(body_region.max),
    );
    map.occluders().boxes().iter().any(|o| {
        o.overlaps(&hull)
            && eyes.iter().all(|&e| {
                bodies
                    .iter()
                    .all(|&b| o.segment_crosses(e, inverse_direction(b - e), 1.0))
            })
    })
}

fn aabb_corners(b: &Aabb) -> [Vec3; 8] {
    let mut out = [Vec3::ZERO; 8];
    for (i, c) in out.iter_mut().enumerate() {
        *c = Vec3::new(
            if i & 1 == 0 { b.min.x } else { b.max.x },
            if i & 2 == 0 { b.min.y } else { b.max.y },
            if i & 4 == 0 { b.min.z } else { b.max.z },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::sight::line_of_sight;

    #[test]
    fn a_proven_hidden_region_hides_every_line_between_them() {
        let map = Map::builtin("dust_corners").unwrap();
        let mut unit = crate::world::map::unit_numbers(7);
        let (mut proven, mut refused) = (0, 0);
        for _ in 0..2000 {
            let eye = Vec3::new(8.0 + unit() * 104.0, 1.2 + unit(), 8.0 + unit() * 104.0);
            let feet = Vec3::new(8.0 + unit() * 104.0, 0.0, 8.0 + unit() * 104.0);
            let open = |p: Vec3| map.capsule_fits(p, crate::world::movement::STANDING_CAPSULE);
            if !open(feet) || !open(Vec3::new(eye.x, 0.0, eye.z)) {
                continue;
            }
            let eyes = Aabb::new(eye - Vec3::splat(0.5), eye + Vec3::splat(0.5));
            let body = Aabb::new(
                feet - Vec3::new(1.5, 0.1, 1.5),
                feet + Vec3::new(1.5, 2.5, 1.5),
            );
            if !region_hidden(&map, &eyes, &body) {
                refused += 1;
                continue;
            }
            proven += 1;
            for _ in 0..50 {
                let e = eyes.min + eyes.size() * Vec3::new(unit(), unit(), unit());
                let b = body.min + body.size() * Vec3::new(unit(), unit(), unit());
                assert!(!line_of_sight(&map, e, b), "{e:?} sees {b:?}");
            }
        }
        assert!(
            proven > 30 && refused > 30,
            "{proven} proven, {refused} refused"
        );
    }
}
