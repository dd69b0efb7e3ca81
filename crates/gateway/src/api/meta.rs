//! The meta-game API: profile, inventory, shop and purchases, match history,
//! leaderboard. Every call runs as the session's account.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use hightick_store::{LeaderboardEntry, PurchaseRequest};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::Authed;
use super::rules;
use super::{ApiError, JsonBody, Shared, query_int};

/// Leaderboard lines shown.
const TOP: i64 = 100;

#[utoipa::path(
    get,
    path = "/v1/me/profile",
    tag = "meta",
    summary = "The caller's profile, balance and stats",
    security(("session" = [])),
    responses(
        (status = 200, description = "The profile", body = serde_json::Value),
    )
)]
pub(crate) async fn profile(
    State(state): State<Shared>,
    who: Authed,
) -> Result<Response, ApiError> {
    let id = who.account_id;
    let card = state.store.player_card(id).await?;
    let (account, profile, stats) = (card.account, card.profile, card.stats);
    Ok(Json(json!({
        "account_id": id,
        "guest": account.device_id.is_some(),
        "name": account.name,
        "display_name": profile.display_name,
        "xp": profile.xp,
        "balance": account.balance,
        "stats": {
            "matches_played": stats.matches_played,
            "wins": stats.wins,
            "losses": stats.losses,
            "draws": stats.draws,
            "score_total": stats.score_total,
            "rating": stats.rating,
        },
    }))
    .into_response())
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
        (status = 200, description = "The new name", body = serde_json::Value),
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
    Ok(Json(json!({
        "account_id": p.account_id,
        "display_name": p.display_name,
        "xp": p.xp,
    }))
    .into_response())
}

#[utoipa::path(
    get,
    path = "/v1/me/inventory",
    tag = "meta",
    summary = "The caller's items and balance",
    security(("session" = [])),
    responses(
        (status = 200, description = "Items and balance", body = serde_json::Value),
    )
)]
pub(crate) async fn inventory(
    State(state): State<Shared>,
    who: Authed,
) -> Result<Response, ApiError> {
    let items = state.store.inventory(who.account_id).await?;
    let balance = state.store.balance(who.account_id).await?;
    let items: Vec<Value> = items
        .iter()
        .map(|i| json!({ "item_id": i.item_id, "quantity": i.quantity }))
        .collect();
    Ok(Json(json!({ "balance": balance, "items": items })).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/shop",
    tag = "meta",
    summary = "What the shop sells, with prices",
    responses(
        (status = 200, description = "The catalog", body = serde_json::Value),
    )
)]
pub(crate) async fn shop(State(state): State<Shared>) -> Response {
    let items: Vec<Value> = state
        .config
        .catalog
        .iter()
        .map(|c| json!({ "item_id": c.item_id, "price": c.price }))
        .collect();
    Json(json!({ "items": items })).into_response()
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
        (status = 200, description = "The receipt (replayed: true for a retry)", body = serde_json::Value),
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
    Ok(Json(json!({
        "idempotency_key": receipt.idempotency_key,
        "item_id": receipt.item_id,
        "quantity": receipt.quantity,
        "cost": receipt.cost,
        "balance_after": receipt.balance_after,
        "replayed": receipt.replayed,
    }))
    .into_response())
}

#[utoipa::path(
    get,
    path = "/v1/me/matches",
    tag = "meta",
    summary = "The caller's match history, newest first",
    params(("limit" = Option<u64>, Query, description = "Lines to return (default 20)")),
    security(("session" = [])),
    responses(
        (status = 200, description = "The history", body = serde_json::Value),
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
    let lines: Vec<Value> = history
        .iter()
        .map(|m| {
            json!({
                "match_id": m.match_id,
                "mode": m.mode,
                "recorded_at_ms": m.recorded_at_ms,
                "team": m.team,
                "score": m.score,
                "outcome": m.outcome.as_str(),
                "reward": m.reward,
                "rating_before": m.rating_before,
                "rating_after": m.rating_after,
            })
        })
        .collect();
    Ok(Json(json!({ "matches": lines })).into_response())
}

fn line(e: &LeaderboardEntry) -> Value {
    json!({
        "rank": e.rank,
        "account_id": e.account_id,
        "display_name": e.display_name,
        "rating": e.rating,
        "matches_played": e.matches_played,
    })
}

#[utoipa::path(
    get,
    path = "/v1/leaderboard",
    tag = "meta",
    summary = "The top 100 by rating and the caller's rank",
    security(("session" = [])),
    responses(
        (status = 200, description = "Top and the caller's line", body = serde_json::Value),
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
    let top: Vec<Value> = top.iter().map(line).collect();
    Ok(Json(json!({ "top": top, "me": me.as_ref().map(line) })).into_response())
}
