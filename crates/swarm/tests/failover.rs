//! A target with two URLs (`gateway = ["http://a", "http://b"]`), each a
//! real server on loopback: players spread over both by their number
//! (player `i` on URL `i % 2`), and when one server dies mid-run its
//! players fail over to the other, once each, their failed request retried
//! there.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::{assert_failures_are_the_failovers, run_to_end as go, start_agents, target};
use hightick_swarm::Scenario;
use hightick_swarm::target::Target;
use tokio::task::JoinHandle;

const USERS: u64 = 40;

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

fn players(parity: u64) -> BTreeSet<u64> {
    (0..USERS).filter(|i| i % 2 == parity).collect()
}

/// Kills `a` once every player living on it has been served there: it
/// dies with its connections open.
fn kill_when_served(a: &Arc<Target>) -> JoinHandle<()> {
    let a = Arc::clone(a);
    tokio::spawn(async move {
        while a.players().len() < players(0).len() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        a.kill();
    })
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
    let html = hightick_swarm::report::render_html(&result).unwrap();
    assert!(html.contains("requests per target URL"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_urls_players_fail_over_once_and_carry_on() {
    let (a, b) = (Arc::new(target().await), target().await);
    let scenario = scenario(&a, &b, "2500ms");
    let killer = kill_when_served(&a);
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
    assert_failures_are_the_failovers(&result);
    assert_eq!(result.total.retries, result.failovers);
    let (ra, rb) = (
        result.target_urls[0].requests,
        result.target_urls[1].requests,
    );
    assert!(
        rb > ra,
        "{ra} requests to the dead URL, {rb} to the live one"
    );
}

/// The same on two agents: the URL list travels with the scenario, each
/// agent's allow-list checks every URL, and the failovers and requests per
/// URL they stream add up at the coordinator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_fail_over_too_and_their_counts_add_up() {
    use hightick_swarm::distributed::{SharedSecret, run_distributed};
    use hightick_swarm::scenario::Overrides;

    let (a, b) = (Arc::new(target().await), target().await);
    let scenario = scenario(&a, &b, "2500ms");
    let secret = SharedSecret::new(&[0x5a; 32], "test").unwrap();
    let (addrs, agents) = start_agents(2, &secret).await;
    let killer = kill_when_served(&a);
    let result = run_distributed(
        scenario,
        &Overrides::default(),
        &addrs,
        &secret,
        Duration::ZERO,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap();
    killer.await.unwrap();
    let mut failovers = 0;
    let mut urls = [0; 2];
    for agent in agents {
        let run = agent.await.unwrap().unwrap();
        failovers += run.total.failovers;
        for (sum, n) in urls.iter_mut().zip(&run.total.urls) {
            *sum += n;
        }
    }
    assert_eq!(result.agents, 2);
    assert_eq!(result.failovers, players(0).len() as u64);
    assert_eq!(result.failovers, failovers);
    let merged: Vec<u64> = result.target_urls.iter().map(|u| u.requests).collect();
    assert_eq!(merged, urls);
    assert_eq!(merged.iter().sum::<u64>(), result.total.requests);
    let moved: BTreeSet<u64> = b.players().difference(&players(1)).copied().collect();
    assert_eq!(moved, players(0));
    assert_failures_are_the_failovers(&result);
}

/// A URL that keeps answering a retryable status (503 here) is left once
/// the step's attempts there are spent: the step goes on at the next URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_answering_503_is_left_after_the_attempts() {
    let (a, b) = (target().await, target().await);
    a.answer_all(Some(http::StatusCode::SERVICE_UNAVAILABLE));
    let text = scenario(&a, &b, "1s")
        .text
        .replace("attempts = 3", "attempts = 2");
    let result = go(Arc::new(Scenario::parse(&text, "two.toml").unwrap())).await;
    let homed_on_a = players(0).len() as u64;
    // Each of its players asked the first URL twice (the attempts), then
    // moved for good and was answered by the second.
    assert_eq!(a.served(), 2 * homed_on_a);
    assert_eq!(result.failovers, homed_on_a);
    assert_eq!(b.players().len() as u64, USERS);
    assert_eq!(result.total.failed, 2 * homed_on_a, "{:?}", result.errors);
    assert_eq!(result.total.errors.get("status"), Some(&(2 * homed_on_a)));
    assert_eq!(result.total.retries, 2 * homed_on_a);
}
