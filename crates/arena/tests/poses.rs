//! Poses, skeleton and hitboxes: shots land where the body is, and poses
//! interpolate the way lag compensation needs.

use std::f32::consts::PI;

use glam::Vec3;
use hightick_arena::{
    BONE_COUNT, Bone, HitZone, Hitboxes, MoveState, Pose, Skeleton, Stance, raycast_hitboxes,
    view_direction,
};
use proptest::prelude::*;

fn poses() -> Vec<Pose> {
    let mut out = Vec::new();
    for (i, crouch) in [0.0f32, 0.5, 1.0].into_iter().enumerate() {
        for (j, yaw) in [-3.0f32, -1.0, 0.0, 1.6, 3.1].into_iter().enumerate() {
            for pitch in [-1.2f32, 0.0, 0.9] {
                out.push(Pose {
                    position: Vec3::new(10.0 + i as f32, 0.5, -4.0 + j as f32),
                    yaw,
                    pitch,
                    crouch,
                    locomotion_phase: 0.1 * (i + j) as f32,
                    speed: 2.0 * i as f32,
                });
            }
        }
    }
    out
}

#[test]
fn a_ray_at_the_head_hits_the_head_and_a_metre_above_misses() {
    for pose in poses() {
        let skeleton = Skeleton::evaluate(&pose);
        let body = Hitboxes::place(&skeleton);
        let head = skeleton.head_center();
        assert_eq!(body.head().a, head);
        // From 5 m away: from both sides, from above, and from behind unless
        // the head hangs forward over the neck (in front the weapon and arms
        // may cover the face, as they should).
        let forward = Vec3::new(pose.yaw.sin(), 0.0, pose.yaw.cos());
        let side = Vec3::new(forward.z, 0.0, -forward.x);
        let behind = if pose.pitch >= 0.0 { forward } else { side };
        for (angle, dir) in [(0, behind), (1, side), (2, -side), (3, Vec3::NEG_Y)] {
            let origin = head - dir * 5.0;
            let hit = raycast_hitboxes(&body, origin, dir, 100.0).expect("aimed at the head");
            assert_eq!(hit.zone, HitZone::Head, "{pose:?} from {angle}");
            assert_eq!(hit.bone, Bone::Head);
            assert!(
                (hit.distance - (5.0 - body.head().radius)).abs() < 1e-3,
                "{}",
                hit.distance
            );
            // The same ray a metre higher passes over the body (the one from
            // above, shifted a metre sideways, beside it).
            let shift = if dir.y == 0.0 { Vec3::Y } else { side };
            assert!(raycast_hitboxes(&body, origin + shift, dir, 100.0).is_none());
            // And a range short of the head reaches nothing.
            assert!(raycast_hitboxes(&body, origin, dir, 4.5).is_none());
        }
    }
}

#[test]
fn crouching_moves_the_head_down_so_a_standing_height_shot_misses() {
    let stand = Pose::default();
    let crouch = Pose {
        crouch: 1.0,
        ..stand
    };
    let head_height = Skeleton::evaluate(&stand).head_center().y;
    let origin = Vec3::new(0.0, head_height, -5.0);
    let standing = raycast_hitboxes(&Hitboxes::from_pose(&stand), origin, Vec3::Z, 10.0).unwrap();
    assert_eq!(standing.zone, HitZone::Head);
    assert!(raycast_hitboxes(&Hitboxes::from_pose(&crouch), origin, Vec3::Z, 10.0).is_none());
    assert_eq!(stand.stance(), Stance::Standing);
    assert_eq!(crouch.stance(), Stance::Crouching);
}

#[test]
fn aim_pitch_moves_head_and_hands() {
    let up = Skeleton::evaluate(&Pose {
        pitch: 1.2,
        ..Pose::default()
    });
    let down = Skeleton::evaluate(&Pose {
        pitch: -1.2,
        ..Pose::default()
    });
    assert!(up.bone(Bone::HandL).end.y > down.bone(Bone::HandL).end.y + 0.5);
    // Looking down tips the head forward, looking up tips it back.
    assert!(down.head_center().z > up.head_center().z + 0.2);
    // The hands point along the aim.
    let aim = view_direction(0.0, 1.2);
    let hand = up.bone(Bone::HandR);
    assert!((hand.end - hand.start).normalize().dot(aim) > 0.99);
    assert_eq!(up.bones().len(), BONE_COUNT);
}

#[test]
fn interpolation_yaw_takes_the_short_way_across_pi() {
    let a = Pose {
        yaw: PI - 0.1,
        ..Pose::default()
    };
    let b = Pose {
        yaw: -PI + 0.1,
        ..Pose::default()
    };
    let mid = a.lerp(&b, 0.5);
    // Half way is pi (wrapped), not 0.
    assert!(mid.yaw.abs() > PI - 1e-4, "{}", mid.yaw);
    for k in 0..=10 {
        let y = a.lerp(&b, k as f32 / 10.0).yaw;
        assert!(y.abs() >= PI - 0.1 - 1e-5, "step {k}: {y}");
    }
    // And the other way round.
    assert!(b.lerp(&a, 0.5).yaw.abs() > PI - 1e-4);
}

#[test]
fn interpolated_hitboxes_lie_between_the_recorded_ones() {
    let a = Pose {
        position: Vec3::new(0.0, 0.0, 0.0),
        speed: 6.0,
        locomotion_phase: 0.2,
        ..Pose::default()
    };
    let b = Pose {
        position: Vec3::new(0.2, 0.0, 0.1),
        speed: 6.0,
        locomotion_phase: 0.3,
        ..Pose::default()
    };
    let mid = Hitboxes::from_pose(&a.lerp(&b, 0.5)).head().a;
    let (ha, hb) = (
        Hitboxes::from_pose(&a).head().a,
        Hitboxes::from_pose(&b).head().a,
    );
    assert!((mid - (ha + hb) * 0.5).length() < 0.01);
}

#[test]
fn pose_follows_movement_state() {
    let state = MoveState {
        velocity: Vec3::new(3.0, -1.0, 4.0),
        crouch: 0.25,
        locomotion_phase: 1.25,
        ..MoveState::at(Vec3::new(1.0, 2.0, 3.0))
    };
    let pose = Pose::from_move_state(&state, 7.0, 3.0);
    assert_eq!(pose.position, state.position);
    assert_eq!(pose.speed, 5.0);
    assert!((pose.locomotion_phase - 0.25).abs() < 1e-6);
    assert!(pose.yaw >= -PI && pose.yaw < PI);
    assert_eq!(pose.pitch, Pose::MAX_PITCH);
}

fn pose_strategy() -> impl Strategy<Value = Pose> {
    (
        (-50.0f32..50.0, 0.0f32..5.0, -50.0f32..50.0),
        -PI..PI,
        -1.5f32..1.5,
        0.0f32..=1.0,
        0.0f32..1.0,
        0.0f32..7.0,
    )
        .prop_map(
            |((x, y, z), yaw, pitch, crouch, locomotion_phase, speed)| Pose {
                position: Vec3::new(x, y, z),
                yaw,
                pitch,
                crouch,
                locomotion_phase,
                speed,
            },
        )
}

fn angle_gap(a: f32, b: f32) -> f32 {
    let d = (a - b).rem_euclid(2.0 * PI);
    d.min(2.0 * PI - d)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn interpolation_hits_the_endpoints_exactly(a in pose_strategy(), b in pose_strategy()) {
        prop_assert_eq!(a.lerp(&b, 0.0), a);
        prop_assert_eq!(a.lerp(&b, 1.0), b);
    }

    #[test]
    fn interpolation_never_takes_the_long_way(a in pose_strategy(), b in pose_strategy(), t in 0.0f32..=1.0) {
        let m = a.lerp(&b, t);
        let total = angle_gap(a.yaw, b.yaw);
        // The interpolated yaw lies on the short arc: its gaps to both ends add up to it.
        prop_assert!((angle_gap(a.yaw, m.yaw) + angle_gap(m.yaw, b.yaw) - total).abs() < 1e-3);
        prop_assert!((angle_gap(a.yaw, m.yaw) - total * t).abs() < 1e-3);
        prop_assert!(m.yaw >= -PI && m.yaw < PI);
        prop_assert!(m.locomotion_phase >= 0.0 && m.locomotion_phase < 1.0);
        let phase_gap = |x: f32, y: f32| { let d = (x - y).rem_euclid(1.0); d.min(1.0 - d) };
        prop_assert!(phase_gap(a.locomotion_phase, m.locomotion_phase) <= phase_gap(a.locomotion_phase, b.locomotion_phase) + 1e-4);
        prop_assert!(m.is_finite());
        // Poses stay sane to evaluate.
        let body = Hitboxes::from_pose(&m);
        prop_assert!(body.as_slice().iter().all(|h| h.a.is_finite() && h.b.is_finite()));
    }
}
