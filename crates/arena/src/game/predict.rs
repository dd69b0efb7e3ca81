//! The arena's side of client prediction: a client predicts its player with
//! [`stride`](crate::world::motion::stride), the step [`Arena`]'s input runs.

use hightick_engine::prediction::Predict;
use hightick_engine::tick::Tick;

use super::{Arena, ArenaReplica};
use crate::input::ArenaInput;
use crate::world::motion::{ArenaMotion, Stage};

impl Predict for Arena {
    type Motion = ArenaMotion;
    type Stage = Stage;

    fn step(stage: &Stage, motion: &mut ArenaMotion, input: &ArenaInput, dt: f32) {
        motion.step(stage, input, dt);
    }

    fn motion(replica: &ArenaReplica) -> Option<(Tick, ArenaMotion)> {
        replica.motion
    }

    fn position(motion: &ArenaMotion) -> [f32; 3] {
        motion.state.position.to_array()
    }

    /// The player's own state: the round's rule is none of it.
    fn agrees(predicted: &ArenaMotion, authoritative: &ArenaMotion) -> bool {
        ArenaMotion {
            rule: authoritative.rule,
            ..*predicted
        } == *authoritative
    }

    fn continuous(before: &ArenaMotion, after: &ArenaMotion) -> bool {
        before.life == after.life
    }
}
