//! Serving the API's HTTP/1.1 connections (with WebSocket upgrades), each
//! under deadlines: headers complete within `http.header_timeout_ms` (of
//! accept, or of a request's first byte), a JSON body within
//! `http.body_timeout_ms` of its headers ([`BodyDeadline`], else 408), an
//! idle kept-alive connection closed after `http.idle_timeout_s`; and
//! optionally at most `http.max_connections_per_ip` connections per
//! address. A client that trickles its headers or body a byte at a time
//! holds its connection for a deadline at most, so a few thousand of them
//! cannot starve the file table. What is closed early is counted
//! ([`ConnectionCounts`], on `/metrics`). With `[tls]` every connection is
//! TLS ([`tls`]): its handshake falls in the header deadline, and the rest
//! (deadlines, caps, trusted proxies, upgrades) runs over it unchanged.
//!
//! Not `axum::serve`: it gives hyper no timer, so no deadline ever fires;
//! and hyper's own `header_read_timeout` would also cut a kept-alive
//! connection's idle wait to the header deadline (see `deadline.rs`), so
//! the deadlines are kept here, by a watchdog per connection.

mod client_ip;
mod config;
mod counts;
mod deadline;
mod per_ip;
mod proxy_protocol;
mod tls;
mod watched;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower_service::Service;

pub use client_ip::{ClientIp, TrustedProxies};
pub use config::HttpConfig;
pub use counts::ConnectionCounts;
use deadline::Deadlines;
use per_ip::{IpSeat, PerIp};
use proxy_protocol::Origin;
pub use tls::{Tls, TlsConfig};
use watched::{Track, Watched};

/// When a request's body must have arrived: put on each request by the
/// listener (`http.body_timeout_ms` after its headers), enforced by the
/// body extractor ([`crate::api::JsonBody`]).
#[derive(Debug, Clone, Copy)]
pub struct BodyDeadline(pub tokio::time::Instant);

/// Pause after an accept failure that is not one connection's (out of
/// file descriptors, say), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` under `config` (over `tls`, if given)
/// until `stop` resolves, then stops accepting, lets requests in flight
/// finish and returns once every connection is closed (upgraded WebSockets
/// run on by themselves). What it closes early is counted in `counts`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: &HttpConfig,
    tls: Option<Tls>,
    counts: Arc<ConnectionCounts>,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let header = Duration::from_millis(config.header_timeout_ms);
    let body = Duration::from_millis(config.body_timeout_ms);
    let idle = Duration::from_secs(config.idle_timeout_s);
    let caps = PerIp::new(config.max_connections_per_ip);
    // Validated with the config: an entry that does not parse never gets here.
    let proxies = Arc::new(TrustedProxies::parse(&config.trusted_proxies).unwrap_or_default());
    let (stopping, stopped) = watch::channel(false);
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if one_connections(&e) => continue,
                Err(_) => {
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        // A trusted proxy carries many clients: the cap is theirs, not its
        // (seated once its PROXY header names one).
        let trusted = proxies.trusts(peer.ip());
        let proxy_header = (trusted && config.proxy_protocol).then(|| Arc::clone(&caps));
        let seat = if trusted {
            None
        } else {
            let Some(seat) = caps.admit(peer.ip()) else {
                counts.refused_per_ip();
                drop(stream);
                continue;
            };
            Some(seat)
        };
        let deadlines = Deadlines::new(std::time::Instant::now(), header, idle);
        let connection = connection(
            stream,
            tls.as_ref().map(Tls::acceptor),
            peer,
            router.clone(),
            deadlines,
            Requests {
                body,
                proxies: Arc::clone(&proxies),
                origin: None,
            },
            Arc::clone(&counts),
            stopped.clone(),
            proxy_header,
        );
        tokio::spawn(async move {
            connection.await;
            drop(seat);
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    drop(stopped);
    stopping.closed().await;
    Ok(())
}

/// What each request of a connection is given: its body deadline, and who
/// its client is.
struct Requests {
    body: Duration,
    proxies: Arc<TrustedProxies>,
    /// The client a PROXY header named, if one did: its forwarding headers
    /// are judged in place of the TCP peer's.
    origin: Option<SocketAddr>,
}

/// An accept error that concerns one connection only.
fn one_connections(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    )
}

/// Serves one connection (after its PROXY header, if `proxy_header` holds
/// the caps to seat the client it names in; then after its TLS handshake,
/// if `tls`) until it ends, misses a deadline (counted in `counts` before
/// the connection is closed, so a client that sees the close also sees the
/// count), or (after `stop`) has no request in flight.
#[allow(clippy::too_many_arguments)]
async fn connection(
    stream: TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    peer: SocketAddr,
    router: Router,
    deadlines: Deadlines,
    mut requests: Requests,
    counts: Arc<ConnectionCounts>,
    stop: watch::Receiver<bool>,
    proxy_header: Option<Arc<PerIp>>,
) {
    let track = Arc::new(Track::new(deadlines));
    let mut watched = Watched::new(stream, Arc::clone(&track));
    let mut _seat = None;
    if let Some(caps) = proxy_header {
        let Some((origin, seat)) =
            proxied_client(&mut watched, &track, &caps, &requests, &counts, &stop).await
        else {
            return;
        };
        requests.origin = origin;
        _seat = seat;
    }
    let Some(tls) = tls else {
        return http(watched, track, peer, router, requests, counts, stop).await;
    };
    // Nothing of a request can come before the handshake ends.
    match before_first_request(&track, &counts, &stop, tls.accept(watched)).await {
        None => {}
        Some(Err(_)) => counts.tls_failed(),
        Some(Ok(stream)) => {
            counts.tls_handshake(stream.get_ref().1.handshake_kind());
            http(stream, track, peer, router, requests, counts, stop).await;
        }
    }
}

/// Runs `work`, which must end before a request can begin (a PROXY header,
/// a TLS handshake), under the connection's first header deadline: its
/// output, or `None` when the listener stops first or the deadline passes
/// (counted in `counts`, as for headers that come too slowly).
async fn before_first_request<F: std::future::Future>(
    track: &Track,
    counts: &ConnectionCounts,
    stop: &watch::Receiver<bool>,
    work: F,
) -> Option<F::Output> {
    let (due, why) = track.deadline()?;
    let mut stopped = stop.clone();
    tokio::select! {
        done = tokio::time::timeout_at(due.into(), work) => match done {
            Ok(output) => Some(output),
            Err(_) => {
                counts.expired(why);
                None
            }
        },
        _ = stopped.wait_for(|stopping| *stopping) => None,
    }
}

/// Reads the PROXY header a trusted proxy's connection starts with, under
/// the connection's first header deadline, and seats the client it names
/// in `caps` (unless that client is a trusted proxy too): the client (none
/// when the proxy speaks for itself) and its seat, or `None` when the
/// connection is to be closed (counted).
async fn proxied_client<S: AsyncRead + Unpin>(
    io: &mut S,
    track: &Track,
    caps: &Arc<PerIp>,
    requests: &Requests,
    counts: &ConnectionCounts,
    stop: &watch::Receiver<bool>,
) -> Option<(Option<SocketAddr>, Option<IpSeat>)> {
    let read = before_first_request(track, counts, stop, proxy_protocol::read_header(io)).await?;
    match read {
        Err(_) => {
            counts.refused_proxy_header();
            None
        }
        Ok(Origin::Proxy) => Some((None, None)),
        Ok(Origin::Client(client)) if requests.proxies.trusts(client.ip()) => {
            Some((Some(client), None))
        }
        Ok(Origin::Client(client)) => match caps.admit(client.ip()) {
            Some(seat) => Some((Some(client), Some(seat))),
            None => {
                counts.refused_per_ip();
                None
            }
        },
    }
}

/// Serves HTTP/1.1 on `io`, one connection's stream (plain or TLS) whose
/// reads are reported to `track`: see [`connection`].
async fn http<S>(
    io: S,
    track: Arc<Track>,
    peer: SocketAddr,
    router: Router,
    requests: Requests,
    counts: Arc<ConnectionCounts>,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(io);
    let service = {
        let track = Arc::clone(&track);
        hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            let mut router = router.clone();
            let track = Arc::clone(&track);
            track.request();
            request.extensions_mut().insert(ConnectInfo(peer));
            let from = requests.origin.unwrap_or(peer).ip();
            let client = requests.proxies.client_ip(from, request.headers());
            request.extensions_mut().insert(ClientIp(client));
            request
                .extensions_mut()
                .insert(BodyDeadline(tokio::time::Instant::now() + requests.body));
            async move {
                let response = router.call(request).await;
                track.responded();
                response
            }
        })
    };
    let served = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, service)
        .with_upgrades();
    let mut served = std::pin::pin!(served);
    let mut stopping = *stop.borrow();
    if stopping {
        served.as_mut().graceful_shutdown();
    }
    loop {
        let due = match track.deadline() {
            Some((at, _)) => tokio::time::sleep_until(at.into()),
            None => tokio::time::sleep(track.recheck()),
        };
        tokio::select! {
            _ = served.as_mut() => return,
            () = due => {
                if let Some(why) = track.expired() {
                    counts.expired(why);
                    // Dropping the connection closes it.
                    return;
                }
            }
            () = track.moved() => {}
            _ = stop.changed(), if !stopping => {
                stopping = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
}
