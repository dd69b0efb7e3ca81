//! Line of sight for fog of war: may a viewer see a target?

use std::ops::ControlFlow;

use glam::Vec3;

use crate::world::aabb::{Aabb, inverse_direction};
use crate::world::map::Map;
use crate::world::pose::Pose;
use crate::world::shadow::{Sight, any_shadows};

/// Whether nothing solid lies between `from` and `to`. Grazing a face or an
/// edge does not block; the floor does not block points above it.
pub fn line_of_sight(map: &Map, from: Vec3, to: Vec3) -> bool {
    first_blocker(map, from, to).is_none()
}

/// How many box tests one grid cell visit is worth, for choosing between a
/// scan of every box and a grid walk.
const BOX_TESTS_PER_CELL: f32 = 3.0;

/// A box the segment `from..to` passes through, if any (any one such box:
/// callers want a blocker, not the nearest).
fn first_blocker(map: &Map, from: Vec3, to: Vec3) -> Option<u32> {
    // Nothing reaches above the highest box: clear without a walk.
    if from.y.min(to.y) >= map.max_box_top() {
        return None;
    }
    // The segment is `from + delta * t`, t in [0, 1]: no normalising needed.
    let delta = to - from;
    if delta == Vec3::ZERO || !delta.is_finite() {
        return None;
    }
    let inv_delta = inverse_direction(delta);
    let boxes = map.boxes();
    // A long line crosses many cells: on a map of few boxes, testing every
    // box costs less than walking the grid (a cell visit is worth a few box
    // tests). Either way the answer is the same.
    let grid = map.grid();
    let cells = (delta.x.abs() + delta.z.abs()) / grid.cell_size() + 1.0;
    if (boxes.len() as f32) <= BOX_TESTS_PER_CELL * cells {
        // Only a box overlapping the segment's bounds can be crossed.
        let span = Aabb::new(from.min(to), from.max(to));
        return boxes
            .iter()
            .position(|b| b.overlaps(&span) && b.segment_crosses(from, inv_delta, 1.0))
            .map(|i| i as u32);
    }
    match grid.walk_ray(from, delta, 1.0, |cell, _, _| {
        for &i in cell {
            if boxes[i as usize].segment_crosses(from, inv_delta, 1.0) {
                return ControlFlow::Break(i);
            }
        }
        ControlFlow::Continue(())
    }) {
        ControlFlow::Break(i) => Some(i),
        ControlFlow::Continue(()) => None,
    }
}

/// A box in the target's own frame (x to its left, y up, z forward), feet
/// at the origin: `lo..hi`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LocalBox {
    lo: Vec3,
    hi: Vec3,
}

/// The head box's bottom and top above the feet, standing, and how far
/// both drop when crouched.
const HEAD_LOW: f32 = 1.25;
const HEAD_HIGH: f32 = 1.82;
const HEAD_CROUCH_DROP: f32 = 0.47;

/// The height of the centre of the head box grown by `margin`: when it and
/// the viewer's eye are both above every box of the map, [`can_see`] is
/// `true` without further work.
pub(crate) fn head_centre_height(target: &Pose, margin: f32) -> f32 {
    let c = target.crouch.clamp(0.0, 1.0);
    target.position.y + (HEAD_LOW + HEAD_HIGH + margin) * 0.5 - HEAD_CROUCH_DROP * c
}

/// Boxes holding every hitbox of a posed body, grouped as head (with
/// neck), torso (with arms and weapon hands) and legs, in the body's frame.
/// Derived from the skeleton's proportions over all locomotion phases and
/// speeds; the `envelope_holds_every_hitbox` test checks them against the
/// real hitboxes over the whole pose space.
fn envelope(pose: &Pose) -> [LocalBox; 3] {
    let c = pose.crouch.clamp(0.0, 1.0);
    let p = crate::world::pose::clamp_pitch(pose.pitch);
    // The head leans forward when crouched and follows the aim pitch.
    let head_z = -0.23 * p + 0.13 * c;
    let head = LocalBox {
        lo: Vec3::new(-0.13, HEAD_LOW - HEAD_CROUCH_DROP * c, head_z - 0.23),
        hi: Vec3::new(0.13, HEAD_HIGH - HEAD_CROUCH_DROP * c, head_z + 0.23),
    };
    // The arms rise with the aim; the torso drops when crouched.
    let torso = LocalBox {
        lo: Vec3::new(-0.38, 0.72 - 0.46 * c, -0.38),
        hi: Vec3::new(0.38, 1.6 + 0.42 * p.max(0.0).sin() - 0.44 * c, 0.73),
    };
    let legs = LocalBox {
        lo: Vec3::new(-0.28, -0.1, -0.48),
        hi: Vec3::new(0.28, 1.03 - 0.32 * c, 0.8),
    };
    [head, torso, legs]
}

/// The body frame of a pose: world position of a local point.
#[derive(Clone, Copy)]
struct Frame {
    origin: Vec3,
    sin: f32,
    cos: f32,
}

impl Frame {
    fn new(pose: &Pose) -> Self {
        let (sin, cos) = pose.yaw.sin_cos();
        Self {
            origin: pose.position,
            sin,
            cos,
        }
    }

    fn place(&self, p: Vec3) -> Vec3 {
        Vec3::new(
            self.origin.x + p.x * self.cos + p.z * self.sin,
            self.origin.y + p.y,
            self.origin.z - p.x * self.sin + p.z * self.cos,
        )
    }

    /// The eight world corners of `b`.
    fn corners(&self, b: &LocalBox) -> [Vec3; 8] {
        let (lo, hi) = (b.lo, b.hi);
        let mut out = [Vec3::ZERO; 8];
        for (i, corner) in out.iter_mut().enumerate() {
            *corner = self.place(Vec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            ));
        }
        out
    }
}

/// Up to this many distinct occluders are remembered per query.
const MAX_BLOCKERS: usize = 16;
/// How many times a box that no single occluder hides is halved.
const MAX_SPLITS: u32 = 2;

/// The occluders met so far in one query: candidates for shadowing a box.
struct Blockers {
    found: [u32; MAX_BLOCKERS],
    count: usize,
}

impl Blockers {
    fn remember(&mut self, i: u32) {
        if self.count < MAX_BLOCKERS && !self.found[..self.count].contains(&i) {
            self.found[self.count] = i;
            self.count += 1;
        }
    }

    /// Remembers the occluder that map box `i` grew into.
    fn remember_box(&mut self, map: &Map, i: u32) {
        self.remember(map.occluders().of_box(i));
    }

    /// A remembered occluder that blocks the view of every corner.
    fn one_shadows(&self, map: &Map, sight: &Sight) -> Option<u32> {
        let occluders = map.occluders().boxes();
        self.found[..self.count]
            .iter()
            .copied()
            .find(|&k| sight.shadowed_by(&occluders[k as usize]))
    }
}

/// The smallest body-frame box holding all of `boxes`.
fn hull(boxes: &[LocalBox; 3]) -> LocalBox {
    boxes[1..].iter().fold(boxes[0], |h, b| LocalBox {
        lo: h.lo.min(b.lo),
        hi: h.hi.max(b.hi),
    })
}

/// `b` grown by `margin` sideways, forward, back and up (not down: the feet
/// stay on the ground).
fn grown(b: &LocalBox, margin: f32) -> LocalBox {
    LocalBox {
        lo: Vec3::new(b.lo.x - margin, b.lo.y, b.lo.z - margin),
        hi: b.hi + Vec3::splat(margin),
    }
}

/// Why [`can_see`] last answered for a pair: checked first next time, it
/// usually settles the answer with one test instead of a search. Each
/// `true` kind implies `true` exactly as the full search would find it;
/// [`Witness::Shadowed`] implies `false` (see there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Witness {
    /// Nothing known.
    #[default]
    None,
    /// The centre of envelope box `0` was in view.
    Centre(u8),
    /// Corner `1` of envelope box `0` was in view.
    Corner(u8, u8),
    /// The part of envelope box `0` reached by the halvings `1` (bit `d`:
    /// the upper half at depth `d`) was hidden by no single occluder.
    Unresolved(u8, u8),
    /// The answer was `false`, each envelope box (grown) lying in the
    /// shadow of one occluder: these, by box. While they still hide the
    /// three boxes the answer is `false` without casting the centre lines.
    /// It is the search's answer, except for a centre line that runs exactly
    /// along the seam between two touching map boxes inside an occluder:
    /// the search lets it through, the occluder blocks it, as the fog's held
    /// answers already do.
    Shadowed([u16; 3]),
}

/// The half of `b` (before growing) along its longest side: the upper one
/// when `upper`.
fn half(b: &LocalBox, upper: bool) -> LocalBox {
    let size = b.hi - b.lo;
    let axis = if size.x >= size.y && size.x >= size.z {
        0
    } else if size.y >= size.z {
        1
    } else {
        2
    };
    let mid = (b.lo[axis] + b.hi[axis]) * 0.5;
    let mut out = *b;
    if upper {
        out.lo[axis] = mid;
    } else {
        out.hi[axis] = mid;
    }
    out
}

/// One search of [`can_see`]: the viewer, the posed body and what was
/// learnt on the way.
struct Search<'a> {
    map: &'a Map,
    eye: Vec3,
    frame: Frame,
    margin: f32,
    blockers: Blockers,
    witness: Witness,
    /// The occluder that hid each whole envelope box, when one did.
    shadowed: [Option<u32>; 3],
}

impl Search<'_> {
    /// Sight of body-frame box `b` (envelope box `index`, reached by the
    /// halvings `path` at `depth`) grown by the margin: `false` once the
    /// grown box lies in one occluder's shadow, `true` when a corner of the
    /// whole envelope box is in view. Otherwise `b` (before growing, so the
    /// halves do not depend on the margin) is halved along its longest side
    /// and each grown half is judged the same way, `MAX_SPLITS` times at
    /// most; what is still unresolved then counts as in view.
    fn box_in_view(&mut self, b: &LocalBox, index: u8, depth: u32, path: u8) -> bool {
        let corners = self.frame.corners(&grown(b, self.margin));
        let sight = Sight::new(self.eye, &corners);
        // The centres were hidden, so most likely this is too: try every
        // occluder (a few slab tests each) before walking the corner lines.
        let shadow = self.blockers.one_shadows(self.map, &sight).or_else(|| {
            let k = any_shadows(self.map, &sight)?;
            self.blockers.remember(k);
            Some(k)
        });
        if let Some(k) = shadow {
            if depth == 0 {
                self.shadowed[usize::from(index) % 3] = Some(k);
            }
            return false;
        }
        // A corner in view settles it at once. Below the top level this is
        // not asked: a part with a corner in view can never be proven
        // hidden, so it ends unresolved, in view, all the same.
        if depth == 0
            && let Some(j) = corners
                .iter()
                .position(|&c| first_blocker(self.map, self.eye, c).is_none())
        {
            self.witness = Witness::Corner(index, j as u8);
            return true;
        }
        if depth == MAX_SPLITS {
            // Unresolved: count it as in view, so nothing is ever revealed late.
            self.witness = Witness::Unresolved(index, path);
            return true;
        }
        // Several occluders together hide the corners: look between them.
        self.box_in_view(&half(b, false), index, depth + 1, path)
            || self.box_in_view(&half(b, true), index, depth + 1, path | 1 << depth)
    }

    /// Whether `witness` still holds: then the full search answers `true`
    /// (`false` for [`Witness::Shadowed`]).
    fn holds(&self, witness: Witness, boxes: &[LocalBox; 3]) -> bool {
        match witness {
            Witness::None => false,
            Witness::Shadowed(by) => {
                let occluders = self.map.occluders().boxes();
                let shadows = |b: &LocalBox, k: u16| {
                    let corners = self.frame.corners(&grown(b, self.margin));
                    occluders
                        .get(usize::from(k))
                        .is_some_and(|o| Sight::new(self.eye, &corners).shadowed_by(o))
                };
                // One wall usually hides the whole body: then one test of the
                // box around all three parts settles it.
                (by[0] == by[1] && by[1] == by[2] && shadows(&hull(boxes), by[0]))
                    || boxes.iter().zip(by).all(|(b, k)| shadows(b, k))
            }
            Witness::Centre(i) => {
                let g = grown(&boxes[usize::from(i) % 3], self.margin);
                first_blocker(self.map, self.eye, self.frame.place((g.lo + g.hi) * 0.5)).is_none()
            }
            Witness::Corner(i, j) => {
                let g = grown(&boxes[usize::from(i) % 3], self.margin);
                let corner = self.frame.corners(&g)[usize::from(j) % 8];
                first_blocker(self.map, self.eye, corner).is_none()
            }
            Witness::Unresolved(i, path) => {
                let mut b = boxes[usize::from(i) % 3];
                for d in 0..MAX_SPLITS {
                    b = half(&b, path & (1 << d) != 0);
                }
                let corners = self.frame.corners(&grown(&b, self.margin));
                any_shadows(self.map, &Sight::new(self.eye, &corners)).is_none()
            }
        }
    }
}

/// How far a body grown by `margin` reaches from its feet, whatever its
/// pose: `(horizontal radius, lowest height, highest height)` above the
/// feet. Every envelope bound is monotonic in crouch and in the clamped
/// pitch, so the extremes are found at the ends of their ranges.
pub(crate) fn body_reach(margin: f32) -> (f32, f32, f32) {
    let mut radius = 0.0f32;
    let mut low = f32::INFINITY;
    let mut high = f32::NEG_INFINITY;
    for crouch in [0.0, 1.0] {
        for pitch in [-Pose::MAX_PITCH, 0.0, Pose::MAX_PITCH] {
            let pose = Pose {
                crouch,
                pitch,
                ..Pose::default()
            };
            for b in envelope(&pose) {
                let g = grown(&b, margin);
                let x = g.lo.x.abs().max(g.hi.x.abs());
                let z = g.lo.z.abs().max(g.hi.z.abs());
                radius = radius.max(x.hypot(z));
                low = low.min(g.lo.y);
                high = high.max(g.hi.y);
            }
        }
    }
    (radius, low, high)
}

/// Whether a viewer with its eye at `viewer_eye` may see a player posed as
/// `target`.
///
/// The body is held by three boxes (head, torso with arms, legs) that move
/// with its pose, each grown by `reveal_margin` metres sideways, forward,
/// back and up. The answer is:
/// - `true` when the centre or a corner of a box is in sight; so a target
///   peeking out of cover is revealed a little before any of its hitboxes
///   shows (by at most the box's slack plus the margin), never after;
/// - `false` when each box lies in the shadow of one occluder: the shadow a
///   convex box casts from a point is convex, so when it holds all eight
///   corners it holds the whole box and every hitbox in it. Occluders are
///   the map's boxes grown at load inside the solid space they make
///   together, so a wall built of touching boxes hides like one box.
/// - A box that no single occluder hides and whose corners are out of sight
///   is halved (twice at most, the halves taken before growing so they do
///   not depend on the margin) and its halves are judged the same way; a
///   part still unresolved then counts as in view. So a sliver of body seen
///   through the gap between two occluders is never missed, at the price of
///   sometimes sending a body that several occluders hide only together.
///   With the halves fixed, a larger margin never turns `true` into `false`.
///
/// Cheapest first: a visible target usually costs one line-of-sight test, a
/// target behind one wall three tests and a few box-segment checks per
/// occluder near the line. No allocation.
pub fn can_see(map: &Map, viewer_eye: Vec3, target: &Pose, reveal_margin: f32) -> bool {
    can_see_with(map, viewer_eye, target, reveal_margin, &mut Witness::None)
}

/// [`can_see`], trying first the `witness` of an earlier answer for the
/// same pair, and leaving in it the reason for this answer (or
/// [`Witness::None`]). The answer is the one `can_see` gives, but for the
/// seam case [`Witness::Shadowed`] describes.
pub(crate) fn can_see_with(
    map: &Map,
    viewer_eye: Vec3,
    target: &Pose,
    reveal_margin: f32,
    witness: &mut Witness,
) -> bool {
    let margin = if reveal_margin.is_finite() {
        reveal_margin.max(0.0)
    } else {
        0.0
    };
    // Eye and head centre both above every box (an open plaza): in view,
    // as the head-centre test below would find, without posing the body.
    if viewer_eye.y.min(head_centre_height(target, margin)) >= map.max_box_top() {
        *witness = Witness::None;
        return true;
    }
    let boxes = envelope(target);
    let mut search = Search {
        map,
        eye: viewer_eye,
        frame: Frame::new(target),
        margin,
        blockers: Blockers {
            found: [0; MAX_BLOCKERS],
            count: 0,
        },
        witness: Witness::None,
        shadowed: [None; 3],
    };
    if search.holds(*witness, &boxes) {
        return !matches!(*witness, Witness::Shadowed(_));
    }
    if let Witness::Shadowed(by) = *witness {
        // Some box moved out of its shadow: its old occluders are still the
        // likeliest to hide the others.
        for k in by {
            search.blockers.remember(u32::from(k));
        }
    }
    // Centres first: the common visible case ends here.
    for (i, b) in boxes.iter().enumerate() {
        let g = grown(b, margin);
        match first_blocker(map, viewer_eye, search.frame.place((g.lo + g.hi) * 0.5)) {
            None => {
                *witness = Witness::Centre(i as u8);
                return true;
            }
            Some(k) => search.blockers.remember_box(map, k),
        }
    }
    let seen = (0..3u8).any(|i| search.box_in_view(&boxes[usize::from(i)], i, 0, 0));
    *witness = match (seen, search.shadowed) {
        (false, [Some(a), Some(b), Some(c)]) => {
            match (u16::try_from(a), u16::try_from(b), u16::try_from(c)) {
                (Ok(a), Ok(b), Ok(c)) => Witness::Shadowed([a, b, c]),
                _ => Witness::None,
            }
        }
        _ => search.witness,
    };
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::hitbox::Hitboxes;

    /// A hitbox point in the body frame of `pose`.
    fn to_local(pose: &Pose, p: Vec3) -> Vec3 {
        let (s, c) = pose.yaw.sin_cos();
        let d = p - pose.position;
        Vec3::new(d.x * c - d.z * s, d.y, d.x * s + d.z * c)
    }

    #[test]
    fn a_carried_witness_answers_as_the_search_does() {
        let map = Map::builtin("dust_corners").unwrap();
        let mut unit = crate::world::map::unit_numbers(11);
        let (mut shadowed, mut changed) = (0, 0);
        for _ in 0..300 {
            let eye = Vec3::new(8.0 + unit() * 104.0, 1.6, 8.0 + unit() * 104.0);
            let mut target = Pose {
                position: Vec3::new(8.0 + unit() * 104.0, 0.0, 8.0 + unit() * 104.0),
                yaw: unit() * 6.0,
                ..Pose::default()
            };
            let step = Vec3::new(unit() - 0.5, 0.0, unit() - 0.5) * 0.6;
            let mut witness = Witness::None;
            let mut last = None;
            // The target walks in a straight line; the witness rides along.
            for _ in 0..40 {
                target.position += step;
                let seen = can_see_with(&map, eye, &target, 0.5, &mut witness);
                assert_eq!(seen, can_see(&map, eye, &target, 0.5), "{eye:?} {target:?}");
                shadowed += usize::from(matches!(witness, Witness::Shadowed(_)));
                changed += usize::from(last.is_some_and(|l| l != seen));
                last = Some(seen);
            }
        }
        assert!(
            shadowed > 500 && changed > 10,
            "{shadowed} shadowed, {changed} changes"
        );
    }

    #[test]
    fn frame_and_local_are_inverse() {
        let pose = Pose {
            position: Vec3::new(3.0, 1.0, -2.0),
            yaw: 2.2,
            ..Pose::default()
        };
        let p = Vec3::new(0.3, 1.2, -0.7);
        assert!((to_local(&pose, Frame::new(&pose).place(p)) - p).length() < 1e-5);
    }

    #[test]
    fn body_reach_holds_every_grown_envelope() {
        let margin = 0.4;
        let (radius, low, high) = body_reach(margin);
        for ci in 0..=4 {
            for pi in -6..=6 {
                for yi in 0..16 {
                    let pose = Pose {
                        position: Vec3::new(3.0, 0.5, -2.0),
                        yaw: yi as f32 * 0.4,
                        crouch: ci as f32 / 4.0,
                        pitch: pi as f32 * 0.3,
                        ..Pose::default()
                    };
                    let frame = Frame::new(&pose);
                    for b in envelope(&pose) {
                        for c in frame.corners(&grown(&b, margin)) {
                            let d = c - pose.position;
                            assert!(d.x.hypot(d.z) <= radius + 1e-4, "{pose:?}");
                            assert!(d.y >= low - 1e-4 && d.y <= high + 1e-4, "{pose:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn above_every_box_sight_is_immediate_and_agrees() {
        let map = Map::builtin("plaza").unwrap();
        let pose = Pose {
            position: Vec3::new(20.0, 0.0, 20.0),
            crouch: 1.0,
            ..Pose::default()
        };
        assert!(head_centre_height(&pose, 0.0) >= map.max_box_top());
        let frame = Frame::new(&pose);
        let head = grown(&envelope(&pose)[0], 0.3);
        let centre = frame.place((head.lo + head.hi) * 0.5);
        assert!((centre.y - head_centre_height(&pose, 0.3)).abs() < 1e-5);
        assert!(can_see(&map, Vec3::new(60.0, 1.64, 60.0), &pose, 0.3));
    }

    #[test]
    fn envelope_holds_every_hitbox() {
        // Which envelope box holds each hitbox (head and neck; torso and
        // arms; legs and feet).
        let group = [0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2];
        for ci in 0..=8 {
            for pi in 0..=16 {
                for si in 0..=8 {
                    for phase in 0..32 {
                        let pose = Pose {
                            position: Vec3::new(5.0, 0.5, 7.0),
                            yaw: 0.7,
                            crouch: ci as f32 / 8.0,
                            pitch: -Pose::MAX_PITCH + pi as f32 * Pose::MAX_PITCH / 8.0,
                            speed: si as f32,
                            locomotion_phase: phase as f32 / 32.0,
                        };
                        let boxes = envelope(&pose);
                        for (h, &g) in Hitboxes::from_pose(&pose).as_slice().iter().zip(&group) {
                            for end in [h.a, h.b] {
                                let l = to_local(&pose, end);
                                let b = boxes[g];
                                let inside = (l - Vec3::splat(h.radius)).cmpge(b.lo - 1e-4).all()
                                    && (l + Vec3::splat(h.radius)).cmple(b.hi + 1e-4).all();
                                assert!(inside, "{:?} of {pose:?} outside {b:?}: {l:?}", h.bone);
                            }
                        }
                    }
                }
            }
        }
    }
}
