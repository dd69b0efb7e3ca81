//! `GET /v1/events`: the push WebSocket. Who it is for is settled before
//! the upgrade, with ordinary JSON refusals:
//! - a session: `Authorization: Bearer <session token>`, or
//!   `?access_token=<session token>` for clients that cannot set headers;
//! - a queued login: `?login_ticket=<ticket>` (no session yet). The socket
//!   pushes the ticket's position, then its admission, then carries on as
//!   the new session's socket. A ticket another gateway issued is checked
//!   against the shared key and followed through the store.
//!
//! The socket itself runs in [`super::push_socket`].

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::auth::{Authed, bearer, foreign_ticket};
use super::error::ApiError;
use super::push_socket::{self, Who};
use super::state::Shared;

/// Each socket's read buffer.
const READ_BUFFER_BYTES: usize = 4096;

/// The value of `name` in a raw query string (no percent-decoding: tokens
/// and tickets are URL-safe as issued).
fn query_value<'q>(raw: Option<&'q str>, name: &str) -> Option<&'q str> {
    raw?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then_some(value)
    })
}

async fn who(state: &Shared, headers: &HeaderMap, query: Option<&str>) -> Result<Who, ApiError> {
    if let Some(ticket) = query_value(query, "login_ticket") {
        if state.logins.status(ticket).is_some() {
            return Ok(Who::LoginTicket(ticket.to_owned()));
        }
        let issued = foreign_ticket(state, ticket, "login_ticket")?;
        if state
            .logins
            .work()
            .elsewhere(&issued, hightick_store::clock::now_ms())
            .await?
            .is_none()
        {
            return Err(
                ApiError::not_found("no such login ticket (unknown or expired)")
                    .field("login_ticket"),
            );
        }
        return Ok(Who::ForeignTicket(ticket.to_owned(), issued));
    }
    let token = match bearer(headers)? {
        Some(token) => token,
        None => query_value(query, "access_token").ok_or_else(|| {
            ApiError::unauthorized(
                "a session (`Authorization: Bearer`, or ?access_token=) or a ?login_ticket=",
            )
        })?,
    };
    Ok(Who::Session(Authed::check(state, token).await?.account_id))
}

#[utoipa::path(
    get,
    path = "/v1/events",
    tag = "push",
    summary = "The push WebSocket (queue position, match found, notifications)",
    params(("access_token" = Option<String>, Query, description = "A session token, for clients that cannot set headers"), ("login_ticket" = Option<String>, Query, description = "A queued login's ticket: its position, then its admission")),
    responses(
        (status = 101, description = "Switching to the WebSocket; each message is a JSON push event"),
        (status = 401, description = "No or a bad session", body = super::error::ErrorBody),
        (status = 404, description = "No such login ticket", body = super::error::ErrorBody),
        (status = 426, description = "Not a WebSocket upgrade request", body = super::error::ErrorBody),
        (status = 503, description = "Too many push sockets are open", body = super::error::ErrorBody),
    )
)]
pub(crate) async fn events(
    State(state): State<Shared>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let who = who(&state, &headers, query.as_deref()).await?;
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::new(
            StatusCode::UPGRADE_REQUIRED,
            "upgrade_required",
            format!("a WebSocket upgrade request: {}", rejection.body_text()),
        )
        .field("upgrade")
    })?;
    let seat = state.push.seat().ok_or_else(|| {
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "too many push sockets are open",
        );
        e.retry_after_s = Some(5);
        e
    })?;
    let limit = state.config.push.max_message_bytes;
    // A client says little (pongs, closes): a small read buffer keeps the
    // memory of 20,000 idle sockets small (tungstenite's default is 128 KiB).
    Ok(upgrade
        .read_buffer_size(READ_BUFFER_BYTES)
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |ws| push_socket::run(state, ws, who, seat)))
}

#[cfg(test)]
mod tests {
    use super::query_value;

    #[test]
    fn query_values_are_found_by_exact_name() {
        let q = Some("a=1&login_ticket=abc&access_token=x.y");
        assert_eq!(query_value(q, "login_ticket"), Some("abc"));
        assert_eq!(query_value(q, "access_token"), Some("x.y"));
        assert_eq!(query_value(q, "ticket"), None);
        assert_eq!(query_value(None, "a"), None);
    }
}
