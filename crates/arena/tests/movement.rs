//! Movement with collision: capsules never end inside boxes, slide along
//! walls keeping the tangential motion, jump, crouch, stay in fences; and the
//! check of claimed moves clamps or rejects impossible ones.

use glam::{Vec2, Vec3};
use hightick_arena::{
    Aabb, Map, MoveInput, MoveState, MoveVerdict, MoveViolation, MovementLimits, MovementParams,
    Team, check_displacement, move_and_slide, move_and_slide_within,
};
use proptest::prelude::*;

const TICK: f32 = 1.0 / 128.0;

/// A 40 x 40 m room split by a wall at x = 20..21, with a floating slab
/// (1.5 m up) to crouch under and a 0.6 m platform to jump on.
const ROOM: &str = r#"name = "room"
players_per_team = 1
[bounds]
min = [0, 0, 0]
max = [40, 10, 40]
[[boxes]]
min = [20, 0, 0]
max = [21, 4, 40]
[[boxes]]
min = [5, 1.5, 5]
max = [9, 2.0, 9]
[[boxes]]
min = [30, 0, 30]
max = [34, 0.6, 34]
[[spawns]]
team = "attackers"
min = [2, 0, 20]
max = [4, 0, 24]
[[spawns]]
team = "defenders"
min = [36, 0, 20]
max = [38, 0, 24]
"#;

fn room() -> Map {
    Map::from_toml_str("room.toml", ROOM).unwrap()
}

fn run(map: &Map, params: &MovementParams, state: &mut MoveState, input: &MoveInput, ticks: usize) {
    for _ in 0..ticks {
        move_and_slide(map, params, state, input, TICK);
    }
}

fn toward(dir: Vec2) -> MoveInput {
    MoveInput {
        wish_dir: dir,
        ..MoveInput::default()
    }
}

#[test]
fn running_reaches_run_speed_and_walking_and_crouching_are_slower() {
    let map = room();
    let p = MovementParams::default();
    for (input, speed) in [
        (toward(Vec2::Y), p.run_speed),
        (
            MoveInput {
                walk: true,
                ..toward(Vec2::Y)
            },
            p.walk_speed,
        ),
        (
            MoveInput {
                crouch: true,
                ..toward(Vec2::Y)
            },
            p.crouch_speed,
        ),
    ] {
        let mut s = MoveState::at(Vec3::new(10.0, 0.0, 2.0));
        run(&map, &p, &mut s, &input, 128);
        assert!(
            (s.ground_speed() - speed).abs() < 0.05,
            "{} vs {speed}",
            s.ground_speed()
        );
        assert!(s.on_ground);
        assert_eq!(s.position.y, 0.0);
        // Friction stops the player within a second of letting go.
        run(&map, &p, &mut s, &MoveInput::default(), 128);
        assert_eq!(s.ground_speed(), 0.0);
    }
}

#[test]
fn sliding_along_a_wall_keeps_the_tangential_component() {
    let map = room();
    // No friction, gravity or acceleration: only the collision acts.
    let p = MovementParams {
        friction: 0.0,
        gravity: 0.0,
        ground_accel: 0.0,
        air_accel: 0.0,
        ..MovementParams::default()
    };
    let start = Vec3::new(20.0 - p.radius - 0.1, 0.0, 10.0);
    let mut s = MoveState {
        velocity: Vec3::new(3.0, 0.0, 4.0),
        ..MoveState::at(start)
    };
    let out = move_and_slide(&map, &p, &mut s, &MoveInput::default(), 0.1);
    assert!(out.blocked);
    // The normal component is gone, the tangential one is untouched.
    assert_eq!(s.velocity, Vec3::new(0.0, 0.0, 4.0));
    assert!(
        (s.position.z - (start.z + 0.4)).abs() < 1e-5,
        "{:?}",
        s.position
    );
    let gap = 20.0 - (s.position.x + p.radius);
    assert!(gap > 0.0 && gap < 0.01, "gap {gap}");

    // With the default tuning, running diagonally into the wall keeps the
    // player moving along it, never faster than running speed.
    let p = MovementParams::default();
    let mut s = MoveState::at(start);
    let diagonal = toward(Vec2::new(1.0, 1.0).normalize());
    for _ in 0..256 {
        move_and_slide(&map, &p, &mut s, &diagonal, TICK);
        assert!(s.position.x + p.radius <= 20.0);
        assert!(s.ground_speed() <= p.run_speed + 1e-4, "{:?}", s.velocity);
    }
    assert!(
        s.velocity.x == 0.0 && s.velocity.z > p.run_speed * 0.7,
        "{:?}",
        s.velocity
    );
    assert!(s.position.z > start.z + 8.0);
}

#[test]
fn jumping_rises_lands_and_reaches_a_platform() {
    let map = room();
    let p = MovementParams::default();
    let mut s = MoveState::at(Vec3::new(12.0, 0.0, 12.0));
    let out = move_and_slide(
        &map,
        &p,
        &mut s,
        &MoveInput {
            jump: true,
            ..MoveInput::default()
        },
        TICK,
    );
    assert!(out.jumped && !s.on_ground);
    let mut peak = 0.0f32;
    let mut landed = false;
    for _ in 0..128 {
        let out = move_and_slide(&map, &p, &mut s, &MoveInput::default(), TICK);
        peak = peak.max(s.position.y);
        landed |= out.landed;
    }
    let expected = p.jump_speed * p.jump_speed / (2.0 * p.gravity);
    assert!(
        (peak - expected).abs() < 0.06,
        "peak {peak} expected {expected}"
    );
    assert!(landed && s.on_ground && s.position.y == 0.0);

    // Jump onto the 0.6 m platform from next to it.
    let mut s = MoveState::at(Vec3::new(29.0, 0.0, 32.0));
    let jump_east = MoveInput {
        jump: true,
        ..toward(Vec2::X)
    };
    run(&map, &p, &mut s, &toward(Vec2::X), 2);
    run(&map, &p, &mut s, &jump_east, 1);
    run(&map, &p, &mut s, &toward(Vec2::X), 100);
    assert_eq!(s.position.y, 0.6, "{:?}", s.position);
    assert!(s.on_ground);
    // Walking off the far side falls back to the floor.
    run(&map, &p, &mut s, &toward(Vec2::X), 200);
    assert_eq!(s.position.y, 0.0);
}

#[test]
fn crouching_fits_under_a_slab_and_standing_waits_for_headroom() {
    let map = room();
    let p = MovementParams::default();
    // Standing, the slab at 1.5 m blocks the way.
    let mut s = MoveState::at(Vec3::new(3.0, 0.0, 7.0));
    run(&map, &p, &mut s, &toward(Vec2::X), 128);
    assert!(s.position.x + p.radius <= 5.0 + 1e-3, "{:?}", s.position);
    // Crouched (1.35 m) it passes under.
    let crouch_east = MoveInput {
        crouch: true,
        ..toward(Vec2::X)
    };
    run(&map, &p, &mut s, &crouch_east, 200);
    assert!(s.position.x > 6.0, "{:?}", s.position);
    assert_eq!(s.crouch, 1.0);
    let under = s;
    // Releasing crouch under the slab rises only as far as the slab allows ...
    let mut s = MoveState {
        velocity: Vec3::ZERO,
        ..under
    };
    s.position.x = 7.0;
    run(&map, &p, &mut s, &MoveInput::default(), 64);
    assert!(
        p.capsule(s.crouch).height <= 1.5 && s.crouch > 0.6,
        "{}",
        s.crouch
    );
    // ... until it walks out, then it stands.
    run(&map, &p, &mut s, &toward(Vec2::X), 128);
    assert_eq!(s.crouch, 0.0);
    assert!(s.position.x > 9.0 + p.radius);
}

#[test]
fn a_fence_confines_the_player_and_the_world_bounds_hold() {
    let map = Map::builtin("dust_corners").unwrap();
    let p = MovementParams::default();
    let zone = *map.buy_zone(Team::Attackers).unwrap();
    let mut s = MoveState::spawned(&map.spawn_point(Team::Attackers, 0, 0));
    for dir in [
        Vec2::Y,
        Vec2::X,
        Vec2::NEG_X,
        Vec2::new(1.0, 1.0).normalize(),
    ] {
        for _ in 0..600 {
            move_and_slide_within(&map, &p, &mut s, &toward(dir), TICK, &zone);
            assert!(zone.contains(s.position), "{:?} left {zone:?}", s.position);
        }
    }
    let room = room();
    let mut s = MoveState::at(Vec3::new(2.0, 0.0, 2.0));
    run(
        &room,
        &p,
        &mut s,
        &toward(Vec2::new(-1.0, -1.0).normalize()),
        256,
    );
    assert!(
        (s.position.x - p.radius).abs() < 0.01 && (s.position.z - p.radius).abs() < 0.01,
        "{:?}",
        s.position
    );
}

#[test]
fn malformed_inputs_and_time_steps_are_harmless() {
    let map = room();
    let p = MovementParams::default();
    let mut s = MoveState::at(Vec3::new(10.0, 0.0, 10.0));
    let before = s.position;
    move_and_slide(&map, &p, &mut s, &toward(Vec2::new(f32::NAN, 1.0)), TICK);
    move_and_slide(&map, &p, &mut s, &toward(Vec2::X), f32::INFINITY);
    move_and_slide(&map, &p, &mut s, &toward(Vec2::X), -1.0);
    assert_eq!(s.position, before);
    // An over-long wish direction is no faster than a unit one.
    let mut a = MoveState::at(before);
    let mut b = MoveState::at(before);
    run(&map, &p, &mut a, &toward(Vec2::new(0.0, 50.0)), 100);
    run(&map, &p, &mut b, &toward(Vec2::Y), 100);
    assert_eq!(a, b);
}

#[test]
fn claimed_moves_are_accepted_clamped_or_rejected_with_a_reason() {
    let map = room();
    let p = MovementParams::default();
    let limits = MovementLimits::from_params(&p);
    let capsule = p.capsule(0.0);
    let from = Vec3::new(10.0, 0.0, 10.0);
    let dt = TICK;
    let check = |to: Vec3| check_displacement(&map, &limits, capsule, from, to, dt);

    let step = p.run_speed * dt;
    assert_eq!(
        check(from + Vec3::X * step),
        Ok(MoveVerdict::Accepted(from + Vec3::X * step))
    );

    let allowed = limits.max_horizontal_speed * dt + limits.tolerance;
    match check(from + Vec3::X * allowed * 2.0) {
        Ok(MoveVerdict::Clamped {
            position,
            violation: MoveViolation::TooFast { .. },
        }) => {
            assert!((position.x - (from.x + allowed)).abs() < 1e-4);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        check(from + Vec3::X * 5.0),
        Err(MoveViolation::Teleport { .. })
    ));
    assert!(matches!(
        check(from + Vec3::Y * 0.2),
        Ok(MoveVerdict::Clamped {
            violation: MoveViolation::VerticalTooFast { .. },
            ..
        })
    ));
    assert_eq!(
        check(Vec3::new(f32::NAN, 0.0, 0.0)),
        Err(MoveViolation::NotFinite)
    );
    assert_eq!(
        check_displacement(&map, &limits, capsule, from, from, 0.0),
        Err(MoveViolation::NotFinite)
    );

    // Through the wall at x = 20..21 (a thin wall, a long tick).
    let near_wall = Vec3::new(19.5, 0.0, 10.0);
    let across = Vec3::new(21.5, 0.0, 10.0);
    assert_eq!(
        check_displacement(&map, &limits, capsule, near_wall, across, 0.3),
        Err(MoveViolation::ThroughWall)
    );
    // Sinking into the platform from above.
    let above = Vec3::new(32.0, 1.0, 32.0);
    assert_eq!(
        check_displacement(
            &map,
            &limits,
            capsule,
            above,
            Vec3::new(32.0, 0.5, 32.0),
            0.05
        ),
        Err(MoveViolation::InsideGeometry)
    );
    // Out of the world.
    let edge = Vec3::new(0.01, 0.0, 5.0);
    assert_eq!(
        check_displacement(&map, &limits, capsule, edge, Vec3::new(-0.02, 0.0, 5.0), dt),
        Err(MoveViolation::OutOfBounds)
    );
}

#[test]
fn server_simulated_moves_pass_the_check() {
    let map = Map::builtin("dust_corners").unwrap();
    let p = MovementParams::default();
    let limits = MovementLimits::from_params(&p);
    let mut s = MoveState::spawned(&map.spawn_point(Team::Attackers, 2, 5));
    let mut k = 0u32;
    for tick in 0..2000u32 {
        if tick % 97 == 0 {
            k += 1;
        }
        let input = MoveInput {
            jump: tick % 151 == 0,
            ..MoveInput::from_axes(k as f32 * 1.3, 1.0, 0.3)
        };
        let before = s.position;
        move_and_slide(&map, &p, &mut s, &input, TICK);
        let verdict =
            check_displacement(&map, &limits, p.capsule(s.crouch), before, s.position, TICK);
        assert_eq!(
            verdict,
            Ok(MoveVerdict::Accepted(s.position)),
            "tick {tick}"
        );
    }
}

/// Random open spots on dust_corners, some of them right against walls.
fn start_points() -> Vec<Vec3> {
    let map = Map::builtin("dust_corners").unwrap();
    let p = MovementParams::default();
    let mut points = Vec::new();
    for b in map.boxes() {
        for offset in [
            Vec3::new(-p.radius - 0.01, 0.0, 0.5),
            Vec3::new(0.5, 0.0, -p.radius - 0.01),
        ] {
            let candidate = Vec3::new(b.min.x, 0.0, b.min.z) + offset;
            if map.capsule_fits(candidate, p.capsule(0.0)) {
                points.push(candidate);
            }
        }
    }
    for team in Team::ALL {
        points.extend(map.spawn_points(team).iter().take(10).map(|s| s.position));
    }
    points
}

fn input_strategy() -> impl Strategy<Value = (MoveInput, u8)> {
    (
        0.0f32..std::f32::consts::TAU,
        0.0f32..=1.0,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        1u8..40,
    )
        .prop_map(|(angle, len, jump, crouch, walk, ticks)| {
            (
                MoveInput {
                    wish_dir: Vec2::from_angle(angle) * len,
                    jump,
                    crouch,
                    walk,
                },
                ticks,
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn capsules_never_end_inside_a_box(
        start in any::<prop::sample::Index>(),
        moves in prop::collection::vec(input_strategy(), 1..12),
        coarse in any::<bool>(),
    ) {
        let map = Map::builtin("dust_corners").unwrap();
        let p = MovementParams::default();
        let points = start_points();
        let mut s = MoveState::at(points[start.index(points.len())]);
        let dt = if coarse { 1.0 / 30.0 } else { TICK };
        for (input, ticks) in moves {
            for _ in 0..ticks {
                move_and_slide(&map, &p, &mut s, &input, dt);
                let capsule = p.capsule(s.crouch);
                let depth = map.capsule_penetration(s.position, capsule);
                prop_assert!(depth <= 1e-3, "penetration {depth} at {:?}", s.position);
                prop_assert!(map.capsule_fits(s.position, capsule), "{:?}", s.position);
                prop_assert!(map.bounds().contains(s.position));
            }
        }
    }
}

#[test]
fn fences_are_boxes_too() {
    // A fence that the player starts outside of: it may walk in, not out.
    let map = room();
    let p = MovementParams::default();
    let fence = Aabb::new(Vec3::new(10.0, 0.0, 10.0), Vec3::new(15.0, 10.0, 15.0));
    let mut s = MoveState::at(Vec3::new(8.0, 0.0, 12.0));
    for _ in 0..64 {
        move_and_slide_within(&map, &p, &mut s, &toward(Vec2::NEG_X), TICK, &fence);
    }
    assert_eq!(s.position.x, 8.0);
    for _ in 0..256 {
        move_and_slide_within(&map, &p, &mut s, &toward(Vec2::X), TICK, &fence);
    }
    assert!(
        s.position.x > 10.0 + p.radius && s.position.x <= 15.0 - p.radius + 1e-4,
        "{:?}",
        s.position
    );
}
