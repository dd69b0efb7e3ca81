//! The admin HTTP API, on its own small single-threaded runtime so it never
//! competes with tick workers for more than a sliver of CPU:
//!
//! - `GET /healthz`: `200 {"status":"ok"|"draining"}`
//! - `GET /metrics`: Prometheus text (frame-time histograms per mode and
//!   subsystem, overruns, budget violations, traffic, drops by reason,
//!   matches, players, workers, results not yet written or acknowledged,
//!   process CPU and memory); docs/OPERATIONS.md lists every family
//! - `GET /v1/matches`: every hosted match ([`MatchInfo`], its tick rate
//!   among the fields)
//! - `POST /v1/matches`: [`CreateMatch`] -> `201` [`MatchInfo`] with the
//!   address clients connect to and the match's tick rate (the mode's, or
//!   `tick_rate_hz` from the request, 1 to 256); `400` for a bad body, an
//!   unknown mode or a setting the game refuses (the error names the
//!   field), `409` for a client
//!   already seated, `503` while draining or full
//! - `GET /v1/stats`: [`HostStats`]; `POST /v1/stats/reset` starts a new
//!   measuring window (after a warm-up).
//! - `GET /v1/timeline`: the per-second [`TimelinePoint`]s alone, oldest
//!   first, as `/v1/stats` shows them; cheap to poll, as it asks the workers
//!   nothing (the timeline is sampled once a second anyway).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Json, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hightick_engine::mode::{self, Mode, TICK_RATES_HZ};
use hightick_telemetry::TelemetryError;
use hightick_telemetry::prometheus;
use hightick_telemetry::prometheus::text::{CONTENT_TYPE, Exposition, Kind};
use serde_json::json;
use tokio::sync::oneshot;

use crate::doorbell::CommandSender;
use crate::host_stats::{Timeline, merge_modes, mode_stats, network_stats};
use crate::identity::MatchIds;
use crate::outbox::is_file_safe;
use crate::placement::{self, LoadView, Placement, WorkerLoad};
use crate::results::Settling;
use crate::worker::{WorkerCommand, WorkerReport};
use hightick_host_api::{CreateMatch, HostStats, MatchInfo, TimelinePoint};
use hightick_process::{process_cpu_seconds, rss_bytes};

/// Longest a worker may take to answer the admin side.
const WORKER_ANSWER: Duration = Duration::from_secs(2);
/// Largest roster accepted.
const MAX_ROSTER: usize = 4096;

/// One worker as the admin side sees it.
#[derive(Debug)]
pub(crate) struct WorkerHandle {
    pub commands: Mutex<CommandSender<WorkerCommand>>,
    pub load: Arc<WorkerLoad>,
    pub max_matches: usize,
}

/// Shared by every admin request.
#[derive(Debug)]
pub(crate) struct AdminState {
    /// The game's name and modes (what create-match may name).
    pub game: &'static str,
    pub modes: &'static [Mode],
    pub workers: Vec<WorkerHandle>,
    /// Mints ids for matches created without one.
    pub match_ids: MatchIds,
    /// Retired matches not yet written, and every id held.
    pub settling: Arc<Settling>,
    pub draining: AtomicBool,
    pub started: Instant,
    pub timeline: Mutex<Timeline>,
    pub seed: AtomicU64,
    pub placement: Placement,
    pub pack_until: f64,
    /// The bearer secret the routes that change something take; `None`:
    /// open (the admin API is on loopback).
    pub admin_secret: Option<String>,
}

impl AdminState {
    fn send(&self, worker: usize, command: WorkerCommand) -> bool {
        self.workers[worker]
            .commands
            .lock()
            .map(|tx| tx.send(command).is_ok())
            .unwrap_or(false)
    }

    /// Every worker's report (those that answer in time).
    pub(crate) async fn reports(&self) -> Vec<WorkerReport> {
        self.ask(|reply| WorkerCommand::Report { reply }).await
    }

    /// Every worker's answer to the command `ask` makes (those that answer
    /// in time).
    async fn ask<T>(&self, ask: impl Fn(oneshot::Sender<T>) -> WorkerCommand) -> Vec<T> {
        let mut waiting = Vec::with_capacity(self.workers.len());
        for i in 0..self.workers.len() {
            let (reply, answer) = oneshot::channel();
            if self.send(i, ask(reply)) {
                waiting.push(answer);
            }
        }
        let mut answers = Vec::with_capacity(waiting.len());
        for answer in waiting {
            if let Ok(Ok(a)) = tokio::time::timeout(WORKER_ANSWER, answer).await {
                answers.push(a);
            }
        }
        answers
    }

    /// Tells every worker to reset its frame statistics.
    pub(crate) fn reset_stats(&self) {
        for i in 0..self.workers.len() {
            self.send(i, WorkerCommand::ResetStats);
        }
        if let Ok(mut t) = self.timeline.lock() {
            t.clear();
        }
    }

    /// Worker `worker` is reached at `address` from now on: its match
    /// answers say so and the tokens it admits must list it (an Agones
    /// GameServer's address, known only once Agones has set it).
    pub(crate) fn advertise(&self, worker: usize, address: SocketAddr) -> bool {
        self.send(worker, WorkerCommand::Advertise { address })
    }

    /// Starts a drain: no new matches; running ones may go on until `deadline`.
    pub(crate) fn drain(&self, deadline: Instant) {
        self.draining.store(true, Ordering::SeqCst);
        for i in 0..self.workers.len() {
            self.send(i, WorkerCommand::Drain { deadline });
        }
    }

    /// Records one timeline second.
    pub(crate) async fn sample_timeline(&self) {
        let pulses = self.ask(|reply| WorkerCommand::Pulse { reply }).await;
        let t_s = self.started.elapsed().as_secs_f64();
        let cpu = process_cpu_seconds();
        if let Ok(mut t) = self.timeline.lock() {
            t.sample(t_s, cpu, &pulses);
        }
    }
}

type Shared = Arc<AdminState>;

/// The admin router.
pub(crate) fn router(state: Shared) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/matches", get(list_matches).post(create_match))
        .route("/v1/stats", get(stats))
        .route("/v1/stats/reset", post(reset_stats))
        .route("/v1/timeline", get(timeline))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
        .with_state(state)
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

async fn healthz(State(state): State<Shared>) -> Response {
    let status = if state.draining.load(Ordering::SeqCst) {
        "draining"
    } else {
        "ok"
    };
    Json(json!({ "status": status })).into_response()
}

async fn list_matches(State(state): State<Shared>) -> Json<Vec<MatchInfo>> {
    let reports = state.reports().await;
    let mut matches: Vec<MatchInfo> = reports
        .into_iter()
        .flat_map(|r| r.matches.into_iter().map(|m| m.info))
        .collect();
    // Minted ids share their host's prefix and count up: shorter first
    // keeps them in creation order.
    matches.sort_by(|a, b| (a.id.len(), &a.id).cmp(&(b.id.len(), &b.id)));
    Json(matches)
}

/// The refusal of a caller without the admin secret (when the host has
/// one); `None`: the caller may go on.
fn refusal(state: &AdminState, headers: &HeaderMap) -> Option<Response> {
    let secret = state.admin_secret.as_ref()?;
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    match hightick_config::bearer_matches(authorization, secret) {
        Some(true) => None,
        Some(false) => Some(error(StatusCode::UNAUTHORIZED, "wrong admin secret")),
        None => Some(error(
            StatusCode::UNAUTHORIZED,
            "this route needs the admin secret: Authorization: Bearer <secret>",
        )),
    }
}

async fn create_match(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Result<Json<CreateMatch>, JsonRejection>,
) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    let Json(request) = match body {
        Ok(b) => b,
        Err(rejection) => return error(StatusCode::BAD_REQUEST, &rejection.body_text()),
    };
    match state.create_match(request, None).await {
        Ok(info) => (StatusCode::CREATED, Json(info)).into_response(),
        Err(refused) => error(refused.status, &refused.message),
    }
}

/// Why a match was not created: the status the admin API answers with and
/// a message naming the field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    pub status: StatusCode,
    pub message: String,
}

impl Refused {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

impl AdminState {
    /// Creates the match `request` describes: what `POST /v1/matches` does,
    /// and what an Agones allocation does (`crate::agones`). `worker` places
    /// it on that worker instead of where placement would.
    pub(crate) async fn create_match(
        &self,
        request: CreateMatch,
        worker: Option<usize>,
    ) -> Result<MatchInfo, Refused> {
        if self.draining.load(Ordering::SeqCst) {
            return Err(Refused::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "draining: no new matches",
            ));
        }
        let Some(mode) = self.modes.iter().find(|m| m.name == request.mode) else {
            let message = format!(
                "mode: unknown `{}` for {} (known: {})",
                request.mode,
                self.game,
                mode::names(self.modes)
            );
            return Err(Refused::new(StatusCode::BAD_REQUEST, message));
        };
        let tick_rate_hz = request.tick_rate_hz.unwrap_or(mode.tick_rate_hz);
        if !TICK_RATES_HZ.contains(&tick_rate_hz) {
            let message = format!(
                "tick_rate_hz: must be between {} and {} (got {tick_rate_hz})",
                TICK_RATES_HZ.start(),
                TICK_RATES_HZ.end()
            );
            return Err(Refused::new(StatusCode::BAD_REQUEST, message));
        }
        if request.roster.is_empty()
            || request.roster.len() > usize::from(mode.players).min(MAX_ROSTER)
        {
            let message = format!("roster: must hold 1 to {} client ids", mode.players);
            return Err(Refused::new(StatusCode::BAD_REQUEST, message));
        }
        let mut unique = request.roster.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != request.roster.len() {
            return Err(Refused::new(
                StatusCode::BAD_REQUEST,
                "roster: a client id appears twice",
            ));
        }
        let worker = self.place(worker)?;
        let id = match request.match_id.clone() {
            Some(id) if !is_file_safe(&id) => {
                return Err(Refused::new(
                    StatusCode::BAD_REQUEST,
                    "match_id: must be 1 to 64 of A-Z a-z 0-9 . _ - (not starting with a dot)",
                ));
            }
            Some(id) => id,
            None => self.match_ids.mint(),
        };
        if !self.settling.claim(&id) {
            let message = format!("match_id: `{id}` is already hosted here");
            return Err(Refused::new(StatusCode::CONFLICT, message));
        }
        let created = self
            .create_on(worker, id.clone(), mode, tick_rate_hz, request)
            .await;
        if created.is_err() {
            self.settling.release(&id);
        }
        created
    }

    /// The worker a new match goes to: `pinned` if it has room, else where
    /// placement says.
    fn place(&self, pinned: Option<usize>) -> Result<usize, Refused> {
        let loads: Vec<LoadView> = self
            .workers
            .iter()
            .map(|w| LoadView::of(&w.load, w.max_matches))
            .collect();
        match pinned {
            Some(i) if i >= loads.len() => Err(Refused::new(
                StatusCode::BAD_REQUEST,
                format!("worker: {i} is no worker here (0 to {})", loads.len() - 1),
            )),
            Some(i) if loads[i].matches >= loads[i].max_matches => Err(Refused::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("worker {i} is full"),
            )),
            Some(i) => Ok(i),
            None => placement::choose(&loads, self.placement, self.pack_until).ok_or_else(|| {
                Refused::new(StatusCode::SERVICE_UNAVAILABLE, "every worker is full")
            }),
        }
    }

    /// Asks `worker` to create match `id`.
    async fn create_on(
        &self,
        worker: usize,
        id: String,
        mode: &'static Mode,
        tick_rate_hz: u32,
        request: CreateMatch,
    ) -> Result<MatchInfo, Refused> {
        let seed = request.seed.unwrap_or_else(|| {
            self.seed
                .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
        });
        let (reply, answer) = oneshot::channel();
        let command = WorkerCommand::Create {
            id,
            mode,
            settings: serde_json::Value::Object(request.settings),
            tick_rate_hz,
            roster: request.roster,
            seed,
            reply,
        };
        if !self.send(worker, command) {
            return Err(Refused::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "worker stopped",
            ));
        }
        match tokio::time::timeout(WORKER_ANSWER, answer).await {
            Ok(Ok(Ok(info))) => Ok(info),
            Ok(Ok(Err(reason))) if reason.contains("already holds") => {
                Err(Refused::new(StatusCode::CONFLICT, reason))
            }
            Ok(Ok(Err(reason)))
                if reason.contains("draining")
                    || reason.contains("full")
                    || reason.contains("out of") =>
            {
                Err(Refused::new(StatusCode::SERVICE_UNAVAILABLE, reason))
            }
            Ok(Ok(Err(reason))) => Err(Refused::new(StatusCode::BAD_REQUEST, reason)),
            _ => Err(Refused::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "worker did not answer",
            )),
        }
    }
}

/// Everything `/v1/stats` shows.
pub(crate) async fn host_stats(state: &AdminState) -> HostStats {
    let reports = state.reports().await;
    let modes = merge_modes(&reports);
    HostStats {
        uptime_s: state.started.elapsed().as_secs_f64(),
        process_cpu_seconds: process_cpu_seconds(),
        draining: state.draining.load(Ordering::SeqCst),
        workers: state.workers.len(),
        matches: reports.iter().map(|r| r.matches.len()).sum(),
        players_connected: reports.iter().map(|r| r.players_connected).sum(),
        modes: mode_stats(&modes),
        network: network_stats(&reports),
        timeline: timeline_points(state),
    }
}

fn timeline_points(state: &AdminState) -> Vec<TimelinePoint> {
    state
        .timeline
        .lock()
        .map(|t| t.points())
        .unwrap_or_default()
}

async fn stats(State(state): State<Shared>) -> Json<HostStats> {
    Json(host_stats(&state).await)
}

async fn timeline(State(state): State<Shared>) -> Json<Vec<TimelinePoint>> {
    Json(timeline_points(&state))
}

async fn reset_stats(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    state.reset_stats();
    Json(json!({ "reset": true })).into_response()
}

async fn metrics(State(state): State<Shared>) -> Response {
    let reports = state.reports().await;
    let mut text = String::with_capacity(64 * 1024);
    if let Err(e) = render_metrics(&state, &reports, &mut text) {
        return error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string());
    }
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response()
}

/// The host's `/metrics` body: the frame statistics per mode, then the
/// host's own families.
fn render_metrics(
    state: &AdminState,
    reports: &[WorkerReport],
    text: &mut String,
) -> Result<(), TelemetryError> {
    let modes = merge_modes(reports);
    let labels: Vec<[(&str, &str); 1]> = modes.keys().map(|m| [("mode", m.as_str())]).collect();
    let series: Vec<prometheus::Series<'_>> = modes
        .values()
        .zip(&labels)
        .map(|(m, l)| prometheus::Series {
            labels: l,
            stats: &m.stats,
        })
        .collect();
    prometheus::render(text, &series)?;
    let net = network_stats(reports);
    let mut m = Exposition::new(text);
    let matches: usize = reports.iter().map(|r| r.matches.len()).sum();
    let players: usize = reports.iter().map(|r| r.players_connected).sum();
    m.gauge("hightick_matches", "Matches hosted.", matches)?;
    m.gauge("hightick_players_connected", "Clients connected.", players)?;
    m.gauge(
        "hightick_workers",
        "Worker threads (each owns a socket and its matches).",
        state.workers.len(),
    )?;
    m.gauge(
        "hightick_draining",
        "1 while the host drains (no new matches).",
        u8::from(state.draining.load(Ordering::SeqCst)),
    )?;
    m.counter(
        "hightick_packets_received_total",
        "Datagrams received.",
        net.packets_in,
    )?;
    m.counter(
        "hightick_received_bytes_total",
        "Datagram bytes received.",
        net.bytes_in,
    )?;
    m.counter(
        "hightick_packets_sent_total",
        "Datagrams sent.",
        net.packets_out,
    )?;
    m.counter(
        "hightick_sent_bytes_total",
        "Datagram bytes sent.",
        net.bytes_out,
    )?;
    m.counter(
        "hightick_send_dropped_total",
        "Datagrams the kernel refused to send.",
        net.send_dropped,
    )?;
    m.counter(
        "hightick_unknown_clients_total",
        "Connections with a valid token but on no roster.",
        net.unknown_clients,
    )?;
    m.counter(
        "hightick_adapt_skipped_total",
        "Client-ticks without a packet: the client's link was congested.",
        net.adapt_skipped,
    )?;
    m.counter(
        "hightick_adapt_decreases_total",
        "Times a client's send share was cut (its link congested).",
        net.adapt_decreases,
    )?;
    let late: u64 = modes.values().map(|m| m.late_starts).sum();
    m.counter(
        "hightick_late_tick_starts_total",
        "Match-ticks that started more than one period after their deadline.",
        late,
    )?;
    m.family(
        "hightick_datagrams_dropped_total",
        Kind::Counter,
        "Received datagrams dropped, by reason.",
    )?;
    for d in &net.drops {
        m.sample(
            "hightick_datagrams_dropped_total",
            &[("reason", &d.reason)],
            d.count,
        )?;
    }
    m.gauge(
        "hightick_results_settling",
        "Finished matches whose result is not yet written (file, outbox).",
        state.settling.pending(),
    )?;
    m.gauge(
        "hightick_results_unacknowledged",
        "Results in the outbox the gateway has not yet acknowledged.",
        state.settling.unacknowledged(),
    )?;
    m.counter(
        "process_cpu_seconds_total",
        "User and system CPU time of the host process.",
        format_args!("{:.3}", process_cpu_seconds()),
    )?;
    m.gauge(
        "process_resident_memory_bytes",
        "Resident memory of the host process.",
        rss_bytes(),
    )?;
    Ok(())
}
