//! The arena: the world of hightick's reference game mode. Maps made of
//! boxes, players as capsules that run, jump, crouch and slide along walls,
//! a procedural skeleton that places hitboxes, ray casts for shots and line
//! of sight for fog of war.
//!
//! What it is for: everything spatial a tactical shooter's server does every
//! tick, deterministic (same inputs, same outputs, bit for bit on one
//! platform) and allocation-free once a map is loaded. Maps are TOML files
//! ([`map_file`] documents the format); two ship with the crate
//! ([`Map::builtin`]): `dust_corners`, a 5v5 map of corridors and corners,
//! and `plaza`, an open square where 100 players all see each other.
//!
//! On top of that world sit the game's rules: weapons ([`WeaponKind`]),
//! lag-compensated shots against poses rewound through the engine's history
//! ([`ShotResolver`]), fog of war ([`FogOfWar`]), and the 5v5 round game mode itself
//! ([`game`]), which implements the engine's `Game` trait, with scripted
//! bots ([`bot`]) and the benchmark scenario presets ([`scenario`]).
//!
//! What it is not: networking. The engine replicates what the game mode
//! changes; sockets and sealing belong to the host.
//!
//! Conventions: Y is up, distances are metres, angles radians; yaw 0 looks
//! along +z and yaw pi/2 along +x; positive pitch looks up. A player's
//! position is its feet.
//!
//! ```
//! use glam::{Vec2, Vec3};
//! use hightick_arena::{
//!     can_see, move_and_slide, raycast_hitboxes, Hitboxes, Map, MoveInput, MoveState,
//!     MovementParams, Pose, Team,
//! };
//!
//! let map = Map::builtin("dust_corners")?;
//! let params = MovementParams::default();
//! let spawn = map.spawn_point(Team::Attackers, 0, 7);
//! let mut player = MoveState::spawned(&spawn);
//! let run = MoveInput::from_axes(spawn.yaw, 1.0, 0.0);
//! for _ in 0..128 {
//!     move_and_slide(&map, &params, &mut player, &run, 1.0 / 128.0);
//! }
//! assert!(map.capsule_fits(player.position, params.capsule(player.crouch)));
//!
//! // Pose the player, place its hitboxes, and shoot at its head.
//! let pose = Pose::from_move_state(&player, spawn.yaw, 0.0);
//! let body = Hitboxes::from_pose(&pose);
//! let head = body.head().a;
//! let muzzle = head + Vec3::new(0.0, 0.0, -3.0);
//! let hit = raycast_hitboxes(&body, muzzle, head - muzzle, 10.0).expect("aimed at the head");
//! assert_eq!(hit.zone, hightick_arena::HitZone::Head);
//!
//! // Fog of war: may a defender at its spawn see this player?
//! let viewer = map.spawn_point(Team::Defenders, 0, 7).position + Vec3::Y * 1.64;
//! let _visible = can_see(&map, viewer, &pose, 0.3);
//! # Ok::<(), hightick_arena::MapError>(())
//! ```

pub mod bot;
pub mod client_bot;
mod error;
pub mod event;
mod fog;
#[cfg(feature = "measure")]
pub mod freshness;
pub mod game;
pub mod hosting;
pub mod input;
mod rewind;
pub mod scenario;
mod team;
mod weapon;
pub mod world;

pub use error::MapError;
pub use fog::{FogOfWar, FogParams};
pub use rewind::{Shot, ShotCandidate, ShotHit, ShotResolver, rewound_pose};
pub use team::Team;
pub use weapon::{
    Damage, Loadout, Slot, WeaponKind, WeaponSpec, WeaponState, damage, spread_direction,
};
pub use world::aabb::Aabb;
pub use world::collision::{CONTACT_EPSILON, Capsule, SKIN};
pub use world::grid::{BoxGrid, DEFAULT_CELL_SIZE};
pub use world::hitbox::{BodyHit, HITBOX_COUNT, HitZone, Hitbox, Hitboxes, raycast_hitboxes};
pub use world::map::{BoxKind, Map, SpawnZone};
pub use world::movement::{
    CROUCH_HEIGHT, MAX_STEP, MoveInput, MoveOutcome, MoveState, MovementParams, PLAYER_RADIUS,
    STAND_HEIGHT, STANDING_CAPSULE, move_and_slide, move_and_slide_within,
};
pub use world::pose::{Pose, Stance, clamp_pitch, view_direction, wrap_angle};
pub use world::raycast::{Hit, ShotOutcome, Surface, raycast_world, trace_shot};
pub use world::sight::{can_see, line_of_sight};
pub use world::skeleton::{BONE_COUNT, Bone, BoneTransform, Skeleton, dims};
pub use world::spawn::{SPAWN_SPACING, SpawnPoint};
pub use world::validation::{MoveVerdict, MoveViolation, MovementLimits, check_displacement};

/// The public paths of before the `world/` folder.
pub use world::{map_file, motion};
