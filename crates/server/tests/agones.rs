//! The host's Agones adapter against the real Agones SDK server
//! (`third_party/agones-sdk-server`; each test says loudly that it is
//! skipped when the tool is missing): Agones' own SDK conformance check
//! against a small driver of the adapter, and an in-process host following
//! allocations. The whole `serve --agones` process is tested in the cli
//! crate (`crates/cli/tests/agones_serve.rs`).

mod support;

use std::path::PathBuf;
use std::time::Duration;

use hightick_net::Key;
use hightick_netem::{LinkProfile, Proxy, ProxyConfig};
use hightick_server::agones::annotations::{MATCH_ID, MODE, ROSTER, SETTINGS, WORKER};
use hightick_server::agones::local::LocalSdkServer;
use hightick_server::agones::{Adapter, CounterChange};
use serde_json::Value;
use support::{BareClient, list_matches, play, start_host};

const WAIT: Duration = Duration::from_secs(20);

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-agones-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn state(gs: &Value) -> &str {
    gs["status"]["state"].as_str().unwrap_or_default()
}

/// The real SDK server in local mode (a GameServer with room for 4
/// matches) and a two-worker host following it, in a scratch folder named
/// after `name`; `None` (the test `what` said it skips) without the tool.
fn agones_host(
    what: &str,
    name: &str,
) -> Option<(PathBuf, LocalSdkServer, Key, hightick_server::Host)> {
    let tool = LocalSdkServer::tool_or_skip(what)?;
    let dir = scratch(name);
    let sidecar = LocalSdkServer::start_local(&tool, &dir, 4).unwrap();
    let key = Key::generate(&mut rand::rng());
    let host = start_host(2, &key, |c| {
        c.agones = true;
        c.agones_sdk_port = Some(sidecar.http_port);
        c.match_linger_s = 0.1;
    });
    Some((dir, sidecar, key, host))
}

/// Allocates with `annotations` and waits (up to 2 s) until the host lists
/// a match: what it lists then.
fn allocate_one(
    sidecar: &LocalSdkServer,
    host: &hightick_server::Host,
    annotations: &[(&str, &str)],
) -> Vec<hightick_server::MatchInfo> {
    sidecar.allocate(annotations).unwrap();
    let mut listed = Vec::new();
    for _ in 0..400 {
        listed = list_matches(host.admin_address());
        if !listed.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    listed
}

fn matches(gs: &Value) -> i64 {
    LocalSdkServer::counter(gs, "matches").map_or(-1, |(count, _)| count)
}

/// Every call Agones' conformance check knows for a core SDK, and the
/// Counter calls the host makes; the driver makes each through the adapter
/// where the host would, and through the SDK it wraps otherwise.
#[test]
fn the_adapter_passes_the_agones_sdk_conformance_check() {
    let Some(tool) = LocalSdkServer::tool_or_skip("the Agones SDK conformance test") else {
        return;
    };
    let dir = scratch("conformance");
    let calls = [
        "ready",
        "allocate",
        "setlabel",
        "setannotation",
        "gameserver",
        "health",
        "shutdown",
        "watch",
        "reserve",
        "getcounter",
        "updatecounter",
    ];
    let mut sidecar = LocalSdkServer::start_conformance(&tool, &dir, &calls, 6).unwrap();
    let port = sidecar.http_port;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // Connecting reads the GameServer (`gameserver`).
        let adapter = Adapter::connect(Some(port)).await.unwrap();
        let gs = adapter.game_server().await.unwrap();
        // The check wants the label's value to be the creation time and the
        // annotation's the uid, as proof the SDK read them.
        adapter
            .set_label("test-label", &gs.creation_timestamp.to_string())
            .await
            .unwrap();
        let mut watch = adapter.watch().await.unwrap();
        let first = watch.next().await.expect("a first update").unwrap();
        adapter
            .set_annotation("test-annotation", &first.uid)
            .await
            .unwrap();
        adapter.ready().await.unwrap();
        adapter.health().await.unwrap();
        adapter.allocate().await.unwrap();
        adapter.reserve(5).await.unwrap();
        // The conformance GameServer has the Counter `rooms`, not `matches`.
        let (rooms, _) = adapter.counter("rooms").await.unwrap();
        assert!(rooms > 0, "rooms {rooms}");
        adapter
            .update_counter("rooms", CounterChange::By(-1))
            .await
            .unwrap();
        adapter.shutdown().await.unwrap();
    });
    let status = sidecar.wait_exit(WAIT).unwrap();
    let log = sidecar.log_text();
    assert!(status.success(), "{status}: {log}");
    assert!(
        log.contains("Received requests match expected list"),
        "{log}"
    );
}

/// Allocations through annotations: one without them or with a bad one is
/// refused and gives its counter slot back; a good one is created on the worker it names, counts
/// on the Counter while it runs, and when it ends the GameServer is Ready
/// again; a drain ends in Shutdown.
#[test]
fn a_host_follows_its_allocations() {
    let Some((_, sidecar, _, host)) = agones_host("the Agones allocation test", "host") else {
        return;
    };
    let gs = sidecar
        .wait_until(WAIT, "Ready", |gs| state(gs) == "Ready")
        .unwrap();
    let labels = &gs["object_meta"]["labels"];
    assert_eq!(labels["agones.dev/sdk-hightick-game"], "arena", "{gs}");
    assert_eq!(
        labels["agones.dev/sdk-hightick-version"],
        env!("CARGO_PKG_VERSION")
    );
    assert!(labels["agones.dev/sdk-hightick-build"].is_string(), "{gs}");

    // An allocation that names no match (an allocator without the
    // annotations): refused, its slot given back, Ready again.
    sidecar.allocate(&[]).unwrap();
    sidecar
        .wait_until(WAIT, "the unnamed allocation refused", |gs| {
            state(gs) == "Ready" && matches(gs) == 0
        })
        .unwrap();
    // A roster that is no roster: refused, its slot given back, Ready again.
    sidecar
        .allocate(&[(MATCH_ID, "bad-1"), (MODE, "5v5"), (ROSTER, "one,two")])
        .unwrap();
    sidecar
        .wait_until(WAIT, "the refused slot back and Ready", |gs| {
            state(gs) == "Ready" && matches(gs) == 0
        })
        .unwrap();
    assert!(list_matches(host.admin_address()).is_empty());

    // One short round on worker 1.
    let rules = r#"{"rounds_to_win":1,"buy_seconds":0.1,"combat_seconds":1.0}"#;
    let listed = allocate_one(
        &sidecar,
        &host,
        &[
            (MATCH_ID, "m-agones-1"),
            (MODE, "5v5"),
            (ROSTER, "101,102"),
            (WORKER, "1"),
            (SETTINGS, rules),
        ],
    );
    assert_eq!(listed.len(), 1, "the allocation's match runs");
    assert_eq!(listed[0].id, "m-agones-1");
    assert_eq!(listed[0].worker, 1, "on the worker the allocation named");
    assert_eq!(listed[0].address, host.game_addresses()[1]);
    // It ends by itself: its slot comes back and the GameServer is Ready.
    sidecar
        .wait_until(WAIT, "the match's end and Ready", |gs| {
            state(gs) == "Ready" && matches(gs) == 0
        })
        .unwrap();
    let log = sidecar.log_text();
    assert!(log.contains("Health Ping Received"), "{log}");

    host.drain(Duration::ZERO);
    host.wait();
    sidecar
        .wait_until(WAIT, "Shutdown", |gs| state(gs) == "Shutdown")
        .unwrap();
}

/// Agones sets where players reach the GameServer (`status.address` and
/// the host ports named `game-<i>`), here after Ready as it may: the host
/// advertises those, its match answers name them, and only tokens listing
/// them connect. Players reach the worker through a UDP port mapping (a
/// forwarder on 127.0.0.2, as a node's host port) and play.
#[test]
fn a_host_advertises_its_game_servers_address_and_is_played_through_a_port_mapping() {
    let Some((dir, sidecar, key, host)) = agones_host("the Agones address test", "address") else {
        return;
    };
    sidecar
        .wait_until(WAIT, "Ready", |gs| state(gs) == "Ready")
        .unwrap();
    let bound = host.game_addresses().to_vec();
    let mappings: Vec<Proxy> = bound
        .iter()
        .map(|&worker| {
            Proxy::start(ProxyConfig::new(
                "127.0.0.2:0".parse().unwrap(),
                worker,
                LinkProfile::builtin("lan").unwrap(),
                7,
            ))
            .unwrap()
        })
        .collect();
    let reached: Vec<_> = mappings.iter().map(Proxy::local_addr).collect();
    sidecar
        .set_address(
            "127.0.0.2",
            &[("game-0", reached[0].port()), ("game-1", reached[1].port())],
        )
        .unwrap();

    let rules = r#"{"rounds_to_win":1,"buy_seconds":0.1,"combat_seconds":3.0}"#;
    let listed = allocate_one(
        &sidecar,
        &host,
        &[
            (MATCH_ID, "m-mapped"),
            (MODE, "5v5"),
            (ROSTER, "201,202"),
            (WORKER, "1"),
            (SETTINGS, rules),
        ],
    );
    assert_eq!(listed.len(), 1, "the allocation's match runs");
    assert_eq!(
        listed[0].address, reached[1],
        "the match answer names where players reach worker 1, not where it binds ({})",
        bound[1]
    );

    // A token for the bound address is refused; one for the mapping plays.
    let mut clients = vec![
        BareClient::new(&key, 201, reached[1]),
        BareClient::new(&key, 202, bound[1]),
    ];
    let played = play(&mut clients, Duration::from_secs(10), |c| {
        c[0].snapshots >= 50
    });
    assert!(
        played,
        "through the mapping: {} snapshots",
        clients[0].snapshots
    );
    assert!(clients[0].net.is_connected());
    assert!(
        !clients[1].net.is_connected() && clients[1].snapshots == 0,
        "a token naming the bound address must not connect"
    );
    let mapped = mappings
        .into_iter()
        .nth(1)
        .unwrap()
        .stop()
        .unwrap()
        .emulator;
    assert!(
        mapped.up.delivered >= 20 && mapped.down.delivered >= 50,
        "the player's datagrams went through the mapping: {mapped:?}"
    );
    let log = std::fs::read_to_string(dir.join("agones-sdk-server.log")).unwrap_or_default();
    assert!(log.contains("Health Ping Received"), "{log}");

    host.drain(Duration::ZERO);
    host.wait();
}
