//! Fog of war: which enemies each player's client may receive.
//!
//! A living enemy is visible to a viewer when [`can_see`] says its body,
//! grown by the reveal margin, is in sight of the viewer's eye; teammates are
//! always visible. Dead targets hide nothing (they are visible); a dead
//! viewer (spectating) sees what its living teammates see.
//!
//! # Staggered re-evaluation and why it never hides a visible enemy
//!
//! Each viewer's row is fully re-evaluated every `interval` ticks, rows
//! staggered over the interval. Between those, a cached *visible* answer is
//! kept (it may outlive the line of sight by at most `interval` ticks: a
//! bounded, late hide, never a late reveal), and a cached *hidden* answer is
//! reused only when it provably still holds:
//! - the viewer's eye has not moved (a moving eye sees around corners by
//!   parallax, which no margin on the target side can cover), and
//! - the target's body has moved, since the row was evaluated, by at most the
//!   `slack` the evaluation was granted: every evaluation uses the margin
//!   `reveal_margin + slack`, where `slack = max_speed * interval /
//!   tick_rate` is how far a target at top speed travels in `interval`
//!   ticks. The drift charged against the slack is conservative: horizontal
//!   displacement, plus upward displacement, plus the most any envelope
//!   point moves from a turn (`1.5 m * |yaw change|`), an aim-pitch change
//!   (`0.45 m * |pitch change|`) or a crouch change (`0.6 m * |crouch
//!   change|`). Downward motion is not covered (the margin does not grow the
//!   body downwards) and forces a re-evaluation. `can_see` grows the body's
//!   boxes by the margin sideways, forward, back and up, so a body that
//!   drifted by at most `slack` still lies inside the boxes that were found
//!   hidden, grown by `reveal_margin`: it is still hidden under the fresh
//!   rule. Anything else (a moved eye, a teleport, a respawn, a jump down)
//!   re-evaluates the pair at once.
//!
//! So a target that walks at top speed in view of a viewer holding an angle
//! costs one [`can_see`] every `interval` ticks instead of every tick.

use glam::Vec3;

use crate::map::Map;
use crate::movement::MovementParams;
use crate::pose::{Pose, wrap_angle};
use crate::sight::can_see;
use crate::team::Team;

/// Tuning of the fog of war.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FogParams {
    /// Metres the body is grown by so that peeking enemies do not pop in late.
    pub reveal_margin: f32,
    /// Ticks between full re-evaluations of a viewer's row (at least 1).
    pub interval: u32,
    /// Simulation rate, ticks per second.
    pub tick_rate_hz: u32,
    /// The fastest a target moves horizontally, metres per second.
    pub max_speed: f32,
    /// Movement tuning (for the viewer's eye height).
    pub movement: MovementParams,
}

impl Default for FogParams {
    fn default() -> Self {
        let movement = MovementParams::default();
        Self {
            reveal_margin: 0.3,
            interval: 4,
            tick_rate_hz: 128,
            max_speed: movement.run_speed * 1.25,
            movement,
        }
    }
}

impl FogParams {
    /// How far a target may drift between two evaluations of its pair.
    pub fn slack(&self) -> f32 {
        self.max_speed.max(0.0) * self.interval.max(1) as f32 / self.tick_rate_hz.max(1) as f32
    }

    /// The margin every evaluation uses: `reveal_margin + slack`.
    pub fn margin(&self) -> f32 {
        self.reveal_margin.max(0.0) + self.slack()
    }
}

/// Per-viewer visibility of every other player, preallocated for a match.
#[derive(Debug, Clone)]
pub struct FogOfWar {
    params: FogParams,
    max_players: usize,
    words: usize,
    /// Bit `t` of row `v`: `v` may see `t`.
    visible: Vec<u64>,
    /// The eye of each viewer when its row was last evaluated.
    row_eye: Vec<Vec3>,
    /// Whether each row holds an evaluation.
    row_valid: Vec<bool>,
    /// `row_pose[v * max + t]`: `t`'s pose when `v`'s pair was evaluated.
    row_pose: Vec<Pose>,
    /// Pairs evaluated with `can_see` by the last update (for budgets).
    evaluated: u32,
}

impl FogOfWar {
    /// Fog for up to `max_players` players with the default tuning.
    pub fn new(max_players: usize) -> Self {
        Self::with_params(max_players, FogParams::default())
    }

    /// Fog for up to `max_players` players.
    pub fn with_params(max_players: usize, params: FogParams) -> Self {
        let words = max_players.div_ceil(64).max(1);
        Self {
            params,
            max_players,
            words,
            visible: vec![0; max_players * words],
            row_eye: vec![Vec3::ZERO; max_players],
            row_valid: vec![false; max_players],
            row_pose: vec![Pose::default(); max_players * max_players],
            evaluated: 0,
        }
    }

    /// The tuning in force.
    pub fn params(&self) -> &FogParams {
        &self.params
    }

    /// The margin every evaluation uses (reveal margin plus slack).
    pub fn margin(&self) -> f32 {
        self.params.margin()
    }

    /// How many pairs the last [`update`](Self::update) evaluated with `can_see`.
    pub fn evaluated_last_update(&self) -> u32 {
        self.evaluated
    }

    /// Forgets every cached answer (e.g. at a round start, after teleports).
    pub fn invalidate(&mut self) {
        self.row_valid.fill(false);
    }

    /// Recomputes visibility at `tick` from `players[slot] = (team, pose,
    /// alive)` (slots beyond `max_players` are ignored). No allocation.
    pub fn update(&mut self, tick: u32, map: &Map, players: &[(Team, Pose, bool)]) {
        let n = players.len().min(self.max_players);
        let interval = self.params.interval.max(1);
        let slack = self.params.slack();
        let margin = self.params.margin();
        self.evaluated = 0;
        for v in 0..n {
            let (team, ref pose, alive) = players[v];
            if !alive {
                continue;
            }
            let eye = pose.eye(&self.params.movement);
            let due = (tick.wrapping_add(v as u32)) % interval == 0;
            let eye_still = self.row_valid[v] && eye.distance_squared(self.row_eye[v]) <= 1e-6;
            let full = due || !eye_still;
            for (t, &(t_team, ref t_pose, t_alive)) in players.iter().enumerate().take(n) {
                let cached = self.bit(v, t);
                let show = if t == v || t_team == team || !t_alive {
                    true
                } else if !full
                    && (cached || drift(&self.row_pose[v * self.max_players + t], t_pose) <= slack)
                {
                    cached
                } else {
                    self.evaluated += 1;
                    self.row_pose[v * self.max_players + t] = *t_pose;
                    can_see(map, eye, t_pose, margin)
                };
                self.set_bit(v, t, show);
            }
            self.row_eye[v] = eye;
            self.row_valid[v] = true;
        }
        // Spectators see what their living teammates see.
        for v in 0..n {
            let (team, _, alive) = players[v];
            if alive {
                continue;
            }
            self.row_valid[v] = false;
            let row = v * self.words;
            self.visible[row..row + self.words].fill(0);
            for (m, &(m_team, _, m_alive)) in players.iter().enumerate().take(n) {
                if m_team == team && (m_alive || m == v) {
                    for w in 0..self.words {
                        self.visible[row + w] |= self.visible[m * self.words + w];
                    }
                    self.set_bit(v, m, true);
                }
            }
            for (t, &(t_team, _, t_alive)) in players.iter().enumerate().take(n) {
                if t_team == team || !t_alive {
                    self.set_bit(v, t, true);
                }
            }
        }
    }

    /// Whether `viewer`'s client may receive `target` (false for slots out
    /// of range).
    pub fn visible(&self, viewer: usize, target: usize) -> bool {
        viewer < self.max_players && target < self.max_players && self.bit(viewer, target)
    }

    fn bit(&self, v: usize, t: usize) -> bool {
        self.visible[v * self.words + t / 64] & (1 << (t % 64)) != 0
    }

    fn set_bit(&mut self, v: usize, t: usize, on: bool) {
        let w = &mut self.visible[v * self.words + t / 64];
        if on {
            *w |= 1 << (t % 64);
        } else {
            *w &= !(1 << (t % 64));
        }
    }
}

/// How far any point of `from`'s grown body envelope may have moved to
/// reach `to` (conservative); infinite when `to` moved down.
fn drift(from: &Pose, to: &Pose) -> f32 {
    let d = to.position - from.position;
    if d.y < -1e-4 || !d.is_finite() {
        return f32::INFINITY;
    }
    Vec3::new(d.x, 0.0, d.z).length()
        + d.y.max(0.0)
        + 1.5 * wrap_angle(to.yaw - from.yaw).abs()
        + 0.45 * (to.pitch - from.pitch).abs()
        + 0.6 * (to.crouch - from.crouch).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_charges_turns_and_refuses_falls() {
        let a = Pose::default();
        let mut b = a;
        b.position.x = 0.1;
        assert!((drift(&a, &b) - 0.1).abs() < 1e-6);
        b.yaw = 0.1;
        assert!((drift(&a, &b) - 0.25).abs() < 1e-6);
        b.position.y = -0.05;
        assert_eq!(drift(&a, &b), f32::INFINITY);
    }

    #[test]
    fn plaza_players_all_see_each_other_and_teams_always() {
        let map = Map::builtin("plaza").unwrap();
        let mut fog = FogOfWar::new(4);
        let pose = |x: f32| Pose {
            position: Vec3::new(x, map.floor_y(), 0.0),
            ..Pose::default()
        };
        let players = [
            (Team::Attackers, pose(-3.0), true),
            (Team::Attackers, pose(-1.0), true),
            (Team::Defenders, pose(1.0), true),
            (Team::Defenders, pose(3.0), false),
        ];
        fog.update(0, &map, &players);
        for v in 0..4 {
            for t in 0..4 {
                assert!(fog.visible(v, t), "{v} {t}");
            }
        }
        assert!(!fog.visible(0, 9));
        // A still scene re-uses cached answers between row evaluations.
        fog.update(1, &map, &players);
        assert!(fog.evaluated_last_update() < 4);
    }
}
