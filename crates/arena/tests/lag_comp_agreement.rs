//! Lag compensation end to end: a shooter who saw a moving target and fired
//! at it hits; the shipped record interval (every tick) and sparser ones
//! decide hits like poses recorded every tick.

use glam::Vec3;
use hightick_arena::{
    Hitboxes, Map, MoveInput, MoveState, MovementParams, Pose, Shot, ShotResolver, move_and_slide,
    raycast_world,
};
use hightick_engine::lag_comp::{LagCompensation, RewindLimits};
use hightick_engine::tick::TickTime;
use hightick_engine::{MatchConfig, PlayerId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const RATE: u32 = 128;
const TARGETS: usize = 6;
const SHOOTER: PlayerId = PlayerId(TARGETS as u16);

/// Targets running around the plaza with inputs that change every so often.
struct Crowd {
    states: Vec<MoveState>,
    inputs: Vec<MoveInput>,
    yaws: Vec<f32>,
    /// View yaw, turning towards `yaws` at a human rate.
    views: Vec<f32>,
}

impl Crowd {
    fn new(rng: &mut ChaCha8Rng) -> Self {
        let states = (0..TARGETS)
            .map(|i| {
                MoveState::at(Vec3::new(
                    20.0 + 8.0 * i as f32,
                    0.0,
                    15.0 + rng.random_range(0.0..10.0),
                ))
            })
            .collect();
        Self {
            states,
            inputs: vec![MoveInput::from_axes(0.0, 0.0, 0.0); TARGETS],
            yaws: vec![0.0; TARGETS],
            views: vec![0.0; TARGETS],
        }
    }

    fn step(&mut self, map: &Map, params: &MovementParams, rng: &mut ChaCha8Rng) {
        for i in 0..TARGETS {
            if rng.random_range(0..64) == 0 {
                self.yaws[i] = rng.random_range(-3.1..3.1);
                let mut input = MoveInput::from_axes(
                    self.yaws[i],
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                );
                input.crouch = rng.random_range(0..5) == 0;
                input.jump = rng.random_range(0..8) == 0;
                self.inputs[i] = input;
            }
            // Turn at most 12 rad/s (a quick flick) towards the move yaw.
            let turn = hightick_arena::wrap_angle(self.yaws[i] - self.views[i]);
            let max_turn = 12.0 / RATE as f32;
            self.views[i] =
                hightick_arena::wrap_angle(self.views[i] + turn.clamp(-max_turn, max_turn));
            move_and_slide(
                map,
                params,
                &mut self.states[i],
                &self.inputs[i],
                1.0 / RATE as f32,
            );
        }
    }

    fn pose(&self, i: usize, tick: u32) -> Pose {
        // The view turns smoothly too.
        let yaw = self.views[i] + 0.3 * (tick as f32 * 0.05 + i as f32).sin();
        Pose::from_move_state(&self.states[i], yaw, 0.2 * (tick as f32 * 0.03).cos())
    }
}

fn histories() -> (LagCompensation<Pose>, LagCompensation<Pose>) {
    (
        LagCompensation::new(TARGETS + 1, RewindLimits::new(RATE, 1, 200)),
        LagCompensation::new(TARGETS + 1, RewindLimits::new(RATE, 4, 200)),
    )
}

/// Every target with its pose now.
fn candidates(crowd: &Crowd, tick: u32) -> impl Iterator<Item = (PlayerId, Pose)> + '_ {
    (0..TARGETS).map(move |i| (PlayerId(i as u16), crowd.pose(i, tick)))
}

#[test]
fn a_shooter_who_saw_a_moving_target_hits_it() {
    let map = Map::builtin("plaza").unwrap();
    let params = MovementParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut crowd = Crowd::new(&mut rng);
    let (every_tick, mut sparse) = histories();
    drop(every_tick);
    let mut resolver = ShotResolver::with_capacity(TARGETS + 1);
    let mut seen: Vec<Vec<Pose>> = vec![Vec::new(); TARGETS];
    let mut cases = 0;
    for tick in 0..=600u32 {
        crowd.step(&map, &params, &mut rng);
        for (i, s) in seen.iter_mut().enumerate() {
            s.push(crowd.pose(i, tick));
            if sparse.is_record_tick(tick) {
                sparse.record(PlayerId(i as u16), tick, crowd.pose(i, tick));
            }
        }
        if tick < 100 || tick % 50 != 0 {
            continue;
        }
        // Rewinds of 0 to 24 whole ticks (within the 200 ms = 25.6 limit),
        // on a record tick and between records.
        for (k, back) in [0u32, 3, 8, 13, 24].into_iter().enumerate() {
            let i = (tick as usize / 50 + k) % TARGETS;
            let aim = tick - back;
            let target = seen[i][aim as usize];
            let body = Hitboxes::from_pose(&target);
            let chest = body.as_slice()[2];
            let aim_point = (chest.a + chest.b) * 0.5;
            let origin = Vec3::new(40.0, 1.64, 60.0);
            let shot = Shot {
                shooter: SHOOTER,
                origin,
                dir: aim_point - origin,
                range: 200.0,
                aim_time: TickTime::at(aim),
            };
            let hit = resolver.resolve(&map, &sparse, &shot, tick, candidates(&crowd, tick));
            // Another target may stand in the line of fire: then it is hit instead.
            // Only shots the shooter could see: no wall before the chest.
            if raycast_world(&map, origin, shot.dir, 200.0)
                .is_some_and(|w| w.distance < shot.dir.length())
            {
                continue;
            }
            let hit = hit.expect("the chest the shooter saw is hit");
            if hit.target == PlayerId(i as u16) {
                cases += 1;
            }
        }
    }
    assert!(cases >= 40, "only {cases} clean cases");
}

/// A shot's outcome in one history: the player and zone hit, if any.
type Outcome = Option<(PlayerId, hightick_arena::HitZone)>;

/// Runs the crowd around the plaza and fires `shots` shots, each aimed
/// `back(rng)` ticks into the past at a target as `histories[0]` shows it
/// (what the shooter saw), at head or torso 90% of the time and at a limb
/// 10% (see [`fire_with`] for other mixes), missing by up to 10 cm each way. Returns each shot's rewind in
/// ticks and its outcome in every history.
fn fire(
    seed: u64,
    shots: usize,
    histories: &mut [LagCompensation<Pose>],
    back: impl FnMut(&mut ChaCha8Rng) -> f64,
) -> Vec<(f64, Vec<Outcome>)> {
    fire_with(seed, shots, histories, back, Aim::HeadOrTorso)
}

/// Where shots aim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aim {
    /// Head or torso 90% of the time, a limb 10%.
    HeadOrTorso,
    /// Every hitbox alike.
    Even,
}

/// [`fire`] with the aim mix chosen.
fn fire_with(
    seed: u64,
    shots: usize,
    histories: &mut [LagCompensation<Pose>],
    mut back: impl FnMut(&mut ChaCha8Rng) -> f64,
    aim: Aim,
) -> Vec<(f64, Vec<Outcome>)> {
    let map = Map::builtin("plaza").unwrap();
    let params = MovementParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut crowd = Crowd::new(&mut rng);
    let mut resolver = ShotResolver::with_capacity(TARGETS + 1);
    let mut fired = Vec::with_capacity(shots);
    let mut tick = 0u32;
    while fired.len() < shots {
        tick += 1;
        crowd.step(&map, &params, &mut rng);
        for i in 0..TARGETS {
            let pose = crowd.pose(i, tick);
            for h in histories.iter_mut() {
                if h.is_record_tick(tick) {
                    h.record(PlayerId(i as u16), tick, pose);
                }
            }
        }
        if tick < 64 {
            continue;
        }
        for _ in 0..4 {
            let i = rng.random_range(0..TARGETS);
            let rewind = back(&mut rng);
            let aim_time = TickTime::from_ticks_f64(f64::from(tick) - rewind);
            // What the shooter saw: the target at its render time.
            let seen = histories[0]
                .rewind(PlayerId(i as u16), aim_time, tick)
                .unwrap();
            let body = Hitboxes::from_pose(&seen);
            let pick = if aim == Aim::Even {
                rng.random_range(0..body.as_slice().len())
            } else if rng.random_range(0..10) == 0 {
                rng.random_range(5..body.as_slice().len())
            } else {
                rng.random_range(0..5)
            };
            let h = body.as_slice()[pick];
            let on_bone = h.a.lerp(h.b, rng.random_range(0.0..1.0));
            let jitter = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            ) * 0.1;
            let from = Vec3::new(
                rng.random_range(5.0..75.0),
                rng.random_range(1.2..2.0),
                rng.random_range(5.0..75.0),
            );
            // Nobody aims into the floor: grazing the ground at a foot from
            // afar is a near tie between floor and foot that any millimetre
            // flips, whatever the recording.
            let mut aim_point = on_bone + jitter;
            aim_point.y = aim_point.y.max(seen.position.y + 0.1);
            let shot = Shot {
                shooter: SHOOTER,
                origin: from,
                dir: aim_point - from,
                range: 200.0,
                aim_time,
            };
            let outcomes = histories
                .iter()
                .map(|h| {
                    resolver
                        .resolve(&map, h, &shot, tick, candidates(&crowd, tick))
                        .map(|hit| (hit.target, hit.zone))
                })
                .collect();
            fired.push((rewind, outcomes));
        }
    }
    fired
}

/// Share of `fired` on which history `j` names the same target as history 0.
fn agreement<'a>(fired: impl Iterator<Item = &'a (f64, Vec<Outcome>)>, j: usize) -> (f64, usize) {
    let (mut n, mut agree) = (0usize, 0usize);
    for (_, o) in fired {
        n += 1;
        agree += usize::from(o[0].map(|h| h.0) == o[j].map(|h| h.0));
    }
    (agree as f64 / n.max(1) as f64, n)
}

#[test]
fn sparse_records_agree_with_every_tick_records() {
    let (dense, sparse) = histories();
    let max_back = dense.limits().max_rewind_ticks;
    let mut both = [dense, sparse];
    let fired = fire(2026, 10_000, &mut both, |rng| {
        rng.random_range(0.0..max_back)
    });
    let shots = fired.len();
    let hits = fired.iter().filter(|(_, o)| o[0].is_some()).count();
    let (rate, _) = agreement(fired.iter(), 1);
    let zone_agree = fired.iter().filter(|(_, o)| o[0] == o[1]).count();
    println!(
        "lag compensation: every-4th-tick records agree with every-tick records on {:.2} % of {shots} shots ({hits} hits; hit zone agrees on {:.2} %)",
        rate * 100.0,
        zone_agree as f64 / shots as f64 * 100.0
    );
    // The test means something: both hits and misses happen.
    assert!(hits > shots / 5 && hits < shots - shots / 50, "{hits} hits");
    assert!(rate >= 0.995, "agreement {rate}");
}

/// The built-in links' one-way delay and jitter, ms (crates/netem/src/profile.rs).
const LINKS: [(&str, f64, f64); 4] = [
    ("lan", 0.25, 0.0),
    ("wifi", 15.0, 5.0),
    ("mobile", 40.0, 15.0),
    ("bad", 75.0, 25.0),
];

/// Hit agreement at each built-in link's round trip: the shooter fires at
/// what it drew, `cl_interp_ratio` 2 ticks behind its estimate of the server's
/// tick (a one-way delay behind), the shot takes another one-way delay up,
/// and the tick phase adds up to one tick. The server rewinds poses
/// recorded at the shipped interval, clamped at `max_rewind_ms` 200 (the former default)
/// and 250 (covering `bad`'s longest round trip, 200 ms, plus interpolation
/// and phase, 23.4 ms: the default since). What the shooter saw is
/// every-tick records with no clamp. Prints
/// `FIGURE lagcomp_agreement_<link>_<clamp>ms` lines.
#[test]
fn hit_agreement_per_link_within_and_beyond_the_rewind_clamp() {
    let tick_ms = 1000.0 / f64::from(RATE);
    for (n, (link, one_way, jitter)) in LINKS.into_iter().enumerate() {
        let every = MatchConfig::default().pose_interval_ticks;
        let mut h = [
            LagCompensation::new(TARGETS + 1, RewindLimits::new(RATE, 1, 1000)),
            LagCompensation::new(TARGETS + 1, RewindLimits::new(RATE, every, 200)),
            LagCompensation::new(TARGETS + 1, RewindLimits::new(RATE, every, 250)),
        ];
        let fired = fire(2027 + n as u64, 4_000, &mut h, |rng| {
            let mut way = || one_way + rng.random_range(-1.0..=1.0) * jitter;
            let rtt = way() + way();
            rtt / tick_ms + 2.0 + rng.random_range(0.0..1.0)
        });
        for (j, clamp_ms) in [(1usize, 200.0), (2, 250.0)] {
            let clamp = clamp_ms / tick_ms;
            let (all, shots) = agreement(fired.iter(), j);
            let (within, inside) = agreement(fired.iter().filter(|(b, _)| *b <= clamp), j);
            let beyond = 1.0 - inside as f64 / shots as f64;
            println!(
                "FIGURE lagcomp_agreement_{link}_{clamp_ms:.0}ms {:.2} %  (within the clamp {:.2} % of {inside}; {:.2} % of {shots} shots rewound past it)",
                all * 100.0,
                within * 100.0,
                beyond * 100.0
            );
            assert!(
                within >= 0.99,
                "{link} at {clamp_ms} ms: {within} within the clamp"
            );
            if clamp_ms == f64::from(MatchConfig::default().max_rewind_ms) {
                assert!(all >= 0.995, "{link} at the default clamp: {all}");
            }
        }
    }
}

/// Every hitbox aimed at alike (issue 20 item 2's "even mix"): agreement of
/// records every 4th, 3rd and 2nd tick and at the shipped interval with
/// every-tick records, over three seeds. Prints
/// `FIGURE lagcomp_agreement_even_every<N>` and
/// `FIGURE lagcomp_agreement_even_shipped`. Sparse records miss shots grazing
/// a limb's edge, where the lerp between records differs from the pose of the
/// ticks the client drew by millimetres (yaw during a flick, the crouch ease,
/// a jump's arc); see docs/PERFORMANCE.md. The shipped interval must agree on
/// at least 99.5%, and denser records at least as well as sparser ones.
#[test]
fn even_aim_mix_agreement_by_record_interval() {
    let shipped = MatchConfig::default().pose_interval_ticks;
    let intervals = [4u32, 3, 2, shipped];
    let mut agreed = [0usize; 4];
    let (mut shots, mut hits) = (0usize, 0usize);
    for seed in [2028u64, 2029, 2030] {
        let mut h: Vec<_> = std::iter::once(1)
            .chain(intervals)
            .map(|every| LagCompensation::new(TARGETS + 1, RewindLimits::new(RATE, every, 250)))
            .collect();
        let max_back = 200.0 / (1000.0 / f64::from(RATE));
        let fired = fire_with(
            seed,
            5_000,
            &mut h,
            |rng| rng.random_range(0.0..max_back),
            Aim::Even,
        );
        shots += fired.len();
        hits += fired.iter().filter(|(_, o)| o[0].is_some()).count();
        for (j, a) in agreed.iter_mut().enumerate() {
            let (rate, n) = agreement(fired.iter(), j + 1);
            *a += (rate * n as f64).round() as usize;
        }
    }
    let rates: Vec<f64> = agreed.iter().map(|&a| a as f64 / shots as f64).collect();
    for (every, rate) in intervals[..3].iter().zip(&rates) {
        println!(
            "FIGURE lagcomp_agreement_even_every{every} {:.2} % of {shots} shots",
            rate * 100.0
        );
    }
    println!(
        "FIGURE lagcomp_agreement_even_shipped {:.2} % of {shots} shots (records every {shipped} tick(s))",
        rates[3] * 100.0
    );
    assert!(hits > shots / 5 && hits < shots - shots / 50, "{hits} hits");
    assert!(
        rates[2] >= rates[0],
        "records every 2nd tick agree less than every 4th: {rates:?}"
    );
    assert!(rates[0] >= 0.98, "every 4th tick: {}", rates[0]);
    assert!(
        rates[3] >= 0.995,
        "the shipped interval ({shipped}) agrees on {}",
        rates[3]
    );
}
