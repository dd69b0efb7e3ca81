//! [`HightickArenaInput`]: the arena's input as a C caller fills it.

use hightick_arena::input::{ArenaInput, Buttons, WEAPON_SLOTS};
use hightick_proto::ProtoError;

/// Primary fire (`HightickArenaInput::buttons` bit).
pub const HIGHTICK_ARENA_BUTTON_FIRE: u16 = 1 << 0;
/// Secondary fire / zoom.
pub const HIGHTICK_ARENA_BUTTON_ALT_FIRE: u16 = 1 << 1;
/// Jump.
pub const HIGHTICK_ARENA_BUTTON_JUMP: u16 = 1 << 2;
/// Crouch.
pub const HIGHTICK_ARENA_BUTTON_CROUCH: u16 = 1 << 3;
/// Walk (quiet movement).
pub const HIGHTICK_ARENA_BUTTON_WALK: u16 = 1 << 4;
/// Reload.
pub const HIGHTICK_ARENA_BUTTON_RELOAD: u16 = 1 << 5;
/// Use / interact.
pub const HIGHTICK_ARENA_BUTTON_USE: u16 = 1 << 6;
/// Buy.
pub const HIGHTICK_ARENA_BUTTON_BUY: u16 = 1 << 7;
/// Drop the held weapon.
pub const HIGHTICK_ARENA_BUTTON_DROP: u16 = 1 << 8;
/// Inspect the held weapon.
pub const HIGHTICK_ARENA_BUTTON_INSPECT: u16 = 1 << 9;
/// Show the scoreboard.
pub const HIGHTICK_ARENA_BUTTON_SCOREBOARD: u16 = 1 << 10;

/// One tick of an arena player's input.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HightickArenaInput {
    /// View yaw, radians (finite; wraps). Yaw 0 looks along +z.
    pub yaw: f32,
    /// View pitch, radians (finite; wraps). Positive looks up.
    pub pitch: f32,
    /// Buttons held: `HIGHTICK_ARENA_BUTTON_*` bits, no others.
    pub buttons: u16,
    /// Strafe, -127..=127.
    pub move_x: i8,
    /// Forward (+) / back (-), -127..=127.
    pub move_y: i8,
    /// Selected weapon slot, 0..=15.
    pub weapon_slot: u8,
}

impl HightickArenaInput {
    /// The arena's input; the first field out of range is named.
    pub fn to_input(&self) -> Result<ArenaInput, ProtoError> {
        let invalid = |field| Err(ProtoError::invalid(field));
        if !self.yaw.is_finite() {
            return invalid("input.yaw");
        }
        if !self.pitch.is_finite() {
            return invalid("input.pitch");
        }
        let Some(buttons) = Buttons::from_bits(self.buttons) else {
            return invalid("input.buttons");
        };
        if self.move_x == i8::MIN {
            return invalid("input.move_x");
        }
        if self.move_y == i8::MIN {
            return invalid("input.move_y");
        }
        if self.weapon_slot >= WEAPON_SLOTS {
            return invalid("input.weapon_slot");
        }
        Ok(ArenaInput {
            move_x: self.move_x,
            move_y: self.move_y,
            yaw: self.yaw,
            pitch: self.pitch,
            buttons,
            weapon_slot: self.weapon_slot,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn button_bits_are_the_arenas_and_every_bad_field_is_named() {
        assert_eq!(HIGHTICK_ARENA_BUTTON_FIRE, Buttons::FIRE.bits());
        assert_eq!(HIGHTICK_ARENA_BUTTON_SCOREBOARD, Buttons::SCOREBOARD.bits());
        let good = HightickArenaInput {
            yaw: 1.0,
            buttons: HIGHTICK_ARENA_BUTTON_FIRE | HIGHTICK_ARENA_BUTTON_JUMP,
            move_y: 127,
            weapon_slot: 2,
            ..HightickArenaInput::default()
        };
        let input = good.to_input().unwrap();
        assert!(input.buttons.contains(Buttons::FIRE | Buttons::JUMP));
        assert_eq!((input.move_y, input.weapon_slot), (127, 2));
        type Spoil = fn(&mut HightickArenaInput);
        let cases: [(Spoil, &str); 6] = [
            (|i| i.yaw = f32::NAN, "input.yaw"),
            (|i| i.pitch = f32::INFINITY, "input.pitch"),
            (|i| i.buttons = 1 << 15, "input.buttons"),
            (|i| i.move_x = -128, "input.move_x"),
            (|i| i.move_y = -128, "input.move_y"),
            (|i| i.weapon_slot = 16, "input.weapon_slot"),
        ];
        for (spoil, field) in cases {
            let mut bad = good;
            spoil(&mut bad);
            let e = bad.to_input().unwrap_err();
            assert!(e.to_string().contains(field), "{e} names {field}");
        }
    }
}
