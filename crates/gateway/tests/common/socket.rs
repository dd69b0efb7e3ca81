//! WebSocket clients of `/v1/events` for the end-to-end tests.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub(crate) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The longest any one push may take to arrive in these tests.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// Opens `/v1/events` with `query` and, if given, a bearer session.
pub(crate) async fn open(
    gateway: SocketAddr,
    query: &str,
    bearer: Option<&str>,
) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let mut request = format!("ws://{gateway}/v1/events{query}")
        .into_client_request()
        .unwrap();
    if let Some(token) = bearer {
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    tokio_tungstenite::connect_async(request)
        .await
        .map(|(s, _)| s)
}

/// The next pushed JSON message (pings are answered by reading).
pub(crate) async fn next_push(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(PATIENCE, socket.next())
            .await
            .expect("a push within the patience")
            .expect("the socket stays open")
            .expect("a well-formed frame");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).expect("a push is JSON");
        }
    }
}
