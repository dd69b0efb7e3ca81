//! Fog of war: which enemies each player's client may receive.
//!
//! A living enemy is visible to a viewer when [`can_see`](crate::can_see)
//! says its body, grown by the reveal margin, is in sight of the viewer's
//! eye; teammates are always visible. Dead targets hide nothing (they are
//! visible); a dead viewer (spectating) sees what its living teammates see.
//!
//! # Staggered re-evaluation and why it never hides a visible enemy
//!
//! Each viewer's row is fully re-evaluated every `interval` ticks, rows
//! staggered over the interval. Between those, a cached *visible* answer is
//! kept while the viewer's eye holds still (it may outlive the line of sight
//! by at most `interval` ticks: a bounded, late hide, never a late reveal),
//! and a cached *hidden* answer is reused only when it provably still holds:
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
//!   re-evaluates the pair at once,
//! - or, whatever the eye and the body do, while both stay inside a *held
//!   region*: when a pair is found hidden, the fog also tries to prove it
//!   hidden from every eye within `hold_reach` (per axis) of the viewer's
//!   eye, for every pose (any yaw, pitch and crouch) of a body whose feet
//!   are within `hold_reach` of the target's: one occluder must cross all 64
//!   lines between the corners of the two regions (an eye box and the box
//!   that holds every such body grown by the margin). The set of eyes a
//!   convex occluder hides a convex region from is convex, so this proves
//!   every line between the two regions blocked, and the fresh rule would
//!   find the pair hidden anywhere inside: the answer is exact, only cheaper.
//!   Bots running behind buildings then cost one evaluation per half metre
//!   of movement instead of one per tick. Near the edge of a shadow, where
//!   the regions at `hold_reach` reach past it, the proof is tried once more
//!   at half the reach, which still holds a running viewer for a few ticks.
//!
//! A pair found visible remembers why (a centre or corner in view, or a part
//! of the body no single occluder hides); its next evaluation checks that
//! reason first, which settles most re-evaluations of a visible pair with one
//! test instead of a search, with the same answer.
//!
//! So a target that walks at top speed in view of a viewer holding an angle
//! costs one `can_see` every `interval` ticks instead of every tick.

use glam::Vec3;

use crate::team::Team;
use crate::world::aabb::Aabb;
use crate::world::map::Map;
use crate::world::movement::MovementParams;
use crate::world::pose::{Pose, wrap_angle};
use crate::world::shadow::region_hidden;
use crate::world::sight::{Witness, body_reach, can_see_with, head_centre_height};

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
    /// Metres a hidden answer is proven for ahead of time: when one
    /// occluder hides, from every eye within this distance (per axis) of the
    /// viewer's eye, every pose of a body with its feet within this distance
    /// of the target's feet, the pair stays hidden without re-evaluation
    /// while both stay inside. 0 turns the proof off.
    pub hold_reach: f32,
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
            hold_reach: 0.5,
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
    /// `hold[v * max + t]`: where a hidden answer was proven for a region,
    /// meaningful while the pair's bit in `held` is set.
    hold: Vec<Hold>,
    /// Bit `t` of row `v` (laid out as `visible`): `hold[v * max + t]` holds a
    /// proof. Checked first, so a pair without one reads no `Hold`.
    held: Vec<u64>,
    /// The reach of any body pose from its feet, grown by the margin.
    body_reach: (f32, f32, f32),
    /// `witness[v * max + t]`: why the pair was last found in view.
    witness: Vec<Witness>,
    /// Per target this update: its head centre is above every box.
    head_above: Vec<bool>,
    /// Pairs evaluated by the last update (for budgets).
    evaluated: u32,
}

/// A hidden answer proven for every eye within `reach` of `eye` and every
/// pose with its feet within `reach` of `feet` (per axis); or, when
/// `refused`, where the last proof was tried and failed at every reach.
#[derive(Debug, Clone, Copy, Default)]
struct Hold {
    eye: Vec3,
    feet: Vec3,
    reach: f32,
    refused: bool,
}

impl Hold {
    fn covers(&self, eye: Vec3, feet: Vec3) -> bool {
        (eye - self.eye).abs().max_element() <= self.reach
            && (feet - self.feet).abs().max_element() <= self.reach
    }
}

/// After a refused proof, how far (per axis, as a share of `hold_reach`)
/// the eye or the feet must move before the pair's next hidden answer tries
/// again: a proof refused a few centimetres away is refused again, and each
/// try tests up to 64 lines per occluder near the pair. Only the cost moves:
/// a pair without a proof is evaluated whenever it is due, as before.
const RETRY_AFTER_REFUSAL: f32 = 0.25;

/// How many times a hold proof that failed at one reach is tried again at
/// half of it. Near the edge of an occluder's shadow the regions at
/// `hold_reach` reach past it while smaller ones still fit: in the demo's
/// opening seconds about 60% of the pairs refused at 0.5 m are proven at
/// 0.25 m, which holds a running viewer for about 5 ticks instead of none.
const HOLD_HALVINGS: u32 = 1;

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
            hold: vec![Hold::default(); max_players * max_players],
            held: vec![0; max_players * words],
            body_reach: body_reach(params.margin()),
            head_above: vec![false; max_players],
            witness: vec![Witness::None; max_players * max_players],
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
        self.held.fill(0);
    }

    /// Recomputes visibility at `tick` from `players[slot] = (team, pose,
    /// alive)` (slots beyond `max_players` are ignored). No allocation.
    pub fn update(&mut self, tick: u32, map: &Map, players: &[(Team, Pose, bool)]) {
        let n = players.len().min(self.max_players);
        let interval = self.params.interval.max(1);
        let slack = self.params.slack();
        let margin = self.params.margin();
        self.evaluated = 0;
        // Above every box, eye and head centre see each other at once.
        let top = map.max_box_top();
        for (above, (_, pose, _)) in self.head_above.iter_mut().zip(&players[..n]) {
            *above = head_centre_height(pose, margin) >= top;
        }
        let every_head_above = self.head_above[..n].iter().all(|&above| above);
        for v in 0..n {
            let (team, ref pose, alive) = players[v];
            if !alive {
                continue;
            }
            let eye = pose.eye(&self.params.movement);
            let due = (tick.wrapping_add(v as u32)).is_multiple_of(interval);
            let eye_still = self.row_valid[v] && eye.distance_squared(self.row_eye[v]) <= 1e-6;
            let eye_above = eye.y >= top;
            if eye_above && every_head_above {
                // Above every box, and so is every head (an open plaza):
                // each pair would answer "in view" below; the row is set
                // whole instead of pair by pair.
                self.show_row(v, n);
                self.row_eye[v] = eye;
                self.row_valid[v] = true;
                continue;
            }
            let full = due || !eye_still;
            for (t, &(t_team, ref t_pose, t_alive)) in players.iter().enumerate().take(n) {
                let cached = self.bit(v, t);
                let k = v * self.max_players + t;
                let show = if t == v || t_team == team || !t_alive {
                    true
                } else if eye_above && self.head_above[t] {
                    // What `can_see` answers first, without the call.
                    true
                } else if self.row_valid[v]
                    && !cached
                    && self.held_bit(v, t)
                    && self.hold[k].covers(eye, t_pose.position)
                {
                    false
                } else if !full && (cached || drift(&self.row_pose[k], t_pose) <= slack) {
                    cached
                } else {
                    self.evaluated += 1;
                    self.row_pose[k] = *t_pose;
                    self.evaluate(map, (v, t), eye, t_pose, margin)
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

    /// `can_see` for pair `k` (trying first why it was last in view); a
    /// hidden answer is then proven, when it
    /// can be, for the whole hold region around the eye and the feet.
    fn evaluate(
        &mut self,
        map: &Map,
        (v, t): (usize, usize),
        eye: Vec3,
        target: &Pose,
        margin: f32,
    ) -> bool {
        let k = v * self.max_players + t;
        self.set_held(v, t, false);
        if can_see_with(map, eye, target, margin, &mut self.witness[k]) {
            return true;
        }
        let mut reach = self.params.hold_reach;
        if !(reach > 0.0 && reach.is_finite()) {
            return false;
        }
        let feet = target.position;
        let last = self.hold[k];
        if last.refused
            && (Hold {
                reach: reach * RETRY_AFTER_REFUSAL,
                ..last
            })
            .covers(eye, feet)
        {
            return false;
        }
        let (radius, low, high) = self.body_reach;
        for _ in 0..=HOLD_HALVINGS {
            let eye_region = Aabb::new(eye - Vec3::splat(reach), eye + Vec3::splat(reach));
            let side = radius + reach;
            let body_region = Aabb::new(
                feet + Vec3::new(-side, low - reach, -side),
                feet + Vec3::new(side, high + reach, side),
            );
            if region_hidden(map, &eye_region, &body_region) {
                self.hold[k] = Hold {
                    eye,
                    feet,
                    reach,
                    refused: false,
                };
                self.set_held(v, t, true);
                return false;
            }
            reach *= 0.5;
        }
        self.hold[k] = Hold {
            eye,
            feet,
            reach: 0.0,
            refused: true,
        };
        false
    }

    /// Whether `viewer`'s client may receive `target` (false for slots out
    /// of range).
    pub fn visible(&self, viewer: usize, target: usize) -> bool {
        viewer < self.max_players && target < self.max_players && self.bit(viewer, target)
    }

    /// Sets bits `0..n` of row `v`: `v` sees all of them.
    fn show_row(&mut self, v: usize, n: usize) {
        let row = &mut self.visible[v * self.words..(v + 1) * self.words];
        for (w, word) in row.iter_mut().enumerate() {
            let bits = n.saturating_sub(w * 64).min(64);
            if bits == 0 {
                break;
            }
            *word |= if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
        }
    }

    fn bit(&self, v: usize, t: usize) -> bool {
        pair_bit(&self.visible, self.words, v, t)
    }

    fn set_bit(&mut self, v: usize, t: usize, on: bool) {
        set_pair_bit(&mut self.visible, self.words, v, t, on);
    }

    fn held_bit(&self, v: usize, t: usize) -> bool {
        pair_bit(&self.held, self.words, v, t)
    }

    fn set_held(&mut self, v: usize, t: usize, on: bool) {
        set_pair_bit(&mut self.held, self.words, v, t, on);
    }
}

/// Bit `t` of row `v` in a per-pair bitmap of `words` words per row.
fn pair_bit(bits: &[u64], words: usize, v: usize, t: usize) -> bool {
    bits[v * words + t / 64] & (1 << (t % 64)) != 0
}

fn set_pair_bit(bits: &mut [u64], words: usize, v: usize, t: usize, on: bool) {
    let w = &mut bits[v * words + t / 64];
    if on {
        *w |= 1 << (t % 64);
    } else {
        *w &= !(1 << (t % 64));
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
    fn a_hidden_pair_is_held_until_an_eye_or_feet_leave_the_proven_region() {
        let map = Map::builtin("dust_corners").unwrap();
        let mut fog = FogOfWar::new(2);
        let reach = fog.params().hold_reach;
        // Long A (x 8..16) and mid (x 56..64), a 40 m building between.
        let at = |x: f32, z: f32| Pose {
            position: Vec3::new(x, 0.0, z),
            ..Pose::default()
        };
        let mut players = [
            (Team::Attackers, at(12.0, 30.0), true),
            (Team::Defenders, at(60.0, 36.0), true),
        ];
        fog.update(0, &map, &players);
        assert!(!fog.visible(0, 1) && !fog.visible(1, 0));
        assert_eq!(fog.evaluated_last_update(), 2);
        // Both move a little every tick, past the row's due ticks: held.
        for tick in 1..=8 {
            players[0].1.position.z += reach / 10.0;
            players[1].1.position.x -= reach / 10.0;
            players[1].1.yaw += 0.3;
            fog.update(tick, &map, &players);
            assert_eq!(fog.evaluated_last_update(), 0, "tick {tick}");
            assert!(!fog.visible(0, 1));
        }
        // The viewer's eye leaves its region: evaluated again (both rows,
        // as the first player is also the second one's target).
        players[0].1.position.z += reach;
        fog.update(9, &map, &players);
        assert_eq!(fog.evaluated_last_update(), 2);
        assert!(!fog.visible(0, 1));
    }

    /// A viewer in mid (x 56..64) and a target in the corridor south of the
    /// building at x 36..56, z 22..50, near the edge of its shadow, whose
    /// first update leaves `fog` as `wanted` asks; with that fog.
    fn pair_near_a_shadow_edge(
        map: &Map,
        wanted: impl Fn(&FogOfWar) -> bool,
    ) -> (FogOfWar, [(Team, Pose, bool); 2]) {
        let at = |x: f32, z: f32| Pose {
            position: Vec3::new(x, 0.0, z),
            ..Pose::default()
        };
        let open =
            |p: &Pose| map.capsule_fits(p.position, crate::world::movement::STANDING_CAPSULE);
        for vi in 0..9 {
            for ti in 0..1280 {
                let viewer = at(58.0 + (vi % 3) as f32 * 2.0, 28.0 + (vi / 3) as f32 * 4.0);
                let target = at(
                    40.0 + (ti % 80) as f32 * 0.2,
                    17.0 + (ti / 80) as f32 * 0.25,
                );
                if !open(&viewer) || !open(&target) {
                    continue;
                }
                let mut fog = FogOfWar::new(2);
                let players = [
                    (Team::Attackers, viewer, true),
                    (Team::Defenders, target, true),
                ];
                fog.update(0, map, &players);
                if !fog.visible(0, 1) && wanted(&fog) {
                    return (fog, players);
                }
            }
        }
        panic!("no such pair");
    }

    // In both tests below neither row is due at ticks 1 and 2: only a moved
    // eye re-evaluates.

    #[test]
    fn a_pair_refused_at_full_reach_is_held_at_half_of_it() {
        let map = Map::builtin("dust_corners").unwrap();
        let reach = FogParams::default().hold_reach;
        let (mut fog, mut players) =
            pair_near_a_shadow_edge(&map, |fog| fog.held_bit(0, 1) && fog.hold[1].reach < reach);
        let held = fog.hold[1].reach;
        assert_eq!(held, reach * 0.5);
        // The viewer runs inside the smaller region: no re-evaluation.
        players[0].1.position.x += held * 0.9;
        fog.update(1, &map, &players);
        assert_eq!(fog.evaluated_last_update(), 0);
        assert!(!fog.visible(0, 1));
        // Out of it: evaluated again (and so is the other row: its target,
        // the viewer, has now drifted past the slack).
        players[0].1.position.x += held * 0.2;
        fog.update(2, &map, &players);
        assert_eq!(fog.evaluated_last_update(), 2);
    }

    #[test]
    fn a_refused_proof_is_tried_again_only_after_a_move() {
        let map = Map::builtin("dust_corners").unwrap();
        let retry = FogParams::default().hold_reach * RETRY_AFTER_REFUSAL;
        let (mut fog, mut players) =
            pair_near_a_shadow_edge(&map, |fog| !fog.held_bit(0, 1) && fog.hold[1].refused);
        let refused_at = fog.hold[1].eye;
        // A moving eye re-evaluates the pair (still hidden) but does not try
        // the proof again while within the retry distance.
        players[0].1.position.z += retry * 0.5;
        fog.update(1, &map, &players);
        assert_eq!(fog.evaluated_last_update(), 1);
        assert!(!fog.visible(0, 1));
        assert_eq!(fog.hold[1].eye, refused_at);
        // Past it, the proof is tried where the eye is now.
        players[0].1.position.z += retry;
        fog.update(2, &map, &players);
        assert!(fog.evaluated_last_update() >= 1);
        if !fog.visible(0, 1) {
            assert_ne!(fog.hold[1].eye, refused_at);
        }
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
