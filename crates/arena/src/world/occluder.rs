//! Occluders: boxes that lie inside a map's solid space, each grown from one
//! map box as far as the solid space reaches, so that a single occluder can
//! prove what several touching map boxes hide only together.
//!
//! Built once when a map loads, for fog of war's shadow proofs (a body lies
//! in the shadow of one convex occluder). Where two map boxes touch or
//! overlap, the seam between them is treated as solid: a sight line that runs
//! exactly along a zero-width seam (grazing both boxes, which
//! [`line_of_sight`](crate::line_of_sight) lets through) is taken as blocked.
//! Lines of sight, shots and collision keep using the map boxes themselves.

use crate::world::aabb::Aabb;

/// The grown occluders of a map and which one each map box grew into.
#[derive(Debug, Clone)]
pub(crate) struct Occluders {
    boxes: Vec<Aabb>,
    /// `of_box[i]`: the occluder map box `i` grew into (it holds box `i`).
    of_box: Vec<u32>,
}

impl Occluders {
    /// Grows every box of `boxes` inside their union; identical results are
    /// kept once.
    pub(crate) fn build(boxes: &[Aabb]) -> Self {
        let mut grown: Vec<Aabb> = Vec::with_capacity(boxes.len());
        let mut of_box = Vec::with_capacity(boxes.len());
        for b in boxes {
            let g = grow(*b, boxes);
            let index = match grown.iter().position(|o| *o == g) {
                Some(k) => k,
                None => {
                    grown.push(g);
                    grown.len() - 1
                }
            };
            of_box.push(index as u32);
        }
        Self {
            boxes: grown,
            of_box,
        }
    }

    /// The occluder boxes.
    pub(crate) fn boxes(&self) -> &[Aabb] {
        &self.boxes
    }

    /// The occluder that map box `i` grew into.
    pub(crate) fn of_box(&self, i: u32) -> u32 {
        self.of_box[i as usize]
    }
}

/// `b` grown one face at a time, each step to the next box boundary beyond
/// the face, while the added slab is covered by the union of `solids`; round
/// robin over the six faces until none can move.
fn grow(mut b: Aabb, solids: &[Aabb]) -> Aabb {
    loop {
        let mut moved = false;
        for axis in [0usize, 2, 1] {
            for upward in [true, false] {
                let face = if upward { b.max[axis] } else { b.min[axis] };
                let Some(next) = next_boundary(solids, axis, face, upward) else {
                    continue;
                };
                let mut slab = b;
                if upward {
                    slab.min[axis] = face;
                    slab.max[axis] = next;
                } else {
                    slab.max[axis] = face;
                    slab.min[axis] = next;
                }
                if covered(&slab, solids) {
                    if upward {
                        b.max[axis] = next;
                    } else {
                        b.min[axis] = next;
                    }
                    moved = true;
                }
            }
        }
        if !moved {
            return b;
        }
    }
}

/// The nearest box boundary on `axis` strictly beyond `face` (above it when
/// `upward`, below otherwise).
fn next_boundary(solids: &[Aabb], axis: usize, face: f32, upward: bool) -> Option<f32> {
    solids
        .iter()
        .flat_map(|s| [s.min[axis], s.max[axis]])
        .filter(|&c| if upward { c > face } else { c < face })
        .reduce(|a, c| if upward { a.min(c) } else { a.max(c) })
}

/// Whether the union of `solids` covers all of `region` (up to seams of zero
/// width): every cell of the grid cut by the boundaries of the boxes that
/// overlap `region` has its centre inside one of them.
fn covered(region: &Aabb, solids: &[Aabb]) -> bool {
    let near: Vec<&Aabb> = solids.iter().filter(|s| s.overlaps(region)).collect();
    if near.is_empty() {
        return false;
    }
    let cuts = |axis: usize| {
        let mut c: Vec<f32> = vec![region.min[axis], region.max[axis]];
        for s in &near {
            for v in [s.min[axis], s.max[axis]] {
                if v > region.min[axis] && v < region.max[axis] {
                    c.push(v);
                }
            }
        }
        c.sort_by(f32::total_cmp);
        c.dedup();
        c
    };
    let (xs, ys, zs) = (cuts(0), cuts(1), cuts(2));
    for x in xs.windows(2) {
        for y in ys.windows(2) {
            for z in zs.windows(2) {
                let centre = glam::Vec3::new(
                    (x[0] + x[1]) * 0.5,
                    (y[0] + y[1]) * 0.5,
                    (z[0] + z[1]) * 0.5,
                );
                if !near.iter().any(|s| s.contains(centre)) {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;

    fn aabb(min: [f32; 3], max: [f32; 3]) -> Aabb {
        Aabb::new(Vec3::from(min), Vec3::from(max))
    }

    #[test]
    fn an_l_shaped_wall_grows_its_short_arm_across_the_corner() {
        let boxes = [
            aabb([0.0, 0.0, 0.0], [20.0, 6.0, 2.0]),
            aabb([0.0, 0.0, 2.0], [8.0, 6.0, 10.0]),
            aabb([30.0, 0.0, 30.0], [31.0, 1.0, 31.0]),
        ];
        let occ = Occluders::build(&boxes);
        assert_eq!(occ.boxes()[occ.of_box(0) as usize], boxes[0]);
        assert_eq!(
            occ.boxes()[occ.of_box(1) as usize],
            aabb([0.0, 0.0, 0.0], [8.0, 6.0, 10.0])
        );
        assert_eq!(occ.boxes()[occ.of_box(2) as usize], boxes[2]);
    }

    #[test]
    fn touching_boxes_merge_and_gaps_do_not() {
        let boxes = [
            aabb([0.0, 0.0, 0.0], [4.0, 3.0, 1.0]),
            aabb([4.0, 0.0, 0.0], [9.0, 3.0, 1.0]),
            aabb([9.5, 0.0, 0.0], [12.0, 3.0, 1.0]),
        ];
        let occ = Occluders::build(&boxes);
        assert_eq!(occ.of_box(0), occ.of_box(1));
        assert_eq!(
            occ.boxes()[occ.of_box(0) as usize],
            aabb([0.0, 0.0, 0.0], [9.0, 3.0, 1.0])
        );
        assert_eq!(occ.boxes()[occ.of_box(2) as usize], boxes[2]);
        assert_eq!(occ.boxes().len(), 2);
    }

    #[test]
    fn every_occluder_holds_its_box_and_lies_in_the_solid_space() {
        let map = crate::Map::builtin("dust_corners").unwrap();
        let occ = Occluders::build(map.boxes());
        for (i, b) in map.boxes().iter().enumerate() {
            let o = occ.boxes()[occ.of_box(i as u32) as usize];
            assert!(o.contains_box(b), "{i}");
            assert!(covered(&o, map.boxes()), "{i}: {o:?}");
        }
    }
}
