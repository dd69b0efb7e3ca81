//! Prediction and reconciliation of the local player: [`Predictor`].
//!
//! The client moves its own player at once with the game's own step
//! ([`Predict::step`], the function the server runs), keeping every input
//! the server has not answered yet. Snapshots carry the player's
//! authoritative motion and the tick it followed (an owner-only field group;
//! a server may send it only when a prediction may be wrong, and now and
//! then):
//! the predictor compares it with what it predicted for that tick, and on a
//! difference rewinds to it and replays the inputs since. A correction of
//! the drawn position is smoothed away over a few ticks (or taken at once:
//! [`PredictionConfig::smoothing`] `None`).
//!
//! Sans-IO and allocation-free after set-up: the caller hands it each input
//! command it sends ([`Predictor::predict`]) and the client's world after
//! snapshots arrive ([`Predictor::reconcile`]).

use hdrhistogram::Histogram;
use hightick_engine::EntityId;
use hightick_engine::prediction::Predict;
use hightick_engine::replication::ClientWorld;
use hightick_engine::tick::Tick;
use hightick_proto::{InputCommand, InputPayload};

/// How a [`Predictor`] behaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PredictionConfig {
    /// Inputs kept for replay, in ticks (at least the round trip in ticks
    /// plus the input lead; older authoritative states are taken as they
    /// come, without replay).
    pub history_ticks: usize,
    /// Share of a correction still drawn after each predicted tick (an
    /// exponential fade: 0.8 leaves 11% after 10 ticks). `None`: corrections
    /// are drawn at once.
    pub smoothing: Option<f32>,
}

impl Default for PredictionConfig {
    fn default() -> Self {
        Self {
            history_ticks: 256,
            smoothing: Some(0.8),
        }
    }
}

/// What a [`Predictor`] counted.
#[derive(Debug, Clone)]
pub struct PredictionStats {
    /// Authoritative states compared with a prediction of the same tick.
    pub compared: u64,
    /// Of those, the ones that disagreed ([`Predict::agrees`] false).
    pub mispredicted: u64,
    /// Authoritative states taken without comparison: the first, a
    /// discontinuity (respawn), or one older than the inputs kept.
    pub resets: u64,
    /// Ticks replayed after corrections.
    pub replayed: u64,
    /// How far each misprediction moved the predicted player, micrometres
    /// (bounded: a correction past 100 m, a teleport, counts as 100 m; so
    /// that recording never allocates).
    pub correction_um: Histogram<u64>,
    /// How far the newest misprediction moved the predicted player, metres
    /// (0 before any).
    pub last_correction_m: f32,
}

impl PredictionStats {
    /// `mispredicted / compared`, 0 before any comparison.
    pub fn misprediction_rate(&self) -> f64 {
        if self.compared == 0 {
            0.0
        } else {
            self.mispredicted as f64 / self.compared as f64
        }
    }
}

/// The largest correction the histogram tells apart, micrometres (100 m).
const MAX_CORRECTION_UM: u64 = 100_000_000;

struct Step<G: Predict> {
    tick: Tick,
    /// The input as the server reads it back.
    input: G::Input,
    /// The motion after this tick's step.
    after: G::Motion,
}

impl<G: Predict> Clone for Step<G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G: Predict> Copy for Step<G> {}

/// Predicts the local player of a `G` client; see the [module](self).
pub struct Predictor<G: Predict> {
    stage: G::Stage,
    dt: f32,
    config: PredictionConfig,
    /// Ring of predicted ticks, indexed by `tick % len`.
    steps: Box<[Option<Step<G>>]>,
    /// The newest predicted tick and the motion after it.
    current: Option<(Tick, G::Motion)>,
    /// The last input, repeated over ticks the caller skipped (as the
    /// server repeats it).
    last_input: G::Input,
    /// The newest server tick reconciled.
    reconciled: Tick,
    own: Option<EntityId>,
    /// Drawn position minus predicted position, fading.
    offset: [f32; 3],
    stats: PredictionStats,
}

impl<G: Predict> std::fmt::Debug for Predictor<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Predictor")
            .field("current", &self.current)
            .field("reconciled", &self.reconciled)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

/// The distance between two points (what a correction moves the player,
/// and what the quality probe's interpolation error is).
pub(crate) fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

impl<G: Predict> Predictor<G> {
    /// A predictor on `stage` (the match's map and tuning) at `tick_rate_hz`.
    pub fn new(stage: G::Stage, tick_rate_hz: u32, config: PredictionConfig) -> Self {
        Self {
            stage,
            dt: 1.0 / tick_rate_hz.max(1) as f32,
            steps: (0..config.history_ticks.max(1)).map(|_| None).collect(),
            config,
            current: None,
            last_input: G::Input::default(),
            reconciled: 0,
            own: None,
            offset: [0.0; 3],
            stats: PredictionStats {
                compared: 0,
                mispredicted: 0,
                resets: 0,
                replayed: 0,
                correction_um: Histogram::new_with_bounds(1, MAX_CORRECTION_UM, 3)
                    .expect("1 um to 100 m at 3 significant figures is valid"),
                last_correction_m: 0.0,
            },
        }
    }

    /// The predicted motion and its tick, once the server has sent one.
    pub fn motion(&self) -> Option<(Tick, G::Motion)> {
        self.current
    }

    /// Where to draw the player: the prediction plus what is left of the
    /// last correction.
    pub fn drawn_position(&self) -> Option<[f32; 3]> {
        let (_, m) = self.current?;
        let p = G::position(&m);
        Some([
            p[0] + self.offset[0],
            p[1] + self.offset[1],
            p[2] + self.offset[2],
        ])
    }

    /// What it counted.
    pub fn stats(&self) -> &PredictionStats {
        &self.stats
    }

    /// The local player's entity, once an authoritative state of it came.
    pub fn entity(&self) -> Option<EntityId> {
        self.own
    }

    /// Changes how corrections are drawn ([`PredictionConfig::smoothing`]);
    /// `None` also drops what is left of the current one.
    pub fn set_smoothing(&mut self, smoothing: Option<f32>) {
        self.config.smoothing = smoothing;
        if smoothing.is_none() {
            self.offset = [0.0; 3];
        }
    }

    fn slot(&self, tick: Tick) -> usize {
        tick as usize % self.steps.len()
    }

    /// The local player takes `command` (the one the client sends the
    /// server): it moves at once. Ticks the caller skipped since the last
    /// command repeat the last input, as on the server; a command for a tick
    /// already predicted is ignored.
    pub fn predict(&mut self, command: &InputCommand<G::Input>) {
        let input = command.payload.quantized().unwrap_or(command.payload);
        let Some((mut tick, mut motion)) = self.current else {
            self.last_input = input;
            return;
        };
        if command.tick <= tick {
            return;
        }
        // Far ahead of the last prediction: only the newest ticks are kept.
        let skipped = command.tick - tick - 1;
        if skipped as usize >= self.steps.len() {
            tick = command.tick - self.steps.len() as Tick;
        }
        while tick < command.tick {
            tick += 1;
            let this = if tick == command.tick {
                input
            } else {
                self.last_input
            };
            G::step(&self.stage, &mut motion, &this, self.dt);
            let slot = self.slot(tick);
            self.steps[slot] = Some(Step {
                tick,
                input: this,
                after: motion,
            });
            self.fade();
        }
        self.last_input = input;
        self.current = Some((tick, motion));
    }

    fn fade(&mut self) {
        let keep = self.config.smoothing.unwrap_or(0.0);
        for o in self.offset.iter_mut() {
            *o *= keep;
        }
    }

    /// The player's own entity and authoritative motion in `world`, if the
    /// server sent it (looked for once, then at the entity found).
    fn find_own(&self, world: &ClientWorld<G::Replica>) -> Option<(EntityId, (Tick, G::Motion))> {
        let known = self.own.and_then(|e| {
            let m = G::motion(world.get(e)?.state)?;
            Some((e, m))
        });
        known.or_else(|| {
            world
                .iter()
                .find_map(|e| G::motion(e.state).map(|m| (e.entity, m)))
        })
    }

    fn authoritative(&mut self, world: &ClientWorld<G::Replica>) -> Option<(Tick, G::Motion)> {
        let (entity, motion) = self.find_own(world)?;
        self.own = Some(entity);
        Some(motion)
    }

    /// Whether the authoritative motion in `world` is the one now held for
    /// its tick (after [`reconcile`](Self::reconcile): the prediction was
    /// right, or was corrected to it).
    pub fn agrees_with(&self, world: &ClientWorld<G::Replica>) -> bool {
        let Some((_, (tick, authority))) = self.find_own(world) else {
            return false;
        };
        self.steps[self.slot(tick)].is_some_and(|s| s.tick == tick && s.after == authority)
            || self
                .current
                .is_some_and(|(t, m)| t == tick && m == authority)
    }

    /// Compares the newest authoritative state in `world` (call after
    /// snapshots were applied; a state already seen is skipped) with the
    /// prediction of its tick; on a
    /// difference, takes it and replays the inputs since.
    pub fn reconcile(&mut self, world: &ClientWorld<G::Replica>) {
        let Some((tick, authority)) = self.authoritative(world) else {
            return;
        };
        if tick <= self.reconciled {
            return;
        }
        self.reconciled = tick;
        let Some((head, current)) = self.current else {
            self.stats.resets += 1;
            self.current = Some((tick, authority));
            return;
        };
        let predicted = self.steps[self.slot(tick)].filter(|s| s.tick == tick && tick <= head);
        let Some(predicted) = predicted.filter(|p| G::continuous(&p.after, &authority)) else {
            // Older than the inputs kept, ahead of the prediction, or a
            // respawn: taken as it is.
            self.stats.resets += 1;
            self.offset = [0.0; 3];
            if tick > head {
                self.current = Some((tick, authority));
            } else {
                self.replay(tick, head, authority);
            }
            return;
        };
        self.stats.compared += 1;
        if predicted.after == authority {
            return;
        }
        let mispredicted = !G::agrees(&predicted.after, &authority);
        let before = G::position(&current);
        self.replay(tick, head, authority);
        if !mispredicted {
            return;
        }
        self.stats.mispredicted += 1;
        let after = self.current.map_or(before, |(_, m)| G::position(&m));
        let corrected = distance(before, after);
        self.stats.last_correction_m = corrected;
        self.stats
            .correction_um
            .saturating_record((f64::from(corrected) * 1e6) as u64);
        if self.config.smoothing.is_some() {
            for (axis, o) in self.offset.iter_mut().enumerate() {
                *o += before[axis] - after[axis];
            }
        }
    }

    /// From `authority` at `from`, replays the kept inputs up to `head`.
    fn replay(&mut self, from: Tick, head: Tick, authority: G::Motion) {
        let mut motion = authority;
        let slot = self.slot(from);
        if let Some(s) = self.steps[slot].as_mut().filter(|s| s.tick == from) {
            s.after = authority;
        }
        let mut reached = from;
        for tick in from + 1..=head {
            let slot = self.slot(tick);
            let Some(step) = self.steps[slot].as_mut().filter(|s| s.tick == tick) else {
                break;
            };
            G::step(&self.stage, &mut motion, &step.input, self.dt);
            step.after = motion;
            reached = tick;
            self.stats.replayed += 1;
        }
        self.current = Some((reached, motion));
    }
}
