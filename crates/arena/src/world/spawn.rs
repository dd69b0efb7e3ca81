//! Deterministic spawn placement: a fixed lattice of points inside each spawn
//! zone, keeping only those where a standing player fits.

use glam::Vec3;

use crate::team::Team;
use crate::world::map::Map;
use crate::world::movement::STANDING_CAPSULE;

/// Distance between neighbouring spawn points, metres (two radii plus a gap).
pub const SPAWN_SPACING: f32 = 1.2;

/// Where and how a player appears.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpawnPoint {
    /// Feet position.
    pub position: Vec3,
    /// Facing, radians.
    pub yaw: f32,
}

/// The free lattice points of `team`'s spawn zones: zone by zone in file
/// order, then row by row (z), then along x. Centred in each zone.
pub(crate) fn place_spawn_points(map: &Map, team: Team) -> Vec<SpawnPoint> {
    let capsule = STANDING_CAPSULE;
    let margin = capsule.radius + 0.05;
    let mut points = Vec::new();
    for zone in map.spawn_zones().iter().filter(|z| z.team == team) {
        let (lo, hi) = zone.area.footprint();
        let (lo, hi) = (lo + margin, hi - margin);
        let span = hi - lo;
        if span.x < 0.0 || span.y < 0.0 {
            continue;
        }
        let nx = (span.x / SPAWN_SPACING) as u32 + 1;
        let nz = (span.y / SPAWN_SPACING) as u32 + 1;
        let x0 = lo.x + (span.x - (nx - 1) as f32 * SPAWN_SPACING) * 0.5;
        let z0 = lo.y + (span.y - (nz - 1) as f32 * SPAWN_SPACING) * 0.5;
        for iz in 0..nz {
            for ix in 0..nx {
                let feet = Vec3::new(
                    x0 + ix as f32 * SPAWN_SPACING,
                    zone.area.min.y,
                    z0 + iz as f32 * SPAWN_SPACING,
                );
                if map.capsule_fits(feet, capsule) {
                    points.push(SpawnPoint {
                        position: feet,
                        yaw: zone.yaw,
                    });
                }
            }
        }
    }
    points
}
