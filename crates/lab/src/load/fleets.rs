//! [`BotFleets`]: a run's bots as two fleets, those playing straight to the
//! server and those behind the impairment proxy (and the proxy), so what
//! each group saw is reported apart; and the fleets that joined later
//! (replaced matches' bots, straight to the server), folded into one
//! report as they finish so a long run holds only the live ones.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hightick_engine::BotGame;
use hightick_netem::{Proxy, ProxyReport};
use hightick_swarm::{BotCounters, BotTarget, Fleet, FleetConfig, FleetReport};

use crate::error::LabError;
use crate::load::link::{LinkSpec, start_proxy};

/// See the [module docs](self).
#[derive(Debug)]
pub(crate) struct BotFleets {
    direct: Option<Fleet>,
    behind: Option<Fleet>,
    proxy: Option<Proxy>,
    /// Fleets that joined later and still have bots playing.
    joined: Vec<Fleet>,
    /// What the joined fleets that finished saw.
    left: Option<FleetReport>,
}

/// What the fleets saw and what the proxy did.
#[derive(Debug)]
pub(crate) struct FleetsReport {
    /// Every bot.
    pub all: FleetReport,
    /// The bots straight to the server, if any.
    pub direct: Option<FleetReport>,
    /// The bots behind the proxy, and the proxy, if any.
    pub behind: Option<(FleetReport, ProxyReport)>,
}

impl BotFleets {
    /// Launches one bot of `G` per target on the current runtime: those
    /// `link` puts behind the proxy (started here, one route per server)
    /// through it, the others straight.
    pub(crate) fn launch<G: BotGame>(
        targets: &[BotTarget],
        config: &FleetConfig,
        link: Option<&LinkSpec>,
    ) -> Result<Self, LabError> {
        let mut direct = Vec::new();
        let mut behind = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            if link.is_some_and(|l| l.behind(i)) {
                behind.push(t.clone());
            } else {
                direct.push(t.clone());
            }
        }
        let launch = |targets: &[BotTarget], config: &FleetConfig| {
            Fleet::launch::<G>(targets, config, Arc::new(AtomicBool::new(false)))
        };
        let (behind, proxy) = match link {
            Some(spec) if !behind.is_empty() => {
                let (proxy, relays) =
                    start_proxy(spec, spec.profile()?, behind.iter().map(|t| t.server))?;
                let config = FleetConfig {
                    relays,
                    ..config.clone()
                };
                (Some(launch(&behind, &config)?), Some(proxy))
            }
            _ => (None, None),
        };
        let direct = if direct.is_empty() {
            None
        } else {
            Some(launch(&direct, config)?)
        };
        Ok(Self {
            direct,
            behind,
            proxy,
            joined: Vec::new(),
            left: None,
        })
    }

    /// Launches one more bot of `G` per target, straight to its server, on
    /// the current runtime (a replaced match's players).
    pub(crate) fn join<G: BotGame>(
        &mut self,
        targets: &[BotTarget],
        config: &FleetConfig,
    ) -> Result<(), LabError> {
        let fleet = Fleet::launch::<G>(targets, config, Arc::new(AtomicBool::new(false)))?;
        self.joined.push(fleet);
        Ok(())
    }

    /// Folds the joined fleets whose bots have all left into one report.
    /// Must be called outside the runtime's tasks (it blocks on them).
    pub(crate) fn reap(&mut self) {
        let (done, playing): (Vec<Fleet>, Vec<Fleet>) = std::mem::take(&mut self.joined)
            .into_iter()
            .partition(Fleet::is_finished);
        self.joined = playing;
        let runtime = tokio::runtime::Handle::current();
        for fleet in done {
            fold(&mut self.left, &runtime.block_on(fleet.finish()));
        }
    }

    fn fleets(&self) -> impl Iterator<Item = &Fleet> {
        self.direct.iter().chain(&self.behind).chain(&self.joined)
    }

    /// Bots launched, the joined included.
    pub(crate) fn bots(&self) -> usize {
        let left = self.left.as_ref().map_or(0, |r| r.bots as usize);
        self.fleets().map(Fleet::bots).sum::<usize>() + left
    }

    /// Every fleet's counters so far.
    pub(crate) fn live(&self) -> BotCounters {
        let mut sum = BotCounters::default();
        if let Some(left) = &self.left {
            sum.add(&left.counters);
        }
        for f in self.fleets() {
            sum.add(&f.live());
        }
        sum
    }

    /// CPU seconds the proxy's thread has used so far (0 without one).
    pub(crate) fn proxy_cpu_s(&self) -> f64 {
        self.proxy.as_ref().map_or(0.0, |p| p.report().cpu_s)
    }

    /// Asks every bot to stop.
    pub(crate) fn stop(&self) {
        for f in self.fleets() {
            f.stop();
        }
    }

    /// Waits for every bot, then stops the proxy. The joined fleets count
    /// among the bots straight to the server.
    pub(crate) async fn finish(self) -> Result<FleetsReport, LabError> {
        let mut direct = match self.direct {
            Some(f) => Some(f.finish().await),
            None => None,
        };
        let mut joined = self.left;
        for f in self.joined {
            fold(&mut joined, &f.finish().await);
        }
        if let Some(joined) = &joined {
            fold(&mut direct, joined);
        }
        let behind = match self.behind {
            Some(f) => Some(f.finish().await),
            None => None,
        };
        let proxy = match self.proxy {
            Some(p) => Some(p.stop()?),
            None => None,
        };
        let mut all: Option<FleetReport> = None;
        for r in direct.iter().chain(&behind) {
            fold(&mut all, r);
        }
        let all = all.ok_or_else(|| LabError::config("matches", "no bots to run"))?;
        Ok(FleetsReport {
            all,
            direct,
            behind: behind.zip(proxy),
        })
    }
}

/// Adds `report` into `into`, or makes it `into` when that is empty.
fn fold(into: &mut Option<FleetReport>, report: &FleetReport) {
    match into {
        None => *into = Some(report.clone()),
        Some(sum) => merge(sum, report),
    }
}

/// Adds `other` into `into` (bots, counters, histograms; the longer run).
fn merge(into: &mut FleetReport, other: &FleetReport) {
    into.bots += other.bots;
    into.failed += other.failed;
    into.counters.add(&other.counters);
    // Same bounds on both sides: cannot fail.
    let _ = into.interarrival.add(&other.interarrival);
    into.quality.add(&other.quality);
    into.elapsed = into.elapsed.max(other.elapsed).max(Duration::ZERO);
}
