//! Running a scenario in this process: [`LocalSwarm`] starts the drivers
//! and collects their intervals; [`run`] is the whole local run (drivers,
//! collection every interval, pacing, progress, result).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::task::JoinHandle;

use crate::aggregate::{Aggregate, Progress};
use crate::bots::link::LinkProxies;
use crate::bots::play::MatchPlayer;
use crate::distributed::allow::AllowList;
use crate::driver::{Control, DriverPlan, DriverSlot, Shard, drive};
use crate::error::SwarmError;
use crate::interval::Interval;
use crate::request_log::{LogSummary, RequestLog, RequestLogWriter};
use crate::result::RunResult;
use crate::scenario::Scenario;
use crate::tls::{Secure, TlsClient};

/// Resolves every target URL's host to an address, in the order of
/// [`Scenario::target_urls`]; one that does not resolve fails them all.
pub async fn resolve_targets(scenario: &Scenario) -> Result<Vec<SocketAddr>, SwarmError> {
    let mut addrs = Vec::with_capacity(scenario.target_urls().count());
    for (t, u) in scenario.target_urls() {
        let fail = |message: String| SwarmError::Resolve {
            target: t.name.clone(),
            url: u.url.clone(),
            message,
        };
        let mut found = tokio::net::lookup_host((u.host.as_str(), u.port))
            .await
            .map_err(|e| fail(e.to_string()))?;
        addrs.push(found.next().ok_or_else(|| fail("no address".to_owned()))?);
    }
    Ok(addrs)
}

/// How each target URL is dialled, in the order of
/// [`Scenario::target_urls`]: `None` for `http://`, TLS for `https://`
/// (one client for the run, so its session cache is shared).
pub fn secure_targets(scenario: &Scenario) -> Result<Vec<Option<Secure>>, SwarmError> {
    let mut client = None;
    scenario
        .target_urls()
        .map(|(t, u)| {
            if !u.tls {
                return Ok(None);
            }
            let fail = |message: String| SwarmError::Tls {
                target: t.name.clone(),
                url: u.url.clone(),
                message,
            };
            if client.is_none() {
                client = Some(TlsClient::new(scenario.http.ca_file.as_deref()).map_err(fail)?);
            }
            let client = client.as_ref().expect("made above");
            client.to(&u.host).map(Some).map_err(fail)
        })
        .collect()
}

/// This process's drivers of a run. See the [module docs](self).
#[derive(Debug)]
pub struct LocalSwarm {
    control: Arc<Control>,
    slots: Vec<Arc<DriverSlot>>,
    tasks: Vec<JoinHandle<()>>,
    spare: Interval,
    shard: Shard,
    log: Option<RequestLogWriter>,
    /// The proxies of the scenario's `link`, stopped when the swarm drops.
    _links: Option<Arc<LinkProxies>>,
}

impl LocalSwarm {
    /// Starts this process's share (`shard`) of `scenario`, its clock at
    /// `start`, on the current tokio runtime; `play_match` steps play bots
    /// of `player`'s game. Every target, as resolved, and every game server
    /// a connect token names must be on `allow`: a target that is not fails
    /// the start before anything is sent, a server that is not fails its
    /// match step.
    pub async fn start(
        scenario: Arc<Scenario>,
        shard: Shard,
        start: Instant,
        seed: u64,
        player: MatchPlayer,
        allow: Arc<AllowList>,
    ) -> Result<Self, SwarmError> {
        let addrs = resolve_targets(&scenario).await?;
        allow.check_targets(&scenario.targets, &addrs)?;
        let secure = secure_targets(&scenario)?;
        let drivers = if scenario.drivers == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            scenario.drivers
        } as u32;
        let control = Arc::new(Control::new());
        let steps = scenario.step_names.len();
        let end = start + scenario.total_duration();
        let (log, writer) = match &scenario.request_log {
            None => (None, None),
            Some(config) => {
                let (log, writer) = RequestLog::open(config, scenario.step_names.clone())?;
                (Some(log), Some(writer))
            }
        };
        let links = scenario
            .link
            .clone()
            .map(|plan| Arc::new(LinkProxies::new(plan)));
        let mut slots = Vec::new();
        let mut tasks = Vec::new();
        for driver in 0..drivers {
            let slot = Arc::new(DriverSlot::new(steps));
            let plan = DriverPlan {
                scenario: scenario.clone(),
                addrs: addrs.clone(),
                secure: secure.clone(),
                shard,
                driver,
                drivers,
                start,
                end,
                seed: seed
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .wrapping_add(u64::from(shard.index) << 32 | u64::from(driver)),
                log: log.clone(),
                player,
                allow: allow.clone(),
                links: links.clone(),
            };
            tasks.push(tokio::spawn(drive(plan, slot.clone(), control.clone())));
            slots.push(slot);
        }
        Ok(Self {
            control,
            slots,
            tasks,
            spare: Interval::new(steps),
            shard,
            log: writer,
            _links: links,
        })
    }

    /// Moves every driver's measurements since the last call into `into`
    /// (adding), with the players alive and requests in flight now.
    pub fn collect(&mut self, into: &mut Interval) {
        for slot in &self.slots {
            {
                let mut current = slot.interval.lock();
                std::mem::swap(&mut *current, &mut self.spare);
            }
            self.spare.users = slot.users.load(Ordering::Relaxed);
            self.spare.in_flight = slot.in_flight.load(Ordering::Relaxed);
            into.add(&self.spare);
            self.spare.reset();
        }
    }

    /// Sets the paced rate for the whole run; this process takes its share.
    pub fn set_rate(&self, whole_run: f64) {
        self.control
            .set_rate(whole_run / f64::from(self.shard.count.max(1)));
    }

    /// Asks the drivers to stop now.
    pub fn stop(&self) {
        self.control.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for the drivers to finish (the run's end plus a short grace),
    /// then for the request log (if any) to be written out.
    pub async fn join(&mut self) -> Result<Option<LogSummary>, SwarmError> {
        for t in self.tasks.drain(..) {
            let _ = t.await;
        }
        let Some(writer) = self.log.take() else {
            return Ok(None);
        };
        // The drivers held the last senders: the writer drains and stops.
        tokio::task::spawn_blocking(move || writer.finish())
            .await
            .map_err(|e| SwarmError::io("the request log writer")(std::io::Error::other(e)))?
            .map(Some)
    }
}

/// Runs `scenario` in this process to its end (or until `stop` is set),
/// calling `observe` after every interval; `play_match` steps play bots of
/// `player`'s game.
pub async fn run(
    scenario: Arc<Scenario>,
    player: MatchPlayer,
    stop: Arc<AtomicBool>,
    mut observe: impl FnMut(&Progress),
) -> Result<RunResult, SwarmError> {
    let start = Instant::now();
    let mut swarm = LocalSwarm::start(
        scenario.clone(),
        Shard::WHOLE,
        start,
        rand::random(),
        player,
        Arc::new(AllowList::anywhere()),
    )
    .await?;
    let mut aggregate = Aggregate::new(&scenario, 1);
    if let Some(rate) = aggregate.rate() {
        swarm.set_rate(rate);
    }
    let mut merged = Interval::new(scenario.step_names.len());
    let end = start + scenario.total_duration();
    let mut boundary = start;
    let last = loop {
        boundary = (boundary + scenario.interval).min(end);
        tokio::time::sleep_until(boundary.into()).await;
        let stopping = stop.load(Ordering::Relaxed);
        if stopping {
            swarm.stop();
        }
        merged.reset();
        swarm.collect(&mut merged);
        let t = boundary.duration_since(start);
        if let Some(rate) = aggregate.push(t, &merged) {
            swarm.set_rate(rate);
        }
        observe(&aggregate.progress(t));
        if boundary >= end || stopping {
            break t;
        }
    };
    let log = swarm.join().await?;
    merged.reset();
    swarm.collect(&mut merged);
    aggregate.absorb(&merged);
    let mut result = aggregate.finish(last);
    result.request_log = log;
    Ok(result)
}
