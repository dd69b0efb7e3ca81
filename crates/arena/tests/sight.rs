//! Ray casts and line of sight: the grid finds exactly what a scan of every
//! box finds, walls block, the plaza is open, and `can_see` reveals a peeking
//! enemy early, never late.

use glam::Vec3;
use hightick_arena::{
    Aabb, HitZone, Hitboxes, Map, MovementParams, Pose, ShotOutcome, Surface, Team, can_see,
    line_of_sight, raycast_world, trace_shot,
};
use proptest::prelude::*;

fn eye() -> Vec3 {
    Vec3::Y * MovementParams::default().stand_eye_height
}

/// Reference slab test (entry distance), written independently of the crate.
fn brute_enter(b: &Aabb, o: Vec3, d: Vec3, max: f32) -> Option<f32> {
    let mut lo = 0.0f32;
    let mut hi = max;
    for i in 0..3 {
        if d[i].abs() < 1e-12 {
            if o[i] < b.min[i] || o[i] > b.max[i] {
                return None;
            }
        } else {
            let t1 = (b.min[i] - o[i]) / d[i];
            let t2 = (b.max[i] - o[i]) / d[i];
            lo = lo.max(t1.min(t2));
            hi = hi.min(t1.max(t2));
        }
    }
    (lo <= hi).then_some(lo)
}

fn brute_nearest_box(map: &Map, o: Vec3, d: Vec3, max: f32) -> Option<f32> {
    map.boxes()
        .iter()
        .filter_map(|b| brute_enter(b, o, d, max))
        .reduce(f32::min)
}

fn brute_clear(map: &Map, a: Vec3, b: Vec3) -> bool {
    let d = b - a;
    let len = d.length();
    let dir = d / len;
    map.boxes().iter().all(|bx| {
        // Blocked only when the segment runs through the interior.
        let mut lo = 0.0f32;
        let mut hi = len;
        for i in 0..3 {
            if dir[i] == 0.0 {
                if a[i] <= bx.min[i] || a[i] >= bx.max[i] {
                    return true;
                }
            } else {
                let t1 = (bx.min[i] - a[i]) / dir[i];
                let t2 = (bx.max[i] - a[i]) / dir[i];
                lo = lo.max(t1.min(t2));
                hi = hi.min(t1.max(t2));
            }
        }
        lo >= hi
    })
}

fn point_in(map: &Map) -> impl Strategy<Value = Vec3> + use<> {
    let b = *map.bounds();
    (b.min.x..b.max.x, 0.0f32..8.0, b.min.z..b.max.z).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn grid_raycast_agrees_with_scanning_every_box(
        a in point_in(&Map::builtin("dust_corners").unwrap()),
        b in point_in(&Map::builtin("dust_corners").unwrap()),
    ) {
        let map = Map::builtin("dust_corners").unwrap();
        let d = (b - a).normalize();
        let max = 200.0;
        let hit = raycast_world(&map, a, d, max);
        let brute_box = brute_nearest_box(&map, a, d, max);
        match hit {
            Some(h) if matches!(h.surface, Surface::Box(_)) => {
                let expected = brute_box.expect("brute force finds a box too");
                prop_assert!((h.distance - expected).abs() < 1e-3, "{h:?} vs {expected}");
            }
            Some(h) => {
                // Floor or boundary first: no box is nearer.
                prop_assert!(brute_box.is_none_or(|t| t >= h.distance - 1e-3), "{h:?} vs {brute_box:?}");
            }
            None => prop_assert!(brute_box.is_none()),
        }
        prop_assert_eq!(line_of_sight(&map, a, b), brute_clear(&map, a, b));
        prop_assert_eq!(line_of_sight(&map, a, b), line_of_sight(&map, b, a));
    }
}

#[test]
fn world_rays_report_distance_normal_and_surface() {
    let map = Map::builtin("plaza").unwrap();
    // The fountain basin: 36..44 x 0..0.8 x 36..44.
    let hit = raycast_world(&map, Vec3::new(30.0, 0.5, 40.0), Vec3::X, 100.0).unwrap();
    assert!((hit.distance - 6.0).abs() < 1e-5);
    assert_eq!(hit.normal, Vec3::NEG_X);
    assert_eq!(hit.surface, Surface::Box(0));
    assert!((hit.point - Vec3::new(36.0, 0.5, 40.0)).length() < 1e-5);
    // Down onto the floor, out to a side wall, up into the open sky.
    let floor = raycast_world(&map, Vec3::new(10.0, 2.0, 10.0), Vec3::NEG_Y, 100.0).unwrap();
    assert_eq!(
        (floor.surface, floor.distance, floor.normal),
        (Surface::Floor, 2.0, Vec3::Y)
    );
    let wall = raycast_world(&map, Vec3::new(10.0, 2.0, 10.0), Vec3::NEG_X, 100.0).unwrap();
    assert_eq!((wall.surface, wall.distance), (Surface::Boundary, 10.0));
    assert!(raycast_world(&map, Vec3::new(10.0, 2.0, 10.0), Vec3::Y, 100.0).is_none());
    // Too short, or no direction.
    assert!(raycast_world(&map, Vec3::new(30.0, 0.5, 40.0), Vec3::X, 5.0).is_none());
    assert!(raycast_world(&map, Vec3::new(30.0, 0.5, 40.0), Vec3::ZERO, 5.0).is_none());
}

#[test]
fn walls_block_sight_and_the_open_yard_does_not() {
    let map = Map::builtin("dust_corners").unwrap();
    let attacker = map.spawn_point(Team::Attackers, 0, 0).position + eye();
    let defender = map.spawn_point(Team::Defenders, 0, 0).position + eye();
    assert!(!line_of_sight(&map, attacker, defender));
    // Across the building between long A (x 8..16) and mid (x 56..64).
    assert!(!line_of_sight(
        &map,
        Vec3::new(12.0, 1.6, 40.0),
        Vec3::new(60.0, 1.6, 40.0)
    ));
    // Along the long A corridor, and between two attackers in their yard.
    assert!(line_of_sight(
        &map,
        Vec3::new(12.0, 1.6, 20.0),
        Vec3::new(12.0, 1.6, 36.0)
    ));
    let mate = map.spawn_point(Team::Attackers, 4, 0).position + eye();
    assert!(line_of_sight(&map, attacker, mate));
    // Over a 1.1 m low wall standing, not crouching behind it.
    assert!(line_of_sight(
        &map,
        Vec3::new(48.0, 1.64, 55.0),
        Vec3::new(48.0, 1.64, 61.0)
    ));
    assert!(!line_of_sight(
        &map,
        Vec3::new(48.0, 0.9, 55.0),
        Vec3::new(48.0, 0.9, 61.0)
    ));
}

#[test]
fn all_hundred_plaza_spawns_see_each_other() {
    let map = Map::builtin("plaza").unwrap();
    let params = MovementParams::default();
    let players: Vec<Pose> = Team::ALL
        .iter()
        .flat_map(|&team| (0..50).map(move |slot| (team, slot)))
        .map(|(team, slot)| {
            let s = map.spawn_point(team, slot, 42);
            Pose {
                position: s.position,
                yaw: s.yaw,
                ..Pose::default()
            }
        })
        .collect();
    assert_eq!(players.len(), 100);
    for (i, a) in players.iter().enumerate() {
        for (j, b) in players.iter().enumerate() {
            if i != j {
                assert!(
                    line_of_sight(&map, a.eye(&params), b.eye(&params)),
                    "{i} -> {j}"
                );
                assert!(can_see(&map, a.eye(&params), b, 0.0), "{i} -> {j}");
            }
        }
    }
    // The low objects really are low: crouched eyes are still above them.
    assert!(map.max_box_top() < params.crouch_eye_height);
}

/// Points on the surface of every hitbox of a body.
fn surface_samples(body: &Hitboxes) -> Vec<Vec3> {
    let mut out = Vec::new();
    let dirs = [
        Vec3::X,
        Vec3::NEG_X,
        Vec3::Z,
        Vec3::NEG_Z,
        Vec3::new(1.0, 0.0, 1.0).normalize(),
        Vec3::new(-1.0, 0.0, 1.0).normalize(),
        Vec3::new(1.0, 0.0, -1.0).normalize(),
        Vec3::new(-1.0, 0.0, -1.0).normalize(),
        Vec3::Y,
        Vec3::NEG_Y,
    ];
    for h in body.as_slice() {
        for k in 0..=4 {
            let c = h.a.lerp(h.b, k as f32 / 4.0);
            out.extend(dirs.iter().map(|d| c + *d * (h.radius * 0.99)));
        }
    }
    out
}

fn any_sample_visible(map: &Map, eye: Vec3, body: &Hitboxes) -> bool {
    surface_samples(body)
        .iter()
        .any(|p| line_of_sight(map, eye, *p))
}

/// A wall along z = 9..10 from x = 0 to the corner at x = 10.
const CORNER: &str = r#"name = "corner"
players_per_team = 1
[bounds]
min = [0, 0, 0]
max = [30, 10, 30]
[[boxes]]
min = [0, 0, 9]
max = [10, 4, 10]
[[boxes]]
min = [12, 0, 2]
max = [13, 1.0, 8]
[[spawns]]
team = "attackers"
min = [2, 0, 20]
max = [8, 0, 28]
[[spawns]]
team = "defenders"
min = [2, 0, 2]
max = [8, 0, 6]
"#;

#[test]
fn a_peeking_enemy_is_revealed_early_never_late() {
    let map = Map::from_toml_str("corner.toml", CORNER).unwrap();
    let viewer = Vec3::new(5.0, 1.64, 20.0);
    for (yaw, speed, crouch) in [
        (std::f32::consts::FRAC_PI_2, 3.0, 0.0), // walking out toward +x, weapon first
        (0.0, 0.0, 0.0),                         // facing the viewer, side-stepping
        (std::f32::consts::FRAC_PI_2, 2.0, 1.0), // crouch-walking out
    ] {
        let mut revealed_at = None;
        let mut visible_at = None;
        for step in 0..400 {
            let x = 6.0 + step as f32 * 0.02;
            let pose = Pose {
                position: Vec3::new(x, 0.0, 5.0),
                yaw,
                pitch: 0.0,
                crouch,
                locomotion_phase: (x / 1.6).fract(),
                speed,
            };
            let seen = can_see(&map, viewer, &pose, 0.2);
            let truly = any_sample_visible(&map, viewer, &Hitboxes::from_pose(&pose));
            assert!(
                seen || !truly,
                "late at x = {x} (yaw {yaw}, crouch {crouch})"
            );
            if seen && revealed_at.is_none() {
                revealed_at = Some(x);
            }
            if truly && visible_at.is_none() {
                visible_at = Some(x);
            }
        }
        let (revealed, visible) = (revealed_at.unwrap(), visible_at.unwrap());
        // Early, but only a little: within a metre of the first visible hitbox.
        assert!(
            revealed < visible && visible - revealed < 1.0,
            "{revealed} vs {visible}"
        );
    }
}

#[test]
fn standing_up_behind_a_crate_is_revealed_before_the_head_shows() {
    let map = Map::from_toml_str("corner.toml", CORNER).unwrap();
    // The crate at x 12..13, 1.0 m tall; the target crouches behind it.
    let viewer = Vec3::new(20.0, 1.0, 5.0);
    let mut revealed_at = None;
    for step in 0..=100 {
        let crouch = 1.0 - step as f32 / 100.0;
        let pose = Pose {
            position: Vec3::new(11.0, 0.0, 5.0),
            yaw: std::f32::consts::FRAC_PI_2,
            crouch,
            ..Pose::default()
        };
        let seen = can_see(&map, viewer, &pose, 0.1);
        let truly = any_sample_visible(&map, viewer, &Hitboxes::from_pose(&pose));
        assert!(seen || !truly, "late at crouch {crouch}");
        if seen && revealed_at.is_none() {
            revealed_at = Some(step);
        }
    }
    assert!(revealed_at.is_some());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn can_see_is_never_late_on_dust_corners(
        viewer in point_in(&Map::builtin("dust_corners").unwrap()),
        target in point_in(&Map::builtin("dust_corners").unwrap()),
        yaw in -std::f32::consts::PI..std::f32::consts::PI,
        pitch in -1.2f32..1.2,
        crouch in prop_oneof![Just(0.0f32), Just(1.0f32), 0.0f32..1.0],
        phase in 0.0f32..1.0,
        speed in 0.0f32..6.0,
    ) {
        let map = Map::builtin("dust_corners").unwrap();
        let params = MovementParams::default();
        let capsule = params.capsule(crouch);
        let feet = Vec3::new(target.x, 0.0, target.z);
        let eye_feet = Vec3::new(viewer.x, 0.0, viewer.z);
        prop_assume!(map.capsule_fits(feet, capsule) && map.capsule_fits(eye_feet, params.capsule(0.0)));
        let pose = Pose { position: feet, yaw, pitch, crouch, locomotion_phase: phase, speed };
        let eye = eye_feet + Vec3::Y * params.stand_eye_height;
        let truly = any_sample_visible(&map, eye, &Hitboxes::from_pose(&pose));
        prop_assert!(can_see(&map, eye, &pose, 0.1) || !truly);
    }
}

#[test]
fn walls_stop_shots_that_would_hit_a_body_behind_them() {
    let map = Map::from_toml_str("corner.toml", CORNER).unwrap();
    let behind = Hitboxes::from_pose(&Pose {
        position: Vec3::new(5.0, 0.0, 5.0),
        ..Pose::default()
    });
    let in_front = Hitboxes::from_pose(&Pose {
        position: Vec3::new(5.0, 0.0, 15.0),
        ..Pose::default()
    });
    let muzzle = Vec3::new(5.0, 1.6, 25.0);
    let head_behind = behind.head().a;
    // The wall (z 9..10) is nearer than the body behind it.
    match trace_shot(&map, muzzle, head_behind - muzzle, 100.0, [(7u32, &behind)]) {
        ShotOutcome::World(hit) => assert_eq!(hit.surface, Surface::Box(0)),
        other => panic!("{other:?}"),
    }
    // The body in front of the wall is hit, even with another behind it.
    let head_front = in_front.head().a;
    match trace_shot(
        &map,
        muzzle,
        head_front - muzzle,
        100.0,
        [(7u32, &behind), (9, &in_front)],
    ) {
        ShotOutcome::Body { target, hit } => {
            assert_eq!(target, 9);
            assert_eq!(hit.zone, HitZone::Head);
        }
        other => panic!("{other:?}"),
    }
    // Out of range: a miss.
    assert_eq!(
        trace_shot(&map, muzzle, Vec3::Y, 5.0, [(9u32, &in_front)]),
        ShotOutcome::<u32>::Miss
    );
}
