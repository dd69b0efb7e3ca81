//! [`Gateway`]: opens the store, starts the auth pool, the matchmaker and the
//! batching writer, and serves the API until shut down.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hightick_store::{BatchWriter, Store, StoreOptions, WriterConfig};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::access_log::{AccessLog, AccessLogWriter, Destination};
use crate::admission::Admission;
use crate::agones::AgonesAllocator;
use crate::api::{AppState, Shared, router};
use crate::config::GatewayConfig;
use crate::error::GatewayError;
use crate::faults::Faults;
use crate::hosts::Hosts;
use crate::listen::{ConnectionCounts, Tls};
use crate::login::Logins;
use crate::matchmaking::{Allocation, Matchmaker, MatchmakerParts, TokenSettings};
use crate::metrics::RequestCounts;
use crate::push::{Hub, positions};
use crate::rate_limit::RateLimit;
use crate::secrets::Secrets;
use crate::session::SessionSigner;
use crate::ticket::TicketSigner;

/// A running gateway.
#[derive(Debug)]
pub struct Gateway {
    address: SocketAddr,
    state: Shared,
    stop: Option<oneshot::Sender<()>>,
    serving: JoinHandle<std::io::Result<()>>,
    writer: BatchWriter,
    access_log_writer: Option<AccessLogWriter>,
}

/// Opens the database the config names (SQLite in `data_dir` by default).
pub async fn open_store(config: &GatewayConfig) -> Result<Store, GatewayError> {
    Ok(match &config.database_url {
        Some(url) => {
            let mut options = StoreOptions::new(url.clone());
            options.max_connections = config.database_connections;
            options.acquire_timeout =
                std::time::Duration::from_millis(config.database_acquire_timeout_ms);
            Store::open_with(&options).await?
        }
        None => Store::open_in_data_dir(&config.data_dir).await?,
    })
}

impl Gateway {
    /// Opens the store and starts serving on `config.listen`.
    pub async fn start(config: &GatewayConfig, secrets: Secrets) -> Result<Self, GatewayError> {
        config.validate()?;
        let store = open_store(config).await?;
        Self::start_with_store(config, secrets, store).await
    }

    /// Starts serving over an already open `store`.
    pub async fn start_with_store(
        config: &GatewayConfig,
        secrets: Secrets,
        store: Store,
    ) -> Result<Self, GatewayError> {
        Self::start_serving(config, secrets, store, Faults::default()).await
    }

    /// [`Self::start_with_store`], with `faults` injected (tests only).
    #[cfg(feature = "fault-injection")]
    pub async fn start_with_faults(
        config: &GatewayConfig,
        secrets: Secrets,
        store: Store,
        faults: Faults,
    ) -> Result<Self, GatewayError> {
        Self::start_serving(config, secrets, store, faults).await
    }

    async fn start_serving(
        config: &GatewayConfig,
        secrets: Secrets,
        store: Store,
        faults: Faults,
    ) -> Result<Self, GatewayError> {
        config.validate()?;
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| GatewayError::Bind {
                address: config.listen,
                source,
            })?;
        let address = listener.local_addr()?;
        let connections = Arc::<ConnectionCounts>::default();
        let tls = (config.tls.as_ref())
            .map(|tls| Tls::start(tls, Arc::clone(&connections)))
            .transpose()?;
        let writer = BatchWriter::spawn(store.clone(), WriterConfig::default());
        let signer = SessionSigner::new(&secrets.session_key);
        let ticket_ttl = Duration::from_secs(config.ticket_ttl_s);
        let logins = Admission::start(
            Logins::new(
                store.clone(),
                signer.clone(),
                TicketSigner::new(&secrets.session_key),
                Duration::from_secs(config.session_ttl_s),
                ticket_ttl,
            ),
            config.auth_workers,
            config.login_queue_capacity,
            ticket_ttl,
        );
        let fixed: Vec<(SocketAddr, usize)> =
            config.hosts.iter().map(|h| (h.admin, h.capacity)).collect();
        let hosts = Arc::new(Hosts::new(
            &fixed,
            Duration::from_secs(config.host_timeout_s),
            store.clone(),
        ));
        let push = Hub::new(&config.push);
        let allocation = match &config.agones {
            Some(agones) => Allocation::Agones(Box::new(AgonesAllocator::new(agones)?)),
            None => Allocation::Hosts(Arc::clone(&hosts)),
        };
        let matchmaker = Matchmaker::start(
            &config.modes,
            MatchmakerParts {
                store: store.clone(),
                allocation,
                tokens: TokenSettings {
                    key: secrets.token_key.clone(),
                    ttl_s: config.connect_token_ttl_s,
                    connect_timeout_s: config.connect_timeout_s,
                },
                ticket_ttl,
                rules: config.matchmaking.clone(),
                hub: Arc::clone(&push),
                host_admin_secret: Some(secrets.server_secret.clone()),
            },
        );
        positions::start(&matchmaker, &push);
        let (access_log, access_log_writer) =
            AccessLog::open(&Destination::parse(&config.http.access_log)).await?;
        let state = Arc::new(AppState {
            config: config.clone(),
            store,
            logins,
            signer,
            matchmaker,
            push,
            hosts,
            results: writer.sender(),
            server_secret: secrets.server_secret.clone(),
            requests: RequestCounts::default(),
            access_log,
            rate_limit: RateLimit::new(config.rate_limit_per_s, config.rate_limit_burst),
            openapi: crate::api::openapi_document(config).to_string(),
            connections,
            faults,
            started: Instant::now(),
        });
        let app = router(Arc::clone(&state));
        let (stop, stopped) = oneshot::channel::<()>();
        let http = config.http.clone();
        let counts = Arc::clone(&state.connections);
        let serving = tokio::spawn(async move {
            crate::listen::serve(listener, app, &http, tls, counts, async {
                let _ = stopped.await;
            })
            .await
        });
        Ok(Self {
            address,
            state,
            stop: Some(stop),
            serving,
            writer,
            access_log_writer,
        })
    }

    /// Where the API listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The store it serves from.
    pub fn store(&self) -> &Store {
        &self.state.store
    }

    /// Stops accepting, lets requests in flight finish, commits queued writes.
    pub async fn shutdown(mut self) -> Result<(), GatewayError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let served = (&mut self.serving).await;
        self.writer.shutdown().await;
        if let Some(log) = self.access_log_writer.take() {
            log.close().await;
        }
        match served {
            Ok(result) => Ok(result?),
            Err(join) => Err(GatewayError::Io(std::io::Error::other(join))),
        }
    }
}

/// Runs a gateway until SIGINT or SIGTERM; `started` is told its address.
pub fn serve(
    config: &GatewayConfig,
    secrets: Secrets,
    started: impl FnOnce(SocketAddr),
) -> Result<(), GatewayError> {
    // Every push socket is an open file: take all the process may have.
    crate::nofile::raise_to_hard_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("hightick-gateway")
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let gateway = Gateway::start(config, secrets).await?;
        started(gateway.address());
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        gateway.shutdown().await
    })
}
