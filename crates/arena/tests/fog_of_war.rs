//! Fog of war on `dust_corners`: an enemy with any part of its body in sight
//! is always sent, an enemy out of sight (beyond the margin) never is, and
//! teammates always are; staggered re-evaluation keeps the first promise
//! while targets run at top speed.

use glam::Vec3;
use hightick_arena::{
    Bone, FogOfWar, Map, MoveInput, MoveState, MovementParams, Pose, STANDING_CAPSULE, Skeleton,
    Team, can_see, line_of_sight, move_and_slide,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PLAYERS: usize = 10;

/// Points of the body a viewer might glimpse: head, chest, shoulders, and
/// just above the feet.
fn body_samples(pose: &Pose) -> [Vec3; 6] {
    let s = Skeleton::evaluate(pose);
    let chest = s.bone(Bone::Chest);
    [
        s.head_center(),
        chest.start,
        chest.end,
        s.bone(Bone::UpperArmL).start,
        s.bone(Bone::UpperArmR).start,
        pose.position + Vec3::Y * 0.1,
    ]
}

/// A random spot where a standing player fits.
fn random_spot(map: &Map, rng: &mut ChaCha8Rng) -> Vec3 {
    let b = *map.bounds();
    loop {
        let p = Vec3::new(
            rng.random_range(b.min.x + 0.5..b.max.x - 0.5),
            map.floor_y(),
            rng.random_range(b.min.z + 0.5..b.max.z - 0.5),
        );
        if map.capsule_fits(p, STANDING_CAPSULE) {
            return p;
        }
    }
}

fn random_scene(map: &Map, rng: &mut ChaCha8Rng) -> Vec<(Team, Pose, bool)> {
    (0..PLAYERS)
        .map(|i| {
            let team = if i < PLAYERS / 2 {
                Team::Attackers
            } else {
                Team::Defenders
            };
            let pose = Pose {
                position: random_spot(map, rng),
                yaw: rng.random_range(-3.1..3.1),
                pitch: rng.random_range(-0.5..0.5),
                crouch: if rng.random_range(0..3) == 0 {
                    1.0
                } else {
                    0.0
                },
                locomotion_phase: rng.random_range(0.0..1.0),
                speed: rng.random_range(0.0..6.0),
            };
            (team, pose, true)
        })
        .collect()
}

/// The two promises for every pair at this moment; returns how many enemy
/// pairs had a body sample in sight.
fn check(map: &Map, fog: &FogOfWar, players: &[(Team, Pose, bool)], leak_margin: f32) -> usize {
    let params = MovementParams::default();
    let mut in_sight = 0;
    for (v, (team, viewer, _)) in players.iter().enumerate() {
        let eye = viewer.eye(&params);
        for (t, (t_team, target, _)) in players.iter().enumerate() {
            if t_team == team {
                assert!(fog.visible(v, t), "teammate {t} hidden from {v}");
                continue;
            }
            let seen = body_samples(target)
                .iter()
                .any(|&p| line_of_sight(map, eye, p));
            if seen {
                in_sight += 1;
                assert!(fog.visible(v, t), "{t} in sight of {v} but hidden");
            }
            if fog.visible(v, t) {
                assert!(
                    can_see(map, eye, target, leak_margin),
                    "{t} sent to {v} without line of sight within {leak_margin} m"
                );
            }
        }
    }
    in_sight
}

proptest! {
    // A fixed seed keeps CI reproducible. (It was fixed while `can_see` had
    // a known late reveal, now `a_body_seen_past_two_occluders_is_revealed`;
    // 30,000 random scenes found no other.)
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x05ee_df06),
        ..ProptestConfig::default()
    })]

    #[test]
    fn visible_exactly_when_in_sight_within_the_margin(seed in any::<u64>()) {
        let map = Map::builtin("dust_corners").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let players = random_scene(&map, &mut rng);
        let mut fog = FogOfWar::new(PLAYERS);
        fog.update(0, &map, &players);
        check(&map, &fog, &players, fog.margin());
        // Hidden answers are really hidden under the same rule.
        for (v, (team, viewer, _)) in players.iter().enumerate() {
            for (t, (t_team, target, _)) in players.iter().enumerate() {
                if t_team != team {
                    let eye = viewer.eye(&MovementParams::default());
                    prop_assert_eq!(fog.visible(v, t), can_see(&map, eye, target, fog.margin()));
                }
            }
        }
    }
}

/// How the players of a [`play`] run move.
struct Running {
    /// Players `0..runners` run; the others hold still (holding angles).
    runners: usize,
    /// Each runner turns (and maybe crouches) every this many ticks.
    turn_every: u32,
    /// Runners sometimes crouch when they turn.
    crouching: bool,
}

/// Plays `scenes` random scenes of `ticks` ticks, checking both promises
/// every tick; returns (enemy pairs in sight, pairs evaluated, enemy pair
/// checks there would be evaluating every pair every tick).
fn play(seed: u64, scenes: u32, ticks: u32, running: &Running) -> (usize, u64, u64) {
    let map = Map::builtin("dust_corners").unwrap();
    let params = MovementParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut fog = FogOfWar::new(PLAYERS);
    let slack = fog.params().slack();
    let (mut in_sight, mut evaluated) = (0, 0u64);
    for _scene in 0..scenes {
        let mut players = random_scene(&map, &mut rng);
        fog.invalidate();
        let mut states: Vec<MoveState> = players
            .iter()
            .map(|(_, p, _)| MoveState::at(p.position))
            .collect();
        let mut inputs = [MoveInput::default(); PLAYERS];
        for tick in 0..ticks {
            for i in 0..running.runners {
                let phase = if running.crouching { i as u32 * 5 } else { 0 };
                if (tick + phase) % running.turn_every == 0 {
                    let yaw = rng.random_range(-3.1f32..3.1);
                    inputs[i] = MoveInput::from_axes(yaw, 1.0, 0.0);
                    inputs[i].crouch = running.crouching && rng.random_range(0..4) == 0;
                    players[i].1.yaw = yaw;
                }
                move_and_slide(&map, &params, &mut states[i], &inputs[i], 1.0 / 128.0);
                let yaw = players[i].1.yaw;
                players[i].1 = Pose::from_move_state(&states[i], yaw, 0.0);
            }
            fog.update(tick, &map, &players);
            // A pair kept from an older evaluation may show a target that
            // has since moved up to the slack out of sight: bounded.
            in_sight += check(&map, &fog, &players, fog.margin() + slack);
            evaluated += u64::from(fog.evaluated_last_update());
        }
    }
    let every_pair = u64::from(scenes * ticks) * (PLAYERS * PLAYERS / 2) as u64;
    (in_sight, evaluated, every_pair)
}

#[test]
fn staggered_updates_never_hide_a_running_enemy() {
    // Defenders hold still; attackers run at top speed, turning now and then.
    let running = Running {
        runners: PLAYERS / 2,
        turn_every: 32,
        crouching: false,
    };
    let (in_sight, evaluated, every_pair) = play(11, 6, 256, &running);
    assert!(in_sight > 100, "the scenes exercise visibility: {in_sight}");
    // Staggering saves work: fewer than every enemy pair every tick.
    println!("fog of war: {evaluated} of {every_pair} enemy pair checks evaluated");
    assert!(evaluated < every_pair, "{evaluated} of {every_pair}");
}

#[test]
fn held_hidden_answers_stay_right_while_everyone_runs() {
    // Every eye moves every tick; runners turn and crouch now and then.
    let running = Running {
        runners: PLAYERS,
        turn_every: 40,
        crouching: true,
    };
    let (in_sight, evaluated, every_pair) = play(23, 4, 192, &running);
    assert!(in_sight > 50, "the scenes exercise visibility: {in_sight}");
    // Held answers save work even though every eye moves every tick.
    println!("fog of war, everyone running: {evaluated} of {every_pair} evaluated");
    assert!(evaluated < every_pair / 2, "{evaluated} of {every_pair}");
}

#[test]
fn spectators_see_what_their_team_sees() {
    let map = Map::builtin("dust_corners").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut players = random_scene(&map, &mut rng);
    players[0].2 = false;
    let mut fog = FogOfWar::new(PLAYERS);
    fog.update(0, &map, &players);
    for t in 0..PLAYERS {
        let team_sees = (1..PLAYERS / 2).any(|m| fog.visible(m, t));
        assert_eq!(fog.visible(0, t), team_sees || t < PLAYERS / 2, "{t}");
    }
}

#[test]
fn a_teleported_enemy_is_revealed_at_once() {
    let map = Map::builtin("dust_corners").unwrap();
    let params = MovementParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut revealed = 0;
    for _ in 0..20 {
        let mut players = random_scene(&map, &mut rng);
        let mut fog = FogOfWar::new(PLAYERS);
        fog.update(0, &map, &players);
        // An enemy of viewer 0 that is hidden now...
        let Some(t) = (PLAYERS / 2..PLAYERS).find(|&t| !fog.visible(0, t)) else {
            continue;
        };
        // ...jumps (respawn, teleport) to a spot in plain sight, between two
        // scheduled re-evaluations of viewer 0's row.
        let eye = players[0].1.eye(&params);
        let spot = (0..200).map(|_| random_spot(&map, &mut rng)).find(|&p| {
            let pose = Pose {
                position: p,
                ..players[t].1
            };
            body_samples(&pose)
                .iter()
                .all(|&s| line_of_sight(&map, eye, s))
        });
        let Some(spot) = spot else { continue };
        players[t].1.position = spot;
        fog.update(1, &map, &players);
        assert!(fog.visible(0, t), "teleported enemy stayed hidden");
        revealed += 1;
    }
    assert!(revealed >= 5, "{revealed}");
}

/// Found by the property test above with a random seed: in this scene an
/// enemy is in sight only through the gap between a wall corner and a crate
/// it stands beside, and each occluder alone hides only part of its body.
/// `can_see` used to count such a body as hidden; now a part no single
/// (merged) occluder hides is in view, so the enemy is sent.
#[test]
fn a_body_seen_past_two_occluders_is_revealed() {
    let map = Map::builtin("dust_corners").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(289_178_242_139_821_593);
    let players = random_scene(&map, &mut rng);
    let mut fog = FogOfWar::new(PLAYERS);
    fog.update(0, &map, &players);
    check(&map, &fog, &players, fog.margin());
    assert!(fog.visible(5, 0));
}
