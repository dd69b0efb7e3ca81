//! The movement step's output, pinned bit for bit. A client predicting its
//! player (any CPU, any OS) must compute exactly what the server computed;
//! this trajectory (turning, running into walls, sliding, jumping,
//! crouching on the shipped map) hashes every bit of every tick's state. A
//! change of the hash means the step changed its numbers: on purpose (then
//! pin the new hash, and know that older clients will mispredict) or by
//! platform (then the step is not portable; `libm` stands where the
//! platform's sin/cos would).

use hightick_arena::input::{ArenaInput, Buttons};
use hightick_arena::motion::{ArenaMotion, MoveRule, Stage};
use hightick_arena::{MoveState, Team};

const TICK: f32 = 1.0 / 128.0;
const TICKS: u32 = 4096;

/// The pinned FNV-1a hash of the trajectory's bits (x86-64, debug and release).
const GOLDEN_HASH: u64 = 0x91e5_4150_c5a6_4385;

struct Fnv(u64);

impl Fnv {
    fn f32(&mut self, v: f32) {
        for b in v.to_bits().to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The input of tick `t`: a stick and a view that sweep round, with jumps,
/// crouches and walks on their own rhythms, so the player meets walls and
/// boxes at many angles.
fn input(t: u32) -> ArenaInput {
    let mut buttons = Buttons::default();
    if t % 97 < 3 {
        buttons |= Buttons::JUMP;
    }
    if t % 331 > 250 {
        buttons |= Buttons::CROUCH;
    }
    if t % 503 > 440 {
        buttons |= Buttons::WALK;
    }
    ArenaInput {
        move_x: [-127, 0, 127][((t / 64) % 3) as usize],
        move_y: if t % 700 < 600 { 127 } else { -127 },
        yaw: t as f32 * 0.0123,
        pitch: 0.0,
        buttons,
        weapon_slot: 0,
    }
}

fn trajectory() -> (u64, Vec<[f32; 3]>) {
    let stage = Stage::builtin("dust_corners").unwrap();
    let spawn = stage.map.spawn_point(Team::Attackers, 0, 0);
    let mut m = ArenaMotion {
        state: MoveState::spawned(&spawn),
        yaw: spawn.yaw,
        rule: MoveRule::Free,
        life: 1,
    };
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let mut samples = Vec::new();
    let mut blocked = 0;
    for t in 0..TICKS {
        if m.step(&stage, &input(t), TICK)
            .is_some_and(|s| s.outcome.blocked)
        {
            blocked += 1;
        }
        let s = &m.state;
        for v in [
            s.position.x,
            s.position.y,
            s.position.z,
            s.velocity.x,
            s.velocity.y,
            s.velocity.z,
            s.crouch,
            s.locomotion_phase,
            m.yaw,
        ] {
            h.f32(v);
        }
        h.f32(if s.on_ground { 1.0 } else { 0.0 });
        if t % 1024 == 1023 {
            samples.push(s.position.to_array());
        }
    }
    assert!(
        blocked > 50,
        "the path meets walls ({blocked} blocked ticks)"
    );
    (h.0, samples)
}

#[test]
fn the_movement_step_reproduces_its_pinned_trajectory_bit_for_bit() {
    let (hash, samples) = trajectory();
    assert_eq!(
        hash, GOLDEN_HASH,
        "trajectory hash {hash:#018x} (samples every 1024 ticks: {samples:?})"
    );
}

#[test]
fn the_step_is_a_pure_function_of_its_inputs() {
    assert_eq!(trajectory(), trajectory());
}
