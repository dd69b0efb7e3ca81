//! `/healthz`, `/metrics` (Prometheus text) and `/openapi.json`.

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{OPENAPI, Shared};
use crate::metrics::single;

pub(crate) async fn healthz(State(state): State<Shared>) -> Response {
    Json(json!({
        "status": "ok",
        "uptime_s": state.started.elapsed().as_secs_f64(),
    }))
    .into_response()
}

pub(crate) async fn metrics(State(state): State<Shared>) -> Response {
    let mut text = String::with_capacity(16 * 1024);
    state.requests.render(&mut text);
    let a = state.logins.snapshot();
    single(
        &mut text,
        "hightick_gateway_login_queue_depth",
        "gauge",
        "Logins waiting for an auth worker.",
        a.queue_depth,
    );
    single(
        &mut text,
        "hightick_gateway_auth_workers_busy",
        "gauge",
        "Auth workers working on a login.",
        a.busy,
    );
    single(
        &mut text,
        "hightick_gateway_auth_workers",
        "gauge",
        "Size of the auth worker pool.",
        a.workers,
    );
    single(
        &mut text,
        "hightick_gateway_logins_total",
        "counter",
        "Logins worked on (admitted or refused by the auth worker).",
        a.admitted,
    );
    single(
        &mut text,
        "hightick_gateway_logins_queued_total",
        "counter",
        "Logins that had to wait in the queue.",
        a.queued_total,
    );
    single(
        &mut text,
        "hightick_gateway_logins_refused_queue_full_total",
        "counter",
        "Logins refused because the queue was full.",
        a.refused_full,
    );
    single(
        &mut text,
        "hightick_gateway_login_tickets",
        "gauge",
        "Login tickets held (waiting, working or not yet collected).",
        a.tickets,
    );
    state.logins.latency().render(
        &mut text,
        "hightick_gateway_admission_seconds",
        "Time from a login request to its outcome.",
    );
    single(
        &mut text,
        "hightick_gateway_matchmaking_queued",
        "gauge",
        "Players waiting in matchmaking queues.",
        state.matchmaker.queued(),
    );
    single(
        &mut text,
        "hightick_gateway_matches_formed_total",
        "counter",
        "Matches allocated on a host.",
        state.matchmaker.formed(),
    );
    single(
        &mut text,
        "hightick_gateway_allocation_failures_total",
        "counter",
        "Allocation rounds no host accepted.",
        state.matchmaker.failed_allocations(),
    );
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

pub(crate) async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}
