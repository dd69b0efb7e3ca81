//! Same inputs, same outputs: a scripted session of movement, poses, shots
//! and sight checks hashes to the same value every time it runs, and maps
//! load to identical data.

use std::hash::{DefaultHasher, Hash, Hasher};

use glam::{Vec2, Vec3};
use hightick_arena::{
    Hitboxes, Map, MoveInput, MoveState, MovementParams, Pose, ShotOutcome, Team, can_see,
    move_and_slide, trace_shot,
};

/// Feeds the exact bits of floats into a hasher.
fn bits(h: &mut DefaultHasher, v: Vec3) {
    for x in v.to_array() {
        x.to_bits().hash(h);
    }
}

/// Ten players on dust_corners for 1,000 ticks: scripted inputs, poses
/// every 4th tick, a shot per tick, fog of war for every pair.
fn session(map: &Map) -> u64 {
    let params = MovementParams::default();
    let mut h = DefaultHasher::new();
    let mut players: Vec<(MoveState, f32)> = (0..10)
        .map(|i| {
            let s = map.spawn_point(Team::ALL[i % 2], i / 2, 3);
            (MoveState::spawned(&s), s.yaw)
        })
        .collect();
    let mut bodies: Vec<Hitboxes> = players
        .iter()
        .map(|(s, yaw)| Hitboxes::from_pose(&Pose::from_move_state(s, *yaw, 0.0)))
        .collect();
    for tick in 0..1000u32 {
        for (i, (state, yaw)) in players.iter_mut().enumerate() {
            // A cheap deterministic script: turn now and then, jump, crouch.
            let k = tick / 50 + i as u32;
            *yaw += 0.01 * ((k % 5) as f32 - 2.0);
            let input = MoveInput {
                jump: (tick + i as u32).is_multiple_of(97),
                crouch: k.is_multiple_of(7),
                walk: k.is_multiple_of(11),
                ..MoveInput::from_axes(*yaw, 1.0, ((k % 3) as f32 - 1.0) * 0.5)
            };
            let out = move_and_slide(map, &params, state, &input, 1.0 / 128.0);
            bits(&mut h, state.position);
            bits(&mut h, state.velocity);
            (out.blocked, out.landed).hash(&mut h);
        }
        if tick % 4 == 0 {
            for (body, (state, yaw)) in bodies.iter_mut().zip(&players) {
                *body = Hitboxes::from_pose(&Pose::from_move_state(state, *yaw, -0.1));
                bits(&mut h, body.head().a);
            }
        }
        let shooter = (tick % 10) as usize;
        let (state, yaw) = players[shooter];
        let eye = state.position + Vec3::Y * params.eye_height(state.crouch);
        let dir = Vec3::new(yaw.sin(), -0.02, yaw.cos());
        let targets = bodies.iter().enumerate().filter(|(j, _)| *j != shooter);
        match trace_shot(map, eye, dir, 150.0, targets) {
            ShotOutcome::Body { target, hit } => (1u8, target, hit.distance.to_bits()).hash(&mut h),
            ShotOutcome::World(hit) => (2u8, hit.distance.to_bits()).hash(&mut h),
            ShotOutcome::Miss => 3u8.hash(&mut h),
        }
        if tick % 16 == 0 {
            for (i, (a, _)) in players.iter().enumerate() {
                for (b, yaw) in players.iter().skip(i + 1) {
                    let eye = a.position + Vec3::Y * params.eye_height(a.crouch);
                    can_see(map, eye, &Pose::from_move_state(b, *yaw, 0.0), 0.2).hash(&mut h);
                }
            }
        }
    }
    h.finish()
}

#[test]
fn the_same_session_gives_the_same_hash() {
    let map = Map::builtin("dust_corners").unwrap();
    let first = session(&map);
    assert_eq!(first, session(&map));
    assert_eq!(first, session(&Map::builtin("dust_corners").unwrap()));
    // The hash reflects the session: another map gives another one.
    assert_ne!(first, session(&Map::builtin("plaza").unwrap()));
}

#[test]
fn movement_depends_only_on_its_inputs() {
    let map = Map::builtin("dust_corners").unwrap();
    let params = MovementParams::default();
    let run = |wish: Vec2| {
        let mut s = MoveState::spawned(&map.spawn_point(Team::Defenders, 1, 0));
        for _ in 0..300 {
            move_and_slide(
                &map,
                &params,
                &mut s,
                &MoveInput {
                    wish_dir: wish,
                    ..MoveInput::default()
                },
                1.0 / 128.0,
            );
        }
        s
    };
    assert_eq!(run(Vec2::new(0.3, -0.9)), run(Vec2::new(0.3, -0.9)));
    assert_ne!(run(Vec2::new(0.3, -0.9)), run(Vec2::new(0.31, -0.9)));
}
