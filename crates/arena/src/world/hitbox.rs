//! Hitboxes placed by the skeleton, and rays against them.

use glam::Vec3;

use crate::world::aabb::{Aabb, inverse_direction};

use crate::world::pose::Pose;
use crate::world::skeleton::{Bone, Skeleton, dims};

/// Where a shot landed on a body, for damage multipliers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HitZone {
    /// The head.
    Head,
    /// Chest and neck.
    Chest,
    /// Stomach and hips.
    Stomach,
    /// Upper arms and forearms.
    Arms,
    /// Thighs, shins and feet.
    Legs,
}

impl HitZone {
    /// Every zone.
    pub const ALL: [Self; 5] = [
        Self::Head,
        Self::Chest,
        Self::Stomach,
        Self::Arms,
        Self::Legs,
    ];

    /// The conventional damage multiplier of the zone (weapons may use their own).
    pub const fn damage_multiplier(self) -> f32 {
        match self {
            Self::Head => 4.0,
            Self::Chest | Self::Arms => 1.0,
            Self::Stomach => 1.25,
            Self::Legs => 0.75,
        }
    }
}

/// One hitbox: a capsule around the segment `a..b` (a sphere when `a == b`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hitbox {
    /// One end of the core segment.
    pub a: Vec3,
    /// The other end.
    pub b: Vec3,
    /// Radius around the segment.
    pub radius: f32,
    /// The zone a hit here counts as.
    pub zone: HitZone,
    /// The bone that placed it.
    pub bone: Bone,
}

/// Number of hitboxes per body.
pub const HITBOX_COUNT: usize = 15;

/// Hitbox layout: which bone places each, its radius and zone. Limbs run
/// from the bone's start to its end; the torso pieces are set in `place`.
const LIMBS: [(Bone, f32, HitZone); 10] = [
    (Bone::UpperArmL, 0.055, HitZone::Arms),
    (Bone::LowerArmL, 0.05, HitZone::Arms),
    (Bone::UpperArmR, 0.055, HitZone::Arms),
    (Bone::LowerArmR, 0.05, HitZone::Arms),
    (Bone::UpperLegL, 0.085, HitZone::Legs),
    (Bone::LowerLegL, 0.065, HitZone::Legs),
    (Bone::FootL, 0.05, HitZone::Legs),
    (Bone::UpperLegR, 0.085, HitZone::Legs),
    (Bone::LowerLegR, 0.065, HitZone::Legs),
    (Bone::FootR, 0.05, HitZone::Legs),
];

/// The hitboxes of one body, with a bounding box for quick rejection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hitboxes {
    boxes: [Hitbox; HITBOX_COUNT],
    bounds: Aabb,
}

/// A ray's hit on a body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyHit {
    /// The zone hit.
    pub zone: HitZone,
    /// Distance along the ray.
    pub distance: f32,
    /// The bone whose hitbox was hit.
    pub bone: Bone,
}

impl Hitboxes {
    /// Places the hitboxes of a posed skeleton.
    pub fn place(skeleton: &Skeleton) -> Self {
        let bone = |b: Bone| skeleton.bone(b);
        let head = skeleton.head_center();
        let spine = bone(Bone::Spine);
        let chest = bone(Bone::Chest);
        let neck = bone(Bone::Neck);
        let hips = (bone(Bone::UpperLegL).start, bone(Bone::UpperLegR).start);
        let torso = |a: Vec3, b: Vec3, radius: f32, zone: HitZone, bone: Bone| Hitbox {
            a,
            b,
            radius,
            zone,
            bone,
        };
        let mut boxes =
            [torso(head, head, dims::HEAD_RADIUS, HitZone::Head, Bone::Head); HITBOX_COUNT];
        boxes[1] = torso(neck.start, neck.end, 0.06, HitZone::Chest, Bone::Neck);
        // The chest capsule stops short of the neck so the shoulders stay round.
        boxes[2] = torso(
            chest.start,
            chest.start.lerp(chest.end, 0.55),
            0.17,
            HitZone::Chest,
            Bone::Chest,
        );
        boxes[3] = torso(spine.start, spine.end, 0.16, HitZone::Stomach, Bone::Spine);
        boxes[4] = torso(hips.0, hips.1, 0.14, HitZone::Stomach, Bone::Pelvis);
        for (slot, (b, radius, zone)) in boxes[5..].iter_mut().zip(LIMBS) {
            let t = bone(b);
            *slot = Hitbox {
                a: t.start,
                b: t.end,
                radius,
                zone,
                bone: b,
            };
        }
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for h in &boxes {
            lo = lo.min(h.a.min(h.b) - h.radius);
            hi = hi.max(h.a.max(h.b) + h.radius);
        }
        Self {
            boxes,
            bounds: Aabb::new(lo, hi),
        }
    }

    /// Evaluates the skeleton of `pose` and places its hitboxes.
    pub fn from_pose(pose: &Pose) -> Self {
        Self::place(&Skeleton::evaluate(pose))
    }

    /// All hitboxes; the head is first.
    pub fn as_slice(&self) -> &[Hitbox; HITBOX_COUNT] {
        &self.boxes
    }

    /// The head sphere.
    pub fn head(&self) -> &Hitbox {
        &self.boxes[0]
    }

    /// A box holding every hitbox.
    pub fn bounds(&self) -> &Aabb {
        &self.bounds
    }
}

/// The nearest hitbox hit by the ray `origin + dir * t`, `t` in
/// `[0, max_dist]` (`dir` is normalised here; a zero direction hits nothing).
/// Ties go to the earlier hitbox (the head first).
pub fn raycast_hitboxes(
    hitboxes: &Hitboxes,
    origin: Vec3,
    dir: Vec3,
    max_dist: f32,
) -> Option<BodyHit> {
    let dir = dir.normalize_or_zero();
    if dir == Vec3::ZERO || !origin.is_finite() || max_dist.is_nan() || max_dist < 0.0 {
        return None;
    }
    hitboxes
        .bounds()
        .ray_enter(origin, inverse_direction(dir), max_dist)?;
    let mut best: Option<BodyHit> = None;
    for h in hitboxes.as_slice() {
        if let Some(t) = ray_capsule(origin, dir, h.a, h.b, h.radius)
            && t <= max_dist
            && best.is_none_or(|b| t < b.distance)
        {
            best = Some(BodyHit {
                zone: h.zone,
                distance: t,
                bone: h.bone,
            });
        }
    }
    best
}

/// Distance to a sphere along a unit ray (0 when starting inside).
fn ray_sphere(o: Vec3, d: Vec3, c: Vec3, r: f32) -> Option<f32> {
    let oc = o - c;
    let b = oc.dot(d);
    let k = oc.dot(oc) - r * r;
    if k <= 0.0 {
        return Some(0.0);
    }
    if b > 0.0 {
        return None;
    }
    let disc = b * b - k;
    (disc >= 0.0).then(|| -b - disc.sqrt())
}

/// Distance to a capsule along a unit ray (0 when starting inside).
fn ray_capsule(o: Vec3, d: Vec3, a: Vec3, b: Vec3, r: f32) -> Option<f32> {
    let ba = b - a;
    let baba = ba.dot(ba);
    let oa = o - a;
    let mut best = f32::INFINITY;
    if baba > 1e-12 {
        // The side of the cylinder (between the end planes).
        let bard = ba.dot(d);
        let baoa = ba.dot(oa);
        let k2 = baba - bard * bard;
        let k1 = baba * oa.dot(d) - baoa * bard;
        let k0 = baba * oa.dot(oa) - baoa * baoa - r * r * baba;
        if k0 <= 0.0 && baoa >= 0.0 && baoa <= baba {
            return Some(0.0); // inside the cylinder part
        }
        if k2 > 1e-12 {
            let h = k1 * k1 - k2 * k0;
            if h >= 0.0 {
                let t = (-k1 - h.sqrt()) / k2;
                let y = baoa + t * bard;
                if t >= 0.0 && y > 0.0 && y < baba {
                    best = t;
                }
            }
        }
    }
    for end in [a, b] {
        if let Some(t) = ray_sphere(o, d, end, r) {
            best = best.min(t);
        }
        if baba <= 1e-12 {
            break;
        }
    }
    best.is_finite().then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ray_meets_the_capsule_side_and_caps() {
        let (a, b) = (Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0));
        let side = ray_capsule(Vec3::new(-2.0, 0.5, 0.0), Vec3::X, a, b, 0.25).unwrap();
        assert!((side - 1.75).abs() < 1e-5);
        let cap = ray_capsule(Vec3::new(0.0, 3.0, 0.0), Vec3::NEG_Y, a, b, 0.25).unwrap();
        assert!((cap - 1.75).abs() < 1e-5);
        // Along the axis from below.
        let up = ray_capsule(Vec3::new(0.0, -1.0, 0.0), Vec3::Y, a, b, 0.25).unwrap();
        assert!((up - 0.75).abs() < 1e-5);
        assert!(ray_capsule(Vec3::new(-2.0, 0.5, 0.3), Vec3::X, a, b, 0.25).is_none());
        assert_eq!(
            ray_capsule(Vec3::new(0.1, 0.5, 0.0), Vec3::X, a, b, 0.25),
            Some(0.0)
        );
    }

    #[test]
    fn sphere_hitbox_works_as_a_degenerate_capsule() {
        let c = Vec3::new(0.0, 1.0, 0.0);
        let t = ray_capsule(Vec3::new(-3.0, 1.0, 0.0), Vec3::X, c, c, 0.5).unwrap();
        assert!((t - 2.5).abs() < 1e-5);
        assert!(ray_capsule(Vec3::new(-3.0, 1.6, 0.0), Vec3::X, c, c, 0.5).is_none());
    }

    #[test]
    fn zones_cover_the_body_in_expected_places() {
        let h = Hitboxes::from_pose(&Pose::default());
        let shoot =
            |y: f32| raycast_hitboxes(&h, Vec3::new(0.0, y, -10.0), Vec3::Z, 100.0).map(|b| b.zone);
        assert_eq!(shoot(1.68), Some(HitZone::Head));
        assert_eq!(shoot(1.3), Some(HitZone::Chest));
        assert_eq!(shoot(1.02), Some(HitZone::Stomach));
        assert_eq!(shoot(0.5), None); // between the legs, standing still
        let leg = raycast_hitboxes(&h, Vec3::new(0.12, 0.5, -10.0), Vec3::Z, 100.0).unwrap();
        assert_eq!(leg.zone, HitZone::Legs);
        let arm = raycast_hitboxes(&h, Vec3::new(-10.0, 1.42, 0.4), Vec3::X, 100.0).unwrap();
        assert_eq!(arm.zone, HitZone::Arms);
    }
}
