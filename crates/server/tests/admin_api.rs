//! The host end to end over loopback: matches created through the admin
//! API, clients connecting over real UDP with connect tokens, snapshots
//! coming down, the admin endpoints counting it all, and a drain that
//! writes every result.

mod support;

use std::time::Duration;

use hightick_net::Key;
use hightick_server::{Host, HostConfig};
use hightick_server::{HostStats, Placement};
use support::{BareClient, create_match, get, list_matches, play, post, post_as, start_host};

#[test]
fn matches_are_created_joined_counted_and_drained() {
    let key = Key::generate(&mut rand::rng());
    let dir = std::env::temp_dir().join(format!("hightick-admin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let results = dir.join("results.jsonl");
    let _ = std::fs::remove_file(&results);
    let results_path = results.clone();
    let host = start_host(2, &key, move |c| {
        c.results = Some(results_path);
        c.placement = Placement::Spread;
    });
    let admin = host.admin_address();

    let (status, body) = get(admin, "/healthz");
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));

    // Spread: two matches land on the two workers.
    let mut infos = Vec::new();
    for m in 0..2u64 {
        let roster: Vec<u64> = (0..10).map(|p| 100 * (m + 1) + p).collect();
        let info = create_match(admin, &format!(r#"{{"mode":"5v5","roster":{roster:?}}}"#));
        assert!(host.game_addresses().contains(&info.address));
        assert_eq!(
            (info.players, info.connected, info.tick_rate_hz),
            (10, 0, 128)
        );
        infos.push(info);
    }
    assert_ne!(
        infos[0].worker, infos[1].worker,
        "spread: the worker with the fewest matches is chosen"
    );

    // Bad requests name what is wrong.
    let (status, body) = post(admin, "/v1/matches", r#"{"mode":"5v5","roster":[100]}"#);
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("100"), "{body}");
    let (status, body) = post(admin, "/v1/matches", r#"{"mode":"6v6","roster":[1]}"#);
    assert_eq!(status, 400);
    assert!(body.contains("mode"), "{body}");
    let (status, body) = post(admin, "/v1/matches", r#"{"mode":"5v5","roster":"x"}"#);
    assert_eq!(status, 400);
    assert!(body.contains("roster"), "{body}");
    let (status, body) = post(
        admin,
        "/v1/matches",
        r#"{"mode":"5v5","roster":[1],"extra":1}"#,
    );
    assert_eq!(status, 400);
    assert!(body.contains("extra"), "{body}");
    // The game's own settings are the game's to check.
    let (status, body) = post(
        admin,
        "/v1/matches",
        r#"{"mode":"5v5","roster":[1],"rounds_to_win":501}"#,
    );
    assert_eq!(status, 400);
    assert!(body.contains("rounds_to_win"), "{body}");
    let (status, body) = post(
        admin,
        "/v1/matches",
        r#"{"mode":"5v5","roster":[1],"tick_rate_hz":999}"#,
    );
    assert_eq!(status, 400);
    assert!(body.contains("tick_rate_hz"), "{body}");
    let (status, _) = post(admin, "/v1/matches", "{not json");
    assert_eq!(status, 400);

    // Three players of the first match connect and receive snapshots.
    let mut clients: Vec<BareClient> = (0..3)
        .map(|p| BareClient::new(&key, 100 + p, infos[0].address))
        .collect();
    let served = play(&mut clients, Duration::from_secs(20), |cs| {
        cs.iter()
            .all(|c| c.net.is_connected() && c.snapshots >= 64 && c.events >= 1)
    });
    assert!(
        served,
        "clients connected and got snapshots and events: {:?}",
        clients
            .iter()
            .map(|c| (c.net.state(), c.snapshots, c.events))
            .collect::<Vec<_>>()
    );

    let listed = list_matches(admin);
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].id, infos[0].id);
    assert_eq!(listed[0].connected, 3);
    assert_eq!(listed[1].connected, 0);
    assert!(listed[0].tick > 64);

    let (status, body) = get(admin, "/v1/stats");
    assert_eq!(status, 200);
    let stats: HostStats = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (stats.workers, stats.matches, stats.players_connected),
        (2, 2, 3)
    );
    let five = stats
        .modes
        .iter()
        .find(|m| m.mode == "5v5")
        .expect("5v5 stats");
    assert_eq!(five.matches, 2);
    assert!(five.ticks > 128);
    assert!(five.tick.mean_us > 0.0 && five.tick.p99_us >= five.tick.p50_us);
    assert_eq!(
        five.subsystems.len(),
        hightick_telemetry::Subsystem::ALL.len()
    );
    assert!(stats.network.packets_out > 100 && stats.network.packets_in > 100);

    let (status, metrics) = get(admin, "/metrics");
    assert_eq!(status, 200);
    for line in [
        "hightick_matches 2",
        "hightick_players_connected 3",
        "hightick_draining 0",
        "hightick_tick_duration_seconds_bucket{mode=\"5v5\"",
    ] {
        assert!(metrics.contains(line), "metrics lack `{line}`");
    }

    // Drain with no grace: both matches end, results are written, clients are told.
    host.drain(Duration::ZERO);
    let (status, body) = post(admin, "/v1/matches", r#"{"mode":"5v5","roster":[9000]}"#);
    assert_eq!(status, 503, "{body}");
    play(&mut clients, Duration::from_secs(5), |cs| {
        cs.iter().all(|c| !c.net.is_connected())
    });
    assert!(
        clients.iter().all(|c| !c.net.is_connected()),
        "clients were told the match ended"
    );
    host.wait();
    let lines = std::fs::read_to_string(&results).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["abandoned"], true);
        assert_eq!(v["players"].as_array().unwrap().len(), 10);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Packed: a burst of matches on an idle host fills the first worker, well
/// under the share of a core it may reach.
#[test]
fn packing_puts_a_burst_of_matches_on_the_first_worker() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(2, &key, |c| c.placement = Placement::Pack);
    let admin = host.admin_address();
    for m in 0..3u64 {
        let roster: Vec<u64> = (0..10).map(|p| 100 * (m + 1) + p).collect();
        let info = create_match(admin, &format!(r#"{{"mode":"5v5","roster":{roster:?}}}"#));
        assert_eq!(info.worker, 0, "match {m} went to worker {}", info.worker);
    }
    host.drain(Duration::ZERO);
    host.wait();
}

#[test]
fn a_match_takes_the_id_it_is_given_once_and_mints_unique_ones_otherwise() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    let given = create_match(admin, r#"{"mode":"5v5","roster":[1],"match_id":"gw-7f3a"}"#);
    assert_eq!(given.id, "gw-7f3a");
    // The same id again, even for other players: refused while it is hosted.
    let (status, answer) = post(
        admin,
        "/v1/matches",
        r#"{"mode":"5v5","roster":[2],"match_id":"gw-7f3a"}"#,
    );
    assert_eq!(status, 409, "{answer}");
    assert!(answer.contains("match_id"), "{answer}");
    for bad in [r#""../x""#, r#""""#, r#"".hidden""#, r#""a b""#] {
        let body = format!(r#"{{"mode":"5v5","roster":[3],"match_id":{bad}}}"#);
        let (status, answer) = post(admin, "/v1/matches", &body);
        assert_eq!(status, 400, "{bad}: {answer}");
        assert!(answer.contains("match_id"), "{answer}");
    }
    // Without one, the host mints ids that start with its host id.
    let a = create_match(admin, r#"{"mode":"5v5","roster":[4]}"#);
    let b = create_match(admin, r#"{"mode":"5v5","roster":[5]}"#);
    assert_ne!(a.id, b.id);
    assert!(
        a.id.starts_with(host.host_id()),
        "{} / {}",
        a.id,
        host.host_id()
    );
    let listed: Vec<String> = list_matches(admin).into_iter().map(|m| m.id).collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    host.drain(Duration::ZERO);
    host.wait();
}

/// With an admin secret, the routes that change something refuse a caller
/// without it (401, nothing created or reset) and take one with it; reads,
/// `/healthz` and `/metrics` stay open. An admin API off loopback without a
/// secret does not start.
#[test]
fn the_admin_routes_that_change_something_need_the_secret() {
    let key = Key::generate(&mut rand::rng());
    let dir = std::env::temp_dir().join(format!("hightick-admin-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret_file = dir.join("admin.secret");
    std::fs::write(&secret_file, "s3cret-admin\n").unwrap();
    let host = start_host(1, &key, |c| c.admin_secret_file = Some(secret_file.clone()));
    let admin = host.admin_address();
    let body = r#"{"mode":"5v5","roster":[1]}"#;

    let (status, answer) = post(admin, "/v1/matches", body);
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = post_as(admin, "/v1/matches", body, "Bearer wrong");
    assert_eq!(status, 401, "{answer}");
    let (status, _) = post(admin, "/v1/stats/reset", "{}");
    assert_eq!(status, 401);
    assert!(list_matches(admin).is_empty(), "a stranger created nothing");
    assert_eq!(get(admin, "/healthz").0, 200);
    assert_eq!(get(admin, "/metrics").0, 200);

    let (status, answer) = post_as(admin, "/v1/matches", body, "Bearer s3cret-admin");
    assert_eq!(status, 201, "{answer}");
    assert_eq!(list_matches(admin).len(), 1);
    let (status, _) = post_as(admin, "/v1/stats/reset", "{}", "Bearer s3cret-admin");
    assert_eq!(status, 200);
    host.drain(Duration::ZERO);
    host.wait();

    let open = HostConfig {
        admin: "0.0.0.0:0".parse().unwrap(),
        ..HostConfig::default()
    };
    let err = Host::start::<hightick_arena::game::Arena>(&open, &key).unwrap_err();
    assert!(err.to_string().contains("admin"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
