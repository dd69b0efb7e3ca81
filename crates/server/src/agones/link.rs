//! The host's Agones lifecycle, on its own thread with its own small
//! runtime: connect, label, Ready once warm, health from the workers'
//! beats, allocations from the watched GameServer, the `matches` counter
//! given back as matches end, Ready again when emptied, Shutdown after the
//! drain. See the [`crate::agones`] module docs for the whole story.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::adapter::{Adapter, GameServerView, Watch};
use super::annotations::port_name;
use super::lifecycle::{Idle, Lifecycle, STRAY_GRACE, Update};
use super::progress::{Beat, Progress};
use crate::admin::AdminState;
use crate::error::ServerError;

/// How often the workers' beats are checked for a health ping (a worker
/// beats once a second; Agones' default health period is 5 s).
const HEALTH_CHECK: Duration = Duration::from_secs(1);
/// How often the warm check looks at the workers before Ready.
const WARM_CHECK: Duration = Duration::from_millis(2);
/// Pause before watching again after the watch stream broke.
const WATCH_RETRY: Duration = Duration::from_secs(1);

/// What the link is started with.
#[derive(Debug)]
pub(crate) struct LinkSetup {
    /// The SDK server's REST port (`None`: `$AGONES_SDK_HTTP_PORT`, else 9358).
    pub port: Option<u16>,
    /// Advertise each worker where the GameServer's status says players
    /// reach it (no public address was configured).
    pub follow_status: bool,
    pub state: Arc<AdminState>,
    /// The id of every match that ended, once its result is written.
    pub ended: mpsc::UnboundedReceiver<String>,
}

/// The running lifecycle thread.
#[derive(Debug)]
pub(crate) struct AgonesLink {
    drained: oneshot::Sender<()>,
    thread: JoinHandle<Result<(), ServerError>>,
}

impl AgonesLink {
    /// The host has drained (every worker stopped, every result written):
    /// gives back the counter slots of the matches that ended meanwhile,
    /// marks the GameServer Shutdown and waits for it; the lifecycle's
    /// error, if it failed.
    pub(crate) fn finish(self) -> Result<(), ServerError> {
        let _ = self.drained.send(());
        self.thread
            .join()
            .unwrap_or_else(|_| Err(ServerError::Agones("the lifecycle thread panicked".into())))
    }
}

/// Starts the lifecycle thread.
pub(crate) fn start(setup: LinkSetup) -> Result<AgonesLink, ServerError> {
    let (drained_tx, drained) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("hightick-agones".to_owned())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(ServerError::Io)?;
            runtime.block_on(run(setup, drained))
        })?;
    Ok(AgonesLink {
        drained: drained_tx,
        thread,
    })
}

fn beats(state: &AdminState) -> Vec<Beat> {
    state
        .workers
        .iter()
        .map(|w| Beat {
            count: w.load.beats.load(Ordering::Relaxed),
            stopped: w.load.stopped.load(Ordering::Relaxed),
        })
        .collect()
}

fn log(e: &ServerError) {
    eprintln!("hightick serve: {e}");
}

async fn run(setup: LinkSetup, mut drained: oneshot::Receiver<()>) -> Result<(), ServerError> {
    let LinkSetup {
        port,
        follow_status,
        state,
        mut ended,
    } = setup;
    let mut sdk = match Adapter::connect(port).await {
        Ok(sdk) => sdk,
        Err(e) => {
            // Without Agones this host can never be allocated: stop it.
            state.drain(Instant::now());
            return Err(e);
        }
    };
    let mut host = Lifecycle::default();
    let mut addresses = StatusAddresses::new(follow_status, state.workers.len());
    let lived = live(
        &mut sdk,
        &state,
        (&mut host, &mut addresses),
        &mut ended,
        &mut drained,
    )
    .await;
    if lived.is_err() {
        state.drain(Instant::now());
        let _ = drained.await;
    }
    // Every result is written: the matches that ended during the drain
    // give their slots back, in one call, before the GameServer goes.
    let mut drained_matches = 0;
    while let Ok(id) = ended.try_recv() {
        if host.ended(&id) {
            drained_matches += 1;
        }
    }
    if drained_matches > 0
        && let Err(e) = sdk.matches_ended(drained_matches).await
    {
        log(&e);
    }
    let shutdown = sdk.shutdown().await;
    if shutdown.is_ok() {
        eprintln!("hightick serve: agones: Shutdown");
    }
    lived.and(shutdown)
}

/// From connect to drain: labels, Ready once warm, then health, allocations
/// and ended matches until the host has drained.
async fn live(
    sdk: &mut Adapter,
    state: &AdminState,
    (host, addresses): (&mut Lifecycle, &mut StatusAddresses),
    ended: &mut mpsc::UnboundedReceiver<String>,
    drained: &mut oneshot::Receiver<()>,
) -> Result<(), ServerError> {
    if let Err(e) = sdk.label_build(state.game).await {
        log(&e);
    }
    match sdk.game_server().await {
        Ok(gs) => addresses.follow(&gs, state),
        Err(e) => log(&e),
    }
    while !Progress::warm(&beats(state)) {
        tokio::select! {
            _ = &mut *drained => return Ok(()),
            _ = tokio::time::sleep(WARM_CHECK) => {}
        }
    }
    sdk.ready().await?;
    eprintln!(
        "hightick serve: agones: Ready ({:.0} ms after the host started)",
        state.started.elapsed().as_secs_f64() * 1000.0
    );
    let mut progress = Progress::new(state.workers.len());
    let mut watch: Option<Watch> = None;
    let mut watch_at = Instant::now();
    let mut every = tokio::time::interval(HEALTH_CHECK);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        if watch.is_none() && Instant::now() >= watch_at {
            match sdk.watch().await {
                Ok(w) => watch = Some(w),
                Err(e) => {
                    log(&e);
                    watch_at = Instant::now() + WATCH_RETRY;
                }
            }
        }
        tokio::select! {
            biased;
            _ = &mut *drained => return Ok(()),
            Some(id) = ended.recv() => {
                if host.ended(&id) {
                    give_back(sdk).await;
                    settle(sdk, state, host).await;
                }
            }
            update = next(&mut watch) => match update {
                Some(Ok(gs)) => {
                    // The address first: an allocation's players connect to it.
                    addresses.follow(&gs, state);
                    allocated(sdk, state, host, gs).await;
                }
                Some(Err(e)) => {
                    log(&e);
                    watch = None;
                    watch_at = Instant::now() + WATCH_RETRY;
                }
                None => {
                    watch = None;
                    watch_at = Instant::now() + WATCH_RETRY;
                }
            },
            _ = every.tick() => {
                if progress.ping_due(&beats(state))
                    && let Err(e) = sdk.health().await
                {
                    log(&e);
                }
                // An idle GameServer still Allocated: Ready, or a stray count.
                settle(sdk, state, host).await;
            }
        }
    }
}

/// The next GameServer update; pending while there is no watch.
async fn next(watch: &mut Option<Watch>) -> Option<Result<GameServerView, ServerError>> {
    match watch {
        Some(w) => w.next().await,
        None => std::future::pending().await,
    }
}

/// A GameServer update: a new allocation's match is created the way the
/// admin API creates one; a refused one gives its counter slot back.
async fn allocated(
    sdk: &mut Adapter,
    state: &AdminState,
    host: &mut Lifecycle,
    gs: GameServerView,
) {
    let annotations: &HashMap<String, String> = &gs.annotations;
    match host.observe(&gs.state, annotations) {
        Update::Nothing => {}
        Update::Create(allocation) => {
            let id = allocation.match_id().to_owned();
            match state
                .create_match(allocation.request, allocation.worker)
                .await
            {
                Ok(info) => {
                    host.created(&id);
                    eprintln!(
                        "hightick serve: agones: allocation {id}: match on {} ({} allocated here)",
                        info.address,
                        host.live()
                    );
                }
                Err(refused) => {
                    eprintln!(
                        "hightick serve: agones: allocation {id} refused ({}): {}",
                        refused.status, refused.message
                    );
                    give_back(sdk).await;
                    settle(sdk, state, host).await;
                }
            }
        }
        Update::Refuse { match_id, error } => {
            eprintln!("hightick serve: agones: allocation {match_id} refused: {error}");
            give_back(sdk).await;
            settle(sdk, state, host).await;
        }
    }
}

/// One slot of the `matches` counter back.
async fn give_back(sdk: &mut Adapter) {
    if let Err(e) = sdk.matches_ended(1).await {
        log(&e);
    }
}

/// Back to Ready when the GameServer is Allocated with no allocation's
/// match left, not draining, and the counter agrees (an allocation on its
/// way has already counted itself there). A count held with nothing
/// running for [`STRAY_GRACE`] is reset first.
async fn settle(sdk: &mut Adapter, state: &AdminState, host: &mut Lifecycle) {
    if !host.idle() || state.draining.load(Ordering::SeqCst) {
        return;
    }
    let count = match sdk.matches_allocated().await {
        Ok(count) => count,
        Err(e) => return log(&e),
    };
    match host.idle_count(count, Instant::now()) {
        Idle::Wait => return,
        Idle::Ready => {}
        Idle::Reset => {
            eprintln!(
                "hightick serve: agones: the matches counter held {count} for {STRAY_GRACE:?} \
                 with no allocation's match running (allocations overwritten before they were \
                 seen?): set to 0"
            );
            if let Err(e) = sdk.reset_matches().await {
                return log(&e);
            }
        }
    }
    match sdk.ready().await {
        Ok(()) => {
            host.readied();
            eprintln!("hightick serve: agones: no match left, Ready again");
        }
        Err(e) => log(&e),
    }
}

/// With no configured public address, each worker is advertised where the
/// GameServer's status says players reach it: `status.address` with the
/// port named `game-<i>` (an Agones host port). Agones may set them only
/// after Ready, so every update is looked at, and a change follows.
#[derive(Debug)]
struct StatusAddresses {
    follow: bool,
    known: Vec<Option<SocketAddr>>,
    /// Whether the missing address was said (once).
    told_missing: bool,
}

impl StatusAddresses {
    fn new(follow: bool, workers: usize) -> Self {
        Self {
            follow,
            known: vec![None; workers],
            told_missing: false,
        }
    }

    fn follow(&mut self, gs: &GameServerView, state: &AdminState) {
        if !self.follow {
            return;
        }
        for (i, known) in self.known.iter_mut().enumerate() {
            let name = port_name(i);
            match gs.public_address(&name) {
                Some(address) if *known != Some(address) && state.advertise(i, address) => {
                    eprintln!(
                        "hightick serve: agones: worker {i} advertised at {address} \
                         (status.address, port {name})"
                    );
                    *known = Some(address);
                }
                Some(_) => {}
                None if known.is_none() && !self.told_missing && gs.state != "Scheduled" => {
                    self.told_missing = true;
                    eprintln!(
                        "hightick serve: agones: the GameServer ({}) has no IP address with a \
                         port {name} yet (status.address {:?}, ports {:?}): waiting for them",
                        gs.state, gs.address, gs.ports
                    );
                }
                None => {}
            }
        }
    }
}
