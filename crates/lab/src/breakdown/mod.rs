//! The live tick's breakdown in one sitting (`hightick lab breakdown`): the
//! terms a live server's CPU per match tick is made of, each measured on its
//! own in this process, then the live run, and what the live tick spends
//! beyond their sum.
//!
//! The terms, in the order they run:
//! - the game's **sans-IO match tick**, warm and cold ([`sans_io`]): one bot
//!   match of the mode stepped in this process over the real secure layer,
//!   the server's user-space work per tick timed; cold evicts the caches
//!   between ticks;
//! - the **UDP floor** ([`floor`]): one match tick's
//!   `recvmmsg` + `sendmmsg` on loopback with the mode's players and the
//!   datagram sizes the sans-IO match sent, plain (nobody waits on the
//!   client sockets) and woken (a thread sleeping in `epoll_wait` on them);
//! - the **wake-up** ([`wake`]): a thread's CPU per wake-up when it sleeps
//!   to the next tick deadline;
//! - the **live** run ([`run_load`]): servers and bots at the given match
//!   count, server CPU per match tick.
//!
//! The sum is floor (plain) + cold tick + wake-up: the lab's bots read
//! their sockets on their own timer, registered with no reactor, so a
//! server's send wakes nobody and the plain floor is the one the live
//! server pays; a live match finds the caches cold after sleeping a period
//! beside other matches and the bots; each match tick pays at most one
//! wake-up (matches of one phase group share one). The unexplained rest is
//! live minus that sum.
//!
//! What it is not: a profiler. It names no cause for the rest; `perf` and
//! `docs/PROFILING.md` are for that.

pub mod floor;
pub mod sans_io;
pub mod wake;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use self::floor::FloorPlan;
use hightick_engine::BotGame;
use hightick_report::{Align, TextTable};
use hightick_telemetry::bench::figure_line;

use crate::budget_book::BudgetBook;
use crate::error::LabError;
use crate::load::{LoadSpec, Progress, run_load};
use crate::summary::{HostFacts, RunSummary};
use sans_io::{Caches, SansIoMatch};

/// The seed of the sans-IO match.
const SEED: u64 = 42;

/// What a breakdown runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakdownPlan {
    /// The live run (its mode, settings and tick rate are every term's).
    pub live: LoadSpec,
    /// Simulated time of the sans-IO match before it is measured.
    pub sans_io_warmup: Duration,
    /// Simulated time measured of the sans-IO match, warm and again cold.
    pub sans_io: Duration,
    /// Rounds each of the sans-IO runs and the wake-up are split into (the
    /// figure is the median of the rounds' means).
    pub rounds: u32,
    /// Samples of the floor per variant (each `floor_ticks_per_sample` ticks).
    pub floor_samples: usize,
    /// Ticks per floor sample.
    pub floor_ticks_per_sample: usize,
    /// Wall time of the wake-up measurement.
    pub wake: Duration,
}

impl BreakdownPlan {
    /// The defaults for `live`: 5 s of sans-IO warm-up, 20 s measured, 10
    /// rounds, 200 floor samples of 100 ticks, 5 s of wake-ups.
    pub fn new(live: LoadSpec) -> Self {
        BreakdownPlan {
            live,
            sans_io_warmup: Duration::from_secs(5),
            sans_io: Duration::from_secs(20),
            rounds: 10,
            floor_samples: FloorPlan::FIVE_V_FIVE.samples,
            floor_ticks_per_sample: FloorPlan::FIVE_V_FIVE.ticks_per_sample,
            wake: Duration::from_secs(5),
        }
    }

    fn validate(&self) -> Result<(), LabError> {
        if self.rounds == 0 || self.rounds > 1000 {
            return Err(LabError::config("rounds", "1 to 1000"));
        }
        if self.floor_samples == 0 || self.floor_ticks_per_sample == 0 {
            return Err(LabError::config(
                "floor-samples",
                "at least one sample of one tick",
            ));
        }
        Ok(())
    }
}

/// The floor's part of a breakdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FloorTerms {
    /// Clients per match tick.
    pub clients: usize,
    /// A client's datagram, bytes (the sans-IO match's mean).
    pub client_bytes: usize,
    /// The server's datagram, bytes (the sans-IO match's mean).
    pub server_bytes: usize,
    /// Samples per variant, and ticks per sample.
    pub samples: usize,
    /// Ticks per sample.
    pub ticks_per_sample: usize,
    /// Plain: thread CPU per match tick, median of the samples, us.
    pub plain_us: f64,
    /// Woken: thread CPU per match tick, median of the samples, us.
    pub woken_us: f64,
    /// Plain, wall time, us.
    pub plain_wall_us: f64,
    /// Woken, wall time, us.
    pub woken_wall_us: f64,
}

/// What a breakdown found. Every time is microseconds per match tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakdownReport {
    /// A human title.
    pub title: String,
    /// The mode.
    pub mode: String,
    /// Its tick rate.
    pub tick_rate_hz: u32,
    /// Players per match.
    pub players_per_match: u32,
    /// Matches of the live run.
    pub matches: u32,
    /// The machine.
    pub host: HostFacts,
    /// The UDP floor.
    pub floor: FloorTerms,
    /// The sans-IO tick, caches warm: median of the rounds' means.
    pub tick_warm_us: f64,
    /// Each round's mean, warm.
    pub tick_warm_rounds_us: Vec<f64>,
    /// The sans-IO tick, caches evicted between ticks.
    pub tick_cold_us: f64,
    /// Each round's mean, cold.
    pub tick_cold_rounds_us: Vec<f64>,
    /// Thread CPU per wake-up: median of the rounds.
    pub wake_us: f64,
    /// Each round's CPU per wake-up.
    pub wake_rounds_us: Vec<f64>,
    /// Median lateness of a wake-up past its deadline (wall).
    pub wake_late_us: f64,
    /// Server CPU per match tick of the live run.
    pub live_us: f64,
    /// floor (plain) + cold tick + wake-up.
    pub sum_us: f64,
    /// Which terms `sum_us` adds, and why.
    pub sum_terms: String,
    /// live - sum.
    pub unexplained_us: f64,
    /// The live run.
    pub live: RunSummary,
}

/// What a breakdown tells its watcher.
#[derive(Debug)]
pub enum BreakdownEvent<'a> {
    /// A term's measurement begins (`sans-IO tick, warm`...).
    Started(&'static str),
    /// A term was measured: its name and value (us per match tick).
    Measured(&'static str, f64),
    /// A progress sample of the live run.
    Progress(&'a Progress),
}

/// The median of `values` (NaN when empty).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Server CPU per match tick of a live run, microseconds (NaN when it ran
/// no tick).
pub fn live_cpu_per_match_tick_us(summary: &RunSummary) -> f64 {
    if summary.tick.ticks == 0 {
        return f64::NAN;
    }
    summary.server_cpu_cores * summary.duration_s * 1e6 / summary.tick.ticks as f64
}

/// Which terms the sum adds, said in the report.
pub const SUM_TERMS: &str = "floor (plain) + cold tick + wake-up: the bots read their sockets on \
    their own timer, so a server's send wakes nobody (the woken floor is for reference); a live \
    match finds its caches cold after a period beside other matches and the bots; a match tick \
    pays at most one wake-up";

/// Runs the breakdown of game `G` (see the module docs).
pub fn run_breakdown<G: BotGame>(
    plan: &BreakdownPlan,
    budgets: &BudgetBook,
    watch: &mut dyn FnMut(BreakdownEvent<'_>),
) -> Result<BreakdownReport, LabError> {
    plan.validate()?;
    let run = plan.live.validate::<G>()?;
    let rate = run.config.tick_rate_hz;
    let ticks = |d: Duration| (d.as_secs_f64() * f64::from(rate)).round() as u32;
    let warmup = ticks(plan.sans_io_warmup);
    let per_round = (ticks(plan.sans_io) / plan.rounds).max(1);

    watch(BreakdownEvent::Started("sans-IO tick, warm"));
    let mut game = SansIoMatch::<G>::new(&plan.live.mode, &plan.live.settings, SEED)?;
    let warm = game.run(warmup, plan.rounds, per_round, Caches::Warm);
    let tick_warm_us = median(&warm.round_means_us);
    watch(BreakdownEvent::Measured("sans-IO tick, warm", tick_warm_us));

    watch(BreakdownEvent::Started("sans-IO tick, cold"));
    let mut game = SansIoMatch::<G>::new(&plan.live.mode, &plan.live.settings, SEED)?;
    let cold = game.run(warmup, plan.rounds, per_round, Caches::Evicted);
    let tick_cold_us = median(&cold.round_means_us);
    drop(game);
    watch(BreakdownEvent::Measured("sans-IO tick, cold", tick_cold_us));

    watch(BreakdownEvent::Started("UDP floor, plain and woken"));
    let floor_plan = FloorPlan {
        clients: usize::from(run.mode.players),
        client_bytes: (warm.client_datagram_bytes.round() as usize).max(5),
        server_bytes: (warm.server_datagram_bytes.round() as usize).max(5),
        ticks_per_sample: plan.floor_ticks_per_sample,
        samples: plan.floor_samples,
        warm_up_samples: (plan.floor_samples / 20).max(1),
    };
    let measured = floor::measure(floor_plan).map_err(LabError::io("measuring the UDP floor"))?;
    let floor = FloorTerms {
        clients: floor_plan.clients,
        client_bytes: floor_plan.client_bytes,
        server_bytes: floor_plan.server_bytes,
        samples: floor_plan.samples,
        ticks_per_sample: floor_plan.ticks_per_sample,
        plain_us: measured.plain.tick.cpu.median_us(),
        woken_us: measured.woken.tick.cpu.median_us(),
        plain_wall_us: measured.plain.tick.wall.median_us(),
        woken_wall_us: measured.woken.tick.wall.median_us(),
    };
    watch(BreakdownEvent::Measured("UDP floor, plain", floor.plain_us));
    watch(BreakdownEvent::Measured("UDP floor, woken", floor.woken_us));

    watch(BreakdownEvent::Started("wake-up"));
    let wakes = (plan.wake.as_secs_f64() * f64::from(rate) / f64::from(plan.rounds)).ceil() as u32;
    let woke = wake::measure(rate, plan.rounds, wakes.max(1))?;
    let wake_us = median(&woke.round_cpu_us);
    watch(BreakdownEvent::Measured("wake-up", wake_us));

    watch(BreakdownEvent::Started("live"));
    let live = run_load::<G>(&plan.live, budgets, &mut |p| {
        watch(BreakdownEvent::Progress(p));
    })?;
    let live_us = live_cpu_per_match_tick_us(&live);
    watch(BreakdownEvent::Measured("live", live_us));

    let sum_us = floor.plain_us + tick_cold_us + wake_us;
    Ok(BreakdownReport {
        title: format!("hightick lab breakdown: {}", plan.live.mode),
        mode: plan.live.mode.clone(),
        tick_rate_hz: rate,
        players_per_match: u32::from(run.mode.players),
        matches: plan.live.matches,
        host: crate::load::this_host(),
        floor,
        tick_warm_us,
        tick_warm_rounds_us: warm.round_means_us,
        tick_cold_us,
        tick_cold_rounds_us: cold.round_means_us,
        wake_us,
        wake_rounds_us: woke.round_cpu_us,
        wake_late_us: woke.median_late_us,
        live_us,
        sum_us,
        sum_terms: SUM_TERMS.to_owned(),
        unexplained_us: live_us - sum_us,
        live,
    })
}

impl BreakdownReport {
    /// Every term as (figure name suffix, label, value in us).
    fn terms(&self) -> [(&'static str, &'static str, f64); 8] {
        [
            (
                "floor",
                "UDP floor, plain (in the sum)",
                self.floor.plain_us,
            ),
            (
                "floor_woken",
                "UDP floor, woken (reference)",
                self.floor.woken_us,
            ),
            (
                "tick_warm",
                "sans-IO tick, warm (reference)",
                self.tick_warm_us,
            ),
            (
                "tick_cold",
                "sans-IO tick, cold (in the sum)",
                self.tick_cold_us,
            ),
            ("wake", "wake-up, thread CPU (in the sum)", self.wake_us),
            ("sum", "sum: floor + cold tick + wake-up", self.sum_us),
            ("live", "live: server CPU per match tick", self.live_us),
            ("unexplained", "live - sum", self.unexplained_us),
        ]
    }

    /// The `FIGURE breakdown_<term>_us <value> us` lines.
    pub fn figures(&self) -> Vec<String> {
        self.terms()
            .iter()
            .map(|(name, _, v)| figure_line(&format!("breakdown_{name}_us"), *v, "us"))
            .collect()
    }

    /// The terms as a table, with what each was measured on and the sum's
    /// reason under it.
    pub fn render_table(&self) -> String {
        let mut t = TextTable::new(&[
            ("term", Align::Left),
            ("us per match tick", Align::Right),
            ("share of live", Align::Right),
        ]);
        for (_, label, v) in self.terms() {
            t.row([
                label.to_owned(),
                format!("{v:.2}"),
                format!("{:.0}%", v / self.live_us * 100.0),
            ]);
        }
        let spread = |r: &[f64]| {
            let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!("{} rounds, {lo:.2} to {hi:.2}", r.len())
        };
        format!(
            "{}\n\
             {} x {} at {} Hz, {} players each\n\
             floor: {} clients, {} B in, {} B out, {} samples x {} ticks (wall: plain {:.2}, woken {:.2} us)\n\
             sans-IO tick: warm {}; cold {}\n\
             wake-up: {}, median {:.1} us late\n\
             live: {} match ticks, {:.3} server cores\n\
             sum: {}\n",
            t.render(),
            self.mode,
            crate::sweep::matches_text(self.matches),
            self.tick_rate_hz,
            self.players_per_match,
            self.floor.clients,
            self.floor.client_bytes,
            self.floor.server_bytes,
            self.floor.samples,
            self.floor.ticks_per_sample,
            self.floor.plain_wall_us,
            self.floor.woken_wall_us,
            spread(&self.tick_warm_rounds_us),
            spread(&self.tick_cold_rounds_us),
            spread(&self.wake_rounds_us),
            self.wake_late_us,
            self.live.tick.ticks,
            self.live.server_cpu_cores,
            self.sum_terms,
        )
    }

    /// The report as pretty JSON; a term that is not a number is an error
    /// naming it.
    pub fn to_json(&self) -> Result<String, LabError> {
        for (name, _, v) in self.terms() {
            if !v.is_finite() {
                return Err(LabError::NonFinite {
                    field: format!("breakdown_{name}_us"),
                    value: v,
                });
            }
        }
        self.live.to_json()?;
        serde_json::to_string_pretty(self).map_err(LabError::EncodeJson)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_rounds() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn live_cpu_per_match_tick_is_cpu_seconds_over_ticks() {
        let mut s = RunSummary {
            server_cpu_cores: 0.5,
            duration_s: 2.0,
            ..Default::default()
        };
        assert!(live_cpu_per_match_tick_us(&s).is_nan());
        s.tick.ticks = 10_000;
        assert!((live_cpu_per_match_tick_us(&s) - 100.0).abs() < 1e-9);
    }
}
