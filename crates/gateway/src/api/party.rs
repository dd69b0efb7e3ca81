//! Parties: players who queue together and land on one team. Create one (its
//! code is what friends join by), join by code, leave, see yours; the leader
//! queues it with `POST /v1/matchmaking/tickets` and `"party": true`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hightick_store::{Party, StoreError};
use serde::Deserialize;

use super::answers::{Left, PartyBody};
use super::auth::Authed;
use super::error::{ApiError, JsonBody};
use super::rules::PARTY_CODE;
use super::state::Shared;

/// Letters of a party code (no 0/O or 1/I to misread): [`PARTY_CODE`]'s class.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct JoinParty {
    code: String,
}

fn body(party: Party) -> Response {
    Json(PartyBody::from(party)).into_response()
}

fn new_code() -> String {
    let mut bytes = [0u8; PARTY_CODE.max];
    rand::fill(&mut bytes);
    bytes
        .iter()
        .map(|b| char::from(CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()]))
        .collect()
}

fn conflict(what: &'static str) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, "party", format!("party: {what}")).field("party")
}

/// `POST /v1/parties`: a new party led by the caller.
#[utoipa::path(
    post,
    path = "/v1/parties",
    operation_id = "create_party",
    tag = "play",
    summary = "Create a party led by the caller",
    security(("session" = [])),
    responses(
        (status = 201, description = "The new party and its code", body = PartyBody),
        (status = 409, description = "The caller is already in a party", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn create(State(state): State<Shared>, who: Authed) -> Result<Response, ApiError> {
    // A code clash is rare (32^6); one retry with a fresh code.
    for _ in 0..2 {
        let mut id = [0u8; 12];
        rand::fill(&mut id);
        let party_id = format!("p-{}", hex::encode(id));
        match state
            .store
            .party_create(who.account_id, &party_id, &new_code())
            .await
        {
            Ok(party) => return Ok((StatusCode::CREATED, body(party)).into_response()),
            Err(StoreError::Conflict {
                what: "party code taken",
            }) => {}
            Err(StoreError::Conflict { what }) => return Err(conflict(what)),
            Err(e) => return Err(e.into()),
        }
    }
    Err(conflict("party code taken"))
}

/// `POST /v1/parties/join`: joins the party with `code`.
#[utoipa::path(
    post,
    path = "/v1/parties/join",
    operation_id = "join_party",
    tag = "play",
    summary = "Join a party by its code",
    request_body = JoinParty,
    security(("session" = [])),
    responses(
        (status = 200, description = "The party joined", body = PartyBody),
        (status = 404, description = "No party with that code", body = super::error::ErrorBody),
        (status = 409, description = "Already in a party, or the party is full or queued", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn join(
    State(state): State<Shared>,
    who: Authed,
    JsonBody(request): JsonBody<JoinParty>,
) -> Result<Response, ApiError> {
    PARTY_CODE.check(&request.code)?;
    let max = state.config.matchmaking.max_party_size as i64;
    match state
        .store
        .party_join(who.account_id, &request.code, max)
        .await
    {
        Ok(party) => Ok(body(party)),
        Err(StoreError::NotFound { .. }) => {
            Err(ApiError::not_found("no party with that code").field("code"))
        }
        Err(StoreError::Conflict { what }) => Err(conflict(what)),
        Err(e) => Err(e.into()),
    }
}

/// `POST /v1/parties/leave`: leaves the caller's party.
#[utoipa::path(
    post,
    path = "/v1/parties/leave",
    operation_id = "leave_party",
    tag = "play",
    summary = "Leave the caller's party",
    security(("session" = [])),
    responses(
        (status = 200, description = "Left", body = Left),
        (status = 404, description = "Not in a party", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn leave(State(state): State<Shared>, who: Authed) -> Result<Response, ApiError> {
    if state.store.party_leave(who.account_id).await? {
        Ok(Json(Left { left: true }).into_response())
    } else {
        Err(ApiError::not_found("not in a party").field("party"))
    }
}

/// `GET /v1/parties/me`: the caller's party.
#[utoipa::path(
    get,
    path = "/v1/parties/me",
    operation_id = "my_party",
    tag = "play",
    summary = "The caller's party",
    security(("session" = [])),
    responses(
        (status = 200, description = "The party", body = PartyBody),
        (status = 404, description = "Not in a party", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn mine(State(state): State<Shared>, who: Authed) -> Result<Response, ApiError> {
    match state.store.party(who.account_id).await? {
        Some(party) => Ok(body(party)),
        None => Err(ApiError::not_found("not in a party").field("party")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_drawn_from_the_rule_s_own_letters() {
        assert_eq!(CODE_ALPHABET.len(), 32);
        assert!(
            CODE_ALPHABET
                .iter()
                .all(|&b| PARTY_CODE.chars.allows(char::from(b)))
        );
        for _ in 0..100 {
            assert!(PARTY_CODE.check(&new_code()).is_ok());
        }
    }
}
