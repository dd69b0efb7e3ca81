//! `hightick serve --agones` as a process against the real Agones SDK
//! server in local mode (`third_party/agones-sdk-server`; the test says
//! loudly that it is skipped when the tool is missing): Ready once warm
//! with its labels, health pings, two allocations read from annotations
//! and counted on the Counter `matches`, then SIGTERM: the drain ends both
//! matches, their slots come back, the GameServer is Shutdown and the
//! process exits cleanly with both results written.

mod served;

use std::time::{Duration, Instant};

use hightick_server::MatchInfo;
use hightick_server::agones::annotations::{MATCH_ID, MODE, ROSTER, WORKER};
use hightick_server::agones::local::LocalSdkServer;
use serde_json::Value;
use served::Served;

const WAIT: Duration = Duration::from_secs(30);

fn state(gs: &Value) -> &str {
    gs["status"]["state"].as_str().unwrap_or_default()
}

fn matches(gs: &Value) -> i64 {
    LocalSdkServer::counter(gs, "matches").map_or(-1, |(count, _)| count)
}

fn hosted(admin: &str) -> Vec<MatchInfo> {
    ureq::get(&format!("http://{admin}/v1/matches"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap()
}

#[test]
fn serve_agones_follows_its_game_server_from_ready_to_shutdown() {
    let Some(tool) = LocalSdkServer::tool_or_skip("the `serve --agones` lifecycle test") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("hightick-cli-agones-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sidecar = LocalSdkServer::start_local(&tool, &dir, 4).unwrap();
    let mut served = Served::agones(&dir, sidecar.http_port, 0.2);
    let results = dir.join("results.jsonl");
    let admin = served.admin.clone();

    let gs = sidecar
        .wait_until(WAIT, "Ready", |gs| state(gs) == "Ready")
        .unwrap_or_else(|e| panic!("{e}\n{}", served.log()));
    let labels = &gs["object_meta"]["labels"];
    assert_eq!(labels["agones.dev/sdk-hightick-game"], "arena", "{gs}");
    assert_eq!(
        labels["agones.dev/sdk-hightick-version"],
        env!("CARGO_PKG_VERSION")
    );
    // Pings come while the workers beat.
    let start = Instant::now();
    while sidecar.log_text().matches("Health Ping Received").count() < 2 {
        assert!(start.elapsed() < WAIT, "no health pings: {}", served.log());
        std::thread::sleep(Duration::from_millis(50));
    }

    // Two allocations, each one more on the Counter.
    sidecar
        .allocate(&[(MATCH_ID, "m-a"), (MODE, "5v5"), (ROSTER, "1,2,3")])
        .unwrap();
    sidecar
        .wait_until(WAIT, "the first allocation", |gs| {
            state(gs) == "Allocated" && matches(gs) == 1
        })
        .unwrap();
    sidecar
        .allocate(&[
            (MATCH_ID, "m-b"),
            (MODE, "5v5"),
            (ROSTER, "4,5"),
            (WORKER, "0"),
        ])
        .unwrap();
    let start = Instant::now();
    let listed = loop {
        let listed = hosted(&admin);
        if listed.len() == 2 || start.elapsed() > WAIT {
            break listed;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let ids: Vec<&str> = listed.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["m-a", "m-b"], "{}", served.log());
    assert_eq!(listed[1].worker, 0);
    assert_eq!(listed[0].players, 3);
    assert_eq!(matches(&sidecar.game_server().unwrap()), 2);

    // SIGTERM: drain, both slots back, Shutdown, a clean exit.
    served.sigterm();
    sidecar
        .wait_until(WAIT, "Shutdown", |gs| state(gs) == "Shutdown")
        .unwrap_or_else(|e| panic!("{e}\n{}", served.log()));
    assert_eq!(
        matches(&sidecar.game_server().unwrap()),
        0,
        "{}",
        served.log()
    );
    let status = served.wait_exit(WAIT);
    assert!(status.success(), "{status}: {}", served.log());
    let written = std::fs::read_to_string(&results).unwrap();
    assert_eq!(written.lines().count(), 2, "{written}");
    assert!(
        written.contains("m-a") && written.contains("m-b"),
        "{written}"
    );
}
