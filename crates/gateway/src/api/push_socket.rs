//! One push WebSocket's life: for a queued login, its position (at most once
//! a second) until its admission; then, for the session, whatever the hub
//! queues for the account, written one push at a time. Pings keep it
//! honest: a socket silent for two ping intervals is closed, and so is one
//! that chatters, one whose queue filled (kicked by the hub), and one whose
//! write takes longer than `push.send_timeout_ms`. Each close carries a
//! reason.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use hightick_store::clock::now_ms;
use serde_json::json;
use tokio::sync::Notify;
use tokio::time::{Instant, Interval};

use super::auth::recheck_after;
use super::error::ApiError;
use super::state::Shared;
use crate::admission::TicketStatus;
use crate::login::Elsewhere;
use crate::matchmaking::MatchStatus;
use crate::push::{PushConfig, Seat, event, positions};
use crate::ticket::LoginTicket;

/// Whom a socket is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Who {
    /// A logged-in account.
    Session(i64),
    /// A login waiting in this gateway's queue.
    LoginTicket(String),
    /// A login ticket another gateway issued (its text and what it says).
    ForeignTicket(String, LoginTicket),
}

/// Close code for a policy violation (RFC 6455).
const POLICY: u16 = 1008;
/// How long a close frame may take to write.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Why a socket ends.
enum End {
    /// The client closed or vanished: nothing to send.
    Gone,
    /// Closed by the gateway with a code and a reason.
    Close(u16, String),
    /// Dropped by the hub for a full queue (the hub counted it).
    Kicked,
}

/// The socket with its liveness and chatter accounting.
struct Link {
    ws: WebSocket,
    heard: Instant,
    messages: u32,
    ping: Interval,
    ping_every: Duration,
    send_timeout: Duration,
    max_messages: u32,
}

impl Link {
    fn new(ws: WebSocket, config: &PushConfig) -> Self {
        let ping_every = Duration::from_secs(config.ping_s);
        Self {
            ws,
            heard: Instant::now(),
            messages: 0,
            ping: tokio::time::interval_at(Instant::now() + ping_every, ping_every),
            ping_every,
            send_timeout: Duration::from_millis(config.send_timeout_ms),
            max_messages: config.max_client_messages,
        }
    }

    /// Writes one push, giving up after the send timeout or on a `kick`.
    async fn push(&mut self, text: String, kick: Option<&Notify>) -> Result<(), End> {
        let write =
            tokio::time::timeout(self.send_timeout, self.ws.send(Message::Text(text.into())));
        let kicked = async {
            match kick {
                Some(k) => k.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            written = write => match written {
                Ok(Ok(())) => Ok(()),
                Ok(Err(_)) => Err(End::Gone),
                Err(_) => Err(End::Close(
                    POLICY,
                    format!("slow reader: a push took over {} ms to write", self.send_timeout.as_millis()),
                )),
            },
            () = kicked => Err(End::Kicked),
        }
    }

    /// Takes in what the client sent.
    fn heard(&mut self, message: Option<Result<Message, axum::Error>>) -> Result<(), End> {
        match message {
            None | Some(Err(_)) | Some(Ok(Message::Close(_))) => Err(End::Gone),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {
                self.heard = Instant::now();
                Ok(())
            }
            Some(Ok(Message::Text(_) | Message::Binary(_))) => {
                self.heard = Instant::now();
                self.messages += 1;
                if self.messages > self.max_messages {
                    return Err(End::Close(POLICY, "too many messages".to_owned()));
                }
                Ok(())
            }
        }
    }

    /// A ping tick: closes a silent socket, else pings it.
    async fn ping(&mut self) -> Result<(), End> {
        if self.heard.elapsed() > self.ping_every * 2 {
            return Err(End::Close(
                POLICY,
                "no pong within two ping intervals".to_owned(),
            ));
        }
        self.messages = 0;
        match tokio::time::timeout(
            self.send_timeout,
            self.ws.send(Message::Ping(Default::default())),
        )
        .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(End::Gone),
            Err(_) => Err(End::Close(
                POLICY,
                "slow reader: a ping took too long to write".to_owned(),
            )),
        }
    }

    /// Ends the socket, with a close frame when the gateway closes it.
    async fn end(mut self, end: End) {
        let close = match end {
            End::Gone => None,
            End::Close(code, reason) => Some((code, reason)),
            End::Kicked => Some((POLICY, "slow reader: its push queue is full".to_owned())),
        };
        if let Some((code, reason)) = close {
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, self.ws.send(Message::Close(Some(frame))))
                .await;
        }
    }
}

/// Runs one socket until it ends.
pub(crate) async fn run(state: Shared, ws: WebSocket, who: Who, seat: Seat) {
    let mut link = Link::new(ws, &state.config.push);
    let account = match who {
        Who::Session(account) => Ok(account),
        Who::LoginTicket(ticket) => login(&state, &mut link, &ticket).await,
        Who::ForeignTicket(text, ticket) => {
            login_elsewhere(&state, &mut link, &text, &ticket).await
        }
    };
    let end = match account {
        Ok(account) => session(&state, &mut link, account).await,
        Err(end) => end,
    };
    if let End::Close(..) = &end {
        state.push.dropped();
    }
    link.end(end).await;
    drop(seat);
}

/// Pushes the login ticket's position until it is answered; the account
/// when admitted.
async fn login(state: &Shared, link: &mut Link, ticket: &str) -> Result<i64, End> {
    let mut last = None;
    let mut pending = Box::pin(state.logins.wait(ticket, Duration::ZERO));
    loop {
        tokio::select! {
            status = &mut pending => {
                match status {
                    None => return Err(End::Close(POLICY, "login ticket unknown or expired".to_owned())),
                    Some(TicketStatus::Done(Ok(grant))) => {
                        let text = event::render("admitted", grant.body(), now_ms());
                        link.push(text, None).await?;
                        return Ok(grant.account_id);
                    }
                    Some(TicketStatus::Done(Err(e))) => {
                        let text = event::render("login_refused", ApiError::from(e.clone()).body(), now_ms());
                        link.push(text, None).await?;
                        return Err(End::Close(1000, "login refused".to_owned()));
                    }
                    Some(TicketStatus::Queued { position, estimate_ms }) if last != Some(position) => {
                        last = Some(position);
                        let body = json!({ "ticket": ticket, "position": position, "estimate_ms": estimate_ms });
                        link.push(event::render("login_queue", body, now_ms()), None).await?;
                    }
                    Some(_) => {}
                }
                pending = Box::pin(state.logins.wait(ticket, positions::EVERY));
            }
            message = link.ws.recv() => link.heard(message)?,
            _ = link.ping.tick() => link.ping().await?,
        }
    }
}

/// Follows another gateway's ticket through the store: its estimated
/// position when it changes, then its admission; the account when admitted.
async fn login_elsewhere(
    state: &Shared,
    link: &mut Link,
    text: &str,
    ticket: &LoginTicket,
) -> Result<i64, End> {
    let mut last = None;
    let mut next = Box::pin(tokio::time::sleep(Duration::ZERO));
    loop {
        tokio::select! {
            () = &mut next => {
                let pause = match state.logins.work().elsewhere(ticket, now_ms()).await {
                    Ok(None) => return Err(End::Close(POLICY, "login ticket unknown or expired".to_owned())),
                    Ok(Some(Elsewhere::Admitted(grant))) => {
                        let text = event::render("admitted", grant.body(), now_ms());
                        link.push(text, None).await?;
                        return Ok(grant.account_id);
                    }
                    Ok(Some(Elsewhere::Queued { position, estimate_ms })) => {
                        if last != Some(position) {
                            last = Some(position);
                            let body = json!({ "ticket": text, "position": position, "estimate_ms": estimate_ms });
                            link.push(event::render("login_queue", body, now_ms()), None).await?;
                        }
                        recheck_after(estimate_ms)
                    }
                    // The store is down for now: try again later.
                    Err(_) => positions::EVERY,
                };
                next = Box::pin(tokio::time::sleep(pause));
            }
            message = link.ws.recv() => link.heard(message)?,
            _ = link.ping.tick() => link.ping().await?,
        }
    }
}

/// Forwards the account's pushes until the socket ends.
async fn session(state: &Shared, link: &mut Link, account: i64) -> End {
    let mut subscription = state.push.subscribe(account);
    let kick: Arc<Notify> = subscription.kick();
    // A match found before the socket subscribed is not lost.
    if let Some((ticket, status @ MatchStatus::Matched(_))) =
        state.matchmaker.current(account).await.ok().flatten()
    {
        let text = event::render("match_found", status.body(&ticket), now_ms());
        if let Err(end) = link.push(text, Some(&kick)).await {
            return end;
        }
    }
    loop {
        let step = tokio::select! {
            biased;
            () = kick.notified() => Err(End::Kicked),
            text = subscription.next() => match text {
                Some(text) => link.push(text, Some(&kick)).await,
                None => Err(End::Kicked),
            },
            message = link.ws.recv() => link.heard(message),
            _ = link.ping.tick() => link.ping().await,
        };
        if let Err(end) = step {
            return end;
        }
    }
}
