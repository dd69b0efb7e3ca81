//! The whole loop over real UDP on loopback: a host with two 5v5 matches,
//! twenty match bots (each a real client with its own socket, playing with
//! the arena bot's behaviour from what its snapshots and events tell it).
//! Every bot connects, every match plays rounds with kills, nothing fails to
//! decode or contradicts itself, and the admin API counts it all.

mod support;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use hightick_arena::game::Arena;
use hightick_net::Key;
use hightick_server::{CreateMatch, HostStats, TimelinePoint};
use hightick_swarm::{BotTarget, Fleet, FleetConfig};
use support::{create_match, get, list_matches, start_host, token};

const MATCHES: u64 = 2;
/// Longest the test waits for rounds with kills in every match.
const PATIENCE: Duration = Duration::from_secs(120);

#[test]
fn two_matches_of_bots_play_rounds_with_kills_over_udp() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(2, &key, |_| {});
    let admin = host.admin_address();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();

    let mut fleets = Vec::new();
    for m in 0..MATCHES {
        let roster: Vec<u64> = (1..=10).map(|p| 1000 * (m + 1) + p).collect();
        let mut request = CreateMatch::new("5v5", roster.clone())
            .with("buy_seconds", 1.0)
            .with("combat_seconds", 20.0)
            .with("rounds_to_win", 30);
        request.seed = Some(7 + m);
        let info = create_match(admin, &serde_json::to_string(&request).unwrap());
        let targets: Vec<BotTarget> = roster
            .iter()
            .map(|&id| BotTarget {
                server: info.address,
                token: token(&key, id, info.address).encode().to_vec(),
            })
            .collect();
        let config = FleetConfig {
            duration: PATIENCE,
            ..FleetConfig::default()
        };
        fleets.push(
            Fleet::launch::<Arena>(&targets, &config, Arc::new(AtomicBool::new(false)))
                .expect("fleet"),
        );
    }

    // Until every match has a finished round and a kill.
    let start = Instant::now();
    loop {
        let done = fleets.iter().all(|f| {
            let c = f.live();
            let kinds = f.event_kinds();
            c.events_named(kinds, "kill") > 0 && c.events_named(kinds, "round_end") > 0
        });
        if done {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "no rounds with kills in every match: {:?}",
            fleets
                .iter()
                .map(|f| {
                    let (c, kinds) = (f.live(), f.event_kinds());
                    (
                        c.events_named(kinds, "kill"),
                        c.events_named(kinds, "round_end"),
                    )
                })
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(250));
    }

    // The admin API sees both matches with every seat connected.
    let listed = list_matches(admin);
    assert_eq!(listed.len(), MATCHES as usize);
    for m in &listed {
        assert_eq!((m.players, m.connected), (10, 10), "{m:?}");
        assert!(m.score[0] + m.score[1] >= 1, "a round was decided: {m:?}");
        assert_eq!(m.inputs_too_early, 0, "{m:?}");
        assert!(m.inputs_accepted > 10 * 128, "inputs arrive: {m:?}");
    }
    let (_, body) = get(admin, "/v1/stats");
    let stats: HostStats = serde_json::from_str(&body).unwrap();
    assert_eq!(stats.players_connected, 20);
    assert_eq!(stats.modes[0].matches, 2);
    assert_eq!(stats.network.unknown_clients, 0);
    // The timeline, sampled once a second from the workers' pulses, has
    // seen both matches ticking with every seat connected.
    let (status, body) = get(admin, "/v1/timeline");
    assert_eq!(status, 200, "{body}");
    let timeline: Vec<TimelinePoint> = serde_json::from_str(&body).unwrap();
    let last = timeline.last().expect("a second sampled");
    assert_eq!((last.matches, last.players), (2, 20), "{last:?}");
    assert!(
        last.tick_mean_us > 0.0 && last.tick_p99_us > 0.0,
        "{last:?}"
    );
    // The same series `/v1/stats` carries, a second or so later.
    assert_eq!(
        timeline.first().map(|p| p.t_s),
        stats.timeline.first().map(|p| p.t_s)
    );
    let (_, metrics) = get(admin, "/metrics");
    assert!(metrics.contains("hightick_players_connected 20"));
    assert!(metrics.contains("hightick_matches 2"));

    for f in &fleets {
        f.stop();
    }
    for f in fleets {
        let report = runtime.block_on(f.finish());
        let c = &report.counters;
        assert_eq!(report.failed, 0, "{report}");
        assert_eq!(c.connected, 10, "every bot connected: {report}");
        assert_eq!(c.decode_errors, 0, "{report}");
        assert_eq!(c.desyncs, 0, "{report}");
        assert!(c.snapshots > 10 * 128, "{report}");
        assert!(
            report.events_named("kill") > 0 && report.events_named("round_end") > 0,
            "{report}"
        );
    }
    host.drain(Duration::ZERO);
    host.wait();
}
