//! The arena's weapon rules on top of [`crate::weapon`]: the price list,
//! armor points, and the wire id of the gun in hand.

use crate::weapon::{WeaponKind, WeaponSpec};

use super::player::{Fighter, Item};

/// Armor points bought with [`Item::Armor`].
pub const ARMOR_POINTS: u8 = 100;
/// What armor costs.
pub const ARMOR_PRICE: u32 = 650;

/// The wire id of the weapon in `f`'s hand.
pub(super) fn weapon_id(f: &Fighter) -> u8 {
    f.loadout.active().kind().code()
}

/// What an item costs.
pub(super) fn price(item: Item) -> u32 {
    match item {
        Item::Pistol => WeaponSpec::PISTOL.price,
        Item::Rifle => WeaponSpec::RIFLE.price,
        Item::Armor => ARMOR_PRICE,
    }
}

/// The weapon an item is, if it is one.
pub(super) fn weapon(item: Item) -> Option<WeaponKind> {
    match item {
        Item::Pistol => Some(WeaponKind::Pistol),
        Item::Rifle => Some(WeaponKind::Rifle),
        Item::Armor => None,
    }
}
