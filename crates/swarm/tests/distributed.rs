//! Two agents run a shard each; the coordinator merges what they stream.
//! What it ends with equals the union of what the agents measured, and the
//! players are split between them.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use hightick_swarm::Scenario;
use hightick_swarm::distributed::{SharedSecret, run_distributed};
use hightick_swarm::interval::Interval;
use hightick_swarm::scenario::Overrides;
use hightick_swarm::target::{Target, TargetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_histograms_from_two_agents_equal_the_union() {
    let target = Target::start("127.0.0.1:0".parse().unwrap(), TargetConfig::default())
        .await
        .unwrap();
    let text = r#"
users = 40
ramp_up = "500ms"
duration = "3s"
drivers = 1
[targets]
t = "http://127.0.0.1:9"
[[setup]]
name = "login"
method = "POST"
url = "/login"
capture = { token = "/token" }
[[behaviour]]
name = "ping"
weight = 3
[[behaviour.step]]
name = "ping"
url = "/ping"
headers = { authorization = "Bearer {{token}}" }
think = { exponential = "100ms" }
[[behaviour]]
name = "missing"
[[behaviour.step]]
name = "missing"
url = "/status/404"
think = "100ms"
"#;
    let scenario = Arc::new(Scenario::parse(text, "two.toml").unwrap());
    // The coordinator points the agents at the real target.
    let overrides = Overrides {
        targets: vec![("t".into(), format!("http://{}", target.addr))],
        ..Overrides::default()
    };
    let secret = SharedSecret::new(&[0x5a; 32], "test").unwrap();
    let (addrs, agents) = common::start_agents(2, &secret).await;
    let mut intervals = 0;
    let result = run_distributed(
        scenario,
        &overrides,
        &addrs,
        &secret,
        std::time::Duration::ZERO,
        Arc::new(AtomicBool::new(false)),
        |_| intervals += 1,
    )
    .await
    .unwrap();
    let mut union = Interval::new(3);
    let mut shards = Vec::new();
    for a in agents {
        let run = a.await.unwrap().unwrap();
        union.add(&run.total);
        shards.push((run.shard, run.total.steps[0].ok()));
    }
    shards.sort();
    // Each agent logged in its half of the players.
    assert_eq!(shards, [(0, 20), (1, 20)]);
    assert_eq!(result.agents, 2);
    assert_eq!(result.peak_users, 40);
    assert_eq!(intervals, 4);
    assert_eq!(result.timeline.len(), 4);
    for (summary, agents_total) in result.steps.iter().zip(&union.steps) {
        assert_eq!(
            summary.latency().unwrap(),
            agents_total.latency,
            "{}",
            summary.name
        );
        assert_eq!(summary.requests, agents_total.requests());
        assert!(summary.requests > 0, "{}", summary.name);
    }
    assert_eq!(
        result.steps[2].errors.get("status"),
        Some(&union.steps[2].errors[3])
    );
    assert_eq!(result.total.requests, union.requests());
    assert_eq!(target.served(), union.requests());
}
