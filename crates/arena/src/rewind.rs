//! Lag-compensated shots: targets rewound to the moment the shooter saw,
//! hitboxes placed from the rewound poses, walls in the way.
//!
//! The engine's [`LagCompensation`] keeps each player's [`Pose`] history
//! (indexed by [`PlayerId`] slot) and interpolates it with
//! [`Pose::lerp`] through the [`Interpolate`] impl here.

use glam::Vec3;
use hightick_engine::PlayerId;
use hightick_engine::lag_comp::{Interpolate, LagCompensation};
use hightick_engine::tick::{Tick, TickTime};

use crate::world::hitbox::{HitZone, Hitboxes};
use crate::world::map::Map;
use crate::world::pose::Pose;
use crate::world::raycast::{ShotOutcome, trace_shot};

impl Interpolate for Pose {
    fn interpolate(a: &Self, b: &Self, t: f32) -> Self {
        a.lerp(b, t)
    }
}

/// A shot as the server receives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shot {
    /// Who fired (never hit by its own shot).
    pub shooter: PlayerId,
    /// The muzzle (usually the shooter's eye).
    pub origin: Vec3,
    /// Flight direction (after spread); normalised by the trace.
    pub dir: Vec3,
    /// Farthest the shot reaches, metres.
    pub range: f32,
    /// The moment the shooter saw when firing (its render time); rewinds
    /// are clamped to the maximum rewind before the current tick.
    pub aim_time: TickTime,
}

/// The body a shot hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShotHit {
    /// The player hit.
    pub target: PlayerId,
    /// Where on the body.
    pub zone: HitZone,
    /// Distance from the muzzle, metres (for damage falloff).
    pub distance: f32,
}

/// A player a shot may hit: a [`PlayerId`] alone (rewound from the history
/// only: a shot aimed after the newest record meets the newest record), or
/// better `(PlayerId, Pose)` with its pose now, so that times between the
/// newest record and now are interpolated too (needed for sparse records).
pub trait ShotCandidate {
    /// The player.
    fn id(&self) -> PlayerId;
    /// Its pose at the current tick, if known.
    fn current_pose(&self) -> Option<Pose>;
}

impl ShotCandidate for PlayerId {
    fn id(&self) -> PlayerId {
        *self
    }
    fn current_pose(&self) -> Option<Pose> {
        None
    }
}

impl ShotCandidate for (PlayerId, Pose) {
    fn id(&self) -> PlayerId {
        self.0
    }
    fn current_pose(&self) -> Option<Pose> {
        Some(self.1)
    }
}

/// A body fits in a sphere of this radius around its feet + [`BODY_CENTER`]
/// in every pose (arms reach at most ~0.8 m forward, the head ~1.9 m up).
const BODY_RADIUS: f32 = 1.6;
/// Height of the bounding sphere's centre above the feet.
const BODY_CENTER: f32 = 0.9;

/// Resolves lag-compensated shots with reused scratch space: the rewound
/// hitboxes of the candidates of one shot. No allocation once it holds as
/// many candidates as a shot passes (`with_capacity(max_players)`).
#[derive(Debug, Clone)]
pub struct ShotResolver {
    bodies: Vec<(PlayerId, Hitboxes)>,
}

impl ShotResolver {
    /// Scratch space for shots with up to `max_candidates` candidates.
    pub fn with_capacity(max_candidates: usize) -> Self {
        Self {
            bodies: Vec::with_capacity(max_candidates),
        }
    }

    /// The body `shot` hits at tick `now`: every candidate `(id, pose at
    /// now)` (except the shooter) is rewound to `shot.aim_time` (clamped by
    /// the maximum rewind and to `now`; between the newest record and `now`
    /// the newest record is blended with the current pose, so sparse
    /// records lose nothing on recent shots), its
    /// hitboxes are placed from the rewound pose, and the nearest hitbox hit
    /// counts unless a wall is nearer. Candidates with no history (not
    /// spawned, or cleared) are skipped, as are those whose bounding sphere
    /// the ray misses (no skeleton is evaluated for them). Ties go to the
    /// candidate listed first.
    pub fn resolve(
        &mut self,
        map: &Map,
        lag: &LagCompensation<Pose>,
        shot: &Shot,
        now: Tick,
        candidates: impl IntoIterator<Item = impl ShotCandidate>,
    ) -> Option<ShotHit> {
        let dir = shot.dir.normalize_or_zero();
        if dir == Vec3::ZERO || !shot.origin.is_finite() || shot.range.is_nan() || shot.range <= 0.0
        {
            return None;
        }
        self.bodies.clear();
        for candidate in candidates {
            let target = candidate.id();
            if target == shot.shooter {
                continue;
            }
            let pose = match candidate.current_pose() {
                Some(current) => rewound_pose(lag, target, &current, shot.aim_time, now),
                None => lag.rewind(target, shot.aim_time, now),
            };
            let Some(pose) = pose else {
                continue;
            };
            if !pose.is_finite()
                || !ray_near_sphere(
                    shot.origin,
                    dir,
                    shot.range,
                    pose.position + Vec3::Y * BODY_CENTER,
                    BODY_RADIUS,
                )
            {
                continue;
            }
            self.bodies.push((target, Hitboxes::from_pose(&pose)));
        }
        match trace_shot(
            map,
            shot.origin,
            dir,
            shot.range,
            self.bodies.iter().map(|(id, body)| (*id, body)),
        ) {
            ShotOutcome::Body { target, hit } => Some(ShotHit {
                target,
                zone: hit.zone,
                distance: hit.distance,
            }),
            ShotOutcome::World(_) | ShotOutcome::Miss => None,
        }
    }
}

/// `target`'s pose at `aim` seen from tick `now`, given its pose `current`
/// at `now`. `None` when it has no history.
pub fn rewound_pose(
    lag: &LagCompensation<Pose>,
    target: PlayerId,
    current: &Pose,
    aim: TickTime,
    now: Tick,
) -> Option<Pose> {
    let &(newest_tick, newest) = lag.history(target)?.newest()?;
    let aim = aim.as_ticks_f64();
    let newest_at = f64::from(newest_tick);
    if aim > newest_at && now > newest_tick {
        let t = ((aim - newest_at) / (f64::from(now) - newest_at)).min(1.0);
        return Some(newest.lerp(current, t as f32));
    }
    lag.rewind(target, TickTime::from_ticks_f64(aim), now)
}

/// Whether the ray `origin + dir * t`, `t` in `[0, range]` (`dir` unit),
/// passes within `radius` of `center`.
fn ray_near_sphere(origin: Vec3, dir: Vec3, range: f32, center: Vec3, radius: f32) -> bool {
    let t = (center - origin).dot(dir).clamp(0.0, range);
    (origin + dir * t).distance_squared(center) <= radius * radius
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_engine::lag_comp::RewindLimits;

    fn walker(tick: Tick) -> Pose {
        Pose {
            position: Vec3::new(15.0 + 0.05 * tick as f32, 0.0, 20.0),
            yaw: std::f32::consts::FRAC_PI_2,
            speed: 6.0,
            locomotion_phase: (tick as f32 * 0.05 / 1.6).fract(),
            ..Pose::default()
        }
    }

    #[test]
    fn every_hitbox_lies_in_the_bounding_sphere() {
        for crouch in [0.0, 0.5, 1.0] {
            for pitch in [-1.5, 0.0, 1.5] {
                for phase in 0..16 {
                    let pose = Pose {
                        crouch,
                        pitch,
                        speed: 8.0,
                        locomotion_phase: phase as f32 / 16.0,
                        ..Pose::default()
                    };
                    let c = Vec3::Y * BODY_CENTER;
                    for h in Hitboxes::from_pose(&pose).as_slice() {
                        for end in [h.a, h.b] {
                            assert!(end.distance(c) + h.radius < BODY_RADIUS, "{h:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn shot_at_the_seen_pose_hits_and_at_the_current_one_misses() {
        let map = Map::builtin("plaza").unwrap();
        let mut lag = LagCompensation::<Pose>::new(2, RewindLimits::new(128, 4, 200));
        for tick in 0..=98 {
            if lag.is_record_tick(tick) {
                lag.record(PlayerId(1), tick, walker(tick));
            }
        }
        let origin = Vec3::new(20.0, 1.6, 10.0);
        let seen = walker(90);
        let chest = Hitboxes::from_pose(&seen).as_slice()[2].a;
        let shot = Shot {
            shooter: PlayerId(0),
            origin,
            dir: chest - origin,
            range: 100.0,
            aim_time: TickTime::at(90),
        };
        let mut resolver = ShotResolver::with_capacity(2);
        let hit = resolver
            .resolve(
                &map,
                &lag,
                &shot,
                100,
                [(PlayerId(0), walker(0)), (PlayerId(1), walker(100))],
            )
            .expect("rewound target is hit");
        assert_eq!(hit.target, PlayerId(1));
        assert!((hit.distance - (chest - origin).length()).abs() < 0.3);
        // Between the newest record (96) and now (100) the current pose is
        // blended in: a shot at what the shooter saw at 98 hits too.
        let recent = walker(98);
        let chest98 = Hitboxes::from_pose(&recent).as_slice()[2].a;
        let shot98 = Shot {
            dir: chest98 - origin,
            aim_time: TickTime::at(98),
            ..shot
        };
        let hit = resolver.resolve(&map, &lag, &shot98, 100, [(PlayerId(1), walker(100))]);
        assert_eq!(hit.map(|h| h.target), Some(PlayerId(1)));
        // Without the rewind the target has walked 0.5 m on: a miss.
        let late = Shot {
            aim_time: TickTime::at(100),
            ..shot
        };
        assert_eq!(
            resolver.resolve(&map, &lag, &late, 100, [(PlayerId(1), walker(100))]),
            None
        );
        // The shooter never hits itself, unknown players are skipped.
        assert_eq!(
            resolver.resolve(
                &map,
                &lag,
                &shot,
                100,
                [(PlayerId(0), walker(0)), (PlayerId(9), walker(0))]
            ),
            None
        );
        // Garbage shots are misses, never panics.
        let bad = Shot {
            dir: Vec3::ZERO,
            ..shot
        };
        assert_eq!(
            resolver.resolve(&map, &lag, &bad, 100, [(PlayerId(1), walker(100))]),
            None
        );
    }
}
