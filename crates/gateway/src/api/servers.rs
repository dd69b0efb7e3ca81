//! The side of the API server hosts call, authenticated with the shared
//! server secret (`Authorization: Bearer <secret>`): register and heartbeat
//! (host id, capacity, load, draining, region; into the store's registry, so
//! any gateway replica will do), list the hosts, and post match results
//! (stored idempotently by match id through the batching writer; a player's
//! reward, when the host names none, is the gateway's reward policy for the
//! outcome).

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use hightick_host_api::{Heartbeat, MatchResult};
use hightick_store::{MatchPlayer, MatchRecorded, Write, WriteAck};

use super::answers::{HostList, Recorded, Registered};
use super::error::{ApiError, JsonBody};
use super::rules;
use super::state::Shared;
use crate::hosts::HostReport;
use hightick_config::bearer_matches;
use hightick_store::clock::now_ms;

/// A caller that presented the server secret.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServerAuth;

impl FromRequestParts<Shared> for ServerAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Shared) -> Result<Self, ApiError> {
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match bearer_matches(authorization, &state.server_secret) {
            Some(true) => Ok(Self),
            Some(false) => Err(ApiError::unauthorized("wrong server secret")),
            None => Err(ApiError::unauthorized("missing server secret")),
        }
    }
}

#[utoipa::path(
    post,
    path = "/v1/hosts",
    tag = "servers",
    summary = "Register a host or heartbeat its capacity, load and state",
    request_body = Heartbeat,
    security(("server" = [])),
    responses(
        (status = 200, description = "Registered", body = Registered),
    )
)]
pub(crate) async fn heartbeat(
    State(state): State<Shared>,
    _: ServerAuth,
    JsonBody(body): JsonBody<Heartbeat>,
) -> Result<Response, ApiError> {
    rules::CAPACITY.check(i64::try_from(body.capacity).unwrap_or(i64::MAX))?;
    if body.active > body.capacity {
        return Err(ApiError::invalid(
            "active",
            "active: must not exceed capacity",
        ));
    }
    if body.admin.ip().is_unspecified() || body.admin.port() == 0 {
        return Err(ApiError::invalid(
            "admin",
            "admin: needs a concrete address and port",
        ));
    }
    let host_id = body.host_id.unwrap_or_else(|| body.admin.to_string());
    rules::HOST_ID.check(&host_id)?;
    rules::REGION.check(&body.region)?;
    rules::GAME.check(&body.game)?;
    state
        .hosts
        .heartbeat(
            HostReport {
                host_id,
                admin: body.admin,
                capacity: body.capacity,
                active: body.active,
                draining: body.draining,
                region: body.region,
                game: body.game,
            },
            now_ms(),
        )
        .await?;
    Ok(Json(Registered {
        registered: true,
        heartbeat_within_s: state.config.host_timeout_s,
    })
    .into_response())
}

#[utoipa::path(
    get,
    path = "/v1/hosts",
    tag = "servers",
    summary = "Every host the gateways know: configured and registered",
    security(("server" = [])),
    responses(
        (status = 200, description = "The hosts", body = HostList),
    )
)]
pub(crate) async fn hosts(
    State(state): State<Shared>,
    _: ServerAuth,
) -> Result<Response, ApiError> {
    Ok(Json(HostList {
        hosts: state.hosts.list(now_ms()).await?,
    })
    .into_response())
}

/// The store's row of a host's result: a player's reward, when the host
/// names none, is `rewards`' for the outcome (0 in an abandoned match).
fn stored_result(
    body: MatchResult,
    rewards: &crate::config::RewardPolicy,
) -> Result<hightick_store::MatchResult, ApiError> {
    let players = body
        .players
        .into_iter()
        .map(|p| {
            // Above i64::MAX: no account has that id.
            let account_id = i64::try_from(p.account_id)
                .map_err(|_| ApiError::not_found(format!("account {} not found", p.account_id)))?;
            let reward = match (p.reward, body.abandoned) {
                (Some(reward), _) => reward,
                (None, true) => 0,
                (None, false) => rewards.for_outcome(p.outcome),
            };
            Ok(MatchPlayer {
                account_id,
                team: p.team,
                score: p.score,
                outcome: p.outcome,
                reward,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(hightick_store::MatchResult {
        match_id: body.match_id,
        mode: body.mode,
        players,
    })
}

#[utoipa::path(
    post,
    path = "/v1/results",
    tag = "servers",
    summary = "Record a finished match's result (idempotent by match id)",
    request_body = MatchResult,
    security(("server" = [])),
    responses(
        (status = 200, description = "Recorded (recorded: false for a repeat)", body = Recorded),
        (status = 404, description = "An account in it does not exist", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn result(
    State(state): State<Shared>,
    _: ServerAuth,
    JsonBody(body): JsonBody<MatchResult>,
) -> Result<Response, ApiError> {
    rules::MATCH_ID.check(&body.match_id)?;
    rules::RESULT_MODE.check(&body.mode)?;
    rules::PLAYERS.check(body.players.len())?;
    for p in &body.players {
        rules::SCORE.check(p.score)?;
        if let Some(reward) = p.reward {
            rules::REWARD.check(reward)?;
        }
    }
    let result = stored_result(body, &state.config.rewards)?;
    // Checked here so a bad result is refused before it reaches the writer.
    result.validate()?;
    let match_id = result.match_id.clone();
    let ack = state.results.submit(Write::MatchResult(result)).await?;
    // Over: its players cannot rejoin it any more.
    state.matchmaker.match_over(&match_id).await?;
    let recorded = matches!(ack, WriteAck::Match(MatchRecorded::Recorded));
    #[cfg(feature = "fault-injection")]
    if recorded && state.faults.crash_after_result_commit {
        // Injected by a test: die between the commit and the reply, as a
        // crash would.
        // SAFETY: getpid and kill have no memory-safety preconditions.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
    Ok(Json(Recorded { match_id, recorded }).into_response())
}
