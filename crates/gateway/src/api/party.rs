//! Parties: players who queue together and land on one team. Create one (its
//! code is what friends join by), join by code, leave, see yours; the leader
//! queues it with `POST /v1/matchmaking/tickets` and `"party": true`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hightick_store::{Party, StoreError};
use serde::Deserialize;
use serde_json::json;

use super::auth::Authed;
use super::{ApiError, JsonBody, Shared};

/// Letters of a party code (no 0/O or 1/I to misread).
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
/// Characters in a party code.
const CODE_LEN: usize = 6;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JoinParty {
    code: String,
}

fn body(party: &Party) -> Response {
    Json(json!({
        "party_id": party.party_id,
        "code": party.code,
        "leader": party.leader,
        "members": party.members,
    }))
    .into_response()
}

fn new_code() -> String {
    let mut bytes = [0u8; CODE_LEN];
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
            Ok(party) => return Ok((StatusCode::CREATED, body(&party)).into_response()),
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
pub(crate) async fn join(
    State(state): State<Shared>,
    who: Authed,
    JsonBody(request): JsonBody<JoinParty>,
) -> Result<Response, ApiError> {
    if request.code.len() != CODE_LEN || !request.code.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
        return Err(ApiError::invalid(
            "code",
            "code: 6 characters of A-Z and 2-9 (no I, O, 0, 1)",
        ));
    }
    let max = state.config.matchmaking.max_party_size as i64;
    match state
        .store
        .party_join(who.account_id, &request.code, max)
        .await
    {
        Ok(party) => Ok(body(&party)),
        Err(StoreError::NotFound { .. }) => {
            Err(ApiError::not_found("no party with that code").field("code"))
        }
        Err(StoreError::Conflict { what }) => Err(conflict(what)),
        Err(e) => Err(e.into()),
    }
}

/// `POST /v1/parties/leave`: leaves the caller's party.
pub(crate) async fn leave(State(state): State<Shared>, who: Authed) -> Result<Response, ApiError> {
    if state.store.party_leave(who.account_id).await? {
        Ok(Json(json!({ "left": true })).into_response())
    } else {
        Err(ApiError::not_found("not in a party").field("party"))
    }
}

/// `GET /v1/parties/me`: the caller's party.
pub(crate) async fn mine(State(state): State<Shared>, who: Authed) -> Result<Response, ApiError> {
    match state.store.party(who.account_id).await? {
        Some(party) => Ok(body(&party)),
        None => Err(ApiError::not_found("not in a party").field("party")),
    }
}
