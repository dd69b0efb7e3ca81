//! A target with two URLs (`gateway = ["http://a", "http://b"]`), each a
//! real server on loopback: players spread over both by their number
//! (player `i` on URL `i % 2`), and when one server dies mid-run its
//! players fail over to the other, once each, their failed request retried
//! there.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hightick_arena::game::Arena;
use hightick_swarm::result::RunResult;
use hightick_swarm::run::run;
use hightick_swarm::target::{Target, TargetConfig};
use hightick_swarm::{MatchPlayer, Scenario};

const USERS: u64 = 40;

async fn target() -> Target {
    Target::start("127.0.0.1:0".parse().unwrap(), TargetConfig::default())
        .await
        .unwrap()
}

/// Every player asks `/players/<its number>` every 50 ms.
fn scenario(a: &Target, b: &Target, duration: &str) -> Arc<Scenario> {
    let text = format!(
        r#"
name = "two gateways"
users = {USERS}
ramp_up = "200ms"
duration = "{duration}"
drivers = 2
[targets]
gateway = ["http://{}", "http://{}"]
[retry]
attempts = 3
backoff = "20ms"
[[behaviour]]
name = "ask"
[[behaviour.step]]
name = "ask"
url = "/players/{{{{user}}}}"
think = "50ms"
"#,
        a.addr, b.addr
    );
    Arc::new(Scenario::parse(&text, "two.toml").unwrap())
}

async fn go(scenario: Arc<Scenario>) -> RunResult {
    run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap()
}

fn players(parity: u64) -> BTreeSet<u64> {
    (0..USERS).filter(|i| i % 2 == parity).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_spread_evenly_over_a_targets_urls() {
    let (a, b) = (target().await, target().await);
    let result = go(scenario(&a, &b, "1s")).await;
    assert_eq!(result.total.failed, 0, "{:?}", result.errors);
    assert_eq!(result.failovers, 0);
    assert_eq!(
        a.players(),
        players(0),
        "even players live on the first URL"
    );
    assert_eq!(b.players(), players(1), "odd players on the second");
    let urls: Vec<(&str, &str)> = result
        .target_urls
        .iter()
        .map(|u| (u.target.as_str(), u.url.as_str()))
        .collect();
    let (first, second) = (format!("http://{}", a.addr), format!("http://{}", b.addr));
    assert_eq!(
        urls,
        [("gateway", first.as_str()), ("gateway", second.as_str())]
    );
    let (ra, rb) = (
        result.target_urls[0].requests,
        result.target_urls[1].requests,
    );
    assert_eq!(ra + rb, result.total.requests);
    let skew = (ra as f64 - rb as f64).abs() / (ra + rb) as f64;
    assert!(skew < 0.2, "{ra} against {rb} requests");
    let table = hightick_swarm::report::render_table(&result);
    assert!(table.contains("failovers 0"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_urls_players_fail_over_once_and_carry_on() {
    let (a, b) = (Arc::new(target().await), target().await);
    let scenario = scenario(&a, &b, "2500ms");
    let killer = {
        let a = Arc::clone(&a);
        tokio::spawn(async move {
            // Once every player living on the first URL has been served
            // there, it dies with its connections open.
            while a.players().len() < players(0).len() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            a.kill();
        })
    };
    let result = go(scenario).await;
    killer.await.unwrap();

    assert_eq!(a.players(), players(0));
    // Every player of the dead URL moved once (it had 2 s of asking left),
    // and no player of the live one moved.
    assert_eq!(result.failovers, players(0).len() as u64);
    let moved: BTreeSet<u64> = b.players().difference(&players(1)).copied().collect();
    assert_eq!(
        moved,
        players(0),
        "the dead URL's players were answered by the other"
    );
    // The only failed requests are the one per moving player that found
    // the first URL dead; each was retried on the second and answered.
    assert_eq!(result.total.failed, result.failovers, "{:?}", result.errors);
    assert_eq!(result.total.retries, result.failovers);
    assert!(
        result
            .errors
            .iter()
            .all(|e| ["connect", "transport"].contains(&e.kind.as_str())),
        "{:?}",
        result.errors
    );
    let (ra, rb) = (
        result.target_urls[0].requests,
        result.target_urls[1].requests,
    );
    assert!(
        rb > ra,
        "{ra} requests to the dead URL, {rb} to the live one"
    );
}
