//! Rejoining and seats on a real host over loopback UDP: a client whose
//! link died comes back with a fresh token from a new port before its old
//! connection timed out and takes its seat over with full state; a seat
//! empty for the seat timeout is released, and a match nobody is connected
//! to ends as abandoned (a draining host does not wait for it). Through
//! `hightick netem`, a client survives an outage longer than its token's
//! timeout by rejoining its seat from a new port, and a rejoin into a
//! crowded plaza arrives whole through a capped link with a small queue.

mod support;

use std::time::Duration;

use hightick_net::Key;
use hightick_netem::{
    DirectionProfile, DirectionReport, LinkProfile, Outage, Proxy, ProxyConfig, RateLimit,
};
use hightick_server::{HostStats, MatchInfo};
use support::{BareClient, create_match, get, list_matches, play, start_host};

fn match_info(admin: std::net::SocketAddr) -> MatchInfo {
    list_matches(admin).remove(0)
}

/// Datagrams a proxy direction dropped for `why`.
fn dropped(d: &DirectionReport, why: &str) -> u64 {
    d.dropped
        .iter()
        .find(|(reason, _)| reason == why)
        .map_or(0, |&(_, n)| n)
}

#[test]
fn a_fresh_token_from_a_new_port_replaces_a_dead_connection_before_it_times_out() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    create_match(admin, r#"{"mode":"5v5","roster":[1,2]}"#);
    let server = host.game_addresses()[0];

    let mut first = vec![BareClient::new(&key, 1, server)];
    assert!(play(&mut first, Duration::from_secs(20), |c| c[0]
        .snapshots
        > 20));
    assert_eq!(match_info(admin).connected, 1);

    // Its link dies (the client falls silent, its socket stays open): well
    // within the token's 2 s timeout it rejoins on a new port.
    let dead = first.remove(0);
    let mut again = vec![BareClient::new(&key, 1, server)];
    assert_ne!(
        again[0].socket.local_addr().unwrap(),
        dead.socket.local_addr().unwrap()
    );
    assert!(play(&mut again, Duration::from_secs(20), |c| c[0]
        .snapshots
        > 20));
    assert!(again[0].full_resyncs >= 1, "a rejoin gets full state");
    assert!(again[0].events >= 1, "and the game's introductions");
    assert_eq!(match_info(admin).connected, 1);

    // Past the old connection's timeout the seat is still the new one's.
    let before = again[0].snapshots;
    play(&mut again, Duration::from_secs(3), |_| false);
    assert!(again[0].net.is_connected());
    assert!(again[0].snapshots > before + 100);
    assert_eq!(match_info(admin).connected, 1);
    let (_, body) = get(admin, "/v1/stats");
    let stats: HostStats = serde_json::from_str(&body).unwrap();
    assert!(
        stats
            .network
            .drops
            .iter()
            .all(|d| !d.reason.starts_with("event_queue")),
        "{:?}",
        stats.network.drops
    );
    drop(dead);
    host.drain(Duration::ZERO);
    host.wait();
}

#[test]
fn an_empty_match_ends_as_abandoned_after_the_seat_timeout_even_while_draining() {
    let key = Key::generate(&mut rand::rng());
    let dir = std::env::temp_dir().join(format!("hightick-rejoin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let results = dir.join("results.jsonl");
    let _ = std::fs::remove_file(&results);
    let results_path = results.clone();
    let host = start_host(1, &key, move |c| {
        c.results = Some(results_path);
        c.seat_timeout_s = 1.0;
    });
    let admin = host.admin_address();
    create_match(admin, r#"{"mode":"5v5","roster":[1,2]}"#);
    let server = host.game_addresses()[0];

    // Client 2 never comes; client 1 plays a while, then vanishes.
    let mut clients = vec![BareClient::new(&key, 1, server)];
    assert!(play(&mut clients, Duration::from_secs(20), |c| c[0]
        .snapshots
        > 20));
    drop(clients);

    // A drain that would let the match run a minute: the match ends as
    // soon as its seats have been empty for the seat timeout.
    host.drain(Duration::from_secs(60));
    host.wait();

    let text = std::fs::read_to_string(&results).unwrap();
    let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(line["abandoned"], true, "{line}");
    assert!(line["winner"].is_null());
    // Ended by the seat timeout (about 3 s: the token's 2 s, then 1 s),
    // not by the drain's minute.
    let ticks = line["ticks"].as_u64().unwrap();
    assert!(ticks < 128 * 30, "{ticks} ticks");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn through_netem_an_outage_longer_than_the_token_timeout_is_survived_by_rejoining() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    create_match(admin, r#"{"mode":"5v5","roster":[1,2]}"#);
    let server = host.game_addresses()[0];
    // A wifi-like link whose flows go dark for 4 s, 3 s after they start:
    // longer than the token's 2 s timeout.
    let direction = DirectionProfile {
        latency: Duration::from_millis(15),
        jitter: Duration::from_millis(5),
        loss: 0.01,
        outage: Some(Outage {
            every: Duration::from_secs(3600),
            length: Duration::from_secs(4),
            first_after: Duration::from_secs(3),
        }),
        ..DirectionProfile::PERFECT
    };
    let profile = LinkProfile {
        name: "outage".to_owned(),
        up: direction.clone(),
        down: direction,
    };
    let proxy = Proxy::start(ProxyConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        server,
        profile,
        20,
    ))
    .unwrap();
    let through = |c: &mut BareClient| c.via = Some(proxy.local_addr());

    let mut first = vec![BareClient::new(&key, 1, server)];
    through(&mut first[0]);
    assert!(play(&mut first, Duration::from_secs(20), |c| c[0]
        .snapshots
        > 20));
    // The outage comes; the client's connection times out.
    assert!(play(&mut first, Duration::from_secs(20), |c| !c[0]
        .net
        .is_connected()));
    let port = first[0].socket.local_addr().unwrap().port();

    // It rejoins with a fresh token from a new port (a new flow through the
    // proxy) and gets its seat back with full state.
    let mut again = vec![BareClient::new(&key, 1, server)];
    through(&mut again[0]);
    assert_ne!(again[0].socket.local_addr().unwrap().port(), port);
    assert!(play(&mut again, Duration::from_secs(20), |c| c[0]
        .full_resyncs
        >= 1
        && c[0].snapshots > 20));
    assert!(again[0].events >= 1, "the game's introductions came again");
    assert_eq!(match_info(admin).connected, 1);
    let report = proxy.stop().unwrap();
    assert!(dropped(&report.emulator.up, "outage") > 0, "{report:?}");
    assert_eq!(report.emulator.flows_opened, 2, "two source ports");
    host.drain(Duration::ZERO);
    host.wait();
}

#[test]
fn a_rejoin_into_a_crowded_plaza_arrives_whole_through_a_capped_link() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    let roster: Vec<String> = (1..=100).map(|c| c.to_string()).collect();
    create_match(
        admin,
        &format!(r#"{{"mode":"plaza100","roster":[{}]}}"#, roster.join(",")),
    );
    let server = host.game_addresses()[0];
    // 1 Mbit/s each way with an 8 KiB queue. (The arena's rejoin is no
    // burst even unpaced: its full state is spread over ticks by the
    // snapshot budget and its introductions fit one packet; the pacing
    // bound itself is net/tests/pacing.rs's.)
    let direction = DirectionProfile {
        latency: Duration::from_millis(40),
        rate: Some(RateLimit {
            bytes_per_s: 125_000,
            queue_bytes: 8 * 1024,
        }),
        ..DirectionProfile::PERFECT
    };
    let proxy = Proxy::start(ProxyConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        server,
        LinkProfile {
            name: "capped".to_owned(),
            up: direction.clone(),
            down: direction,
        },
        21,
    ))
    .unwrap();
    let mut first = vec![BareClient::new(&key, 1, server)];
    first[0].via = Some(proxy.local_addr());
    assert!(play(&mut first, Duration::from_secs(20), |c| c[0]
        .snapshots
        > 20));
    // Its link dies; it rejoins from a new port, into 100 players.
    let mut again = vec![BareClient::new(&key, 1, server)];
    again[0].via = Some(proxy.local_addr());
    assert!(play(&mut again, Duration::from_secs(20), |c| c[0]
        .full_resyncs
        >= 1
        && c[0].events >= 100
        && c[0].snapshots > 64));
    drop(first);
    let report = proxy.stop().unwrap();
    assert_eq!(
        dropped(&report.emulator.down, "queue_full"),
        0,
        "{report:?}"
    );
    host.drain(Duration::ZERO);
    host.wait();
}
