//! `/healthz`, `/metrics` (Prometheus text) and `/openapi.json`.

use std::fmt;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use hightick_telemetry::prometheus::text::{CONTENT_TYPE, Exposition};

use super::answers::Health;
use super::state::Shared;

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "ops",
    summary = "Liveness",
    responses(
        (status = 200, description = "Up, with its uptime", body = Health),
    )
)]
pub(crate) async fn healthz(State(state): State<Shared>) -> Response {
    Json(Health {
        status: "ok",
        uptime_s: state.started.elapsed().as_secs_f64(),
    })
    .into_response()
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "ops",
    summary = "Prometheus metrics (text exposition)",
    responses(
        (status = 200, description = "Metrics", body = String, content_type = "text/plain"),
    )
)]
pub(crate) async fn metrics(State(state): State<Shared>) -> Response {
    let mut text = String::with_capacity(16 * 1024);
    if render_metrics(&state, &mut Exposition::new(&mut text)).is_err() {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "rendering metrics failed",
        )
            .into_response();
    }
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response()
}

fn render_metrics(state: &Shared, m: &mut Exposition<'_, String>) -> fmt::Result {
    state.requests.render(m)?;
    m.counter(
        "hightick_gateway_access_log_dropped_total",
        "Access log lines dropped because its writer was behind.",
        state.access_log.dropped(),
    )?;
    let a = state.logins.snapshot();
    m.gauge(
        "hightick_gateway_login_queue_depth",
        "Logins waiting for an auth worker.",
        a.queue_depth,
    )?;
    m.gauge(
        "hightick_gateway_auth_workers_busy",
        "Auth workers working on a login.",
        a.busy,
    )?;
    m.gauge(
        "hightick_gateway_auth_workers",
        "Size of the auth worker pool.",
        a.workers,
    )?;
    m.counter(
        "hightick_gateway_logins_total",
        "Logins worked on (admitted or refused by the auth worker).",
        a.admitted,
    )?;
    m.counter(
        "hightick_gateway_logins_queued_total",
        "Logins that had to wait in the queue.",
        a.queued_total,
    )?;
    m.counter(
        "hightick_gateway_logins_refused_queue_full_total",
        "Logins refused because the queue was full.",
        a.refused_full,
    )?;
    m.gauge(
        "hightick_gateway_login_tickets",
        "Login tickets held (waiting, working or not yet collected).",
        a.tickets,
    )?;
    state.logins.latency().render(
        m,
        "hightick_gateway_admission_seconds",
        "Time from a login request to its outcome.",
    )?;
    m.gauge(
        "hightick_gateway_matchmaking_queued",
        "Players waiting in matchmaking queues.",
        state.matchmaker.queued(),
    )?;
    state.matchmaker.wait_times().render(
        m,
        "hightick_gateway_matchmaking_wait_seconds",
        "Time from joining a matchmaking queue to a match found, per player.",
    )?;
    m.counter(
        "hightick_gateway_matches_formed_total",
        "Matches allocated on a host.",
        state.matchmaker.formed(),
    )?;
    m.counter(
        "hightick_gateway_allocation_failures_total",
        "Allocation rounds no host accepted.",
        state.matchmaker.failed_allocations(),
    )?;
    let p = state.push.counts();
    m.gauge(
        "hightick_gateway_push_sockets",
        "Push WebSockets open.",
        p.sockets,
    )?;
    m.counter(
        "hightick_gateway_pushes_total",
        "Pushes queued for WebSockets.",
        p.pushed,
    )?;
    m.counter(
        "hightick_gateway_push_dropped_slow_total",
        "Push WebSockets closed because their queue was full (slow readers).",
        p.dropped_slow,
    )?;
    m.counter(
        "hightick_gateway_push_dropped_other_total",
        "Push WebSockets closed for silence, a slow write or chatter.",
        p.dropped_other,
    )?;
    m.counter(
        "hightick_gateway_push_refused_total",
        "Push upgrades refused because the socket limit was reached.",
        p.refused_full,
    )?;
    let c = &state.connections;
    m.counter(
        "hightick_gateway_connections_closed_header_timeout_total",
        "HTTP connections closed because their request headers missed http.header_timeout_ms.",
        c.closed_header_timeout(),
    )?;
    m.counter(
        "hightick_gateway_connections_closed_idle_total",
        "HTTP connections closed after idling http.idle_timeout_s between requests.",
        c.closed_idle(),
    )?;
    m.counter(
        "hightick_gateway_connections_refused_per_ip_total",
        "HTTP connections refused at accept: their address held http.max_connections_per_ip.",
        c.refused_per_ip_total(),
    )?;
    m.counter(
        "hightick_gateway_connections_refused_proxy_header_total",
        "HTTP connections from a trusted proxy closed for a missing or bad PROXY header (http.proxy_protocol).",
        c.refused_proxy_header_total(),
    )?;
    m.counter(
        "hightick_gateway_tls_handshakes_full_total",
        "TLS handshakes completed in full ([tls]).",
        c.tls_full_handshakes(),
    )?;
    m.counter(
        "hightick_gateway_tls_handshakes_resumed_total",
        "TLS handshakes that resumed a session from a ticket ([tls]).",
        c.tls_resumed_handshakes(),
    )?;
    m.counter(
        "hightick_gateway_tls_handshakes_failed_total",
        "TLS handshakes that failed or were abandoned ([tls]).",
        c.tls_failed_handshakes(),
    )?;
    m.counter(
        "hightick_gateway_tls_reloads_total",
        "Times changed [tls] certificate files were read and served since.",
        c.tls_reloads(),
    )?;
    m.counter(
        "hightick_gateway_tls_reload_failures_total",
        "Times changed [tls] certificate files could not be used (the old certificate kept).",
        c.tls_reload_failures(),
    )
}

#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "ops",
    summary = "This document, with the running config's limits",
    responses(
        (status = 200, description = "The OpenAPI document", body = serde_json::Value),
    )
)]
pub(crate) async fn openapi(State(state): State<Shared>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.openapi.clone(),
    )
        .into_response()
}
