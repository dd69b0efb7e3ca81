//! A live match under a flood of garbage: random datagrams, connect
//! requests with forged tokens, and mutated copies of real packets, from
//! several sockets as fast as this machine sends them. The match keeps
//! serving its clients, every bad datagram is dropped and counted, and the
//! flooders never get more bytes back than they sent.

mod support;

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{Client, ClientConfig, Key};
use hightick_server::HostStats;
use rand::{Rng, SeedableRng};
use support::{BareClient, create_match, get, play, start_host, token};

const FLOODERS: usize = 3;

#[test]
fn garbage_floods_are_dropped_and_counted_while_the_match_plays_on() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    create_match(admin, r#"{"mode":"5v5","roster":[1,2,3,4,5,6,7,8,9,10]}"#);
    let server = host.game_addresses()[0];
    let mut clients: Vec<BareClient> = (1..=2)
        .map(|id| BareClient::new(&key, id, server))
        .collect();
    assert!(play(&mut clients, Duration::from_secs(20), |cs| cs
        .iter()
        .all(|c| c.snapshots > 10)));

    // A connect request sealed under a key the server does not share.
    let forged_key = Key::generate(&mut rand::rng());
    let mut forger = Client::new(
        token(&forged_key, 77, server),
        ClientConfig::default(),
        Instant::now(),
    )
    .unwrap();
    let mut request = vec![0u8; MAX_PACKET_BYTES];
    let t = forger
        .poll_transmit(Instant::now(), &mut request)
        .expect("a connect request");
    request.truncate(t.len);

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let sent_bytes = Arc::new(AtomicU64::new(0));
    let received_bytes = Arc::new(AtomicU64::new(0));
    let flooders: Vec<_> = (0..FLOODERS)
        .map(|f| {
            let (stop, sent, sent_bytes, received_bytes) = (
                stop.clone(),
                sent.clone(),
                sent_bytes.clone(),
                received_bytes.clone(),
            );
            let request = request.clone();
            std::thread::spawn(move || {
                let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
                socket.set_nonblocking(true).unwrap();
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(f as u64);
                let mut datagram = [0u8; 1400];
                let mut reply = [0u8; 2048];
                while !stop.load(Ordering::Relaxed) {
                    let len = match rng.random_range(0..3) {
                        // Random bytes of random length.
                        0 => {
                            let len = rng.random_range(1..1400);
                            rng.fill(&mut datagram[..len]);
                            len
                        }
                        // The forged connect request, as is.
                        1 => {
                            datagram[..request.len()].copy_from_slice(&request);
                            request.len()
                        }
                        // The forged request with a few bytes flipped.
                        _ => {
                            datagram[..request.len()].copy_from_slice(&request);
                            for _ in 0..4 {
                                let i = rng.random_range(0..request.len());
                                datagram[i] ^= rng.random::<u8>() | 1;
                            }
                            request.len()
                        }
                    };
                    if socket.send_to(&datagram[..len], server).is_ok() {
                        sent.fetch_add(1, Ordering::Relaxed);
                        sent_bytes.fetch_add(len as u64, Ordering::Relaxed);
                    }
                    while let Ok((n, _)) = socket.recv_from(&mut reply) {
                        received_bytes.fetch_add(n as u64, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();

    // Clients keep playing through three seconds of flood; every half
    // second each of them still gets snapshots.
    for _ in 0..6 {
        let before: Vec<u64> = clients.iter().map(|c| c.snapshots).collect();
        play(&mut clients, Duration::from_millis(500), |_| false);
        for (c, b) in clients.iter().zip(&before) {
            assert!(
                c.net.is_connected(),
                "client dropped during the flood: {:?}",
                c.net.state()
            );
            assert!(c.snapshots > *b, "no snapshot in half a second of flood");
        }
    }
    stop.store(true, Ordering::Relaxed);
    for f in flooders {
        f.join().unwrap();
    }

    let sent = sent.load(Ordering::Relaxed);
    assert!(sent > 1000, "the flood sent only {sent} datagrams");
    let (_, body) = get(admin, "/v1/stats");
    let stats: HostStats = serde_json::from_str(&body).unwrap();
    // The kernel drops what overflows the socket buffer; of what the server
    // read, everything that did not come from the two clients (a few
    // hundred packets a second) was dropped and counted.
    let dropped = stats.network.dropped();
    let read = stats.network.packets_in;
    assert!(
        dropped > 1000,
        "only {dropped} drops counted: {:?}",
        stats.network.drops
    );
    assert!(
        read - dropped < 5_000,
        "{read} read, {dropped} dropped: {:?}",
        stats.network.drops
    );
    assert_eq!(
        stats.network.unknown_clients, 0,
        "no forged token got a connection"
    );
    assert_eq!(stats.players_connected, 2);
    assert!(
        received_bytes.load(Ordering::Relaxed) <= sent_bytes.load(Ordering::Relaxed),
        "the server answered unauthenticated datagrams with more bytes than it got"
    );
    let (_, metrics) = get(admin, "/metrics");
    assert!(
        metrics.contains("hightick_datagrams_dropped_total{reason="),
        "drops by reason exported"
    );
    host.drain(Duration::ZERO);
    host.wait();
}
