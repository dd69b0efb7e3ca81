//! The proxy on real UDP sockets on loopback: an echo server behind it,
//! several clients in front. Waits are bounded polls for a condition,
//! never timing assertions.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use hightick_netem::{DirectionProfile, Limits, LinkProfile, Proxy, ProxyConfig, Route};

const PATIENCE: Duration = Duration::from_secs(10);

/// A server that echoes every datagram, prefixed with the sender's port.
fn echo_server() -> (SocketAddr, std::thread::JoinHandle<Vec<SocketAddr>>) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let addr = socket.local_addr().unwrap();
    let thread = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 2048];
        let start = Instant::now();
        while start.elapsed() < PATIENCE {
            let Ok((n, from)) = socket.recv_from(&mut buf) else {
                continue;
            };
            if &buf[..n] == b"quit" {
                break;
            }
            if !seen.contains(&from) {
                seen.push(from);
            }
            let mut reply = from.port().to_be_bytes().to_vec();
            reply.extend_from_slice(&buf[..n]);
            socket.send_to(&reply, from).unwrap();
        }
        seen
    });
    (addr, thread)
}

fn proxy(upstream: SocketAddr, profile: LinkProfile, limits: Limits) -> Proxy {
    Proxy::start(ProxyConfig {
        limits,
        ..ProxyConfig::new("127.0.0.1:0".parse().unwrap(), upstream, profile, 1)
    })
    .unwrap()
}

/// Sends `message` from `client` until an answer comes back (the link may
/// lose some); returns it.
fn ask(client: &UdpSocket, to: SocketAddr, message: &[u8]) -> Vec<u8> {
    client
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 2048];
    while start.elapsed() < PATIENCE {
        client.send_to(message, to).unwrap();
        if let Ok((n, from)) = client.recv_from(&mut buf) {
            assert_eq!(from, to, "answers come from the proxy");
            return buf[..n].to_vec();
        }
    }
    panic!("no answer through the proxy");
}

#[test]
fn each_client_is_a_distinct_client_of_the_server_and_gets_its_own_answers() {
    let (server, echo) = echo_server();
    let p = proxy(
        server,
        LinkProfile::builtin("wifi").unwrap(),
        Limits::default(),
    );
    let clients: Vec<UdpSocket> = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let mut upstream_ports = Vec::new();
    for (i, c) in clients.iter().enumerate() {
        let message = format!("hello {i}");
        let answer = ask(c, p.local_addr(), message.as_bytes());
        assert_eq!(&answer[2..], message.as_bytes());
        upstream_ports.push(u16::from_be_bytes([answer[0], answer[1]]));
    }
    // The server saw three different source ports, none of them a client's.
    upstream_ports.sort_unstable();
    upstream_ports.dedup();
    assert_eq!(upstream_ports.len(), 3);
    for c in &clients {
        assert!(!upstream_ports.contains(&c.local_addr().unwrap().port()));
    }
    let quit = UdpSocket::bind("127.0.0.1:0").unwrap();
    quit.send_to(b"quit", server).unwrap();
    assert_eq!(echo.join().unwrap().len(), 3);
    let report = p.stop().unwrap();
    assert_eq!(report.emulator.flows_opened, 3);
    assert!(report.emulator.up.delivered >= 3, "{report:?}");
    assert!(report.cpu_s > 0.0, "{report:?}");
    assert!(report.ns_per_datagram > 0.0, "{report:?}");
}

#[test]
fn a_dead_link_forwards_nothing_and_idle_flows_are_forgotten() {
    let (server, echo) = echo_server();
    let dead = LinkProfile {
        name: "dead".into(),
        up: DirectionProfile {
            loss: 1.0,
            ..DirectionProfile::PERFECT
        },
        down: DirectionProfile::PERFECT,
    };
    let limits = Limits {
        max_flows: 2,
        idle_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let p = proxy(server, dead, limits);
    let clients: Vec<UdpSocket> = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for c in &clients {
        c.send_to(b"lost", p.local_addr()).unwrap();
    }
    // Wait until the proxy has seen all three, then until both flows it
    // took have expired.
    let start = Instant::now();
    loop {
        let r = p.report().emulator;
        if r.up.datagrams == 2 && r.flows_refused == 1 && r.flows_expired == 2 {
            break;
        }
        assert!(start.elapsed() < PATIENCE, "{r:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let quit = UdpSocket::bind("127.0.0.1:0").unwrap();
    quit.send_to(b"quit", server).unwrap();
    assert!(echo.join().unwrap().is_empty());
    let report = p.stop().unwrap();
    assert_eq!(report.emulator.up.delivered, 0);
    assert_eq!(report.emulator.flows_open, 0);
}

#[test]
fn each_route_reaches_its_own_server_and_answers_come_back_on_it() {
    let (a, echo_a) = echo_server();
    let (b, echo_b) = echo_server();
    let lan = LinkProfile::builtin("lan").unwrap();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let p = Proxy::start(ProxyConfig {
        routes: vec![
            Route {
                listen: any,
                upstream: a,
            },
            Route {
                listen: any,
                upstream: b,
            },
        ],
        ..ProxyConfig::new(any, a, lan, 1)
    })
    .unwrap();
    let [to_a, to_b] = [p.listening()[0], p.listening()[1]];
    assert_ne!(to_a, to_b);
    // One client on both routes: two flows, one per server.
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    assert_eq!(&ask(&client, to_a, b"via a")[2..], b"via a");
    assert_eq!(&ask(&client, to_b, b"via b")[2..], b"via b");
    let quit = UdpSocket::bind("127.0.0.1:0").unwrap();
    quit.send_to(b"quit", a).unwrap();
    quit.send_to(b"quit", b).unwrap();
    assert_eq!(echo_a.join().unwrap().len(), 1);
    assert_eq!(echo_b.join().unwrap().len(), 1);
    assert_eq!(p.stop().unwrap().emulator.flows_opened, 2);
}
