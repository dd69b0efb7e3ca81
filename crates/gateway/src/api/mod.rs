//! The HTTP API: the shared state, the route table (every route is added
//! through [`RouteTable`], which remembers it, so a test can check each one is
//! in the OpenAPI document), and the layer every route runs under (per-IP
//! rate limit, requests counted by route and status).

mod answers;
mod auth;
mod error;
mod events;
mod meta;
mod ops;
mod party;
mod play;
mod push_socket;
mod rules;
mod schema;
mod servers;
mod state;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};

pub use error::{ApiError, ErrorBody, JsonBody, parse_json, query_int};
pub(crate) use state::{AppState, Shared};

pub use schema::document as openapi_document;

/// A router plus the (method, path) of every route added to it.
#[derive(Debug)]
pub struct RouteTable<S> {
    router: Router<S>,
    routes: Vec<(&'static str, &'static str)>,
}

impl<S: Clone + Send + Sync + 'static> RouteTable<S> {
    fn new() -> Self {
        Self {
            router: Router::new(),
            routes: Vec::new(),
        }
    }

    /// Adds `path` answering `methods` (upper-case names) with `handler`.
    fn route(
        mut self,
        path: &'static str,
        methods: &[&'static str],
        handler: MethodRouter<S>,
    ) -> Self {
        self.router = self.router.route(path, handler);
        self.routes.extend(methods.iter().map(|m| (*m, path)));
        self
    }
}

/// Every route of the API as (method, path template).
pub fn routes() -> Vec<(&'static str, &'static str)> {
    table().routes
}

fn table() -> RouteTable<Shared> {
    RouteTable::new()
        .route("/healthz", &["GET"], get(ops::healthz))
        .route("/metrics", &["GET"], get(ops::metrics))
        .route("/openapi.json", &["GET"], get(ops::openapi))
        .route("/v1/auth/guest", &["POST"], post(auth::guest))
        .route("/v1/auth/signup", &["POST"], post(auth::sign_up))
        .route("/v1/auth/login", &["POST"], post(auth::password_login))
        .route("/v1/auth/tickets/{ticket}", &["GET"], get(auth::ticket))
        .route("/v1/auth/logout", &["POST"], post(auth::logout))
        .route(
            "/v1/me/profile",
            &["GET", "PUT"],
            get(meta::profile).put(meta::rename),
        )
        .route("/v1/me/inventory", &["GET"], get(meta::inventory))
        .route("/v1/me/purchases", &["POST"], post(meta::purchase))
        .route("/v1/me/matches", &["GET"], get(meta::matches))
        .route("/v1/shop", &["GET"], get(meta::shop))
        .route("/v1/leaderboard", &["GET"], get(meta::leaderboard))
        .route("/v1/matchmaking/tickets", &["POST"], post(play::join))
        .route(
            "/v1/matchmaking/tickets/{ticket}",
            &["GET", "DELETE"],
            get(play::status).delete(play::cancel),
        )
        .route(
            "/v1/matches/{match_id}/rejoin",
            &["POST"],
            post(play::rejoin),
        )
        .route(
            "/v1/hosts",
            &["GET", "POST"],
            get(servers::hosts).post(servers::heartbeat),
        )
        .route("/v1/parties", &["POST"], post(party::create))
        .route("/v1/parties/join", &["POST"], post(party::join))
        .route("/v1/parties/leave", &["POST"], post(party::leave))
        .route("/v1/parties/me", &["GET"], get(party::mine))
        .route("/v1/results", &["POST"], post(servers::result))
        .route("/v1/events", &["GET"], get(events::events))
}

/// The API router over `state`.
pub(crate) fn router(state: Shared) -> Router {
    let limit = state.config.body_limit_bytes;
    table()
        .router
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            track,
        ))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

async fn not_found(State(state): State<Shared>) -> Response {
    state.requests.record("unmatched", 404);
    ApiError::not_found("no such endpoint").into_response()
}

/// Rate limit by client IP (API routes only; behind a trusted proxy, the
/// address it forwarded), then count the answer and log it.
async fn track(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let method = request.method().clone();
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let ip = request
        .extensions()
        .get::<crate::listen::ClientIp>()
        .map(|c| c.0);
    let limited = route.starts_with("/v1/");
    let response = match ip {
        Some(ip) if limited => match state.rate_limit.take(ip, started) {
            Ok(()) => next.run(request).await,
            Err(wait) => ApiError::too_many(
                "too many requests from this address",
                wait.as_secs_f64().ceil() as u64,
            )
            .into_response(),
        },
        _ => next.run(request).await,
    };
    let status = response.status();
    state.requests.record(&route, status.as_u16());
    if let Some(client) = ip.or(peer.map(|p| p.ip())) {
        let entry = crate::access_log::Entry {
            client,
            peer,
            method: method.as_str(),
            route: &route,
            status: status.as_u16(),
            elapsed: started.elapsed(),
        };
        state.access_log.record(&entry);
    }
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return ApiError::new(status, "method_not_allowed", "method not allowed").into_response();
    }
    response
}
