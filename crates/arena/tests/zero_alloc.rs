//! The per-tick geometry allocates nothing: movement, pose evaluation,
//! world and body ray casts, shots, line of sight and `can_see`.

use glam::Vec3;
use hightick_arena::{
    Hitboxes, Map, MoveInput, MoveState, MovementLimits, MovementParams, Pose, Skeleton, Team,
    can_see, check_displacement, line_of_sight, move_and_slide, move_and_slide_within,
    raycast_hitboxes, raycast_world, trace_shot,
};
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn a_tick_of_geometry_allocates_nothing() {
    let map = Map::builtin("dust_corners").unwrap();
    let params = MovementParams::default();
    let limits = MovementLimits::from_params(&params);
    let zone = *map.buy_zone(Team::Attackers).unwrap();
    let mut players: Vec<MoveState> = (0..10)
        .map(|i| MoveState::spawned(&map.spawn_point(Team::ALL[i % 2], i / 2, 0)))
        .collect();
    let mut bodies: Vec<Hitboxes> = vec![Hitboxes::from_pose(&Pose::default()); 10];
    let mut seen = 0u32;

    let mut tick = |t: u32| {
        for (i, s) in players.iter_mut().enumerate() {
            let yaw = (t / 64 + i as u32) as f32 * 0.9;
            let input = MoveInput {
                jump: t.is_multiple_of(50),
                crouch: i % 3 == 0,
                ..MoveInput::from_axes(yaw, 1.0, 0.2)
            };
            let before = s.position;
            if i == 0 {
                move_and_slide_within(&map, &params, s, &input, 1.0 / 128.0, &zone);
            } else {
                move_and_slide(&map, &params, s, &input, 1.0 / 128.0);
            }
            let _ = check_displacement(
                &map,
                &limits,
                params.capsule(s.crouch),
                before,
                s.position,
                1.0 / 128.0,
            );
        }
        for (body, s) in bodies.iter_mut().zip(&players) {
            let pose = Pose::from_move_state(s, t as f32 * 0.01, 0.1);
            let skeleton = Skeleton::evaluate(&pose);
            *body = Hitboxes::place(&skeleton);
        }
        let eye = players[0].position + Vec3::Y * params.stand_eye_height;
        let dir = Vec3::new(0.3, 0.0, 1.0);
        let _ = raycast_world(&map, eye, dir, 150.0);
        let _ = raycast_hitboxes(&bodies[1], eye, bodies[1].head().a - eye, 150.0);
        let _ = trace_shot(&map, eye, dir, 150.0, bodies.iter().enumerate().skip(1));
        for a in &players {
            for b in &players {
                let from = a.position + Vec3::Y * params.stand_eye_height;
                let to = b.position + Vec3::Y * params.stand_eye_height;
                seen += u32::from(line_of_sight(&map, from, to));
                seen += u32::from(can_see(
                    &map,
                    from,
                    &Pose::from_move_state(b, 0.0, 0.0),
                    0.2,
                ));
            }
        }
    };
    // Warm up, then measure steady-state ticks.
    for t in 0..10 {
        tick(t);
    }
    let allocations = count_allocations(|| {
        for t in 10..400 {
            tick(t);
        }
    });
    assert_eq!(allocations, 0);
    assert!(seen > 0);
}
