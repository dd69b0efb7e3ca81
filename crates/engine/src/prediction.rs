//! What a game gives a client to predict its own player: [`Predict`].
//!
//! A competitive client moves its own player at once, from its own input,
//! and corrects when the server's state disagrees. For that the client runs
//! the very step the server runs in [`Game::input`], on the same state. A
//! game exposes that step here; it does not copy it. `hightick-client`'s
//! `Predictor` keeps the inputs the server has not yet answered, rewinds to
//! each authoritative state and replays them.
//!
//! The authoritative state reaches the client in an owner-only field group
//! ([`Archetype::owner_groups`](crate::world::Archetype::owner_groups)),
//! exact rather than quantized, so that replaying from it reproduces the
//! server bit for bit when the client's inputs were the server's.

use crate::game::Game;
use crate::tick::Tick;

/// A game whose local player a client can predict.
pub trait Predict: Game {
    /// Everything one step of a player's movement reads and writes.
    type Motion: Copy + PartialEq + std::fmt::Debug + Send + 'static;
    /// What a step reads besides the player and its input (the map, the
    /// movement tuning): built by the client from the match's settings.
    type Stage: Send + Sync;

    /// One tick of `input` applied to `motion`: the step the server runs for
    /// the player in [`Game::input`].
    fn step(stage: &Self::Stage, motion: &mut Self::Motion, input: &Self::Input, dt: f32);

    /// The authoritative motion `replica` carries and the server tick it
    /// followed, if it is the client's own player (the owner-only group
    /// reached it). The tick travels with the motion: a server may send it
    /// only when the client's prediction may be wrong.
    fn motion(replica: &Self::Replica) -> Option<(Tick, Self::Motion)>;

    /// Where `motion` puts the player: what is drawn, and what corrections
    /// are measured on.
    fn position(motion: &Self::Motion) -> [f32; 3];

    /// Whether the client predicted `predicted` where the server computed
    /// `authoritative`: `false` is a misprediction, counted and corrected.
    /// Default: equal. A game may overlook what is no state of the player's
    /// own (a rule the round changed), which the client adopts silently.
    fn agrees(predicted: &Self::Motion, authoritative: &Self::Motion) -> bool {
        predicted == authoritative
    }

    /// Whether `after` can follow `before` by moving. `false` (a respawn, a
    /// teleport) makes the client take `after` at once, neither smoothed nor
    /// counted as a misprediction. Default: always.
    fn continuous(before: &Self::Motion, after: &Self::Motion) -> bool {
        let _ = (before, after);
        true
    }
}
