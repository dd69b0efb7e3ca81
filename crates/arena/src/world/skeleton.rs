//! A 17-bone skeleton posed procedurally from a [`Pose`]: legs swing with the
//! locomotion phase and speed, crouching lowers the pelvis and bends the
//! knees (two-bone IK keeps the feet on the ground), the torso and head follow
//! the aim pitch, and both hands hold a weapon along the aim.

use std::f32::consts::TAU;

use glam::{Quat, Vec3};

use crate::world::pose::Pose;

/// The bones, parents before children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Bone {
    /// Hips to lower spine.
    Pelvis,
    /// Lower to upper spine.
    Spine,
    /// Upper spine to the base of the neck.
    Chest,
    /// Neck to the head joint.
    Neck,
    /// Head joint to the top of the head.
    Head,
    /// Left shoulder to elbow.
    UpperArmL,
    /// Left elbow to wrist.
    LowerArmL,
    /// Left wrist to fingertips.
    HandL,
    /// Right shoulder to elbow.
    UpperArmR,
    /// Right elbow to wrist.
    LowerArmR,
    /// Right wrist to fingertips.
    HandR,
    /// Left hip to knee.
    UpperLegL,
    /// Left knee to ankle.
    LowerLegL,
    /// Left ankle to toes.
    FootL,
    /// Right hip to knee.
    UpperLegR,
    /// Right knee to ankle.
    LowerLegR,
    /// Right ankle to toes.
    FootR,
}

/// Number of bones.
pub const BONE_COUNT: usize = 17;

impl Bone {
    /// Every bone, in index order.
    pub const ALL: [Self; BONE_COUNT] = [
        Self::Pelvis,
        Self::Spine,
        Self::Chest,
        Self::Neck,
        Self::Head,
        Self::UpperArmL,
        Self::LowerArmL,
        Self::HandL,
        Self::UpperArmR,
        Self::LowerArmR,
        Self::HandR,
        Self::UpperLegL,
        Self::LowerLegL,
        Self::FootL,
        Self::UpperLegR,
        Self::LowerLegR,
        Self::FootR,
    ];

    /// Index into per-bone arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The bone this one hangs from (`None` for the pelvis, the root).
    pub const fn parent(self) -> Option<Self> {
        use Bone::{
            Chest, FootL, FootR, HandL, HandR, Head, LowerArmL, LowerArmR, LowerLegL, LowerLegR,
            Neck, Pelvis, Spine, UpperArmL, UpperArmR, UpperLegL, UpperLegR,
        };
        Some(match self {
            Pelvis => return None,
            Spine | UpperLegL | UpperLegR => Pelvis,
            Chest => Spine,
            Neck | UpperArmL | UpperArmR => Chest,
            Head => Neck,
            LowerArmL => UpperArmL,
            HandL => LowerArmL,
            LowerArmR => UpperArmR,
            HandR => LowerArmR,
            LowerLegL => UpperLegL,
            FootL => LowerLegL,
            LowerLegR => UpperLegR,
            FootR => LowerLegR,
        })
    }
}

/// Body proportions, metres. Feet at height 0, standing upright.
pub mod dims {
    /// Hip-joint centre (pelvis root) height standing.
    pub const PELVIS_HEIGHT: f32 = 0.95;
    /// How far a full crouch lowers the pelvis.
    pub const CROUCH_DROP: f32 = 0.46;
    /// Pelvis root to lower spine.
    pub const SPINE: f32 = 0.15;
    /// Lower spine to upper spine (chest joint).
    pub const CHEST: f32 = 0.2;
    /// Chest joint to the base of the neck.
    pub const NECK_BASE: f32 = 0.2;
    /// Neck base to head joint.
    pub const NECK: f32 = 0.08;
    /// Head joint to the centre of the head.
    pub const HEAD_CENTER: f32 = 0.1;
    /// Head sphere radius.
    pub const HEAD_RADIUS: f32 = 0.12;
    /// Shoulder height above the chest joint, along the chest.
    pub const SHOULDER_RISE: f32 = 0.16;
    /// Half the shoulder width.
    pub const SHOULDER_HALF_WIDTH: f32 = 0.19;
    /// Upper arm length.
    pub const UPPER_ARM: f32 = 0.28;
    /// Forearm length.
    pub const LOWER_ARM: f32 = 0.26;
    /// Hand length.
    pub const HAND: f32 = 0.09;
    /// Half the hip width.
    pub const HIP_HALF_WIDTH: f32 = 0.1;
    /// Hip joints below the pelvis root.
    pub const HIP_DROP: f32 = 0.04;
    /// Thigh length.
    pub const THIGH: f32 = 0.43;
    /// Shin length.
    pub const SHIN: f32 = 0.42;
    /// Ankle height above the sole.
    pub const ANKLE_HEIGHT: f32 = 0.08;
    /// Ankle to toes.
    pub const FOOT: f32 = 0.18;
    /// Running speed at which the stride reaches full size, m/s.
    pub const FULL_STRIDE_SPEED: f32 = 6.0;
    /// Foot reach forward and back at full stride.
    pub const STRIDE_REACH: f32 = 0.32;
    /// Foot lift at full stride.
    pub const STRIDE_LIFT: f32 = 0.12;
}

/// One bone placed in the world: from its joint to its child's joint.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BoneTransform {
    /// The bone's own joint (its pivot).
    pub start: Vec3,
    /// Where the bone ends (its child's joint, or its tip).
    pub end: Vec3,
}

/// The posed skeleton of one player, in world space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Skeleton {
    bones: [BoneTransform; BONE_COUNT],
    yaw: f32,
    head_center: Vec3,
}

/// Places body-local points (x left, y up, z forward) in the world.
#[derive(Clone, Copy)]
struct BodyFrame {
    origin: Vec3,
    sin: f32,
    cos: f32,
}

impl BodyFrame {
    fn place(&self, p: Vec3) -> Vec3 {
        // Rotation about +y by yaw: +z turns toward +x.
        Vec3::new(
            self.origin.x + p.x * self.cos + p.z * self.sin,
            self.origin.y + p.y,
            self.origin.z - p.x * self.sin + p.z * self.cos,
        )
    }
}

/// Direction tilted forward from straight up by `angle` (negative leans back).
fn tilt(angle: f32) -> Vec3 {
    let (s, c) = angle.sin_cos();
    Vec3::new(0.0, c, s)
}

/// Two-bone IK: the middle joint and reachable end for a chain of lengths
/// `l1`, `l2` from `root` toward `target`, bending toward `pole`.
fn two_bone(root: Vec3, target: Vec3, l1: f32, l2: f32, pole: Vec3) -> (Vec3, Vec3) {
    let d = target - root;
    let len = d.length();
    let dir = if len > 1e-6 { d / len } else { Vec3::NEG_Y };
    let reach = len.clamp((l1 - l2).abs() + 1e-4, l1 + l2 - 1e-4);
    let cos_a = ((l1 * l1 + reach * reach - l2 * l2) / (2.0 * l1 * reach)).clamp(-1.0, 1.0);
    let sin_a = (1.0 - cos_a * cos_a).max(0.0).sqrt();
    let off_axis = pole - dir * pole.dot(dir);
    let off_len2 = off_axis.length_squared();
    let bend = if off_len2 > 1e-12 {
        off_axis * off_len2.sqrt().recip()
    } else {
        dir.any_orthonormal_vector()
    };
    (
        root + dir * (l1 * cos_a) + bend * (l1 * sin_a),
        root + dir * reach,
    )
}

impl Skeleton {
    /// Poses the skeleton. Pure arithmetic: no allocation, same pose in,
    /// same skeleton out.
    pub fn evaluate(pose: &Pose) -> Self {
        use dims::*;
        let crouch = pose.crouch.clamp(0.0, 1.0);
        let gait = (pose.speed / FULL_STRIDE_SPEED).clamp(0.0, 1.25);
        let cycle = pose.locomotion_phase * TAU;
        let pitch = crate::world::pose::clamp_pitch(pose.pitch);
        let (sin_yaw, cos_yaw) = pose.yaw.sin_cos();
        let frame = BodyFrame {
            origin: pose.position,
            sin: sin_yaw,
            cos: cos_yaw,
        };
        let mut bones = [BoneTransform::default(); BONE_COUNT];
        let mut set = |bone: Bone, start: Vec3, end: Vec3| {
            bones[bone.index()] = BoneTransform {
                start: frame.place(start),
                end: frame.place(end),
            };
        };

        // Torso: lean forward with speed and crouch, bend back/forward with aim.
        let bob = 0.025 * gait * (1.0 - (2.0 * cycle).cos()) * 0.5;
        let pelvis = Vec3::new(0.0, PELVIS_HEIGHT - CROUCH_DROP * crouch - bob, 0.0);
        let lean = 0.06 * gait.min(1.0) + 0.3 * crouch;
        let bend = |k: f32| tilt(lean * (1.0 - k) - pitch * k);
        let spine = pelvis + bend(0.15) * SPINE;
        let chest_dir = bend(0.35);
        let chest = spine + chest_dir * CHEST;
        let neck_dir = bend(0.6);
        let neck = chest + chest_dir * NECK_BASE;
        let head_joint = neck + neck_dir * NECK;
        let head_dir = bend(1.0);
        let head_center = head_joint + head_dir * HEAD_CENTER;
        set(Bone::Pelvis, pelvis, spine);
        set(Bone::Spine, spine, chest);
        set(Bone::Chest, chest, neck);
        set(Bone::Neck, neck, head_joint);
        set(Bone::Head, head_joint, head_center + head_dir * HEAD_RADIUS);

        // Arms: both hands on a weapon held along the aim.
        let (sp, cp) = pitch.sin_cos();
        let aim = Vec3::new(0.0, sp, cp);
        let aim_up = Vec3::new(0.0, cp, -sp);
        let shoulder_mid = chest + chest_dir * SHOULDER_RISE;
        let grips = [
            // Left (support) hand further along the barrel, right on the grip.
            shoulder_mid + aim * 0.56 - aim_up * 0.05 + Vec3::X * 0.02,
            shoulder_mid + aim * 0.34 - aim_up * 0.09 - Vec3::X * 0.06,
        ];
        let arm_bones = [
            [Bone::UpperArmL, Bone::LowerArmL, Bone::HandL],
            [Bone::UpperArmR, Bone::LowerArmR, Bone::HandR],
        ];
        for (side, (grip, names)) in [1.0f32, -1.0]
            .into_iter()
            .zip(grips.into_iter().zip(arm_bones))
        {
            let shoulder = shoulder_mid + Vec3::X * (side * SHOULDER_HALF_WIDTH);
            let pole = Vec3::new(side * 0.7, -1.0, -0.3);
            let (elbow, wrist) = two_bone(shoulder, grip, UPPER_ARM, LOWER_ARM, pole);
            set(names[0], shoulder, elbow);
            set(names[1], elbow, wrist);
            set(names[2], wrist, wrist + aim * HAND);
        }

        // Legs: feet swing with the cycle, half a cycle apart; IK keeps the
        // knees bending forward whatever the pelvis height.
        let leg_bones = [
            [Bone::UpperLegL, Bone::LowerLegL, Bone::FootL],
            [Bone::UpperLegR, Bone::LowerLegR, Bone::FootR],
        ];
        for (i, (side, names)) in [1.0f32, -1.0].into_iter().zip(leg_bones).enumerate() {
            let (s, c) = (cycle + i as f32 * std::f32::consts::PI).sin_cos();
            let hip = pelvis + Vec3::new(side * HIP_HALF_WIDTH, -HIP_DROP, 0.0);
            let ankle_target = Vec3::new(
                side * (0.11 + 0.05 * crouch),
                ANKLE_HEIGHT + STRIDE_LIFT * gait * c.max(0.0),
                STRIDE_REACH * gait * s + 0.12 * crouch,
            );
            let (knee, ankle) = two_bone(hip, ankle_target, THIGH, SHIN, Vec3::Z);
            set(names[0], hip, knee);
            set(names[1], knee, ankle);
            set(
                names[2],
                ankle,
                ankle + Vec3::new(0.0, -ANKLE_HEIGHT * 0.5, FOOT),
            );
        }

        Self {
            bones,
            yaw: pose.yaw,
            head_center: frame.place(head_center),
        }
    }

    /// Where `bone` is.
    pub fn bone(&self, bone: Bone) -> &BoneTransform {
        &self.bones[bone.index()]
    }

    /// Every bone, in [`Bone::ALL`] order.
    pub fn bones(&self) -> &[BoneTransform; BONE_COUNT] {
        &self.bones
    }

    /// The centre of the head sphere.
    pub fn head_center(&self) -> Vec3 {
        self.head_center
    }

    /// The world rotation of `bone`: its local +y runs from start to end,
    /// its local +z faces the body's forward as closely as it can.
    pub fn bone_rotation(&self, bone: Bone) -> Quat {
        let b = self.bone(bone);
        let yaw = Quat::from_rotation_y(self.yaw);
        let local_dir = yaw.inverse() * (b.end - b.start).normalize_or(Vec3::Y);
        yaw * Quat::from_rotation_arc(Vec3::Y, local_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bone_len(s: &Skeleton, b: Bone) -> f32 {
        s.bone(b).start.distance(s.bone(b).end)
    }

    #[test]
    fn parents_come_before_children() {
        for b in Bone::ALL {
            if let Some(p) = b.parent() {
                assert!(p.index() < b.index());
            }
            assert_eq!(Bone::ALL[b.index()], b);
        }
    }

    #[test]
    fn limbs_keep_their_lengths_in_any_pose() {
        for (crouch, speed, phase, pitch) in [
            (0.0, 0.0, 0.0, 0.0),
            (1.0, 2.0, 0.3, -1.2),
            (0.4, 6.0, 0.77, 1.5),
        ] {
            let s = Skeleton::evaluate(&Pose {
                crouch,
                speed,
                locomotion_phase: phase,
                pitch,
                yaw: 2.0,
                position: Vec3::new(10.0, 1.0, -3.0),
            });
            assert!((bone_len(&s, Bone::UpperLegL) - dims::THIGH).abs() < 1e-4);
            assert!((bone_len(&s, Bone::LowerLegR) - dims::SHIN).abs() < 1e-3);
            assert!((bone_len(&s, Bone::UpperArmR) - dims::UPPER_ARM).abs() < 1e-4);
            // Feet stay near the ground, head above the hips.
            assert!(s.bone(Bone::FootL).start.y - 1.0 < 0.25);
            assert!(s.head_center().y > s.bone(Bone::Pelvis).start.y);
        }
    }

    #[test]
    fn crouching_lowers_the_head_and_yaw_turns_the_body() {
        let stand = Skeleton::evaluate(&Pose::default());
        let crouch = Skeleton::evaluate(&Pose {
            crouch: 1.0,
            ..Pose::default()
        });
        assert!(
            (stand.head_center().y - 1.68).abs() < 0.01,
            "{:?}",
            stand.head_center()
        );
        assert!(crouch.head_center().y < stand.head_center().y - 0.35);
        assert!(crouch.head_center().y + dims::HEAD_RADIUS < crate::world::movement::CROUCH_HEIGHT);
        // Facing +x: the hands are ahead along +x.
        let turned = Skeleton::evaluate(&Pose {
            yaw: std::f32::consts::FRAC_PI_2,
            ..Pose::default()
        });
        assert!(turned.bone(Bone::HandR).end.x > 0.3);
        let r = turned.bone_rotation(Bone::Spine);
        assert!((r * Vec3::Y - Vec3::Y).length() < 0.2);
    }

    #[test]
    fn legs_swing_opposite_with_the_phase() {
        let s = Skeleton::evaluate(&Pose {
            speed: 6.0,
            locomotion_phase: 0.25,
            ..Pose::default()
        });
        let left = s.bone(Bone::FootL).start.z;
        let right = s.bone(Bone::FootR).start.z;
        assert!(left > 0.2 && right < -0.2, "{left} {right}");
    }
}
