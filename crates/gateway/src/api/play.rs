//! Matchmaking tickets: join a mode's queue, poll (or long-poll) for the
//! match and its connect token, leave; and rejoining a running match with a
//! fresh connect token.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::answers::Cancelled;
use super::auth::Authed;
use super::error::{ApiError, JsonBody, query_int};
use super::rules;
use super::state::Shared;
use crate::matchmaking::{MatchStatus, MatchmakingError, RejoinError};

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Join {
    mode: String,
    /// Preferred host region, a host's region tag (any region after the
    /// configured wait; empty: none).
    #[serde(default)]
    region: String,
    /// Queue the caller's party (the caller leads it) instead of the caller.
    #[serde(default)]
    party: bool,
}

/// The answer to a refused join, cancel or status.
pub(crate) fn refused(state: &Shared, e: MatchmakingError) -> ApiError {
    match e {
        MatchmakingError::UnknownMode => {
            let known: Vec<&str> = state.config.modes.iter().map(|m| m.name.as_str()).collect();
            ApiError::invalid(
                "mode",
                format!("mode: unknown (known: {})", known.join(", ")),
            )
        }
        MatchmakingError::NotWaiting => ApiError::new(
            StatusCode::CONFLICT,
            "not_waiting",
            "the ticket is being matched or already matched",
        )
        .field("ticket"),
        MatchmakingError::Party(why) => {
            ApiError::new(StatusCode::CONFLICT, "party", format!("party: {why}")).field("party")
        }
        MatchmakingError::Store(e) => e.into(),
    }
}

fn view(ticket: &str, status: &MatchStatus) -> Response {
    let code = match status {
        MatchStatus::Matched(_) => StatusCode::OK,
        MatchStatus::Queued { .. } | MatchStatus::Forming => StatusCode::ACCEPTED,
    };
    (code, Json(status.body(ticket))).into_response()
}

#[utoipa::path(
    post,
    path = "/v1/matchmaking/tickets",
    tag = "play",
    summary = "Queue for a mode",
    request_body = Join,
    security(("session" = [])),
    responses(
        (status = 200, description = "Matched: the assignment with a connect token", body = serde_json::Value),
        (status = 202, description = "Queued: the ticket to poll", body = serde_json::Value),
        (status = 404, description = "The ticket was gone before its first status", body = super::error::ErrorBody),
        (status = 409, description = "`party: true` and the party cannot queue: the player is in no party or not its leader, the party is larger than a team, or a member is already queued", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn join(
    State(state): State<Shared>,
    who: Authed,
    JsonBody(body): JsonBody<Join>,
) -> Result<Response, ApiError> {
    rules::REGION.check(&body.region)?;
    let joined = if body.party {
        state
            .matchmaker
            .join_party(who.account_id, &body.mode, &body.region)
            .await
    } else {
        state
            .matchmaker
            .join(who.account_id, &body.mode, &body.region)
            .await
    };
    let ticket = joined.map_err(|e| refused(&state, e))?;
    let status = state
        .matchmaker
        .status(who.account_id, &ticket)
        .await
        .map_err(|e| refused(&state, e))?
        .ok_or_else(|| ApiError::not_found("no such ticket").field("ticket"))?;
    Ok(view(&ticket, &status))
}

#[utoipa::path(
    get,
    path = "/v1/matchmaking/tickets/{ticket}",
    tag = "play",
    summary = "Poll (or long-poll) a matchmaking ticket",
    params(("ticket" = String, Path, description = "The ticket as issued"), ("wait_ms" = Option<u64>, Query, description = "Long-poll up to this many milliseconds (at most the config's max_wait_ms)")),
    security(("session" = [])),
    responses(
        (status = 200, description = "Matched: the assignment with a connect token", body = serde_json::Value),
        (status = 202, description = "Still queued or forming", body = serde_json::Value),
        (status = 404, description = "No such ticket", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn status(
    State(state): State<Shared>,
    who: Authed,
    Path(ticket): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let max = state.config.max_wait_ms;
    let wait = query_int(query.as_deref(), "wait_ms", 0..=max)?.unwrap_or(0);
    let status = state
        .matchmaker
        .wait(who.account_id, &ticket, Duration::from_millis(wait))
        .await
        .map_err(|e| refused(&state, e))?
        .ok_or_else(|| ApiError::not_found("no such ticket").field("ticket"))?;
    Ok(view(&ticket, &status))
}

#[utoipa::path(
    delete,
    path = "/v1/matchmaking/tickets/{ticket}",
    tag = "play",
    summary = "Leave the queue",
    params(("ticket" = String, Path, description = "The ticket as issued")),
    security(("session" = [])),
    responses(
        (status = 200, description = "Cancelled", body = Cancelled),
        (status = 404, description = "No such ticket", body = super::error::ErrorBody),
        (status = 409, description = "Already being matched or matched", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn cancel(
    State(state): State<Shared>,
    who: Authed,
    Path(ticket): Path<String>,
) -> Result<Response, ApiError> {
    match state.matchmaker.cancel(who.account_id, &ticket).await {
        Ok(true) => Ok(Json(Cancelled { cancelled: true }).into_response()),
        Ok(false) => Err(ApiError::not_found("no such ticket").field("ticket")),
        Err(e) => Err(refused(&state, e)),
    }
}

/// `POST /v1/matches/{match_id}/rejoin`: a fresh connect token to the same
/// host, match and seat, for a player whose connection died (it may come
/// from any address; the host hands it the seat with full state).
#[utoipa::path(
    post,
    path = "/v1/matches/{match_id}/rejoin",
    tag = "play",
    summary = "A fresh connect token to the caller's seat in a running match",
    params(("match_id" = String, Path, description = "The match id")),
    security(("session" = [])),
    responses(
        (status = 200, description = "The assignment with a fresh connect token", body = serde_json::Value),
        (status = 403, description = "The caller holds no seat in that match", body = super::error::ErrorBody),
        (status = 404, description = "No such match running", body = super::error::ErrorBody),
        (status = 500, description = "No connect token could be made", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn rejoin(
    State(state): State<Shared>,
    who: Authed,
    Path(match_id): Path<String>,
) -> Result<Response, ApiError> {
    match state.matchmaker.rejoin(who.account_id, &match_id).await {
        Ok(assignment) => Ok(Json(assignment).into_response()),
        Err(RejoinError::NoMatch) => {
            Err(ApiError::not_found("no such match running (unknown or over)").field("match_id"))
        }
        Err(RejoinError::NotInMatch) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "not_in_match",
            "the account holds no seat in that match",
        )
        .field("match_id")),
        Err(RejoinError::Token) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "token",
            "no connect token could be made",
        )),
        Err(RejoinError::Store(e)) => Err(e.into()),
    }
}
