//! [`Target`]: a minimal HTTP server with a known behaviour and capacity,
//! for the swarm's own tests and `hightick swarm selftest` (it is not a
//! game backend; the gateway is).
//!
//! Routes:
//! - `POST /login` answers `{"token": "t<n>"}`; `POST /login?queue=1`
//!   answers 202 `{"ticket": "<n>"}` instead, and `GET /login/tickets/<n>`
//!   answers 202 to the first ask and `{"token": "t<n>"}` to the next;
//! - `GET /queue` with `Authorization: Bearer t<n>` answers 202 to that
//!   token's first two asks and 200 `{"admitted": true}` to the third;
//! - `GET /status/<code>` answers with that status;
//! - `GET /players/<n>` answers 200 `{"ok": true}` and remembers player
//!   `n` ([`Target::players`]: which players it served);
//! - any other path answers 200 `{"ok": true}`, or 401 if an
//!   `Authorization` header is there but is not `Bearer t<n>`.
//!
//! With a `service_time`, every request goes through one first-come
//! first-served server that takes exactly that long per request: a
//! capacity of `1 / service_time` requests per second, with the queueing
//! delays of a real saturated service.
//!
//! [`Target::kill`] stops it the way a crash does: the listening socket and
//! every open connection close at once. [`Target::answer_all`] makes it
//! answer every request with one status (a gateway shedding load: 503).

use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::error::SwarmError;

/// How the target behaves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TargetConfig {
    /// Each request's service time on one FIFO server (`None`: answer at once).
    pub service_time: Option<Duration>,
}

#[derive(Debug)]
struct State {
    config: TargetConfig,
    served: AtomicU64,
    logins: AtomicU64,
    /// When the FIFO server is next free.
    next_free: Mutex<Instant>,
    queue_asks: Mutex<HashMap<u64, u32>>,
    /// Addresses connections came from.
    peers: Mutex<BTreeSet<IpAddr>>,
    accepted: AtomicU64,
    /// Players served at `/players/<n>`.
    players: Mutex<BTreeSet<u64>>,
    /// The status every request gets (0: each route's own).
    status: AtomicU16,
    /// Set once to close every open connection.
    killed: tokio::sync::watch::Sender<bool>,
}

/// A running target. See the [module docs](self).
#[derive(Debug)]
pub struct Target {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl Target {
    /// Starts listening on `listen` (port 0: any) on the current runtime.
    pub async fn start(listen: SocketAddr, config: TargetConfig) -> Result<Self, SwarmError> {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(SwarmError::io(format!("listening on {listen}")))?;
        let addr = listener
            .local_addr()
            .map_err(SwarmError::io("reading the target's address"))?;
        let state = Arc::new(State {
            config,
            served: AtomicU64::new(0),
            logins: AtomicU64::new(0),
            next_free: Mutex::new(Instant::now()),
            queue_asks: Mutex::new(HashMap::new()),
            peers: Mutex::new(BTreeSet::new()),
            accepted: AtomicU64::new(0),
            players: Mutex::new(BTreeSet::new()),
            status: AtomicU16::new(0),
            killed: tokio::sync::watch::Sender::new(false),
        });
        let task = tokio::spawn(accept(listener, state.clone()));
        Ok(Self { addr, state, task })
    }

    /// Requests answered so far.
    pub fn served(&self) -> u64 {
        self.state.served.load(Ordering::Relaxed)
    }

    /// Logins answered so far.
    pub fn logins(&self) -> u64 {
        self.state.logins.load(Ordering::Relaxed)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.state.accepted.load(Ordering::Relaxed)
    }

    /// The addresses connections came from.
    pub fn peers(&self) -> Vec<IpAddr> {
        self.state.peers.lock().iter().copied().collect()
    }

    /// The players served at `/players/<n>`.
    pub fn players(&self) -> BTreeSet<u64> {
        self.state.players.lock().clone()
    }

    /// From now on, answers every request with `status` (`None`: each
    /// route's own answer again).
    pub fn answer_all(&self, status: Option<StatusCode>) {
        let code = status.map_or(0, |s| s.as_u16());
        self.state.status.store(code, Ordering::Relaxed);
    }

    /// Stops accepting (open connections end with their clients).
    pub fn stop(self) {
        self.task.abort();
    }

    /// Stops as a crash does: no more connections, and every open one
    /// closes now, with whatever it was answering.
    pub fn kill(&self) {
        self.task.abort();
        self.state.killed.send_replace(true);
    }
}

async fn accept(listener: TcpListener, state: Arc<State>) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            // Out of file descriptors or similar: back off, keep serving.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        state.accepted.fetch_add(1, Ordering::Relaxed);
        state.peers.lock().insert(peer.ip());
        let mut killed = state.killed.subscribe();
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| answer(req, state.clone()));
            let serve = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            // Dropping the connection closes it, mid-answer or not.
            tokio::select! {
                _ = serve => {}
                _ = killed.wait_for(|k| *k) => {}
            }
        });
    }
}

/// Counts one more ask under `key`; returns the count.
fn ask(state: &State, key: u64) -> u32 {
    let mut asks = state.queue_asks.lock();
    let a = asks.entry(key).or_insert(0);
    *a += 1;
    *a
}

fn json(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn bearer(req: &Request<Incoming>) -> Option<Result<u64, ()>> {
    let value = req.headers().get(http::header::AUTHORIZATION)?;
    Some(
        value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer t"))
            .and_then(|n| n.parse().ok())
            .ok_or(()),
    )
}

async fn answer(
    req: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if let Some(service) = state.config.service_time {
        let done_at = {
            let mut next_free = state.next_free.lock();
            let begin = (*next_free).max(Instant::now());
            *next_free = begin + service;
            *next_free
        };
        tokio::time::sleep_until(done_at.into()).await;
    }
    state.served.fetch_add(1, Ordering::Relaxed);
    let path = req.uri().path().to_owned();
    let queued_login = req.uri().query() == Some("queue=1");
    let token = bearer(&req);
    let method = req.method().clone();
    // Read the body so the connection can carry the next request.
    let _ = req.into_body().collect().await;
    if let Ok(status) = StatusCode::from_u16(state.status.load(Ordering::Relaxed)) {
        return Ok(json(status, "{}".to_owned()));
    }
    let response = match (method, path.as_str()) {
        (http::Method::POST, "/login") => {
            let n = state.logins.fetch_add(1, Ordering::Relaxed) + 1;
            if queued_login {
                json(StatusCode::ACCEPTED, format!("{{\"ticket\":\"{n}\"}}"))
            } else {
                json(StatusCode::OK, format!("{{\"token\":\"t{n}\"}}"))
            }
        }
        (http::Method::GET, p) if p.starts_with("/login/tickets/") => {
            match p["/login/tickets/".len()..].parse::<u64>() {
                Ok(n) if n >= 1 && n <= state.logins.load(Ordering::Relaxed) => {
                    if ask(&state, u64::MAX - n) < 2 {
                        json(StatusCode::ACCEPTED, format!("{{\"ticket\":\"{n}\"}}"))
                    } else {
                        json(StatusCode::OK, format!("{{\"token\":\"t{n}\"}}"))
                    }
                }
                _ => json(StatusCode::NOT_FOUND, "{}".to_owned()),
            }
        }
        (_, "/queue") => match token {
            Some(Ok(n)) => {
                if ask(&state, n) < 3 {
                    json(StatusCode::ACCEPTED, "{\"queued\":true}".to_owned())
                } else {
                    json(StatusCode::OK, "{\"admitted\":true}".to_owned())
                }
            }
            _ => json(StatusCode::UNAUTHORIZED, "{}".to_owned()),
        },
        (_, p) if p.starts_with("/players/") => match p["/players/".len()..].parse() {
            Ok(n) => {
                state.players.lock().insert(n);
                json(StatusCode::OK, "{\"ok\":true}".to_owned())
            }
            Err(_) => json(StatusCode::NOT_FOUND, "{}".to_owned()),
        },
        (_, p) if p.starts_with("/status/") => {
            let code = p["/status/".len()..]
                .parse()
                .ok()
                .and_then(|c| StatusCode::from_u16(c).ok())
                .unwrap_or(StatusCode::BAD_REQUEST);
            json(code, "{}".to_owned())
        }
        _ => match token {
            Some(Err(())) => json(StatusCode::UNAUTHORIZED, "{}".to_owned()),
            _ => json(StatusCode::OK, "{\"ok\":true}".to_owned()),
        },
    };
    Ok(response)
}
