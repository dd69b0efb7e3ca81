//! The meta-game API: profile, inventory, shop and purchases, match history,
//! leaderboard. Every call runs as the session's account.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use hightick_store::{LeaderboardEntry, MAX_ID_LEN, MAX_NAME_LEN, MAX_QUANTITY, PurchaseRequest};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::{Authed, check_text};
use super::{ApiError, JsonBody, Shared, query_int};

/// Leaderboard lines shown.
const TOP: i64 = 100;

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rename {
    display_name: String,
}

pub(crate) async fn rename(
    State(state): State<Shared>,
    who: Authed,
    JsonBody(body): JsonBody<Rename>,
) -> Result<Response, ApiError> {
    check_text("display_name", &body.display_name, MAX_NAME_LEN)?;
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

pub(crate) async fn shop(State(state): State<Shared>) -> Response {
    let items: Vec<Value> = state
        .config
        .catalog
        .iter()
        .map(|c| json!({ "item_id": c.item_id, "price": c.price }))
        .collect();
    Json(json!({ "items": items })).into_response()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Purchase {
    item_id: String,
    quantity: i64,
    idempotency_key: String,
}

pub(crate) async fn purchase(
    State(state): State<Shared>,
    who: Authed,
    JsonBody(body): JsonBody<Purchase>,
) -> Result<Response, ApiError> {
    check_text("idempotency_key", &body.idempotency_key, MAX_ID_LEN)?;
    check_text("item_id", &body.item_id, MAX_ID_LEN)?;
    if !crate::config::valid_id(&body.item_id) {
        // No item could have this id: malformed, not merely unsold.
        return Err(ApiError::invalid(
            "item_id",
            "item_id: 1..=64 characters of [A-Za-z0-9_.-]",
        ));
    }
    if !(1..=MAX_QUANTITY).contains(&body.quantity) {
        return Err(ApiError::invalid(
            "quantity",
            format!("quantity: must be 1..={MAX_QUANTITY}"),
        ));
    }
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

pub(crate) async fn matches(
    State(state): State<Shared>,
    who: Authed,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let limit = query_int(query.as_deref(), "limit", 1..=100)?.unwrap_or(20);
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
