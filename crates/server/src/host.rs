//! [`Host`]: starts the workers, the admin HTTP runtime and the results
//! writer, and drains them on request (or on SIGTERM with [`serve`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hightick_config::ConfigFileError;
use hightick_engine::mode::HostedGame;
use hightick_net::{Key, ServerConfig};
use hightick_telemetry::Budgets;
use tokio::sync::oneshot;

use crate::admin::{AdminState, WorkerHandle, router};
use crate::config::HostConfig;
use crate::doorbell::{CommandSender, Doorbell};
use crate::error::ServerError;
use crate::gateway_link::{self, LinkSetup};
use crate::host_stats::Timeline;
use crate::identity::{self, MatchIds};
use crate::outbox::Outbox;
use crate::placement::WorkerLoad;
use crate::results::{self, ResultSinks, Settling};
use crate::worker::{Worker, WorkerSetup};

/// Client slots per worker for each match it may host (a 5v5 needs 10;
/// plaza matches take more of the pool). The secure layer's timer pass
/// visits every slot, so the pool is not oversized.
const SLOTS_PER_MATCH: usize = 10;
/// Longest a client's packet waits for its ack to ride on a tick's packet
/// (matches tick at 20 Hz or faster).
const ACK_DELAY: Duration = Duration::from_millis(50);

/// A running host. Dropping it without [`Host::wait`] leaves its threads
/// running until the process ends.
#[derive(Debug)]
pub struct Host {
    admin_address: SocketAddr,
    game_addresses: Vec<SocketAddr>,
    state: Arc<AdminState>,
    drain_timeout: Duration,
    host_id: String,
    workers: Vec<JoinHandle<()>>,
    results: Option<JoinHandle<()>>,
    link: Option<JoinHandle<()>>,
    agones: Option<crate::agones::link::AgonesLink>,
    admin: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
}

impl Host {
    /// Binds every socket and starts every thread, hosting matches of game
    /// `G`. Signals are left alone (see [`serve`] for SIGTERM handling).
    pub fn start<G: HostedGame>(config: &HostConfig, key: &Key) -> Result<Self, ServerError> {
        Self::start_inner::<G>(config, key, false)
    }

    fn start_inner<G: HostedGame>(
        config: &HostConfig,
        key: &Key,
        signals: bool,
    ) -> Result<Self, ServerError> {
        config.validate()?;
        // The admin runtime, and with `signals` the SIGTERM/SIGINT handlers,
        // before any thread starts: once the host says it is up (or Ready
        // to Agones), a SIGTERM drains it rather than killing it.
        let admin_runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let signals = match signals {
            true => Some(Signals::install(&admin_runtime)?),
            false => None,
        };
        let budgets = Arc::new(match &config.budgets {
            Some(path) => Budgets::load(path)?,
            None => Budgets::defaults(),
        });
        let identity = host_identity(config)?;
        let link = match &config.gateway {
            Some(url) => Some(link_setup(config, url)?),
            None => None,
        };
        let admin_secret = config.load_admin_secret()?;
        config.validate_admin_secret(admin_secret.as_deref())?;
        let settling = Arc::new(Settling::default());
        let plumbing = ResultsPlumbing::start(config, link.as_ref(), &settling)?;
        let BoundWorkers {
            handles,
            setups,
            game_addresses,
        } = bind_workers(config, key, &budgets, &plumbing.sender)?;
        let ResultsPlumbing {
            sender,
            thread: results,
            agones_ended,
            link_records,
        } = plumbing;
        drop(sender);
        let listener = TcpListener::bind(config.admin).map_err(|source| ServerError::Bind {
            address: config.admin,
            source,
        })?;
        listener.set_nonblocking(true)?;
        let admin_address = listener.local_addr()?;
        let state = Arc::new(AdminState {
            game: G::NAME,
            modes: G::MODES,
            workers: handles,
            match_ids: MatchIds::new(&identity),
            settling: Arc::clone(&settling),
            draining: AtomicBool::new(false),
            started: Instant::now(),
            timeline: Mutex::new(Timeline::default()),
            seed: AtomicU64::new(rand::random()),
            placement: config.placement,
            pack_until: config.pack_until,
            admin_secret,
        });
        let link = match (link, link_records) {
            (Some((outbox, (url, secret))), Some(records)) => {
                let setup = LinkSetup {
                    url,
                    secret,
                    host_id: identity.clone(),
                    region: config.region.clone(),
                    heartbeat: Duration::from_secs_f64(config.heartbeat_s),
                    admin: config.advertised_admin(admin_address),
                    game: G::NAME,
                    outbox,
                };
                Some(gateway_link::start(
                    setup,
                    records,
                    Arc::clone(&state),
                    settling,
                )?)
            }
            _ => None,
        };
        let agones = agones_ended
            .map(|ended| start_agones(config, &state, ended))
            .transpose()?;
        let mut workers = Vec::with_capacity(game_addresses.len());
        for setup in setups {
            let name = format!("hightick-worker-{}", setup.index);
            let worker = Worker::<G>::new(setup)?;
            workers.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || worker.run())?,
            );
        }
        let drain_timeout = Duration::from_secs(config.drain_timeout_s);
        let admin = spawn_admin(
            admin_runtime,
            listener,
            Arc::clone(&state),
            signals.map(|s| (s, drain_timeout)),
        )?;
        Ok(Self {
            admin_address,
            game_addresses,
            state,
            drain_timeout,
            host_id: identity,
            workers,
            results: Some(results),
            link,
            agones,
            admin: Some(admin),
        })
    }

    /// The host's id (kept in its state directory across restarts).
    pub fn host_id(&self) -> &str {
        &self.host_id
    }

    /// Where the admin HTTP API listens.
    pub fn admin_address(&self) -> SocketAddr {
        self.admin_address
    }

    /// The game address of each worker.
    pub fn game_addresses(&self) -> &[SocketAddr] {
        &self.game_addresses
    }

    /// Starts a drain: no new matches; running ones may play on for
    /// `timeout`, then they are ended and their clients told.
    pub fn drain(&self, timeout: Duration) {
        self.state.drain(Instant::now() + timeout);
    }

    /// Starts a drain with the configured timeout (what SIGTERM does).
    pub fn drain_default(&self) {
        self.drain(self.drain_timeout);
    }

    /// Waits until every worker has drained, the results are written, the
    /// Agones GameServer (with `agones`) is Shutdown and the admin API is
    /// closed. Call [`Self::drain`] first (or send SIGTERM to a host started
    /// by [`serve`]), or this waits forever.
    pub fn wait(self) {
        if let Err(e) = self.finish() {
            eprintln!("hightick serve: {e}");
        }
    }

    /// [`Self::wait`], with the Agones lifecycle's error if it failed.
    fn finish(mut self) -> Result<(), ServerError> {
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        if let Some(r) = self.results.take() {
            let _ = r.join();
        }
        if let Some(l) = self.link.take() {
            let _ = l.join();
        }
        let agones = self
            .agones
            .take()
            .map_or(Ok(()), crate::agones::link::AgonesLink::finish);
        if let Some((stop, thread)) = self.admin.take() {
            let _ = stop.send(());
            let _ = thread.join();
        }
        agones
    }
}

/// Runs a host of game `G` until SIGTERM or SIGINT, then drains it (a
/// second signal ends running matches at once) and returns when everything
/// is closed. `started` is told the host's addresses once it listens.
pub fn serve<G: HostedGame>(
    config: &HostConfig,
    key: &Key,
    started: impl FnOnce(&Host),
) -> Result<(), ServerError> {
    let host = Host::start_inner::<G>(config, key, true)?;
    started(&host);
    host.finish()
}

/// The outbox and the gateway's URL and secret, for a host with a gateway.
/// The host's id: kept in its state directory across restarts, or fresh
/// without one.
fn host_identity(config: &HostConfig) -> Result<String, ServerError> {
    match &config.state_dir {
        Some(dir) => identity::load_or_create(dir).map_err(|e| {
            ServerError::Config(ConfigFileError::invalid(
                "state_dir",
                &format!("{}: {e}", dir.display()),
            ))
        }),
        None => Ok(identity::fresh()),
    }
}

/// Starts the Agones link: the SDK sidecar on `config`'s port, the
/// GameServer's address followed unless the config names public addresses.
fn start_agones(
    config: &HostConfig,
    state: &Arc<AdminState>,
    ended: tokio::sync::mpsc::UnboundedReceiver<String>,
) -> Result<crate::agones::link::AgonesLink, ServerError> {
    crate::agones::link::start(crate::agones::link::LinkSetup {
        port: config.agones_sdk_port,
        follow_status: config.public_address.is_empty(),
        state: Arc::clone(state),
        ended,
    })
}

/// Starts the admin API's thread on `runtime`: its stop sender and handle.
fn spawn_admin(
    runtime: tokio::runtime::Runtime,
    listener: TcpListener,
    state: Arc<AdminState>,
    signals: Option<(Signals, Duration)>,
) -> Result<(oneshot::Sender<()>, JoinHandle<()>), ServerError> {
    let (stop, stopped) = oneshot::channel();
    let admin = std::thread::Builder::new()
        .name("hightick-admin".to_owned())
        .spawn(move || run_admin(runtime, listener, state, stopped, signals))?;
    Ok((stop, admin))
}

/// The results thread and the channels the Agones link and the gateway
/// link take each finished match from.
struct ResultsPlumbing {
    sender: results::ResultSender,
    thread: JoinHandle<()>,
    /// Told each ended match's id, with Agones.
    agones_ended: Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
    /// Each result the outbox took, with a gateway.
    link_records: Option<mpsc::Receiver<hightick_host_api::MatchResult>>,
}

impl ResultsPlumbing {
    /// Opens the results file, wires the outbox (with a gateway `link`) and
    /// the Agones counter (with `agones`), and starts the results thread.
    fn start(
        config: &HostConfig,
        link: Option<&(Outbox, (String, String))>,
        settling: &Arc<Settling>,
    ) -> Result<Self, ServerError> {
        let mut sinks = ResultSinks::default();
        if let Some(path) = &config.results {
            sinks.file = Some(ResultSinks::open_file(path)?);
        }
        let mut agones_ended = None;
        if config.agones {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            sinks.ended = Some(tx);
            agones_ended = Some(rx);
        }
        let mut link_records = None;
        if let Some((outbox, _)) = link {
            let (tx, rx) = mpsc::channel();
            sinks.outbox = Some((outbox.clone(), tx));
            link_records = Some(rx);
        }
        let (sender, thread) = results::start(sinks, Arc::clone(settling))?;
        Ok(Self {
            sender,
            thread,
            agones_ended,
            link_records,
        })
    }
}

/// Every worker's socket bound, its admin handle and its set-up, ready to
/// start.
struct BoundWorkers {
    handles: Vec<WorkerHandle>,
    setups: Vec<WorkerSetup>,
    game_addresses: Vec<SocketAddr>,
}

/// Binds each worker's socket and prepares its connection layer, command
/// channel and doorbell.
fn bind_workers(
    config: &HostConfig,
    key: &Key,
    budgets: &Arc<Budgets>,
    results: &results::ResultSender,
) -> Result<BoundWorkers, ServerError> {
    let count = config.worker_count();
    let mut bound = BoundWorkers {
        handles: Vec::with_capacity(count),
        setups: Vec::with_capacity(count),
        game_addresses: Vec::with_capacity(count),
    };
    for i in 0..count {
        let address = config.worker_bind(i);
        let socket =
            hightick_udp::bind(address).map_err(|source| ServerError::Bind { address, source })?;
        let local = socket.local_addr()?;
        let public_address = advertised_game_address(config, i, local);
        let max_clients =
            (config.max_matches_per_worker * SLOTS_PER_MATCH).min(usize::from(u16::MAX));
        let mut net = ServerConfig::new(
            hightick_proto::PROTOCOL_ID,
            key.clone(),
            public_address,
            max_clients,
        );
        // Every seated client gets a packet each tick: acks ride on it
        // instead of making packets of their own.
        net.packet.ack_delay = ACK_DELAY;
        net.pacing = config.pacing();
        net.validate()?;
        let (tx, rx) = mpsc::channel();
        let bell = Arc::new(Doorbell::new()?);
        let load = Arc::new(WorkerLoad::default());
        bound.handles.push(WorkerHandle {
            commands: Mutex::new(CommandSender::new(tx, Arc::clone(&bell))),
            load: Arc::clone(&load),
            max_matches: config.max_matches_per_worker,
        });
        bound.setups.push(WorkerSetup {
            index: i,
            socket,
            public_address,
            net,
            max_matches: config.max_matches_per_worker,
            budgets: Arc::clone(budgets),
            linger: config.linger(),
            seat_timeout: config.seat_timeout(),
            adapt: config.adapt,
            timer_slack_us: config.timer_slack_us,
            phase_group_share: config.phase_group_share,
            pin_to: config.pin_workers.then_some(i),
            commands: rx,
            bell,
            results: results.clone(),
            load,
        });
        bound.game_addresses.push(public_address);
    }
    Ok(bound)
}

fn link_setup(config: &HostConfig, url: &str) -> Result<(Outbox, (String, String)), ServerError> {
    let dir = config
        .state_dir
        .as_deref()
        .unwrap_or(std::path::Path::new("."));
    let outbox = Outbox::open(&dir.join("outbox")).map_err(|e| {
        ServerError::Config(ConfigFileError::invalid(
            "state_dir",
            &format!("{}: the outbox: {e}", dir.display()),
        ))
    })?;
    Ok((outbox, (url.to_owned(), config.load_server_secret()?)))
}

/// SIGTERM and SIGINT, caught (registered on the admin runtime).
#[derive(Debug)]
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn install(runtime: &tokio::runtime::Runtime) -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let _in_runtime = runtime.enter();
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }
}

fn run_admin(
    runtime: tokio::runtime::Runtime,
    listener: TcpListener,
    state: Arc<AdminState>,
    stopped: oneshot::Receiver<()>,
    drain_on_signal: Option<(Signals, Duration)>,
) {
    runtime.block_on(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        let sampler = Arc::clone(&state);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(1));
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                sampler.sample_timeline().await;
            }
        });
        if let Some((signals, timeout)) = drain_on_signal {
            tokio::spawn(watch_signals(Arc::clone(&state), signals, timeout));
        }
        let _ = axum::serve(listener, router(state))
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
}

async fn watch_signals(state: Arc<AdminState>, signals: Signals, timeout: Duration) {
    let Signals { mut term, mut int } = signals;
    let mut deadline = timeout;
    loop {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        state.drain(Instant::now() + deadline);
        // A second signal: end running matches now.
        deadline = Duration::ZERO;
    }
}

/// Where players reach worker `i`, bound at `local`: the configured public
/// address, else the bound one. An unspecified bound address (0.0.0.0)
/// with nothing configured is advertised as loopback, and said so: the
/// config's validation refuses it wherever a gateway must be told (with
/// Agones the GameServer's status replaces it once known).
fn advertised_game_address(config: &HostConfig, i: usize, local: SocketAddr) -> SocketAddr {
    if let Some(public) = config.worker_public_address(i) {
        return public;
    }
    if !local.ip().is_unspecified() {
        return local;
    }
    let loopback = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), local.port());
    if !config.agones {
        eprintln!(
            "hightick serve: worker {i} binds {local} and advertises {loopback}: players elsewhere \
             cannot reach it (--public-address IP:PORT)"
        );
    }
    loopback
}
