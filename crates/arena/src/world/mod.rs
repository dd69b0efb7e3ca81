//! The arena's world: the map and its loading and checks, geometry (boxes,
//! the broad-phase grid, rays, sight lines, occluders and shadows), bodies
//! (pose, skeleton, hitboxes), movement and collision, and spawns. The
//! rules played in it (rounds, weapons, economy, fog of war) are in
//! [`crate::game`] and the modules beside it.

pub(crate) mod aabb;
pub(crate) mod collision;
pub(crate) mod grid;
pub(crate) mod hitbox;
pub(crate) mod map;
pub mod map_file;
pub mod motion;
pub(crate) mod movement;
pub(crate) mod occluder;
pub(crate) mod pose;
pub(crate) mod raycast;
pub(crate) mod shadow;
pub(crate) mod sight;
pub(crate) mod skeleton;
pub(crate) mod spawn;
pub(crate) mod validation;
