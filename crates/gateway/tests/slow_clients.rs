//! Slow and idle clients against a real gateway on loopback:
//! - a few hundred connections trickling their headers a byte at a time
//!   neither starve real requests nor outlive the header deadline;
//! - a kept-alive connection may idle past the header deadline (it is not
//!   sending headers) and is closed at the idle deadline;
//! - a WebSocket upgrade still works, and a socket that never answers
//!   pings is closed;
//! - with `max_connections_per_ip`, an address past its cap is refused;
//! - a WebSocket client sending too big or too many messages is closed;
//! - a JSON body trickling in past its deadline is answered 408;
//! - behind a trusted TCP (layer 4) proxy, which passes the trickle on and
//!   is exempt from the per-IP cap, the header deadline still closes the
//!   slow ones and real requests through the same proxy are served.
//!
//! Outcomes only (served, closed); every wait is bounded.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hightick_gateway::listen::HttpConfig;
use hightick_gateway::push::PushConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// How long any one outcome may take to show before the test fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// Slow connections held at once.
const SLOW: usize = 300;

/// The value of a counter line in the metrics text.
fn counter(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// `/metrics` on a connection of its own (closed after the answer).
async fn metrics(gateway: SocketAddr) -> String {
    let mut stream = TcpStream::connect(gateway).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nhost: gateway\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let all = until_closed(&mut stream).await.expect("/metrics answers");
    String::from_utf8_lossy(&all).into_owned()
}

/// Reads until the peer closes; the bytes read, or `None` if it is still
/// open after [`PATIENCE`].
async fn until_closed(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read_all = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(PATIENCE, read_all).await.ok()?;
    Some(got)
}

/// One request on `stream`, read to the end of its (small) answer: the
/// status line.
async fn request(stream: &mut TcpStream, path: &str) -> String {
    let text = format!("GET {path} HTTP/1.1\r\nhost: gateway\r\n\r\n");
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let answer = async {
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before answering");
            got.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&got);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if body.len() >= length {
                    return head.lines().next().unwrap().to_owned();
                }
            }
        }
    };
    tokio::time::timeout(PATIENCE, answer)
        .await
        .expect("an answer within the patience")
}

/// A client sending `GET /healthz ...` one byte every 100 ms (it never
/// finishes), then reading: whether the gateway closed it without a byte
/// of answer.
async fn trickle(gateway: SocketAddr) -> bool {
    let mut stream = TcpStream::connect(gateway).await.unwrap();
    let header = b"GET /healthz HTTP/1.1\r\nhost: gateway\r\nx-slow: ".repeat(100);
    let (mut rd, mut wr) = stream.split();
    let send = async {
        for byte in &header {
            if wr.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let mut first = [0u8; 1];
    let closed = async { matches!(rd.read(&mut first).await, Ok(0) | Err(_)) };
    tokio::select! {
        closed = closed => closed,
        () = send => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byte_at_a_time_clients_starve_no_one_and_are_closed_at_the_header_deadline() {
    let config = hightick_gateway::GatewayConfig {
        http: HttpConfig {
            header_timeout_ms: 2_000,
            ..HttpConfig::default()
        },
        ..common::test_config()
    };
    let (gateway, _, http) = common::sqlite_gateway("slow_headers", &config).await;
    let address = gateway.address();
    slow_ones_are_closed_while_players_are_served(address, address, &http, SLOW, 20).await;
    gateway.shutdown().await.unwrap();
}

/// `slow` byte-at-a-time clients reach the gateway at `gateway` through
/// `via` while `players` real ones log in and read their profiles through
/// `http`: every real request is served, every slow client is closed and
/// never answered, and the gateway counts at least `slow` header timeouts.
async fn slow_ones_are_closed_while_players_are_served(
    gateway: SocketAddr,
    via: SocketAddr,
    http: &common::Http,
    slow: usize,
    players: usize,
) {
    let clients: Vec<_> = (0..slow).map(|_| tokio::spawn(trickle(via))).collect();
    // Real players are served while the slow ones hold their connections.
    for i in 0..players {
        assert_eq!(http.get("/healthz", None).await.status, 200);
        let (_, token) = http.guest(&format!("slow-headers-{i}")).await;
        assert_eq!(http.get("/v1/me/profile", Some(&token)).await.status, 200);
    }
    // Each slow one is closed (before its 4,900 bytes could be sent at
    // 10 a second), never answered.
    for (i, client) in clients.into_iter().enumerate() {
        let closed = tokio::time::timeout(PATIENCE * 2, client)
            .await
            .expect("each slow client ends")
            .unwrap();
        assert!(closed, "slow client {i} was not closed");
    }
    let closed = counter(
        &metrics(gateway).await,
        "hightick_gateway_connections_closed_header_timeout_total",
    );
    assert!(closed >= slow as u64, "{closed} counted");
}

/// A TCP (layer 4) proxy on 127.0.0.1 in front of `upstream`, as a cloud
/// network load balancer is: bytes pass both ways as they come, and each
/// client's connection reaches the gateway from the proxy's address.
async fn tcp_proxy(upstream: SocketAddr) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(mut server) = TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_tcp_proxy_byte_at_a_time_clients_are_still_closed_at_the_header_deadline() {
    let config = hightick_gateway::GatewayConfig {
        http: HttpConfig {
            header_timeout_ms: 2_000,
            // Far below the slow connections the proxy carries: it is not
            // capped because it is trusted, so the deadline is the defence.
            max_connections_per_ip: 4,
            trusted_proxies: vec!["127.0.0.1/32".to_owned()],
            ..HttpConfig::default()
        },
        ..common::test_config()
    };
    let (gateway, _, _) = common::sqlite_gateway("slow_behind_proxy", &config).await;
    let proxy = tcp_proxy(gateway.address()).await;
    let http = common::Http::new(proxy, 4);
    slow_ones_are_closed_while_players_are_served(gateway.address(), proxy, &http, SLOW / 3, 10)
        .await;
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_may_idle_past_the_header_deadline_and_is_closed_at_the_idle_one() {
    let config = hightick_gateway::GatewayConfig {
        http: HttpConfig {
            header_timeout_ms: 200,
            idle_timeout_s: 2,
            ..HttpConfig::default()
        },
        ..common::test_config()
    };
    let (gateway, _, _) = common::sqlite_gateway("slow_idle", &config).await;
    let mut stream = TcpStream::connect(gateway.address()).await.unwrap();
    assert!(request(&mut stream, "/healthz").await.contains(" 200 "));
    // Idle for several header deadlines, under the idle one: still served.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(request(&mut stream, "/healthz").await.contains(" 200 "));
    // Then silent: closed, with nothing more said.
    let rest = until_closed(&mut stream)
        .await
        .expect("the idle connection is closed");
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    let text = metrics(gateway.address()).await;
    assert_eq!(
        counter(&text, "hightick_gateway_connections_closed_idle_total"),
        1
    );
    assert_eq!(
        counter(
            &text,
            "hightick_gateway_connections_closed_header_timeout_total"
        ),
        0
    );
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_cap_an_address_is_refused_and_a_freed_seat_serves_again() {
    let config = hightick_gateway::GatewayConfig {
        http: HttpConfig {
            max_connections_per_ip: 2,
            ..HttpConfig::default()
        },
        ..common::test_config()
    };
    let (gateway, _, _) = common::sqlite_gateway("slow_per_ip", &config).await;
    let address = gateway.address();
    let mut first = TcpStream::connect(address).await.unwrap();
    let mut second = TcpStream::connect(address).await.unwrap();
    assert!(request(&mut first, "/healthz").await.contains(" 200 "));
    assert!(request(&mut second, "/healthz").await.contains(" 200 "));
    // A third from the same address is closed unanswered.
    let mut third = TcpStream::connect(address).await.unwrap();
    let _ = third
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: gateway\r\n\r\n")
        .await;
    let said = until_closed(&mut third).await.expect("the third is closed");
    assert!(said.is_empty(), "{}", String::from_utf8_lossy(&said));
    // One closes: a new one is served (its seat is freed when the server
    // side sees the close, so try until then).
    drop(first);
    let served = tokio::time::timeout(PATIENCE, async {
        loop {
            let mut again = TcpStream::connect(address).await.unwrap();
            let text = b"GET /metrics HTTP/1.1\r\nhost: gateway\r\nconnection: close\r\n\r\n";
            if again.write_all(text).await.is_ok()
                && let Some(all) = until_closed(&mut again).await
                && !all.is_empty()
            {
                return String::from_utf8_lossy(&all).into_owned();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a freed seat serves again");
    assert!(counter(&served, "hightick_gateway_connections_refused_per_ip_total") >= 1);
    drop(second);
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_upgrade_works_and_one_that_never_answers_pings_is_closed() {
    let config = hightick_gateway::GatewayConfig {
        http: HttpConfig {
            header_timeout_ms: 500,
            idle_timeout_s: 1,
            ..HttpConfig::default()
        },
        push: PushConfig {
            ping_s: 1,
            ..PushConfig::default()
        },
        ..common::test_config()
    };
    let (gateway, _, http) = common::sqlite_gateway("slow_ws", &config).await;
    let (_, token) = http.guest("slow-ws").await;
    let connect = |token: &str| {
        let mut request = format!("ws://{}/v1/events", gateway.address())
            .into_client_request()
            .unwrap();
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        tokio_tungstenite::connect_async(request)
    };
    // A socket that reads (so answers pings) outlives both HTTP deadlines
    // and several ping intervals; one that never reads never answers.
    let (mut live, _) = connect(&token).await.unwrap();
    let (mut deaf, _) = connect(&token).await.unwrap();
    let reading = tokio::spawn(async move {
        let mut pings = 0;
        while let Some(Ok(message)) = live.next().await {
            if let Message::Ping(_) = message {
                pings += 1;
                if pings == 4 {
                    return Some(live);
                }
            }
        }
        None
    });
    let mut live = tokio::time::timeout(PATIENCE, reading)
        .await
        .expect("four pings within the patience")
        .unwrap()
        .expect("the answering socket stays open");
    let dropped = "hightick_gateway_push_dropped_other_total";
    let waited = tokio::time::timeout(PATIENCE, async {
        while counter(&http.get("/metrics", None).await.text, dropped) == 0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the deaf socket was never dropped");
    // The deaf client, reading at last, finds pings and then the close.
    let reason = tokio::time::timeout(PATIENCE, async {
        loop {
            match deaf.next().await {
                Some(Ok(Message::Close(frame))) => return frame.map(|f| f.reason.to_string()),
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return None,
            }
        }
    })
    .await
    .expect("the deaf socket ends");
    if let Some(reason) = reason {
        assert!(reason.contains("pong"), "{reason}");
    }
    // The live one still works.
    live.send(Message::Text("hello".into())).await.unwrap();
    gateway.shutdown().await.unwrap();
}

/// Reads `socket` until it ends: the close frame's code and reason, if
/// one came.
async fn end_of(
    socket: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
) -> Option<(u16, String)> {
    tokio::time::timeout(PATIENCE, async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Close(frame))) => {
                    return frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return None,
            }
        }
    })
    .await
    .expect("the socket ends within the patience")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_sending_too_big_or_too_many_messages_is_closed() {
    let config = hightick_gateway::GatewayConfig {
        push: PushConfig {
            max_message_bytes: 1024,
            max_client_messages: 8,
            ..PushConfig::default()
        },
        ..common::test_config()
    };
    let (gateway, _, http) = common::sqlite_gateway("slow_ws_limits", &config).await;
    let (_, token) = http.guest("ws-limits").await;
    let connect = || {
        let mut request = format!("ws://{}/v1/events", gateway.address())
            .into_client_request()
            .unwrap();
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        tokio_tungstenite::connect_async(request)
    };
    // Too big: the gateway stops reading it and the socket ends.
    let (mut big, _) = connect().await.unwrap();
    let _ = big.send(Message::Text("x".repeat(4096).into())).await;
    let _ = end_of(&mut big).await;
    // Too many: closed as a policy violation, with the reason.
    let (mut chatty, _) = connect().await.unwrap();
    for i in 0..20 {
        if chatty
            .send(Message::Text(format!("{i}").into()))
            .await
            .is_err()
        {
            break;
        }
    }
    if let Some((code, reason)) = end_of(&mut chatty).await {
        assert_eq!(code, 1008);
        assert!(reason.contains("too many"), "{reason}");
    }
    let dropped = counter(
        &metrics(gateway.address()).await,
        "hightick_gateway_push_dropped_other_total",
    );
    assert!(dropped >= 1, "{dropped}");
    // A well-behaved socket still opens.
    let (mut fine, _) = connect().await.unwrap();
    fine.send(Message::Text("hello".into())).await.unwrap();
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_trickling_in_past_its_deadline_is_answered_408_naming_the_body() {
    let config = hightick_gateway::GatewayConfig {
        http: HttpConfig {
            body_timeout_ms: 300,
            ..HttpConfig::default()
        },
        ..common::test_config()
    };
    let (gateway, _, _) = common::sqlite_gateway("slow_body", &config).await;
    let mut stream = TcpStream::connect(gateway.address()).await.unwrap();
    let head = "POST /v1/auth/guest HTTP/1.1\r\nhost: gateway\r\n\
                content-type: application/json\r\ncontent-length: 100\r\n\r\n{";
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut rd, mut wr) = stream.split();
    let trickle = async {
        for _ in 0..99 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if wr.write_all(b" ").await.is_err() {
                break;
            }
        }
        std::future::pending::<()>().await;
    };
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(PATIENCE, async {
        tokio::select! {
            () = read => {}
            () = trickle => {}
        }
    })
    .await
    .expect("answered and closed within the patience");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains(r#""field":"body""#), "{text}");
    gateway.shutdown().await.unwrap();
}
