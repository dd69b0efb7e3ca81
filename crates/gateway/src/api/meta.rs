//! The meta-game API: profile, inventory, shop and purchases, match history,
//! leaderboard. Every call runs as the session's account.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use hightick_store::PurchaseRequest;
use serde::Deserialize;

use super::answers::{
    Catalog, HistoryLine, Inventory, Leaderboard, LeaderboardLine, MatchHistory, Price, Profile,
    ProfileName, Receipt,
};
use super::auth::Authed;
use super::error::{ApiError, JsonBody, query_int};
use super::rules;
use super::state::Shared;

/// Leaderboard lines shown.
const TOP: i64 = 100;

#[utoipa::path(
    get,
    path = "/v1/me/profile",
    tag = "meta",
    summary = "The caller's profile, balance and stats",
    security(("session" = [])),
    responses(
        (status = 200, description = "The profile", body = Profile),
    )
)]
pub(crate) async fn profile(
    State(state): State<Shared>,
    who: Authed,
) -> Result<Response, ApiError> {
    let card = state.store.player_card(who.account_id).await?;
    Ok(Json(Profile::from(card)).into_response())
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rename {
    display_name: String,
}

#[utoipa::path(
    put,
    path = "/v1/me/profile",
    tag = "meta",
    summary = "Set the caller's display name",
    request_body = Rename,
    security(("session" = [])),
    responses(
        (status = 200, description = "The new name", body = ProfileName),
    )
)]
pub(crate) async fn rename(
    State(state): State<Shared>,
    who: Authed,
    JsonBody(body): JsonBody<Rename>,
) -> Result<Response, ApiError> {
    rules::DISPLAY_NAME.check(&body.display_name)?;
    let p = state
        .store
        .set_display_name(who.account_id, &body.display_name)
        .await?;
    Ok(Json(ProfileName::from(p)).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/me/inventory",
    tag = "meta",
    summary = "The caller's items and balance",
    security(("session" = [])),
    responses(
        (status = 200, description = "Items and balance", body = Inventory),
    )
)]
pub(crate) async fn inventory(
    State(state): State<Shared>,
    who: Authed,
) -> Result<Response, ApiError> {
    let items = state.store.inventory(who.account_id).await?;
    let balance = state.store.balance(who.account_id).await?;
    Ok(Json(Inventory::new(balance, items)).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/shop",
    tag = "meta",
    summary = "What the shop sells, with prices",
    responses(
        (status = 200, description = "The catalog", body = Catalog),
    )
)]
pub(crate) async fn shop(State(state): State<Shared>) -> Response {
    let items = state
        .config
        .catalog
        .iter()
        .map(|c| Price {
            item_id: c.item_id.clone(),
            price: c.price,
        })
        .collect();
    Json(Catalog { items }).into_response()
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Purchase {
    item_id: String,
    quantity: i64,
    idempotency_key: String,
}

#[utoipa::path(
    post,
    path = "/v1/me/purchases",
    tag = "meta",
    summary = "Buy an item (idempotent by key)",
    request_body = Purchase,
    security(("session" = [])),
    responses(
        (status = 200, description = "The receipt (replayed: true for a retry)", body = Receipt),
        (status = 404, description = "The shop does not sell the item", body = super::error::ErrorBody),
        (status = 409, description = "Out of coins, or the key was used for another purchase", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn purchase(
    State(state): State<Shared>,
    who: Authed,
    JsonBody(body): JsonBody<Purchase>,
) -> Result<Response, ApiError> {
    rules::IDEMPOTENCY_KEY.check(&body.idempotency_key)?;
    // A malformed id is a 400; a well-formed one the shop does not sell, 404.
    rules::ITEM_ID.check(&body.item_id)?;
    rules::QUANTITY.check(body.quantity)?;
    let unit_price = state.config.price(&body.item_id).ok_or_else(|| {
        ApiError::not_found("item_id: the shop does not sell it").field("item_id")
    })?;
    let receipt = state
        .store
        .purchase(&PurchaseRequest {
            account_id: who.account_id,
            idempotency_key: body.idempotency_key,
            item_id: body.item_id,
            quantity: body.quantity,
            unit_price,
        })
        .await?;
    Ok(Json(Receipt::from(receipt)).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/me/matches",
    tag = "meta",
    summary = "The caller's match history, newest first",
    params(("limit" = Option<u64>, Query, description = "Lines to return (default 20)")),
    security(("session" = [])),
    responses(
        (status = 200, description = "The history", body = MatchHistory),
    )
)]
pub(crate) async fn matches(
    State(state): State<Shared>,
    who: Authed,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let limit = query_int(
        query.as_deref(),
        rules::LIMIT.field,
        rules::LIMIT.unsigned(),
    )?
    .unwrap_or(20);
    let history = state
        .store
        .match_history(who.account_id, limit as i64)
        .await?;
    let matches = history.iter().map(HistoryLine::from).collect();
    Ok(Json(MatchHistory { matches }).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/leaderboard",
    tag = "meta",
    summary = "The top 100 by rating and the caller's rank",
    security(("session" = [])),
    responses(
        (status = 200, description = "Top and the caller's line", body = Leaderboard),
    )
)]
pub(crate) async fn leaderboard(
    State(state): State<Shared>,
    who: Authed,
) -> Result<Response, ApiError> {
    let (top, me) = tokio::try_join!(
        state.store.leaderboard(TOP),
        state.store.rank(who.account_id),
    )?;
    Ok(Json(Leaderboard {
        top: top.iter().map(LeaderboardLine::from).collect(),
        me: me.as_ref().map(LeaderboardLine::from),
    })
    .into_response())
}
