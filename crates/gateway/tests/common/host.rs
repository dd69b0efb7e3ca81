//! A real game host for the end-to-end tests, and secure-layer clients that
//! connect to it with the gateway's connect tokens.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{Client, ClientConfig, ConnectToken};
use hightick_server::{Host, HostConfig};

/// A one-worker arena host on loopback sharing `key` with the gateway.
pub(crate) fn start_host(key: &hightick_net::Key) -> Host {
    let config = HostConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        admin: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        max_matches_per_worker: 4,
        match_linger_s: 0.5,
        ..HostConfig::default()
    };
    Host::start::<hightick_arena::game::Arena>(&config, key).expect("host starts")
}

/// Drives secure-layer clients over real sockets until all are connected.
pub(crate) fn connect_all(tokens: Vec<ConnectToken>, patience: Duration) -> usize {
    let mut clients: Vec<(Client, UdpSocket)> = tokens
        .into_iter()
        .map(|t| {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            socket.set_nonblocking(true).unwrap();
            (
                Client::new(t, ClientConfig::default(), Instant::now()).unwrap(),
                socket,
            )
        })
        .collect();
    let mut buf = vec![0u8; MAX_PACKET_BYTES + 64];
    let start = Instant::now();
    while start.elapsed() < patience {
        let now = Instant::now();
        for (net, socket) in &mut clients {
            if net.poll_timeout().is_some_and(|t| t <= now) {
                net.handle_timeout(now);
            }
            while let Some(t) = net.poll_transmit(now, &mut buf) {
                let _ = socket.send_to(&buf[..t.len], t.destination);
            }
            while let Ok((n, from)) = socket.recv_from(&mut buf) {
                net.handle_datagram(now, from, &mut buf[..n]);
            }
        }
        if clients.iter().all(|(c, _)| c.is_connected()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    clients.iter().filter(|(c, _)| c.is_connected()).count()
}
