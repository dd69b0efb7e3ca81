//! A virtual player's push socket: one WebSocket per player, opened by its
//! first step that waits for a push and kept for the rest of its life. A
//! reader task keeps reading it (answering pings) and queues its text
//! pushes; a step takes the link, waits for the push it names, and gives
//! the link back.
//!
//! A push that carries `at_ms` (unix milliseconds when the server sent it,
//! as the hightick gateway's do) also gives its event-to-client latency.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures_util::StreamExt;
use http::HeaderName;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::interval::ErrorKind;
use crate::keepalive;
use crate::tls::Secure;

/// Pushes queued per player before the oldest unread are dropped.
const QUEUE: usize = 64;
/// A push socket's read buffer (the pushes are small).
const READ_BUFFER_BYTES: usize = 4096;

/// One player's open push socket.
#[derive(Debug)]
pub(crate) struct PushLink {
    pushes: mpsc::Receiver<String>,
    reader: JoinHandle<()>,
}

impl Drop for PushLink {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// A push that arrived, with its latency from `at_ms` when it has one.
#[derive(Debug)]
pub(crate) struct Arrived {
    /// The push, parsed.
    pub doc: serde_json::Value,
    /// Microseconds from the server's `at_ms` to its arrival.
    pub latency_us: Option<u64>,
}

/// What to connect to: the target's address and `Host`, the path, headers.
#[derive(Debug, Clone)]
pub(crate) struct Dial {
    pub addr: SocketAddr,
    pub source: Option<IpAddr>,
    pub authority: String,
    pub path: String,
    pub headers: Vec<(HeaderName, String)>,
    pub timeout: Duration,
    /// TLS (`wss://`), for an `https://` target.
    pub secure: Option<Secure>,
}

/// Opens a push socket.
pub(crate) async fn open(dial: Dial) -> Result<PushLink, ErrorKind> {
    let connect = async {
        let stream = keepalive::open(dial.addr, dial.source, dial.secure.as_ref()).await?;
        let scheme = if dial.secure.is_some() { "wss" } else { "ws" };
        let mut request = format!("{scheme}://{}{}", dial.authority, dial.path)
            .into_client_request()
            .map_err(|_| ErrorKind::Template)?;
        for (name, value) in &dial.headers {
            let value = value.parse().map_err(|_| ErrorKind::Template)?;
            request.headers_mut().insert(name.clone(), value);
        }
        let config = WebSocketConfig::default().read_buffer_size(READ_BUFFER_BYTES);
        let (ws, _) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
            .await
            .map_err(|e| match e {
                tokio_tungstenite::tungstenite::Error::Http(_) => ErrorKind::Status,
                _ => ErrorKind::Connect,
            })?;
        Ok(ws)
    };
    let mut ws = tokio::time::timeout(dial.timeout, connect)
        .await
        .unwrap_or(Err(ErrorKind::Timeout))?;
    let (queue, pushes) = mpsc::channel(QUEUE);
    let reader = tokio::spawn(async move {
        while let Some(Ok(message)) = ws.next().await {
            if let Message::Text(text) = message {
                // A player not waiting lets pushes pile up to the queue's
                // size; past it the newest are dropped, not buffered.
                let _ = queue.try_send(text.as_str().to_owned());
            }
        }
    });
    Ok(PushLink { pushes, reader })
}

/// Unix microseconds now.
fn unix_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl PushLink {
    /// Drops every push queued so far (they answer an earlier step).
    pub(crate) fn discard_queued(&mut self) {
        while self.pushes.try_recv().is_ok() {}
    }

    /// Waits up to `max_wait` for a push whose `type` is `event` and, when
    /// `same` is given, whose value at that pointer equals the expected one.
    /// Gives the link back with the outcome (`None` link: the socket closed).
    pub(crate) async fn wait(
        mut self,
        event: &str,
        same: Option<(&str, &serde_json::Value)>,
        max_wait: Duration,
    ) -> (Option<Self>, Result<Arrived, ErrorKind>) {
        let deadline = tokio::time::Instant::now() + max_wait;
        loop {
            let text = match tokio::time::timeout_at(deadline, self.pushes.recv()).await {
                Err(_) => return (Some(self), Err(ErrorKind::Timeout)),
                Ok(None) => return (None, Err(ErrorKind::Transport)),
                Ok(Some(text)) => text,
            };
            let now = unix_us();
            let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let wanted = doc["type"] == event
                && same.is_none_or(|(pointer, expected)| doc.pointer(pointer) == Some(expected));
            if wanted {
                let latency_us = doc["at_ms"]
                    .as_u64()
                    .map(|ms| now.saturating_sub(ms * 1000));
                return (Some(self), Ok(Arrived { doc, latency_us }));
            }
        }
    }
}
