//! Per-operation costs of the arena's geometry, to plan the tick budget:
//! one capsule move, one pose evaluation (skeleton and hitboxes), one line
//! of sight, on the shipped maps; and one fog-of-war update replaying the
//! poses bots really took in a `5v5` and a `plaza100` match (recorded
//! untimed first, then `FogOfWar::update` timed tick by tick).
//!
//! `cargo bench -p hightick-arena --bench geometry`

use glam::{Vec2, Vec3};
use hightick_arena::scenario::Scenario;
use hightick_arena::{
    FogOfWar, Hitboxes, Map, MoveInput, MoveState, MovementParams, Pose, Team, can_see,
    line_of_sight, move_and_slide, raycast_hitboxes, raycast_world,
};
use hightick_telemetry::bench::{figure, measure};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ITERS: u32 = 20_000;
const SAMPLES: u32 = 15;

/// A random point in open space on the map, at `height` above the feet.
fn open_point(map: &Map, rng: &mut ChaCha8Rng, params: &MovementParams) -> Vec3 {
    let b = *map.bounds();
    loop {
        let p = Vec3::new(
            rng.random_range(b.min.x..b.max.x),
            0.0,
            rng.random_range(b.min.z..b.max.z),
        );
        if map.capsule_fits(p, params.capsule(0.0)) {
            return p;
        }
    }
}

/// One tick of fog-of-war input: the tick and `(team, pose, alive)` per slot.
type FogTick = (u32, Vec<(Team, Pose, bool)>);

/// The fog-of-war input of every tick of a bot match, after a warm-up.
struct FogReplay {
    map: Map,
    fog: FogOfWar,
    ticks: Vec<FogTick>,
}

fn record_fog(scenario: &Scenario, warmup: u32, ticks: u32) -> FogReplay {
    let mut m = scenario.bot_match(42).expect("scenario builds");
    let players = m.players().count();
    let mut out = Vec::with_capacity(ticks as usize);
    for t in 0..warmup + ticks {
        m.step();
        m.drain_events();
        if t < warmup {
            continue;
        }
        let arena = m.game.game();
        let mut input = vec![(Team::Attackers, Pose::default(), false); players];
        for (id, f) in arena.fighters() {
            input[usize::from(id.0)] = (f.team, f.pose(), f.alive);
        }
        out.push((m.game.tick_number(), input));
    }
    let arena = m.game.game();
    FogReplay {
        map: arena.map().clone(),
        fog: FogOfWar::with_params(players, *arena.fog().params()),
        ticks: out,
    }
}

/// Median microseconds of one `FogOfWar::update` over the recorded ticks,
/// and the pairs evaluated per update on one pass over them.
fn replay_fog(replay: &mut FogReplay) -> (f64, f64) {
    let mut k = 0usize;
    let n = replay.ticks.len();
    let stats = measure(
        || {
            let (tick, input) = &replay.ticks[k % n];
            k += 1;
            replay.fog.update(*tick, &replay.map, input);
            replay.fog.evaluated_last_update()
        },
        n as u32,
        SAMPLES,
    );
    replay.fog.invalidate();
    let evaluated: u64 = replay
        .ticks
        .iter()
        .map(|(tick, input)| {
            replay.fog.update(*tick, &replay.map, input);
            u64::from(replay.fog.evaluated_last_update())
        })
        .sum();
    (stats.median_ns() / 1e3, evaluated as f64 / n as f64)
}

fn main() {
    let mut fow_5v5 = record_fog(&Scenario::five_v_five(), 128 * 10, 128 * 20);
    // What `hightick demo` measures: the 20 s after a 4 s warm-up, most of
    // it the first round's run from the spawns.
    let mut fow_opening = record_fog(&Scenario::five_v_five(), 128 * 4, 128 * 20);
    let mut fow_plaza = record_fog(&Scenario::plaza100(128), 128 * 5, 128 * 5);
    let (fow_5v5_us, fow_5v5_evals) = replay_fog(&mut fow_5v5);
    let (fow_opening_us, fow_opening_evals) = replay_fog(&mut fow_opening);
    let (fow_plaza_us, fow_plaza_evals) = replay_fog(&mut fow_plaza);
    let map = Map::builtin("dust_corners").expect("built-in map loads");
    let params = MovementParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(0xA7E4A);

    // Movement: 10 players running in random directions, one move per call.
    let mut players: Vec<MoveState> = (0..10)
        .map(|i| MoveState::spawned(&map.spawn_point(Team::ALL[i % 2], i / 2, 1)))
        .collect();
    let inputs: Vec<MoveInput> = (0..1024)
        .map(|_| MoveInput {
            wish_dir: Vec2::from_angle(rng.random_range(0.0..std::f32::consts::TAU)),
            jump: rng.random_bool(0.05),
            crouch: rng.random_bool(0.1),
            walk: rng.random_bool(0.1),
        })
        .collect();
    let mut k = 0usize;
    let mv = measure(
        || {
            k = k.wrapping_add(1);
            let p = &mut players[k % 10];
            move_and_slide(
                &map,
                &params,
                p,
                &inputs[(k / 7) % inputs.len()],
                1.0 / 128.0,
            )
        },
        ITERS,
        SAMPLES,
    );

    // Pose evaluation: skeleton plus hitbox placement.
    let poses: Vec<Pose> = (0..256)
        .map(|_| Pose {
            position: open_point(&map, &mut rng, &params),
            yaw: rng.random_range(-std::f32::consts::PI..std::f32::consts::PI),
            pitch: rng.random_range(-1.2..1.2),
            crouch: if rng.random_bool(0.2) { 1.0 } else { 0.0 },
            locomotion_phase: rng.random_range(0.0..1.0),
            speed: rng.random_range(0.0..6.0),
        })
        .collect();
    let mut k = 0usize;
    let pose = measure(
        || {
            k = k.wrapping_add(1);
            Hitboxes::from_pose(&poses[k % poses.len()])
        },
        ITERS,
        SAMPLES,
    );

    // Line of sight between random eye points (a mix of clear and blocked).
    let pairs: Vec<(Vec3, Vec3)> = (0..1024)
        .map(|_| {
            let eye = Vec3::Y * params.stand_eye_height;
            (
                open_point(&map, &mut rng, &params) + eye,
                open_point(&map, &mut rng, &params) + eye,
            )
        })
        .collect();
    let clear = pairs
        .iter()
        .filter(|(a, b)| line_of_sight(&map, *a, *b))
        .count();
    let mut k = 0usize;
    let los = measure(
        || {
            k = k.wrapping_add(1);
            let (a, b) = pairs[k % pairs.len()];
            line_of_sight(&map, a, b)
        },
        ITERS,
        SAMPLES,
    );

    // can_see (several probes) and shot rays, for the table.
    let mut k = 0usize;
    let see = measure(
        || {
            k = k.wrapping_add(1);
            let (a, _) = pairs[k % pairs.len()];
            can_see(&map, a, &poses[k % poses.len()], 0.3)
        },
        ITERS,
        SAMPLES,
    );
    let mut k = 0usize;
    let ray = measure(
        || {
            k = k.wrapping_add(1);
            let (a, b) = pairs[k % pairs.len()];
            raycast_world(&map, a, b - a, 200.0)
        },
        ITERS,
        SAMPLES,
    );
    let bodies: Vec<Hitboxes> = poses.iter().map(Hitboxes::from_pose).collect();
    let mut k = 0usize;
    let body_ray = measure(
        || {
            k = k.wrapping_add(1);
            let body = &bodies[k % bodies.len()];
            let (a, _) = pairs[k % pairs.len()];
            raycast_hitboxes(body, a, body.head().a - a, 200.0)
        },
        ITERS,
        SAMPLES,
    );

    figure("arena_move_and_slide_ns", mv.median_ns(), "ns");
    figure("arena_pose_eval_ns", pose.median_ns(), "ns");
    figure("arena_los_ns", los.median_ns(), "ns");
    figure("arena_can_see_ns", see.median_ns(), "ns");
    figure("arena_fow_5v5_update_us", fow_5v5_us, "us");
    figure("arena_fow_5v5_evals_per_update", fow_5v5_evals, "pairs");
    figure("arena_fow_5v5_opening_update_us", fow_opening_us, "us");
    figure(
        "arena_fow_5v5_opening_evals_per_update",
        fow_opening_evals,
        "pairs",
    );
    figure("arena_fow_plaza100_update_us", fow_plaza_us, "us");
    figure(
        "arena_fow_plaza100_evals_per_update",
        fow_plaza_evals,
        "pairs",
    );
    println!();
    println!(
        "{:<34} {:>10} {:>10}",
        "operation (dust_corners)", "median ns", "p90 ns"
    );
    for (name, s) in [
        ("move_and_slide (one player)", &mv),
        ("pose eval (skeleton + hitboxes)", &pose),
        ("line_of_sight (eye to eye)", &los),
        ("can_see (margin 0.3 m)", &see),
        ("raycast_world", &ray),
        ("raycast_hitboxes (aimed at head)", &body_ray),
    ] {
        println!(
            "{:<34} {:>10.1} {:>10.1}",
            name,
            s.median_ns(),
            s.quantile_ns(0.9)
        );
    }
    println!("line-of-sight pairs clear: {clear} of {}", pairs.len());
}
