//! The pacing controller holds a target response time on a server of known
//! capacity: one FIFO server at 5 ms per request (200 requests/s at most).
//! Poisson arrivals whose p99 is held at 50 ms must settle near the target
//! and below capacity, without running into collapse on the way.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hightick_arena::game::Arena;
use hightick_swarm::MatchPlayer;
use hightick_swarm::Scenario;
use hightick_swarm::run::run;
use hightick_swarm::target::{Target, TargetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pacing_settles_at_the_target_response_time() {
    let config = TargetConfig {
        service_time: Some(Duration::from_millis(5)),
    };
    let target = Target::start("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let text = format!(
        r#"
model = "open"
users = 2000
arrival_rate = 400.0
duration = "20s"
interval = "500ms"
drivers = 1
[targets]
t = "http://{}"
[http]
connections = 64
[pacing]
target_response_time = "50ms"
percentile = 99
window = "1500ms"
initial_rate = 40.0
[[behaviour]]
name = "work"
[[behaviour.step]]
name = "work"
url = "/work"
"#,
        target.addr
    );
    let scenario = Arc::new(Scenario::parse(&text, "pacing.toml").unwrap());
    let result = run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap();
    let summary: Vec<String> = result
        .timeline
        .iter()
        .map(|p| {
            format!(
                "{:.1}s {:.0}/s p99 {:.1}ms",
                p.t_s,
                p.paced_rate.unwrap_or(0.0),
                p.paced_measure_us.unwrap_or(0.0) / 1e3
            )
        })
        .collect();
    let settled: Vec<_> = result.timeline.iter().filter(|p| p.t_s > 12.0).collect();
    let mut measured: Vec<f64> = settled.iter().filter_map(|p| p.paced_measure_us).collect();
    measured.sort_by(f64::total_cmp);
    let median_p99 = measured[measured.len() / 2];
    let mean_rate = settled.iter().filter_map(|p| p.paced_rate).sum::<f64>() / settled.len() as f64;
    // Held near the target: the median of the settled intervals within a
    // factor of two of it. How closely the controller settles is the sans-IO
    // test's job (`pacing::tests::settles_on_a_queue_model`, on a queue model);
    // here a real server and real sockets share 2 cores with whatever else the
    // host runs, and close to capacity an M/D/1 queue's p99 swings with every
    // stall (the same code gave a median of 50 ms in one CI run and 66 ms in
    // one that shared the machine with a release build). A
    // controller that does not act stays near its initial 40/s with a p99 of
    // a few ms; one that overshoots collapses (below): both fail.
    assert!(
        (0.5..2.0).contains(&(median_p99 / 50_000.0)),
        "median p99 {median_p99} us: {summary:#?}"
    );
    // Below capacity, and well above the initial 40/s.
    assert!(
        (80.0..200.0).contains(&mean_rate),
        "rate {mean_rate}: {summary:#?}"
    );
    // Never into collapse: offered 400/s against a capacity of 200/s, an
    // unchecked queue grows by 200 requests (1 s of work) every second, so a
    // controller that lost hold would pass 250 ms (5x the target) within
    // the settled window and keep climbing.
    assert!(measured.iter().all(|m| *m < 250_000.0), "{summary:#?}");
    assert_eq!(result.total.failed, 0, "{:?}", result.errors);
    assert!(result.pacing.is_some());
}
