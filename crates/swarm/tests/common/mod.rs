//! What several end-to-end tests share: a loopback target, a local run to
//! its end, agents that each serve one run.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use hightick_arena::game::Arena;
use hightick_swarm::distributed::{Agent, AgentConfig, AgentRun, AllowList, SharedSecret};
use hightick_swarm::result::RunResult;
use hightick_swarm::run::run;
use hightick_swarm::target::{Target, TargetConfig};
use hightick_swarm::{MatchPlayer, Scenario, SwarmError};
use tokio::task::JoinHandle;

/// A scenario of 4 users pinging target `t` (at `127.0.0.1:9`: replace it
/// with a live target's address) for a second.
pub(crate) const PING_SCENARIO: &str = r#"
users = 4
ramp_up = "200ms"
duration = "1s"
drivers = 1
[targets]
t = "http://127.0.0.1:9"
[[behaviour]]
name = "ping"
[[behaviour.step]]
name = "ping"
url = "/ping"
think = "100ms"
"#;

/// A [`Target`] on a free loopback port, answering at once.
pub(crate) async fn target() -> Target {
    Target::start("127.0.0.1:0".parse().unwrap(), TargetConfig::default())
        .await
        .unwrap()
}

/// Runs `scenario` in this process to its end.
pub(crate) async fn run_to_end(scenario: Arc<Scenario>) -> RunResult {
    run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap()
}

/// `n` agents on loopback, allowed loopback targets, each serving one run:
/// their addresses and their runs.
pub(crate) async fn start_agents(
    n: usize,
    secret: &SharedSecret,
) -> (Vec<String>, Vec<JoinHandle<Result<AgentRun, SwarmError>>>) {
    let mut addrs = Vec::new();
    let mut runs = Vec::new();
    for _ in 0..n {
        let config = AgentConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            secret: secret.clone(),
            allow: AllowList::loopback(),
        };
        let agent = Agent::bind(config, MatchPlayer::of::<Arena>())
            .await
            .unwrap();
        addrs.push(agent.local_addr().unwrap().to_string());
        runs.push(tokio::spawn(async move {
            agent.serve_one(|r| panic!("{r}")).await
        }));
    }
    (addrs, runs)
}

/// Every failed request of `result` is the one a failing-over player lost
/// on its dead URL (refused or cut off), so there are as many as failovers.
pub(crate) fn assert_failures_are_the_failovers(result: &RunResult) {
    assert_eq!(result.total.failed, result.failovers, "{:?}", result.errors);
    assert!(
        result
            .errors
            .iter()
            .all(|e| ["connect", "transport"].contains(&e.kind.as_str())),
        "{:?}",
        result.errors
    );
}
