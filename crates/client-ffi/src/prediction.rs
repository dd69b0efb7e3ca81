//! Prediction of the local player behind the C ABI: [`FfiPredict`], what a
//! game whose [`Game`] is [`Predict`] adds to its [`FfiGame`], and
//! [`LocalPlayer`], the predictor a session holds without naming `Predict`
//! (so that games that do not predict keep their library unchanged).
//!
//! The session feeds the predictor each input the caller sends and, in each
//! `update`, the world after the snapshots it applied; the caller reads the
//! drawn position ([`HightickPrediction`]) and the counts
//! ([`HightickPredictionStats`]).

use std::error::Error;

use hightick_client::{PredictionConfig, Predictor};
use hightick_engine::Game;
use hightick_engine::prediction::Predict;
use hightick_engine::replication::ClientWorld;
use hightick_proto::InputCommand;

use crate::game::FfiGame;
use crate::records::{HightickPrediction, HightickPredictionStats};

/// The stage type of `F`'s game (its map and movement tuning).
pub type StageOf<F> = <<F as FfiGame>::Game as Predict>::Stage;

/// A game's side of prediction through its C ABI: the stage its movement
/// runs on, named by the caller. Implemented beside [`FfiGame`]; then
/// [`export!`](crate::export) with `predict` adds the `hightick_prediction_*`
/// calls.
pub trait FfiPredict: FfiGame<Game: Predict> {
    /// The stage called `name` (the caller's words for the match's map);
    /// `None`: the game's default. An unknown name is an error saying which
    /// names there are.
    fn stage(name: Option<&str>) -> Result<StageOf<Self>, Box<dyn Error + Send + Sync>>;
}

/// The local player's predictor as a session holds it (a [`Predictor`] of a
/// game that predicts; a session of one that does not holds none).
pub trait LocalPlayer<G: Game>: Send + std::fmt::Debug {
    /// The player takes `command` (the one sent to the server).
    fn predict(&mut self, command: &InputCommand<G::Input>);
    /// Compares the newest authoritative state in `world` with the
    /// prediction; corrects on a difference.
    fn reconcile(&mut self, world: &ClientWorld<G::Replica>);
    /// The drawn and predicted positions, once an authoritative state came.
    fn view(&self) -> Option<HightickPrediction>;
    /// What it counted.
    fn stats(&self) -> HightickPredictionStats;
    /// How corrections are drawn (`None`: at once).
    fn set_smoothing(&mut self, smoothing: Option<f32>);
}

/// A predictor of `F`'s local player on `stage` at `tick_rate_hz`, with the
/// default settings (smoothing on).
pub fn local_player<F: FfiPredict>(
    stage: StageOf<F>,
    tick_rate_hz: u32,
) -> Box<dyn LocalPlayer<F::Game>> {
    Box::new(Predictor::<F::Game>::new(
        stage,
        tick_rate_hz,
        PredictionConfig::default(),
    ))
}

/// Micrometres to metres.
fn metres(um: u64) -> f32 {
    (um as f64 / 1e6) as f32
}

impl<G: Predict> LocalPlayer<G> for Predictor<G>
where
    Predictor<G>: Send,
{
    fn predict(&mut self, command: &InputCommand<G::Input>) {
        Predictor::predict(self, command);
    }

    fn reconcile(&mut self, world: &ClientWorld<G::Replica>) {
        Predictor::reconcile(self, world);
    }

    fn view(&self) -> Option<HightickPrediction> {
        let (tick, motion) = self.motion()?;
        Some(HightickPrediction {
            tick,
            entity: u32::from(self.entity()?.0),
            position: self.drawn_position()?,
            predicted: G::position(&motion),
        })
    }

    fn stats(&self) -> HightickPredictionStats {
        let s = Predictor::stats(self);
        let h = &s.correction_um;
        let (mean, p99, max) = if h.is_empty() {
            (0.0, 0, 0)
        } else {
            (h.mean() / 1e6, h.value_at_quantile(0.99), h.max())
        };
        HightickPredictionStats {
            compared: s.compared,
            mispredicted: s.mispredicted,
            resets: s.resets,
            replayed: s.replayed,
            last_correction_m: s.last_correction_m,
            mean_correction_m: mean as f32,
            p99_correction_m: metres(p99),
            max_correction_m: metres(max),
        }
    }

    fn set_smoothing(&mut self, smoothing: Option<f32>) {
        Predictor::set_smoothing(self, smoothing);
    }
}
