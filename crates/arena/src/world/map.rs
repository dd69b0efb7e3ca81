//! A loaded arena map: solid boxes, world bounds, spawn zones and buy zones,
//! indexed for fast queries.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::error::MapError;
use crate::team::Team;
use crate::world::aabb::Aabb;
use crate::world::grid::{BoxGrid, DEFAULT_CELL_SIZE};
use crate::world::occluder::Occluders;
use crate::world::spawn::{SpawnPoint, place_spawn_points};

/// What a box is, for the game's and the level designer's benefit; collision
/// treats every kind the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoxKind {
    /// A wall or building block that blocks sight.
    #[default]
    Wall,
    /// Low cover: crates, barrels, planters.
    Crate,
    /// A raised floor to stand on.
    Platform,
}

/// A region where one team's players appear at round start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpawnZone {
    /// The team spawning here.
    pub team: Team,
    /// The zone; players' feet stand at `area.min.y`.
    pub area: Aabb,
    /// Facing of players spawned here, radians (0 looks along +z).
    pub yaw: f32,
}

/// The pieces a map is assembled from once its file has been validated.
#[derive(Debug)]
pub(crate) struct MapParts {
    pub(crate) name: String,
    pub(crate) source: String,
    pub(crate) players_per_team: u32,
    pub(crate) bounds: Aabb,
    pub(crate) boxes: Vec<Aabb>,
    pub(crate) kinds: Vec<BoxKind>,
    pub(crate) spawn_zones: Vec<SpawnZone>,
    pub(crate) buy_zones: [Option<Aabb>; 2],
}

/// An arena map. The world is Y-up, in metres; the bottom of the bounds is
/// the floor, the sides are walls. Immutable after loading, so one map can be
/// shared (`Arc<Map>`) by every match that plays on it.
#[derive(Debug, Clone)]
pub struct Map {
    name: String,
    source: String,
    players_per_team: u32,
    bounds: Aabb,
    boxes: Vec<Aabb>,
    kinds: Vec<BoxKind>,
    max_box_top: f32,
    grid: BoxGrid,
    occluders: Occluders,
    spawn_zones: Vec<SpawnZone>,
    spawn_points: [Vec<SpawnPoint>; 2],
    buy_zones: [Option<Aabb>; 2],
}

const BUILTIN: [(&str, &str); 2] = [
    ("dust_corners", include_str!("../../maps/dust_corners.toml")),
    ("plaza", include_str!("../../maps/plaza.toml")),
];

impl Map {
    /// Names of the maps shipped with the crate.
    pub const BUILTIN_NAMES: &'static str = "dust_corners, plaza";

    /// Reads and validates a map file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, MapError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| MapError::Read {
            file: file.clone(),
            source,
        })?;
        Self::from_toml_str(&file, &text)
    }

    /// Parses and validates map text; `file` names the source in errors.
    pub fn from_toml_str(file: &str, text: &str) -> Result<Self, MapError> {
        crate::world::map_file::parse(file, text)
    }

    /// One of the shipped maps: `dust_corners` (5v5, corridors and corners)
    /// or `plaza` (an open square where 100 players see each other).
    pub fn builtin(name: &str) -> Result<Self, MapError> {
        let (_, text) =
            BUILTIN
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| MapError::UnknownBuiltin {
                    name: name.to_owned(),
                    known: Self::BUILTIN_NAMES,
                })?;
        Self::from_toml_str(&format!("builtin:{name}.toml"), text)
    }

    /// A built-in map parsed once per process and shared by every match
    /// played on it: its boxes, grid and occluders are read-only, and one
    /// copy stays in cache across the matches a worker ticks back to back
    /// where a copy per match would be fetched again by each.
    pub fn builtin_shared(name: &str) -> Result<Arc<Self>, MapError> {
        static SHARED: [OnceLock<Arc<Map>>; BUILTIN.len()] =
            [const { OnceLock::new() }; BUILTIN.len()];
        let Some(i) = BUILTIN.iter().position(|(n, _)| *n == name) else {
            return Self::builtin(name).map(Arc::new);
        };
        if let Some(map) = SHARED[i].get() {
            return Ok(Arc::clone(map));
        }
        let map = Arc::new(Self::builtin(name)?);
        Ok(Arc::clone(SHARED[i].get_or_init(|| map)))
    }

    pub(crate) fn from_parts(parts: MapParts) -> Self {
        let (lo, hi) = parts.bounds.footprint();
        let grid = BoxGrid::build(lo, hi, DEFAULT_CELL_SIZE, &parts.boxes);
        let max_box_top = parts
            .boxes
            .iter()
            .map(|b| b.max.y)
            .fold(f32::NEG_INFINITY, f32::max);
        let occluders = Occluders::build(&parts.boxes);
        let mut map = Self {
            name: parts.name,
            source: parts.source,
            players_per_team: parts.players_per_team,
            bounds: parts.bounds,
            boxes: parts.boxes,
            kinds: parts.kinds,
            max_box_top,
            grid,
            occluders,
            spawn_zones: parts.spawn_zones,
            spawn_points: [Vec::new(), Vec::new()],
            buy_zones: parts.buy_zones,
        };
        for team in Team::ALL {
            map.spawn_points[team.index()] = place_spawn_points(&map, team);
        }
        map
    }

    /// The map's name, from its file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the map came from (a path, or `builtin:NAME.toml`).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// How many players per team the map is laid out for.
    pub fn players_per_team(&self) -> u32 {
        self.players_per_team
    }

    /// The playable volume. Its bottom is the floor.
    pub fn bounds(&self) -> &Aabb {
        &self.bounds
    }

    /// Height of the floor.
    pub fn floor_y(&self) -> f32 {
        self.bounds.min.y
    }

    /// The solid boxes, in file order (indices are stable).
    pub fn boxes(&self) -> &[Aabb] {
        &self.boxes
    }

    /// The kind of box `index`.
    pub fn box_kind(&self, index: usize) -> Option<BoxKind> {
        self.kinds.get(index).copied()
    }

    /// The top of the highest box: nothing blocks a line above it.
    pub fn max_box_top(&self) -> f32 {
        self.max_box_top
    }

    /// The spatial index over the boxes.
    pub fn grid(&self) -> &BoxGrid {
        &self.grid
    }

    /// The boxes grown inside the solid space that fog of war's shadow
    /// proofs use (built at load).
    pub(crate) fn occluders(&self) -> &Occluders {
        &self.occluders
    }

    /// All spawn zones, in file order.
    pub fn spawn_zones(&self) -> &[SpawnZone] {
        &self.spawn_zones
    }

    /// The buy zone that confines `team` during the buy phase, if the map has one.
    pub fn buy_zone(&self, team: Team) -> Option<&Aabb> {
        self.buy_zones[team.index()].as_ref()
    }

    /// Every free spawn point of `team`, in a fixed order (zone by zone, row by row).
    pub fn spawn_points(&self, team: Team) -> &[SpawnPoint] {
        &self.spawn_points[team.index()]
    }

    /// The spawn point for player `slot` of `team` in the round seeded by
    /// `seed`: distinct slots get distinct points (while `slot` is below the
    /// number of spawn points), the same inputs always give the same point,
    /// and a different seed rotates the assignment.
    pub fn spawn_point(&self, team: Team, slot: usize, seed: u64) -> SpawnPoint {
        let points = self.spawn_points(team);
        let n = points.len();
        let offset = (splitmix64(seed ^ team.index() as u64) % n as u64) as usize;
        points[(slot % n + offset) % n]
    }
}

/// A 64-bit mix (SplitMix64's finaliser): a fixed, portable scramble.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform numbers in `0..1` from `seed`, the same on every machine: for
/// tests that scatter points over a map.
#[cfg(test)]
pub(crate) fn unit_numbers(mut seed: u64) -> impl FnMut() -> f32 {
    move || {
        seed = splitmix64(seed);
        (seed >> 40) as f32 / (1u64 << 24) as f32
    }
}
