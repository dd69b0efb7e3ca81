//! How a game's tick cost grows with the crowd: one sans-IO match
//! ([`SansIoMatch`]: the game's own bots through the secure layer, in
//! memory) per mode of a family that differs only in players (the arena's
//! `plaza25` to `plaza400`), its server tick time and bytes per client
//! against players, and the exponent `k` of `tick ~ players^k` fitted over
//! the larger crowds. A peer's figures for rooms of the same shapes (a CSV:
//! Colyseus' from ../shared/peers) are read and charted beside them.
//!
//! `hightick lab growth` prints the table and FIGURE lines and writes the
//! JSON and an HTML report with the growth charts ([`GrowthReport`]).

mod peer;
mod report;

pub use peer::{PeerRow, read_peer_csv};
pub use report::TARGET_EXPONENT;

use std::time::Duration;

use hightick_engine::BotGame;
use serde::{Deserialize, Serialize};

use crate::breakdown::sans_io::{Caches, SansIoMatch};
use crate::error::LabError;

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct GrowthPlan {
    /// The game's modes, one crowd size each (`plaza25,plaza50,...`).
    pub modes: Vec<String>,
    /// Simulated time before measuring (past any buy or warm-up phase).
    pub warmup: Duration,
    /// Simulated time measured per mode.
    pub measured: Duration,
    /// Rounds the measured time is split into (the tick time is their median).
    pub rounds: u32,
    /// The exponent is fitted over modes with at least this many players.
    pub fit_from: u16,
    /// A peer's rows to chart beside (its name and figures).
    pub peer: Option<(String, Vec<PeerRow>)>,
}

/// One mode's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowthRow {
    /// The mode.
    pub mode: String,
    /// Its players.
    pub players: u16,
    /// Its tick rate.
    pub tick_rate_hz: u32,
    /// Server tick time, median of the rounds' means, microseconds.
    pub tick_us: f64,
    /// The same per player.
    pub us_per_player: f64,
    /// Bytes a client receives per second.
    pub bytes_per_client_s: f64,
}

/// The run: every mode's row, the fitted exponent, the peer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowthReport {
    /// The game's name.
    pub game: String,
    /// The modes, in the order measured.
    pub rows: Vec<GrowthRow>,
    /// Modes with at least this many players are fitted.
    pub fit_from: u16,
    /// The exponent of hightick's tick time over players (`None`: fewer
    /// than two sizes to fit).
    pub exponent: Option<f64>,
    /// The peer's name, if one was given.
    pub peer_name: Option<String>,
    /// The peer's rows.
    pub peer: Vec<PeerRow>,
    /// The peer's exponent over the same sizes.
    pub peer_exponent: Option<f64>,
}

/// The exponent `k` of the power law `cost = c * players^k` that fits the
/// `(players, cost)` points best (least squares on their logarithms); `None`
/// with fewer than two distinct player counts or a point that is not
/// positive. `k = 1` is linear, `k = 2` is every player's cost paid for
/// every other player.
///
/// ```
/// use hightick_lab::growth::exponent;
///
/// let quadratic = [(50.0, 2_500.0), (100.0, 10_000.0), (400.0, 160_000.0)];
/// assert!((exponent(&quadratic).unwrap() - 2.0).abs() < 1e-9);
/// ```
pub fn exponent(points: &[(f64, f64)]) -> Option<f64> {
    if points.iter().any(|&(n, c)| !(n > 0.0 && c > 0.0)) {
        return None;
    }
    let logs: Vec<(f64, f64)> = points.iter().map(|&(n, c)| (n.ln(), c.ln())).collect();
    let count = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / count;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 1e-12).then(|| sxy / sxx)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Measures one mode.
fn measure<G: BotGame>(mode: &str, plan: &GrowthPlan) -> Result<GrowthRow, LabError> {
    let mut game = SansIoMatch::<G>::new(mode, &serde_json::Value::Null, 7)?;
    let rate = game.tick_rate_hz();
    let ticks = |d: Duration| (d.as_secs_f64() * f64::from(rate)).round() as u32;
    let rounds = plan.rounds.max(1);
    let per_round = (ticks(plan.measured) / rounds).max(1);
    let mut run = game.run(ticks(plan.warmup), rounds, per_round, Caches::Warm);
    let players = u16::try_from(game.players()).unwrap_or(u16::MAX);
    let tick_us = median(&mut run.round_means_us);
    Ok(GrowthRow {
        mode: mode.to_owned(),
        players,
        tick_rate_hz: rate,
        tick_us,
        us_per_player: tick_us / f64::from(players.max(1)),
        bytes_per_client_s: run.server_datagram_bytes * f64::from(rate),
    })
}

/// Runs every mode of `plan` for game `G`; `measured` hears of each row
/// as it is made (a mode takes seconds to a minute).
pub fn run_growth<G: BotGame>(
    plan: &GrowthPlan,
    measured: &mut dyn FnMut(&GrowthRow),
) -> Result<GrowthReport, LabError> {
    if plan.modes.is_empty() {
        return Err(LabError::config("--modes", "name at least one mode"));
    }
    let mut rows = Vec::with_capacity(plan.modes.len());
    for mode in &plan.modes {
        let row = measure::<G>(mode, plan)?;
        measured(&row);
        rows.push(row);
    }
    let fitted = |points: Vec<(f64, f64)>| exponent(&points);
    let exponent = fitted(
        rows.iter()
            .filter(|r| r.players >= plan.fit_from)
            .map(|r| (f64::from(r.players), r.tick_us))
            .collect(),
    );
    let (peer_name, peer) = plan.peer.clone().unzip();
    let peer = peer.unwrap_or_default();
    let peer_exponent = fitted(
        peer.iter()
            .filter(|r| r.players >= plan.fit_from)
            .map(|r| (f64::from(r.players), r.tick_us))
            .collect(),
    );
    Ok(GrowthReport {
        game: G::NAME.to_owned(),
        rows,
        fit_from: plan.fit_from,
        exponent,
        peer_name,
        peer,
        peer_exponent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_and_noisy_points_fit_their_slope() {
        let linear: Vec<_> = [50.0, 100.0, 200.0, 400.0]
            .iter()
            .map(|&n| (n, 3.0 * n))
            .collect();
        assert!((exponent(&linear).unwrap() - 1.0).abs() < 1e-9);
        // N^1.5 with +-5% noise stays within a few hundredths.
        let noisy = [
            (50.0, 50f64.powf(1.5) * 1.05),
            (100.0, 100f64.powf(1.5) * 0.95),
            (200.0, 200f64.powf(1.5) * 1.05),
            (400.0, 400f64.powf(1.5) * 0.95),
        ];
        let k = exponent(&noisy).unwrap();
        assert!((k - 1.5).abs() < 0.06, "{k}");
    }

    #[test]
    fn too_few_or_bad_points_fit_nothing() {
        assert_eq!(exponent(&[(50.0, 1.0)]), None);
        assert_eq!(exponent(&[(50.0, 1.0), (50.0, 2.0)]), None);
        assert_eq!(exponent(&[(50.0, 1.0), (100.0, 0.0)]), None);
        assert_eq!(exponent(&[]), None);
    }

    #[test]
    fn arena_plazas_of_two_sizes_are_measured_and_fitted() {
        use hightick_arena::game::Arena;
        let plan = GrowthPlan {
            modes: vec!["plaza25".into(), "plaza50".into()],
            warmup: Duration::from_millis(100),
            measured: Duration::from_millis(100),
            rounds: 2,
            fit_from: 25,
            peer: Some((
                "peer".into(),
                vec![PeerRow::new(25, 400.0, 1e5), PeerRow::new(50, 800.0, 2e5)],
            )),
        };
        let mut heard = 0;
        let report = run_growth::<Arena>(&plan, &mut |_| heard += 1).unwrap();
        assert_eq!(heard, 2);
        assert_eq!(
            report.rows.iter().map(|r| r.players).collect::<Vec<_>>(),
            [25, 50]
        );
        assert!(
            report
                .rows
                .iter()
                .all(|r| r.tick_us > 0.0 && r.bytes_per_client_s > 0.0)
        );
        assert!(report.exponent.is_some_and(f64::is_finite), "{report:?}");
        assert!((report.peer_exponent.unwrap() - 1.0).abs() < 1e-9);
        let err = run_growth::<Arena>(
            &GrowthPlan {
                modes: vec!["plaza7".into()],
                ..plan
            },
            &mut |_| {},
        );
        assert!(err.unwrap_err().to_string().contains("plaza7"));
    }
}
