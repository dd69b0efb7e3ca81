//! The handshake between `Client` and `Server` over simulated links: success,
//! refused tokens (expired, forged, replayed), replayed and tampered packets,
//! the connection limit, timeouts, disconnects, and the rule that a server never
//! answers an unauthenticated datagram with more bytes than it received.

mod secure_pair;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hightick_net::wire::{MAX_PACKET_BYTES, REQUEST_BYTES};
use hightick_net::{
    Client, ClientConfig, ClientEvent, ClientState, DisconnectReason, DropKind, ServerEvent,
};
use secure_pair::{Gateway, Pair, USER_DATA, clean_link, client_addr, server_addr};

fn client(token: hightick_net::ConnectToken, now: Instant) -> Client {
    Client::new(token, ClientConfig::default(), now).unwrap()
}

#[test]
fn handshake_succeeds_and_hands_over_user_data() {
    let mut gw = Gateway::new(1);
    let token = gw.token(4242, &[server_addr()], 5);
    let mut pair = gw.pair(8, token, 20, 1);
    assert!(pair.run_until(Duration::from_secs(2), |p| p.client.is_connected()));
    // Request, challenge, response, keep-alive: two round trips.
    assert!(
        pair.elapsed() >= Duration::from_millis(80) && pair.elapsed() < Duration::from_millis(200)
    );
    pair.run_until(Duration::from_millis(100), |_| false);

    match &pair.server_events[..] {
        [
            ServerEvent::Connected {
                slot: 0,
                client_id: 4242,
                user_data,
            },
        ] => {
            assert_eq!(&user_data[..USER_DATA.len()], USER_DATA);
        }
        other => panic!("unexpected server events {other:?}"),
    }
    assert_eq!(
        pair.client_events,
        vec![ClientEvent::Connected {
            server: server_addr()
        }]
    );
    assert_eq!(pair.client.slot(), (0, 8));
    assert_eq!(pair.server.client_id(0), Some(4242));
    assert_eq!(pair.server.client_address(0), Some(client_addr()));
    assert_eq!(pair.server.connected_clients(), 1);
    assert_eq!(
        pair.server.counters().total(),
        0,
        "{:?}",
        pair.server.counters()
    );
    assert_eq!(
        pair.client.counters().total(),
        0,
        "{:?}",
        pair.client.counters()
    );

    // Keep-alives hold an idle connection open well past the 5 s timeout.
    pair.run_until(Duration::from_secs(20), |_| false);
    assert!(pair.client.is_connected() && pair.server.is_connected(0));
}

#[test]
fn messages_flow_both_ways_after_the_handshake() {
    let mut pair = Pair::connected(3, clean_link(10, 3), clean_link(10, 4));
    pair.server.send_reliable(0, b"round starts").unwrap();
    pair.client.send_unreliable(b"input 1").unwrap();
    let mut got_client = None;
    let mut got_server = None;
    let mut out = [0u8; 64];
    pair.run_until(Duration::from_secs(1), |p| {
        if let Some(m) = p.client.poll_message(&mut out) {
            got_client = Some(out[..m.len].to_vec());
        }
        if let Some(m) = p.server.poll_message(0, &mut out) {
            got_server = Some(out[..m.len].to_vec());
        }
        got_client.is_some() && got_server.is_some()
    });
    assert_eq!(got_client.as_deref(), Some(&b"round starts"[..]));
    assert_eq!(got_server.as_deref(), Some(&b"input 1"[..]));
    // Acks flow back: both ends measure the 20 ms round trip.
    pair.run_until(Duration::from_millis(300), |_| false);
    let rtt = pair.server.endpoint(0).unwrap().rtt();
    assert!(
        rtt >= Duration::from_millis(15) && rtt < Duration::from_millis(60),
        "{rtt:?}"
    );
    let rtt = pair.client.endpoint().rtt();
    assert!(
        rtt >= Duration::from_millis(15) && rtt < Duration::from_millis(60),
        "{rtt:?}"
    );
}

/// Runs a handshake with `token` and reports whether any connection happened.
fn attempt(gw: &mut Gateway, token: hightick_net::ConnectToken) -> Pair {
    let mut pair = gw.pair(4, token, 10, 5);
    pair.run_until(Duration::from_secs(30), |p| {
        matches!(p.client.state(), ClientState::Disconnected(_))
    });
    pair
}

fn assert_never_connected(pair: &Pair) {
    assert!(pair.server_events.is_empty(), "{:?}", pair.server_events);
    assert!(
        !pair
            .client_events
            .iter()
            .any(|e| matches!(e, ClientEvent::Connected { .. }))
    );
    assert_eq!(pair.server.connected_clients(), 0);
}

#[test]
fn expired_token_never_connects() {
    let mut gw = Gateway::new(7);
    let start = secure_pair::UNIX_START;
    let token = gw.token_at(1, &[server_addr()], 1, start - 100, start - 10);
    let pair = attempt(&mut gw, token);
    assert_never_connected(&pair);
    assert!(pair.server.counters().get(DropKind::ExpiredToken) >= 5);
    assert_eq!(
        pair.client.state(),
        ClientState::Disconnected(DisconnectReason::ConnectTimedOut)
    );
    // The server never answered: no challenge, not even a denied packet.
    assert!(pair.client_events.len() == 1 && pair.to_client.stats().sent == 0);
}

#[test]
fn token_expiring_during_the_attempt_ends_it() {
    let mut gw = Gateway::new(8);
    let start = secure_pair::UNIX_START;
    // Valid for 3 s in all; the only server never answers and has a 30 s timeout.
    let token = gw.token_at(1, &["10.9.9.9:1".parse().unwrap()], 30, start, start + 3);
    let pair = attempt(&mut gw, token);
    assert_never_connected(&pair);
    assert_eq!(
        pair.client.state(),
        ClientState::Disconnected(DisconnectReason::TokenExpired)
    );
}

#[test]
fn forged_tokens_never_connect() {
    // Sealed with another private key.
    let mut gw = Gateway::new(9);
    let mut forger = Gateway::new(10);
    let token = forger.token(1, &[server_addr()], 1);
    let pair = attempt(&mut gw, token);
    assert_never_connected(&pair);
    assert!(pair.server.counters().get(DropKind::ForgedToken) >= 5);

    // A real token with its sealed part edited.
    let mut token = gw.token(1, &[server_addr()], 1);
    token.private.0[100] ^= 0x01;
    let pair = attempt(&mut gw, token);
    assert_never_connected(&pair);
    assert!(pair.server.counters().get(DropKind::ForgedToken) >= 5);

    // A real token whose public expiry was pushed back (it is authenticated).
    let mut token = gw.token(1, &[server_addr()], 1);
    token.expire_unix += 3600;
    let pair = attempt(&mut gw, token);
    assert_never_connected(&pair);
    assert!(pair.server.counters().get(DropKind::ForgedToken) >= 5);

    // A token for another server.
    let elsewhere = gw.token(1, &["10.0.0.99:40000".parse().unwrap()], 1);
    let mut redirected = elsewhere.clone();
    // The client is pointed at our server, but the sealed list does not name it.
    redirected.server_addresses =
        hightick_net::ServerAddresses::from_slice(&[server_addr()]).unwrap();
    let pair = attempt(&mut gw, redirected);
    assert_never_connected(&pair);
    assert!(pair.server.counters().get(DropKind::AddressNotListed) >= 5);
}

#[test]
fn replayed_token_never_connects() {
    let mut gw = Gateway::new(11);
    let token = gw.token(77, &[server_addr()], 5);
    let mut pair = gw.pair(4, token, 10, 7);
    pair.capture = true;
    assert!(pair.run_until(Duration::from_secs(2), |p| p.client.is_connected()));
    let request = pair.captured_from_client[0].clone();
    assert_eq!(request.len(), REQUEST_BYTES);

    // An eavesdropper replays the captured request from its own address: the
    // client id is connected, and the token was first seen elsewhere.
    let attacker: SocketAddr = "10.6.6.6:666".parse().unwrap();
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    let refused = |s: &hightick_net::Server| {
        s.counters().get(DropKind::TokenReused) + s.counters().get(DropKind::AlreadyConnected)
    };
    let before = refused(&pair.server);
    for _ in 0..3 {
        pair.server
            .handle_datagram(pair.now, attacker, &mut request.clone());
    }
    assert_eq!(refused(&pair.server), before + 3);
    while let Some(t) = pair.server.poll_transmit(pair.now, &mut buf) {
        assert_ne!(t.destination, attacker, "the attacker got an answer");
    }

    // Replayed while the real handshake is in progress: refused as reuse.
    let mut fresh = Gateway::new(21);
    let mut server = fresh.server(4, pair.now);
    let mut c = client(fresh.token(78, &[server_addr()], 5), pair.now);
    let t = c.poll_transmit(pair.now, &mut buf).unwrap();
    let request2 = buf[..t.len].to_vec();
    server.handle_datagram(pair.now, client_addr(), &mut request2.clone());
    server.handle_datagram(pair.now, attacker, &mut request2.clone());
    assert_eq!(server.counters().get(DropKind::TokenReused), 1);
    while let Some(t) = server.poll_transmit(pair.now, &mut buf) {
        assert_eq!(t.destination, client_addr());
    }

    // After the connection ends, the same token is spent even from the same address.
    pair.client.disconnect();
    pair.run_until(Duration::from_secs(1), |p| {
        p.server_events
            .iter()
            .any(|e| matches!(e, ServerEvent::Disconnected { .. }))
    });
    let reused = pair.server.counters().get(DropKind::TokenReused);
    pair.server
        .handle_datagram(pair.now, client_addr(), &mut request.clone());
    assert_eq!(
        pair.server.counters().get(DropKind::TokenReused),
        reused + 1
    );
    let connects = pair
        .server_events
        .iter()
        .filter(|e| matches!(e, ServerEvent::Connected { .. }))
        .count();
    assert_eq!(connects, 1);
}

#[test]
fn replayed_token_raced_ahead_gives_the_attacker_nothing() {
    // The eavesdropper's copy arrives first: it gets the challenge, but without
    // the token's keys it can neither read it nor answer, so no connection.
    let mut gw = Gateway::new(12);
    let now = Instant::now();
    let mut server = gw.server(4, now);
    let token = gw.token(78, &[server_addr()], 2);
    let mut c = client(token, now);
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    let t = c.poll_transmit(now, &mut buf).unwrap();
    let mut request = buf[..t.len].to_vec();
    let attacker: SocketAddr = "10.6.6.6:666".parse().unwrap();
    server.handle_datagram(now, attacker, &mut request);
    let t = server.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(t.destination, attacker);
    // The attacker echoes the challenge bytes back: they are sealed for the
    // other direction, so they fail as a response.
    let mut echoed = buf[..t.len].to_vec();
    echoed[0] = (echoed[0] & 0xF0) | 3;
    server.handle_datagram(now, attacker, &mut echoed);
    assert_eq!(server.counters().get(DropKind::AuthFailed), 1);
    // The real client is refused (token first seen elsewhere) and never connects.
    let mut pair = Pair::new(server, c, now, clean_link(10, 9), clean_link(10, 10));
    pair.run_until(Duration::from_secs(10), |p| {
        matches!(p.client.state(), ClientState::Disconnected(_))
    });
    assert!(pair.server.counters().get(DropKind::TokenReused) > 0);
    assert_eq!(pair.server.connected_clients(), 0);
    assert!(pair.server_events.is_empty());
}

#[test]
fn captured_packets_replayed_are_rejected() {
    let mut pair = Pair::connected(13, clean_link(10, 11), clean_link(10, 12));
    pair.capture = true;
    pair.client.send_reliable(b"buy rifle").unwrap();
    pair.server.send_reliable(0, b"purchase ok").unwrap();
    let mut out = [0u8; 64];
    let mut server_got = 0;
    let mut client_got = 0;
    pair.run_until(Duration::from_secs(1), |p| {
        while p.server.poll_message(0, &mut out).is_some() {
            server_got += 1;
        }
        while p.client.poll_message(&mut out).is_some() {
            client_got += 1;
        }
        server_got == 1 && client_got == 1
    });
    assert_eq!((server_got, client_got), (1, 1));
    // Stop capturing and let everything in flight land before replaying.
    pair.capture = false;
    pair.run_until(Duration::from_millis(200), |_| false);

    let from_client = pair.captured_from_client.clone();
    let from_server = pair.captured_from_server.clone();
    assert!(!from_client.is_empty() && !from_server.is_empty());
    let replayed_before = pair.server.counters().get(DropKind::Replayed);
    for d in &from_client {
        pair.server
            .handle_datagram(pair.now, client_addr(), &mut d.clone());
    }
    assert_eq!(
        pair.server.counters().get(DropKind::Replayed),
        replayed_before + from_client.len() as u64
    );
    let replayed_before = pair.client.counters().get(DropKind::Replayed);
    for d in &from_server {
        pair.client
            .handle_datagram(pair.now, server_addr(), &mut d.clone());
    }
    assert_eq!(
        pair.client.counters().get(DropKind::Replayed),
        replayed_before + from_server.len() as u64
    );
    // Nothing was delivered twice.
    pair.run_until(Duration::from_millis(500), |_| false);
    assert!(pair.server.poll_message(0, &mut out).is_none());
    assert!(pair.client.poll_message(&mut out).is_none());
}

#[test]
fn tampered_ciphertext_is_dropped_and_counted() {
    let mut pair = Pair::connected(14, clean_link(10, 13), clean_link(10, 14));
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    pair.client.send_reliable(b"fire at tick 1234").unwrap();
    let t = pair.client.poll_transmit(pair.now, &mut buf).unwrap();
    let sealed = buf[..t.len].to_vec();
    // Every single-byte change is refused: prefix, sequence, body and tag.
    for i in 0..sealed.len() {
        let mut d = sealed.clone();
        d[i] ^= 0x20;
        pair.server.handle_datagram(pair.now, client_addr(), &mut d);
    }
    let c = pair.server.counters();
    assert_eq!(c.total(), sealed.len() as u64, "{c:?}");
    assert!(
        c.get(DropKind::AuthFailed) >= sealed.len() as u64 - 2,
        "{c:?}"
    );
    let mut out = [0u8; 64];
    assert!(pair.server.poll_message(0, &mut out).is_none());
    // The untouched packet still opens afterwards.
    pair.server
        .handle_datagram(pair.now, client_addr(), &mut sealed.clone());
    let m = pair.server.poll_message(0, &mut out).unwrap();
    assert_eq!(&out[..m.len], b"fire at tick 1234");
}

#[test]
fn connection_limit_denies_extra_clients() {
    let mut gw = Gateway::new(15);
    let first = gw.token(1, &[server_addr()], 5);
    let mut pair = gw.pair(1, first, 10, 15);
    assert!(pair.run_until(Duration::from_secs(2), |p| p.client.is_connected()));

    // A second client at another address, driven by hand against the same server.
    let second_addr: SocketAddr = "10.0.0.3:50001".parse().unwrap();
    let mut second = client(gw.token(2, &[server_addr()], 5), pair.now);
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    let t = second.poll_transmit(pair.now, &mut buf).unwrap();
    let mut request = buf[..t.len].to_vec();
    pair.server
        .handle_datagram(pair.now, second_addr, &mut request);
    assert_eq!(pair.server.counters().get(DropKind::ServerFull), 1);
    let t = pair.server.poll_transmit(pair.now, &mut buf).unwrap();
    assert_eq!(t.destination, second_addr);
    assert!(t.len < REQUEST_BYTES);
    second.handle_datagram(pair.now, server_addr(), &mut buf[..t.len]);
    assert_eq!(
        second.state(),
        ClientState::Disconnected(DisconnectReason::Denied)
    );
    assert_eq!(pair.server.connected_clients(), 1);
}

#[test]
fn client_tries_each_server_address_in_turn() {
    let mut gw = Gateway::new(16);
    let dead: SocketAddr = "10.0.0.50:40000".parse().unwrap();
    let token = gw.token(5, &[dead, server_addr()], 1);
    let mut pair = gw.pair(4, token, 10, 17);
    let mut saw_first = false;
    assert!(pair.run_until(Duration::from_secs(5), |p| {
        saw_first |= p.client.state()
            == ClientState::Connecting {
                server: 0,
                stage: hightick_net::ConnectStage::SendingRequest,
            };
        p.client.is_connected()
    }));
    assert!(saw_first);
    assert!(pair.stray > 0, "requests went to the dead address first");
    assert_eq!(pair.client.server_address(), server_addr());
    assert!(
        pair.elapsed() >= Duration::from_secs(1),
        "the first address got its full timeout"
    );
}

#[test]
fn silence_times_out_both_ends() {
    let mut pair = Pair::connected(17, clean_link(10, 19), clean_link(10, 20));
    // Cut both links: the server hears nothing from the client and vice versa.
    pair.to_server = hightick_net::sim_link::SimLink::new(hightick_net::sim_link::SimLinkConfig {
        loss: 1.0,
        ..Default::default()
    });
    pair.to_client = hightick_net::sim_link::SimLink::new(hightick_net::sim_link::SimLinkConfig {
        loss: 1.0,
        ..Default::default()
    });
    let cut = pair.now;
    assert!(pair.run_until(Duration::from_secs(30), |p| {
        !p.client.is_connected() && p.server.connected_clients() == 0
    }));
    // The token's 10 s timeout, counted from the last packet before the cut
    // (keep-alives go every 100 ms).
    let waited = pair.now - cut;
    assert!(
        waited >= Duration::from_millis(9_850) && waited <= Duration::from_millis(10_200),
        "timed out after {waited:?}"
    );
    assert_eq!(
        pair.client.state(),
        ClientState::Disconnected(DisconnectReason::TimedOut)
    );
    assert!(pair.server_events.iter().any(|e| matches!(
        e,
        ServerEvent::Disconnected {
            slot: 0,
            reason: DisconnectReason::TimedOut,
            ..
        }
    )));
}

#[test]
fn disconnects_reach_the_other_side() {
    let mut pair = Pair::connected(18, clean_link(10, 21), clean_link(10, 22));
    pair.client.disconnect();
    assert!(
        pair.run_until(Duration::from_secs(1), |p| p.server.connected_clients()
            == 0)
    );
    assert!(pair.server_events.iter().any(|e| matches!(
        e,
        ServerEvent::Disconnected {
            reason: DisconnectReason::ClosedByPeer,
            ..
        }
    )));

    let mut pair = Pair::connected(19, clean_link(10, 23), clean_link(10, 24));
    pair.server.disconnect(0).unwrap();
    assert!(pair.run_until(Duration::from_secs(1), |p| !p.client.is_connected()));
    assert_eq!(
        pair.client.state(),
        ClientState::Disconnected(DisconnectReason::ClosedByPeer)
    );
    assert!(pair.server.disconnect(0).is_err());
    assert!(pair.server.send_reliable(0, b"x").is_err());
}

/// Feeds `datagram` from `from` and checks every answer the server sends to
/// `from` right away: at most one datagram, no longer than what came in.
fn answer_len(
    server: &mut hightick_net::Server,
    now: Instant,
    from: SocketAddr,
    datagram: &[u8],
) -> usize {
    let mut copy = datagram.to_vec();
    server.handle_datagram(now, from, &mut copy);
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    let mut answered = 0;
    let mut count = 0;
    while let Some(t) = server.poll_transmit(now, &mut buf) {
        if t.destination == from {
            answered += t.len;
            count += 1;
        }
    }
    assert!(count <= 1, "{count} answers to one datagram");
    assert!(
        answered <= datagram.len(),
        "answered {answered} bytes to {} received",
        datagram.len()
    );
    answered
}

#[test]
fn server_never_answers_unauthenticated_datagrams_with_more_bytes() {
    let mut gw = Gateway::new(20);
    let now = Instant::now();
    let mut server = gw.server(1, now);
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    let request_of = |c: &mut Client, buf: &mut Vec<u8>| {
        let t = c.poll_transmit(now, buf).unwrap();
        buf[..t.len].to_vec()
    };

    // Garbage of every size, from many addresses, including zero-prefixed bytes.
    for (i, len) in [0usize, 1, 17, 18, 40, 333, 1077, 1078, 1079, 1225, 1500]
        .into_iter()
        .enumerate()
    {
        let from: SocketAddr = format!("10.1.0.{}:1000", i + 1).parse().unwrap();
        assert_eq!(answer_len(&mut server, now, from, &vec![0u8; len]), 0);
        assert_eq!(answer_len(&mut server, now, from, &vec![0x5Au8; len]), 0);
    }

    // A valid request gets a challenge: smaller than the request.
    let mut c1 = client(gw.token(1, &[server_addr()], 5), now);
    let request = request_of(&mut c1, &mut buf);
    let challenge = answer_len(&mut server, now, client_addr(), &request);
    assert!(
        challenge > 0 && challenge < REQUEST_BYTES / 3,
        "challenge of {challenge} bytes"
    );
    // A truncated request gets nothing.
    assert_eq!(
        answer_len(
            &mut server,
            now,
            client_addr(),
            &request[..REQUEST_BYTES - 1]
        ),
        0
    );

    // Complete the handshake for client 1 by hand so the server is full.
    let mut c1_pair_buf = vec![0u8; MAX_PACKET_BYTES];
    let mut copy = request.clone();
    server.handle_datagram(now, client_addr(), &mut copy);
    let t = server.poll_transmit(now, &mut c1_pair_buf).unwrap();
    c1.handle_datagram(now, server_addr(), &mut c1_pair_buf[..t.len]);
    let t = c1.poll_transmit(now, &mut buf).unwrap();
    let response = buf[..t.len].to_vec();
    // The response proves the keys; its answer (a keep-alive) is smaller still.
    let keep_alive = answer_len(&mut server, now, client_addr(), &response);
    assert!(keep_alive > 0 && keep_alive < response.len());
    assert_eq!(server.connected_clients(), 1);

    // Server full: the denied answer is tiny.
    let mut c2 = client(gw.token(2, &[server_addr()], 5), now);
    let request2 = request_of(&mut c2, &mut buf);
    let c2_addr: SocketAddr = "10.0.0.9:9".parse().unwrap();
    let denied = answer_len(&mut server, now, c2_addr, &request2);
    assert!(denied > 0 && denied <= 25, "denied of {denied} bytes");

    // Forged, expired, wrong-protocol requests: no answer at all.
    let mut forged = request2.clone();
    forged[500] ^= 1;
    assert_eq!(
        answer_len(&mut server, now, "10.0.0.10:1".parse().unwrap(), &forged),
        0
    );
    let mut wrong_protocol = request2.clone();
    wrong_protocol[14] ^= 1;
    assert_eq!(
        answer_len(
            &mut server,
            now,
            "10.0.0.11:1".parse().unwrap(),
            &wrong_protocol
        ),
        0
    );
    let start = secure_pair::UNIX_START;
    let mut c3 = client(
        gw.token_at(3, &[server_addr()], 5, start - 100, start - 1),
        now,
    );
    let expired = request_of(&mut c3, &mut buf);
    assert_eq!(
        answer_len(&mut server, now, "10.0.0.12:1".parse().unwrap(), &expired),
        0
    );
    // A response replayed from another address is unknown there: no answer.
    assert_eq!(
        answer_len(&mut server, now, "10.0.0.13:1".parse().unwrap(), &response),
        0
    );
}

#[test]
fn a_fresh_token_from_a_new_address_takes_over_a_dead_connection() {
    let mut gw = Gateway::new(31);
    let token = gw.token(4242, &[server_addr()], 10);
    // One slot: a rejoin needs no free one.
    let mut pair = gw.pair(1, token.clone(), 10, 31);
    assert!(pair.run_until(Duration::from_secs(2), |p| p.server.is_connected(0)));
    pair.server_events.clear();

    // The client's link dies; well within the 10 s timeout it comes back
    // from a new port with a fresh token for the same client id.
    let moved: SocketAddr = "10.0.0.2:50001".parse().unwrap();
    pair.client = client(gw.token(4242, &[server_addr()], 10), pair.now);
    pair.client_addr = moved;
    assert!(pair.run_until(Duration::from_secs(2), |p| p.client.is_connected()));
    pair.run_until(Duration::from_millis(200), |_| false);

    assert_eq!(
        pair.server_events,
        vec![
            ServerEvent::Disconnected {
                slot: 0,
                client_id: 4242,
                reason: DisconnectReason::Replaced,
            },
            ServerEvent::Connected {
                slot: 0,
                client_id: 4242,
                user_data: pair.server.user_data(0).copied().unwrap(),
            },
        ]
    );
    assert_eq!(pair.server.connected_clients(), 1);
    assert_eq!(pair.server.client_address(0), Some(moved));

    // The old token is spent: it cannot take the slot back.
    pair.server_events.clear();
    pair.client = client(token, pair.now);
    pair.client_addr = client_addr();
    assert!(!pair.run_until(Duration::from_secs(2), |p| p.client.is_connected()));
    assert!(pair.server_events.is_empty(), "{:?}", pair.server_events);
    assert!(pair.server.counters().get(DropKind::TokenReused) > 0);
    assert_eq!(pair.server.client_address(0), Some(moved));
}
