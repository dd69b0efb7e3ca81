//! The gateway behind a real reverse proxy on loopback (a small one of the
//! test's own, which appends the client's address to `X-Forwarded-For` as
//! nginx does), with `[http] trusted_proxies` naming it:
//! - two clients behind the proxy each get their own rate-limit budget;
//! - a client that forges `X-Forwarded-For` changes nothing, directly or
//!   through the proxy;
//! - the per-IP connection cap does not count the proxy (its address
//!   already holds a connection when its requests go through);
//! - the access log names each client by the address the proxy forwarded,
//!   the proxy as the peer, and routes without their ids;
//! - behind a TCP proxy that sends the PROXY protocol (v2, as a cloud
//!   network load balancer does), the same budgets hold, the per-IP cap
//!   counts each client it names, and a connection from the proxy's address
//!   without a header is closed.
//!
//! Clients take distinct source addresses on 127.0.0.0/8. Every wait is
//! bounded.

mod common;

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use hightick_gateway::config::GatewayConfig;
use hightick_gateway::listen::HttpConfig;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};

const PATIENCE: Duration = Duration::from_secs(20);

/// A keep-alive HTTP/1.1 connection to `target` from a socket bound to
/// `source` (one connection for all its requests: the per-IP cap is 1).
struct Client(
    hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    SocketAddr,
);

impl Client {
    async fn connect(source: IpAddr, target: SocketAddr) -> Self {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(source, 0)).unwrap();
        let stream = tokio::time::timeout(PATIENCE, socket.connect(target))
            .await
            .unwrap()
            .unwrap();
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(conn);
        Self(send, target)
    }

    /// `GET path` with `headers`: the answer's status.
    async fn get(&mut self, path: &str, headers: &[(&str, &str)]) -> u16 {
        self.answer(path, headers).await.0
    }

    /// `GET path` with `headers`: the answer's status and body.
    async fn answer(&mut self, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut request = hyper::Request::get(path).header("host", self.1.to_string());
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let request = request.body(Empty::<Bytes>::new()).unwrap();
        let answer = tokio::time::timeout(PATIENCE, async {
            self.0.ready().await?;
            self.0.send_request(request).await
        })
        .await
        .unwrap()
        .unwrap();
        let status = answer.status().as_u16();
        let body = answer.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}

/// A reverse proxy on 127.0.0.1 in front of `upstream`: each request goes on
/// with the caller's address appended to `X-Forwarded-For`.
async fn reverse_proxy(upstream: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request| forward(request, peer, upstream));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    address
}

async fn forward(
    request: hyper::Request<Incoming>,
    peer: SocketAddr,
    upstream: SocketAddr,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let (mut parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let chain = match parts
        .headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
    {
        Some(before) => format!("{before}, {}", peer.ip()),
        None => peer.ip().to_string(),
    };
    parts
        .headers
        .insert("x-forwarded-for", chain.parse().unwrap());
    let stream = tokio::net::TcpStream::connect(upstream).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let answer = send
        .send_request(hyper::Request::from_parts(parts, Full::new(body)))
        .await
        .unwrap();
    let (parts, body) = answer.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    Ok(hyper::Response::from_parts(parts, Full::new(body)))
}

/// A TCP proxy on 127.0.0.1 in front of `upstream` that opens each
/// connection with a PROXY v2 header naming the client's address.
async fn proxy_protocol_proxy(upstream: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut client, peer)) = listener.accept().await {
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let header = ppp::v2::Builder::with_addresses(
                    ppp::v2::Version::Two | ppp::v2::Command::Proxy,
                    ppp::v2::Protocol::Stream,
                    (peer, upstream),
                )
                .build()
                .unwrap();
                if server.write_all(&header).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    address
}

/// Sends one request from `source` to `target` on a connection of its own:
/// whether the connection was closed without a byte of answer.
async fn closed_unanswered(source: IpAddr, target: SocketAddr) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(source, 0)).unwrap();
    let mut stream = socket.connect(target).await.unwrap();
    let _ = stream
        .write_all(b"GET /v1/me/inventory HTTP/1.1\r\nhost: gateway\r\n\r\n")
        .await;
    let mut first = [0u8; 1];
    let read = tokio::time::timeout(PATIENCE, stream.read(&mut first)).await;
    matches!(read.expect("an answer or a close"), Ok(0) | Err(_))
}

/// A gateway trusting the proxies on 127.0.0.1 (sending the PROXY protocol
/// if `proxy_protocol`), logging to `log`: three requests per address, then
/// 429 for a long while, and one connection per address (a proxy opens
/// many).
fn behind_a_proxy(log: &std::path::Path, proxy_protocol: bool) -> GatewayConfig {
    GatewayConfig {
        rate_limit_per_s: 0.01,
        rate_limit_burst: 3,
        http: HttpConfig {
            trusted_proxies: vec!["127.0.0.1/32".to_owned()],
            proxy_protocol,
            max_connections_per_ip: 1,
            access_log: log.display().to_string(),
            ..HttpConfig::default()
        },
        ..common::test_config()
    }
}

/// The access log's lines, each a JSON object.
fn access_log(log: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_behind_a_trusted_proxy_get_their_own_budgets_and_forged_headers_change_nothing() {
    let log = common::temp_dir("behind_a_proxy_log").join("access.jsonl");
    let config = behind_a_proxy(&log, false);
    let (gateway, _, _) = common::sqlite_gateway("behind_a_proxy", &config).await;
    let proxy = reverse_proxy(gateway.address()).await;
    // The proxy's address already holds a connection: with the cap of one,
    // the proxy's own get through only because a trusted proxy is not
    // counted.
    let _held = tokio::net::TcpStream::connect(gateway.address())
        .await
        .unwrap();
    let mut a = Client::connect(ip("127.0.0.2"), proxy).await;
    let mut b = Client::connect(ip("127.0.0.3"), proxy).await;
    let mut direct = Client::connect(ip("127.0.0.4"), gateway.address()).await;
    let path = "/v1/me/inventory";

    // Client A through the proxy: its three, then refused, even when it
    // claims to be someone else (the proxy appends its real address).
    for _ in 0..3 {
        assert_eq!(a.get(path, &[]).await, 401);
    }
    assert_eq!(a.get(path, &[]).await, 429);
    assert_eq!(
        a.get(path, &[("x-forwarded-for", "203.0.113.9")]).await,
        429
    );

    // Client B through the same proxy has a budget of its own.
    assert_eq!(b.get(path, &[]).await, 401);
    let secret = "/v1/matchmaking/tickets/ticket-secret?wait_ms=1";
    assert_eq!(b.get(secret, &[]).await, 401);

    // A client reaching the gateway directly is not a trusted proxy: each
    // forged header names someone new, and it is limited as itself.
    for i in 0..3 {
        let claim = format!("198.51.100.{i}");
        assert_eq!(direct.get(path, &[("x-forwarded-for", &claim)]).await, 401);
    }
    let forged = [("x-forwarded-for", "198.51.100.200")];
    assert_eq!(direct.get(path, &forged).await, 429);

    gateway.shutdown().await.unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("ticket-secret"), "{text}");
    let lines = access_log(&log);
    let of = |client: &str| -> Vec<(String, u64)> {
        lines
            .iter()
            .filter(|l| l["client"] == client)
            .map(|l| {
                (
                    l["route"].as_str().unwrap().to_owned(),
                    l["status"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let inventory = |status| (path.to_owned(), status);
    assert_eq!(
        of("127.0.0.2"),
        [
            inventory(401),
            inventory(401),
            inventory(401),
            inventory(429),
            inventory(429)
        ]
    );
    assert_eq!(
        of("127.0.0.3"),
        [
            inventory(401),
            ("/v1/matchmaking/tickets/{ticket}".to_owned(), 401)
        ]
    );
    assert_eq!(of("127.0.0.4").len(), 4, "the direct client, as itself");
    assert!(
        of("198.51.100.200").is_empty(),
        "a forged address is never logged as the client"
    );
    for line in &lines {
        let peer: SocketAddr = line["peer"].as_str().unwrap().parse().unwrap();
        let through_proxy = line["client"] != "127.0.0.4";
        assert_eq!(peer.ip() == ip("127.0.0.1"), through_proxy, "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_protocol_proxy_each_client_is_the_one_its_header_names() {
    let log = common::temp_dir("proxy_protocol_log").join("access.jsonl");
    let config = behind_a_proxy(&log, true);
    let (gateway, _, _) = common::sqlite_gateway("proxy_protocol", &config).await;
    let proxy = proxy_protocol_proxy(gateway.address()).await;
    let mut a = Client::connect(ip("127.0.0.2"), proxy).await;
    let mut b = Client::connect(ip("127.0.0.3"), proxy).await;
    let path = "/v1/me/inventory";

    // Budgets are the clients', not the proxy's.
    for _ in 0..3 {
        assert_eq!(a.get(path, &[]).await, 401);
    }
    assert_eq!(a.get(path, &[]).await, 429);
    assert_eq!(b.get(path, &[]).await, 401);

    // The cap of one counts client A, whose first connection is still open.
    assert!(closed_unanswered(ip("127.0.0.2"), proxy).await);
    // From the proxy's own address, a connection without a header is closed.
    assert!(closed_unanswered(ip("127.0.0.1"), gateway.address()).await);
    // Any other peer sends none and is served as itself.
    let mut direct = Client::connect(ip("127.0.0.4"), gateway.address()).await;
    assert_eq!(direct.get(path, &[]).await, 401);

    let (_, counts) = direct.answer("/metrics", &[]).await;
    for (name, at_least) in [
        ("hightick_gateway_connections_refused_per_ip_total", 1),
        ("hightick_gateway_connections_refused_proxy_header_total", 1),
    ] {
        let value: u64 = counts
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in {counts}"));
        assert!(value >= at_least, "{name} = {value}");
    }
    gateway.shutdown().await.unwrap();
    let clients: Vec<(String, String)> = access_log(&log)
        .into_iter()
        .filter(|l| l["route"] == path)
        .map(|l| {
            let peer: SocketAddr = l["peer"].as_str().unwrap().parse().unwrap();
            (
                l["client"].as_str().unwrap().to_owned(),
                peer.ip().to_string(),
            )
        })
        .collect();
    let through = |c: &str| (c.to_owned(), "127.0.0.1".to_owned());
    assert_eq!(
        clients,
        [
            through("127.0.0.2"),
            through("127.0.0.2"),
            through("127.0.0.2"),
            through("127.0.0.2"),
            through("127.0.0.3"),
            ("127.0.0.4".to_owned(), "127.0.0.4".to_owned()),
        ]
    );
}
