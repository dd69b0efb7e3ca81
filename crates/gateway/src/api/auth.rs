//! Logins through the admission queue, login tickets, logout, and the
//! [`Authed`] extractor every player API call checks its session with.

use std::time::Duration;

use axum::Json;
use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hightick_store::StoreError;
use serde::Deserialize;

use super::answers::{LoginQueued, Revoked};
use super::error::{ApiError, JsonBody, query_int};
use super::rules;
use super::state::Shared;
use crate::admission::{Submitted, TicketStatus};
use crate::login::{Elsewhere, Login, LoginJob, LoginOutcome};
use crate::ticket::{LoginTicket, TICKET_LEN};
use hightick_store::clock::now_ms;

/// An authenticated caller: the session token was well signed, unexpired and
/// its store record is live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authed {
    pub account_id: i64,
    pub token_id: String,
}

impl FromRequestParts<Shared> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Shared) -> Result<Self, ApiError> {
        let token = bearer(&parts.headers)?
            .ok_or_else(|| ApiError::unauthorized("missing `Authorization: Bearer` token"))?;
        Self::check(state, token).await
    }
}

/// The bearer token of `headers`, if there is an `Authorization` header.
pub(crate) fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(Some)
        .ok_or_else(|| ApiError::unauthorized("expected `Authorization: Bearer <token>`"))
}

impl Authed {
    /// Checks a session `token`: signature, expiry and the store's record.
    pub(crate) async fn check(state: &Shared, token: &str) -> Result<Self, ApiError> {
        let now = now_ms();
        let claims = state
            .signer
            .verify(token.trim(), now)
            .map_err(|e| ApiError::unauthorized(e.to_string()))?;
        let session = match state.store.session(&claims.token_id).await {
            Ok(s) => s,
            Err(StoreError::NotFound { .. }) => {
                return Err(ApiError::unauthorized("unknown session"));
            }
            Err(e) => return Err(e.into()),
        };
        if session.account_id != claims.account_id || !session.is_valid_at(now) {
            return Err(ApiError::unauthorized("session revoked or expired"));
        }
        Ok(Self {
            account_id: claims.account_id,
            token_id: claims.token_id,
        })
    }
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GuestLogin {
    device_id: String,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Credentials {
    name: String,
    password: String,
}

fn check_credentials(c: &Credentials) -> Result<(), ApiError> {
    rules::NAME.check(&c.name)?;
    rules::PASSWORD.check(&c.password)
}

#[utoipa::path(
    post,
    path = "/v1/auth/guest",
    tag = "auth",
    summary = "Guest login by device id (queued under load)",
    request_body = GuestLogin,
    responses(
        (status = 200, description = "Admitted: the session", body = serde_json::Value),
        (status = 202, description = "Queued: a ticket to poll", body = LoginQueued),
    )
)]
pub(crate) async fn guest(
    State(state): State<Shared>,
    JsonBody(body): JsonBody<GuestLogin>,
) -> Result<Response, ApiError> {
    rules::DEVICE_ID.check(&body.device_id)?;
    submit(
        &state,
        Login::Guest {
            device_id: body.device_id,
        },
    )
    .await
}

#[utoipa::path(
    post,
    path = "/v1/auth/signup",
    tag = "auth",
    summary = "Create a password account and log in",
    request_body = Credentials,
    responses(
        (status = 200, description = "Admitted: the session", body = serde_json::Value),
        (status = 202, description = "Queued: a ticket to poll", body = LoginQueued),
        (status = 409, description = "The name is taken", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn sign_up(
    State(state): State<Shared>,
    JsonBody(body): JsonBody<Credentials>,
) -> Result<Response, ApiError> {
    check_credentials(&body)?;
    let (name, password) = (body.name, body.password);
    submit(&state, Login::SignUp { name, password }).await
}

#[utoipa::path(
    post,
    path = "/v1/auth/login",
    tag = "auth",
    summary = "Password login",
    request_body = Credentials,
    responses(
        (status = 200, description = "Admitted: the session", body = serde_json::Value),
        (status = 202, description = "Queued: a ticket to poll", body = LoginQueued),
        (status = 401, description = "Wrong name or password", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn password_login(
    State(state): State<Shared>,
    JsonBody(body): JsonBody<Credentials>,
) -> Result<Response, ApiError> {
    check_credentials(&body)?;
    let (name, password) = (body.name, body.password);
    submit(&state, Login::Password { name, password }).await
}

async fn submit(state: &Shared, login: Login) -> Result<Response, ApiError> {
    match state.logins.submit(LoginJob::new(login)).await {
        Ok(Submitted::Done(outcome)) => admitted(outcome),
        Ok(Submitted::Queued { ticket, status }) => Ok(waiting(&ticket, &status)),
        Err(full) => Err(ApiError::too_many(
            "the login queue is full",
            full.retry_after_ms.div_ceil(1000),
        )),
    }
}

fn admitted(outcome: LoginOutcome) -> Result<Response, ApiError> {
    Ok(Json(outcome?.body()).into_response())
}

fn waiting(ticket: &str, status: &TicketStatus<LoginOutcome>) -> Response {
    match status {
        TicketStatus::Queued {
            position,
            estimate_ms,
        } => queued(ticket, "queued", *position, *estimate_ms),
        _ => queued(ticket, "working", 0, 0),
    }
}

fn queued(ticket: &str, status: &'static str, position: u64, estimate_ms: u64) -> Response {
    let body = LoginQueued {
        status,
        ticket: ticket.to_owned(),
        position,
        estimate_ms,
        poll: format!("/v1/auth/tickets/{ticket}"),
    };
    (StatusCode::ACCEPTED, Json(body)).into_response()
}

#[utoipa::path(
    get,
    path = "/v1/auth/tickets/{ticket}",
    tag = "auth",
    summary = "Poll (or long-poll) a queued login",
    params(("ticket" = String, Path, description = "The ticket as issued (58 characters; any gateway sharing the session key answers it)"), ("wait_ms" = Option<u64>, Query, description = "Long-poll up to this many milliseconds (at most the config's max_wait_ms)")),
    responses(
        (status = 200, description = "Admitted: the session", body = serde_json::Value),
        (status = 202, description = "Still queued: position and estimate", body = LoginQueued),
        (status = 401, description = "The login was refused", body = super::error::ErrorBody),
        (status = 404, description = "No such ticket (unknown or expired)", body = super::error::ErrorBody),
        (status = 409, description = "The login was refused (name taken)", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn ticket(
    State(state): State<Shared>,
    Path(ticket): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let max = state.config.max_wait_ms;
    let wait = query_int(query.as_deref(), "wait_ms", 0..=max)?.unwrap_or(0);
    if ticket.len() > TICKET_LEN {
        return Err(ApiError::not_found("no such ticket").field("ticket"));
    }
    let wait = Duration::from_millis(wait);
    match state.logins.wait(&ticket, wait).await {
        Some(TicketStatus::Done(outcome)) => admitted(outcome),
        Some(other) => Ok(waiting(&ticket, &other)),
        None => {
            let issued = foreign_ticket(&state, &ticket, "ticket")?;
            elsewhere(&state, &ticket, &issued, wait).await
        }
    }
}

/// A ticket this gateway does not hold, checked against the shared key;
/// 404 naming `field` when it is not one of ours.
pub(crate) fn foreign_ticket(
    state: &Shared,
    ticket: &str,
    field: &str,
) -> Result<LoginTicket, ApiError> {
    state.logins.work().tickets().verify(ticket).map_err(|e| {
        ApiError::not_found(format!("no such ticket (unknown or expired): {e}")).field(field)
    })
}

/// How often a long-poll of another gateway's ticket reads the store: a
/// quarter of the estimated wait left, within these bounds.
const RECHECK_MIN: Duration = Duration::from_millis(250);
const RECHECK_MAX: Duration = Duration::from_secs(2);

/// Pause before the next store read for a ticket estimated `estimate_ms`
/// from done.
pub(crate) fn recheck_after(estimate_ms: u64) -> Duration {
    Duration::from_millis(estimate_ms / 4).clamp(RECHECK_MIN, RECHECK_MAX)
}

/// Answers a ticket issued by another gateway from the store and the
/// ticket's own data, re-reading the store now and then for up to `wait`.
async fn elsewhere(
    state: &Shared,
    text: &str,
    ticket: &LoginTicket,
    wait: Duration,
) -> Result<Response, ApiError> {
    let deadline = tokio::time::Instant::now() + wait;
    let expired = || ApiError::not_found("no such ticket (unknown or expired)").field("ticket");
    loop {
        match state.logins.work().elsewhere(ticket, now_ms()).await? {
            None => return Err(expired()),
            Some(Elsewhere::Admitted(grant)) => return Ok(Json(grant.body()).into_response()),
            Some(Elsewhere::Queued {
                position,
                estimate_ms,
            }) => {
                let now = tokio::time::Instant::now();
                if now >= deadline {
                    return Ok(queued(text, "queued", position, estimate_ms));
                }
                let pause = recheck_after(estimate_ms).min(deadline - now);
                tokio::time::sleep(pause).await;
            }
        }
    }
}

#[utoipa::path(
    post,
    path = "/v1/auth/logout",
    tag = "auth",
    summary = "End this session",
    security(("session" = [])),
    responses(
        (status = 200, description = "Revoked", body = Revoked),
    )
)]
pub(crate) async fn logout(State(state): State<Shared>, who: Authed) -> Result<Response, ApiError> {
    state.store.revoke_session(&who.token_id).await?;
    Ok(Json(Revoked { revoked: true }).into_response())
}
