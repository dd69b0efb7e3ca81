//! The movement step's output, pinned bit for bit. A client predicting its
//! player (any CPU, any OS) must compute exactly what the server computed;
//! this trajectory (turning, running into walls, sliding, jumping,
//! crouching on the shipped map) hashes every bit of every tick's state. A
//! change of the hash means the step changed its numbers: on purpose (then
//! pin the new hash, and know that older clients will mispredict) or by
//! platform (then the step is not portable; `libm` stands where the
//! platform's sin/cos would).

use hightick_arena::motion::{ArenaMotion, MoveRule, Stage, wander_input};
use hightick_arena::{MoveState, Team};

const TICK: f32 = 1.0 / 128.0;
const TICKS: u32 = 4096;

/// The pinned FNV-1a hash of the trajectory's bits (x86-64, debug and release).
const GOLDEN_HASH: u64 = 0x003d_fca0_1b3c_33a5;

struct Fnv(u64);

impl Fnv {
    fn f32(&mut self, v: f32) {
        for b in v.to_bits().to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
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
        if m.step(&stage, &wander_input(t, 0.0123), TICK)
            .is_some_and(|s| s.outcome.blocked)
        {
            blocked += 1;
        }
        let s = &m.state;
        for v in m.floats() {
            h.f32(v);
        }
        h.f32(s.locomotion_phase);
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
