//! [`Adapter`]: the host's calls to the Agones SDK server (the sidecar),
//! over its REST gateway (`AGONES_SDK_HTTP_PORT`, the HTTP/JSON form of
//! Agones' `sdk.proto` and `beta.proto`), each mapped to a [`ServerError`]
//! that says which call failed and what the sidecar answered.
//!
//! REST rather than gRPC: the same calls, the same sidecar, and no build
//! step that needs `protoc` (the gRPC SDK crate compiles `.proto` files).
//! Each unary call is one request; a health ping is one `POST /health`;
//! the watch is one long `GET /watch/gameserver` whose body is a stream of
//! `{"result": GameServer}` lines.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ServerError;

pub use hightick_host_api::agones::MATCHES_COUNTER;

/// Label keys the host sets (the SDK prefixes each with `agones.dev/sdk-`).
pub const VERSION_LABEL: &str = "hightick-version";
/// See [`VERSION_LABEL`].
pub const BUILD_LABEL: &str = "hightick-build";
/// See [`VERSION_LABEL`].
pub const GAME_LABEL: &str = "hightick-game";

/// The environment variable Agones sets in the game container with the
/// sidecar's REST port.
pub const HTTP_PORT_ENV: &str = "AGONES_SDK_HTTP_PORT";
/// The sidecar's REST port when nothing says otherwise (Agones' default).
pub const DEFAULT_HTTP_PORT: u16 = 9358;

/// The build id labelled on the GameServer: `$HIGHTICK_BUILD` when the
/// binary was compiled (an image build sets it to the git commit), else
/// `dev`.
pub const BUILD: &str = match option_env!("HIGHTICK_BUILD") {
    Some(build) => build,
    None => "dev",
};

/// How long [`Adapter::connect`] waits for the sidecar to answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause between connection attempts.
const CONNECT_RETRY: Duration = Duration::from_millis(100);
/// Longest one unary call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest answer read from a unary call.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// What the host reads of a GameServer update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameServerView {
    /// `Scheduled`, `Ready`, `Allocated`, `Shutdown`...
    pub state: String,
    /// Its annotations (an allocation's among them).
    pub annotations: HashMap<String, String>,
    /// Its uid.
    pub uid: String,
    /// Its creation time, unix seconds.
    pub creation_timestamp: i64,
    /// `status.address`: where players reach it (the node's address; empty
    /// until Agones has set it).
    pub address: String,
    /// `status.ports`: each named port and the port players reach it on
    /// (an Agones host port), in the GameServer's order.
    pub ports: Vec<(String, u16)>,
}

impl GameServerView {
    /// The address players reach the port named `name` on, once Agones has
    /// set both the address and that port. The address may be a host name
    /// (an IP is what hightick's tokens need: `None` otherwise).
    pub fn public_address(&self, name: &str) -> Option<SocketAddr> {
        let ip = self.address.parse().ok()?;
        let (_, port) = self.ports.iter().find(|(n, _)| n == name)?;
        Some(SocketAddr::new(ip, *port))
    }
}

/// The GameServer as the REST gateway writes it (protojson, snake_case
/// names, int64 values as strings).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GameServerJson {
    object_meta: ObjectMetaJson,
    status: StatusJson,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ObjectMetaJson {
    uid: String,
    creation_timestamp: Int64,
    annotations: HashMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StatusJson {
    state: String,
    address: String,
    ports: Vec<PortJson>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PortJson {
    name: String,
    port: u16,
}

/// A Counter as `GET /v1beta1/counters/{name}` answers.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CounterJson {
    count: Int64,
    capacity: Int64,
}

/// A protojson int64: a string of digits, or a plain number.
#[derive(Debug, Default, Clone, Copy)]
struct Int64(i64);

impl<'de> Deserialize<'de> for Int64 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Text(String),
            Number(i64),
        }
        match Either::deserialize(d)? {
            Either::Number(n) => Ok(Self(n)),
            Either::Text(t) => t.parse().map(Self).map_err(serde::de::Error::custom),
        }
    }
}

impl From<GameServerJson> for GameServerView {
    fn from(gs: GameServerJson) -> Self {
        Self {
            state: gs.status.state,
            annotations: gs.object_meta.annotations,
            uid: gs.object_meta.uid,
            creation_timestamp: gs.object_meta.creation_timestamp.0,
            address: gs.status.address,
            ports: gs
                .status
                .ports
                .into_iter()
                .map(|p| (p.name, p.port))
                .collect(),
        }
    }
}

/// A change to a Counter (`UpdateCounter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterChange {
    /// Add this much (negative: take off); refused past 0 or the capacity.
    By(i64),
    /// Set the count.
    To(i64),
}

/// A live connection to the Agones SDK server. Cheap to clone.
#[derive(Clone)]
pub struct Adapter {
    client: Client<HttpConnector, Full<Bytes>>,
    /// `http://localhost:<port>`.
    base: String,
}

impl std::fmt::Debug for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adapter")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

fn failed(call: &str, detail: impl std::fmt::Display) -> ServerError {
    ServerError::Agones(format!("{call}: {detail}"))
}

impl Adapter {
    /// Connects to the SDK server's REST port on `localhost` (`None`:
    /// `$AGONES_SDK_HTTP_PORT`, else 9358), retrying for up to 30 s while
    /// the sidecar starts.
    pub async fn connect(port: Option<u16>) -> Result<Self, ServerError> {
        let port = match port {
            Some(port) => port,
            None => match std::env::var(HTTP_PORT_ENV) {
                Ok(text) => text.trim().parse().map_err(|_| {
                    failed(
                        "connect to the SDK server",
                        format!("${HTTP_PORT_ENV} = {text:?} is not a port"),
                    )
                })?,
                Err(_) => DEFAULT_HTTP_PORT,
            },
        };
        let client = Client::builder(TokioExecutor::new()).build_http();
        let adapter = Self {
            client,
            base: format!("http://localhost:{port}"),
        };
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        loop {
            match adapter.game_server().await {
                Ok(_) => return Ok(adapter),
                Err(e) if Instant::now() >= deadline => {
                    return Err(failed(
                        "connect to the SDK server",
                        format!(
                            "no answer on {} within {CONNECT_TIMEOUT:?}: {e}",
                            adapter.base
                        ),
                    ));
                }
                Err(_) => tokio::time::sleep(CONNECT_RETRY).await,
            }
        }
    }

    /// Sends one request and reads its whole answer (a JSON object), or
    /// says which call failed: no answer, a status the SDK refused it with
    /// (and the SDK's message), or an answer that is not JSON.
    async fn call(
        &self,
        name: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ServerError> {
        let answer = tokio::time::timeout(CALL_TIMEOUT, async {
            let response = self.send(name, method, path, body).await?;
            let status = response.status();
            let bytes = http_body_util::Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| failed(name, format!("reading the answer: {e}")))?
                .to_bytes();
            Ok::<_, ServerError>((status, bytes))
        })
        .await
        .map_err(|_| failed(name, format!("no answer within {CALL_TIMEOUT:?}")))??;
        let (status, bytes) = answer;
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            failed(
                name,
                format!(
                    "HTTP {status}, not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                ),
            )
        })?;
        if !status.is_success() {
            let message = value["message"].as_str().unwrap_or("(no message)");
            return Err(failed(name, format!("HTTP {status}: {message}")));
        }
        Ok(value)
    }

    async fn send(
        &self,
        name: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<hyper::Response<Incoming>, ServerError> {
        let body = match body {
            Some(value) => Full::new(Bytes::from(value.to_string())),
            None => Full::new(Bytes::new()),
        };
        let request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body)
            .map_err(|e| failed(name, e))?;
        self.client
            .request(request)
            .await
            .map_err(|e| failed(name, format!("{}: {e}", self.base)))
    }

    /// Sets a label (key prefixed with `agones.dev/sdk-` by Agones).
    pub async fn set_label(&self, key: &str, value: &str) -> Result<(), ServerError> {
        let body = json!({ "key": key, "value": value });
        self.call("SetLabel", Method::PUT, "/metadata/label", Some(body))
            .await
            .map(drop)
    }

    /// Sets an annotation (key prefixed with `agones.dev/sdk-` by Agones).
    pub async fn set_annotation(&self, key: &str, value: &str) -> Result<(), ServerError> {
        let body = json!({ "key": key, "value": value });
        self.call(
            "SetAnnotation",
            Method::PUT,
            "/metadata/annotation",
            Some(body),
        )
        .await
        .map(drop)
    }

    /// Labels the GameServer with the host's version, build and game.
    pub async fn label_build(&self, game: &str) -> Result<(), ServerError> {
        self.set_label(VERSION_LABEL, env!("CARGO_PKG_VERSION"))
            .await?;
        self.set_label(BUILD_LABEL, BUILD).await?;
        self.set_label(GAME_LABEL, game).await
    }

    /// Marks the GameServer Ready: it may be allocated.
    pub async fn ready(&self) -> Result<(), ServerError> {
        self.empty_post("Ready", "/ready").await
    }

    /// Marks the GameServer Allocated itself (a matchmaker that is not the
    /// Agones allocator; the host does not).
    pub async fn allocate(&self) -> Result<(), ServerError> {
        self.empty_post("Allocate", "/allocate").await
    }

    /// Marks the GameServer Reserved for `seconds` (0: until Ready again).
    pub async fn reserve(&self, seconds: i64) -> Result<(), ServerError> {
        let body = json!({ "seconds": seconds.to_string() });
        self.call("Reserve", Method::POST, "/reserve", Some(body))
            .await
            .map(drop)
    }

    /// Marks the GameServer Shutdown: Agones deletes its pod.
    pub async fn shutdown(&self) -> Result<(), ServerError> {
        self.empty_post("Shutdown", "/shutdown").await
    }

    /// One health ping. Send only when the host has shown progress
    /// (`crate::agones` module docs).
    pub async fn health(&self) -> Result<(), ServerError> {
        self.empty_post("Health", "/health").await
    }

    async fn empty_post(&self, name: &str, path: &str) -> Result<(), ServerError> {
        self.call(name, Method::POST, path, Some(json!({})))
            .await
            .map(drop)
    }

    /// The GameServer now.
    pub async fn game_server(&self) -> Result<GameServerView, ServerError> {
        let value = self
            .call("GetGameServer", Method::GET, "/gameserver", None)
            .await?;
        parse_game_server("GetGameServer", value)
    }

    /// Every update of the GameServer, the current one first.
    pub async fn watch(&self) -> Result<Watch, ServerError> {
        let name = "WatchGameServer";
        let response = tokio::time::timeout(
            CALL_TIMEOUT,
            self.send(name, Method::GET, "/watch/gameserver", None),
        )
        .await
        .map_err(|_| failed(name, format!("no answer within {CALL_TIMEOUT:?}")))??;
        if response.status() != StatusCode::OK {
            return Err(failed(name, format!("HTTP {}", response.status())));
        }
        Ok(Watch {
            body: response.into_body(),
            pending: BytesMut::new(),
        })
    }

    /// A Counter's count and capacity.
    pub async fn counter(&self, name: &str) -> Result<(i64, i64), ServerError> {
        let call = format!("GetCounter {name}");
        let value = self
            .call(&call, Method::GET, &counter_path(name), None)
            .await?;
        let c: CounterJson = serde_json::from_value(value).map_err(|e| failed(&call, e))?;
        Ok((c.count.0, c.capacity.0))
    }

    /// Changes a Counter; its new count.
    pub async fn update_counter(
        &self,
        name: &str,
        change: CounterChange,
    ) -> Result<i64, ServerError> {
        let (call, body) = match change {
            CounterChange::By(diff) => (
                format!("UpdateCounter {name} {diff:+}"),
                json!({ "countDiff": diff.to_string() }),
            ),
            CounterChange::To(count) => (
                format!("UpdateCounter {name} = {count}"),
                json!({ "count": count.to_string() }),
            ),
        };
        let value = self
            .call(&call, Method::PATCH, &counter_path(name), Some(body))
            .await?;
        let c: CounterJson = serde_json::from_value(value).map_err(|e| failed(&call, e))?;
        Ok(c.count.0)
    }

    /// The count of the [`MATCHES_COUNTER`]: matches allocated here.
    pub async fn matches_allocated(&self) -> Result<i64, ServerError> {
        self.counter(MATCHES_COUNTER).await.map(|(count, _)| count)
    }

    /// Gives `ended` slots of the [`MATCHES_COUNTER`] back in one call:
    /// matches ended (or allocations were refused).
    pub async fn matches_ended(&self, ended: i64) -> Result<(), ServerError> {
        self.update_counter(MATCHES_COUNTER, CounterChange::By(-ended))
            .await
            .map(drop)
    }

    /// Sets the [`MATCHES_COUNTER`] to 0 (a stray count: allocations the
    /// host never saw).
    pub async fn reset_matches(&self) -> Result<(), ServerError> {
        self.update_counter(MATCHES_COUNTER, CounterChange::To(0))
            .await
            .map(drop)
    }
}

fn counter_path(name: &str) -> String {
    format!("/v1beta1/counters/{name}")
}

fn parse_game_server(call: &str, value: Value) -> Result<GameServerView, ServerError> {
    serde_json::from_value::<GameServerJson>(value)
        .map(GameServerView::from)
        .map_err(|e| failed(call, format!("not a GameServer: {e}")))
}

/// A stream of GameServer updates.
#[derive(Debug)]
pub struct Watch {
    body: Incoming,
    /// Bytes of a line not yet complete.
    pending: BytesMut,
}

impl Watch {
    /// The next update; `None` when the stream has ended.
    pub async fn next(&mut self) -> Option<Result<GameServerView, ServerError>> {
        let name = "WatchGameServer";
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line = self.pending.split_to(end + 1);
                let line = line.trim_ascii();
                if line.is_empty() {
                    continue;
                }
                return Some(watch_line(name, line));
            }
            match self.body.frame().await? {
                Ok(frame) => {
                    if let Ok(mut data) = frame.into_data() {
                        while data.has_remaining() {
                            let chunk = data.chunk();
                            self.pending.extend_from_slice(chunk);
                            let n = chunk.len();
                            data.advance(n);
                        }
                    }
                }
                Err(e) => return Some(Err(failed(name, e))),
            }
        }
    }
}

/// One line of the watch stream: `{"result": GameServer}` or
/// `{"error": {"message": ...}}`.
fn watch_line(name: &str, line: &[u8]) -> Result<GameServerView, ServerError> {
    let mut value: Value = serde_json::from_slice(line).map_err(|e| {
        failed(
            name,
            format!("not JSON ({e}): {}", String::from_utf8_lossy(line)),
        )
    })?;
    if let Some(error) = value.get("error") {
        let message = error["message"].as_str().unwrap_or("(no message)");
        return Err(failed(name, message));
    }
    parse_game_server(name, value["result"].take())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GameServer as the real SDK server's REST gateway writes it.
    const GAME_SERVER: &str = r#"{"object_meta":{"name":"x","namespace":"","uid":"u-1",
        "resource_version":"","generation":"0","creation_timestamp":"1700000000",
        "deletion_timestamp":"0","annotations":{"hightick.dev/match-id":"m1"},"labels":{}},
        "spec":{"health":{"disabled":false,"period_seconds":0}},
        "status":{"state":"Allocated","address":"203.0.113.7","addresses":[],
        "ports":[{"name":"game-0","port":30001},{"name":"game-1","port":30002}],
        "players":null,"counters":{"matches":{"count":"1","capacity":"4"}},"lists":{}}}"#;

    #[test]
    fn a_game_server_reads_with_its_address_and_ports() {
        let value: Value = serde_json::from_str(GAME_SERVER).unwrap();
        let gs = parse_game_server("t", value).unwrap();
        assert_eq!(gs.state, "Allocated");
        assert_eq!(gs.uid, "u-1");
        assert_eq!(gs.creation_timestamp, 1_700_000_000);
        assert_eq!(gs.annotations["hightick.dev/match-id"], "m1");
        assert_eq!(
            gs.public_address("game-1"),
            Some("203.0.113.7:30002".parse().unwrap())
        );
        assert_eq!(gs.public_address("game-2"), None);
    }

    #[test]
    fn a_game_server_without_an_address_has_no_public_address() {
        let gs = parse_game_server("t", json!({"status": {"state": "Scheduled"}})).unwrap();
        assert_eq!(gs.public_address("game-0"), None);
        let named = GameServerView {
            address: "node-1.example".into(),
            ports: vec![("game-0".into(), 7000)],
            ..GameServerView::default()
        };
        assert_eq!(named.public_address("game-0"), None);
    }

    #[test]
    fn watch_lines_read_results_and_errors() {
        let line = format!("{{\"result\":{GAME_SERVER}}}").replace('\n', "");
        let gs = watch_line("w", line.as_bytes()).unwrap();
        assert_eq!(gs.ports.len(), 2);
        let err = watch_line("w", br#"{"error":{"code":2,"message":"gone"}}"#).unwrap_err();
        assert!(err.to_string().contains("gone"), "{err}");
        let err = watch_line("w", b"<html>").unwrap_err();
        assert!(err.to_string().contains("not JSON"), "{err}");
    }

    #[test]
    fn int64_reads_from_text_or_number() {
        let c: CounterJson = serde_json::from_str(r#"{"count":"3","capacity":8}"#).unwrap();
        assert_eq!((c.count.0, c.capacity.0), (3, 8));
        assert!(serde_json::from_str::<CounterJson>(r#"{"count":"x"}"#).is_err());
    }
}
