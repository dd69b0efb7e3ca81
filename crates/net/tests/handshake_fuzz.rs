//! Property tests: random bytes and mutated copies of real datagrams, fed to
//! a server and a client in every state, never panic, never get an answer,
//! never disturb the connection, and are each counted exactly once.

mod secure_pair;

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{Client, ClientConfig, DropKind, Server};
use proptest::prelude::*;
use secure_pair::{Gateway, Pair, client_addr, server_addr};

/// A connected pair whose every datagram so far was captured: the handshake
/// and a short exchange of messages both ways.
fn captured_pair() -> Pair {
    let mut gw = Gateway::new(41);
    let token = gw.token(41, &[server_addr()], 10);
    let mut pair = gw.pair(4, token, 5, 41);
    pair.capture = true;
    assert!(pair.run_until(Duration::from_secs(2), |p| p.client.is_connected()));
    pair.server.send_reliable(0, &[1u8; 600]).unwrap();
    pair.server.send_unreliable(0, b"snapshot").unwrap();
    pair.client.send_reliable(b"input").unwrap();
    pair.run_until(Duration::from_millis(300), |_| false);
    pair.capture = false;
    pair.run_until(Duration::from_millis(100), |_| false);
    pair
}

/// The captured datagrams (client to server, server to client), computed once:
/// every pair built with the same seeds produces the same bytes.
type Datagrams = Vec<Vec<u8>>;

fn corpus() -> &'static (Datagrams, Datagrams) {
    static CORPUS: OnceLock<(Datagrams, Datagrams)> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let p = captured_pair();
        (p.captured_from_client, p.captured_from_server)
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, mask: u8 },
    Truncate { to: usize },
    Extend { tail: Vec<u8> },
    Prefix { byte: u8 },
    Overwrite { at: usize, bytes: Vec<u8> },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        any::<usize>().prop_map(|to| Mutation::Truncate { to }),
        proptest::collection::vec(any::<u8>(), 1..64).prop_map(|tail| Mutation::Extend { tail }),
        any::<u8>().prop_map(|byte| Mutation::Prefix { byte }),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..32)
        )
            .prop_map(|(at, bytes)| Mutation::Overwrite { at, bytes }),
    ]
}

fn apply(original: &[u8], m: &Mutation) -> Vec<u8> {
    let mut d = original.to_vec();
    match m {
        Mutation::Flip { at, mask } => {
            let i = at % d.len();
            d[i] ^= mask;
        }
        Mutation::Truncate { to } => d.truncate(to % d.len()),
        Mutation::Extend { tail } => d.extend_from_slice(tail),
        Mutation::Prefix { byte } => d[0] = *byte,
        Mutation::Overwrite { at, bytes } => {
            let start = at % d.len();
            for (slot, b) in d[start..].iter_mut().zip(bytes) {
                *slot = *b;
            }
        }
    }
    d
}

/// Feeds `datagram` to the server and checks it was counted once and answered never.
fn feed_server(server: &mut Server, now: std::time::Instant, from: SocketAddr, datagram: &[u8]) {
    let before = server.counters().total();
    server.handle_datagram(now, from, &mut datagram.to_vec());
    assert_eq!(
        server.counters().total(),
        before + 1,
        "not counted: {datagram:?}"
    );
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    assert!(
        server.poll_transmit(now, &mut buf).is_none(),
        "answered {datagram:?}"
    );
}

fn feed_client(client: &mut Client, now: std::time::Instant, datagram: &[u8]) {
    let before = client.counters().total();
    client.handle_datagram(now, server_addr(), &mut datagram.to_vec());
    assert_eq!(
        client.counters().total(),
        before + 1,
        "not counted: {datagram:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random datagrams of any size from any address: all dropped and counted,
    /// none answered. Half of them look like connection requests.
    #[test]
    fn random_datagrams_to_a_fresh_server(
        datagrams in proptest::collection::vec(
            (proptest::collection::vec(any::<u8>(), 0..1300), any::<bool>(), any::<u16>()),
            1..16,
        )
    ) {
        let now = std::time::Instant::now();
        let mut server = Gateway::new(43).server(4, now);
        for (mut d, as_request, port) in datagrams {
            if as_request {
                d.resize(hightick_net::wire::REQUEST_BYTES, 0);
                d[0] = 0;
            }
            feed_server(&mut server, now, SocketAddr::from(([10, 2, 0, 1], port)), &d);
        }
        prop_assert_eq!(server.connected_clients(), 0);
    }

    /// Mutated copies of every captured datagram (and the originals, which are
    /// now replays), fed to the connected server and client: each is counted,
    /// none is answered, and the connection carries on.
    #[test]
    fn mutated_datagrams_to_connected_ends(
        picks in proptest::collection::vec((any::<usize>(), mutation(), any::<bool>()), 1..12)
    ) {
        let (up, down) = corpus();
        let mut pair = captured_pair();
        pair.flush();
        let now = pair.now;
        for (pick, m, mutate) in &picks {
            let original = &up[pick % up.len()];
            let d = if *mutate { apply(original, m) } else { original.clone() };
            feed_server(&mut pair.server, now, client_addr(), &d);
            let original = &down[pick % down.len()];
            let d = if *mutate { apply(original, m) } else { original.clone() };
            feed_client(&mut pair.client, now, &d);
        }
        prop_assert!(pair.server.is_connected(0) && pair.client.is_connected());
        let mut out = [0u8; 64];
        pair.client.send_reliable(b"still here").unwrap();
        let arrived = pair.run_until(Duration::from_secs(1), |p| {
            p.server.poll_message(0, &mut out).is_some_and(|m| &out[..m.len] == b"still here")
        });
        prop_assert!(arrived);
    }

    /// A client in every state (connecting, waiting for the keep-alive,
    /// connected) drops random datagrams from its server and counts them.
    #[test]
    fn random_datagrams_to_a_client(
        datagrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..1300), 1..16),
        stage in 0usize..3,
    ) {
        let now = std::time::Instant::now();
        let mut gw = Gateway::new(44);
        let mut server = gw.server(4, now);
        let mut client = Client::new(gw.token(1, &[server_addr()], 5), ClientConfig::default(), now).unwrap();
        let mut buf = vec![0u8; MAX_PACKET_BYTES];
        // Walk the handshake forward by hand to the chosen stage.
        for _ in 0..stage {
            let t = client.poll_transmit(now, &mut buf).unwrap();
            server.handle_datagram(now, client_addr(), &mut buf[..t.len]);
            let t = server.poll_transmit(now, &mut buf).unwrap();
            client.handle_datagram(now, server_addr(), &mut buf[..t.len]);
        }
        prop_assert_eq!(client.is_connected(), stage == 2);
        for d in datagrams {
            feed_client(&mut client, now, &d);
        }
        prop_assert_eq!(client.is_connected(), stage == 2);
        prop_assert!(client.counters().get(DropKind::Truncated) + client.counters().get(DropKind::Malformed)
            + client.counters().get(DropKind::AuthFailed) + client.counters().get(DropKind::Oversized)
            + client.counters().get(DropKind::UnexpectedPacket) + client.counters().get(DropKind::Replayed)
            == client.counters().total());
    }
}
