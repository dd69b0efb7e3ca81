//! Closed-model runs against a local target: the request rate is what the
//! users and think times say, captures carry a login token into later
//! requests, queues are waited out, failures are counted and retried.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use hightick_arena::game::Arena;
use hightick_swarm::MatchPlayer;
use hightick_swarm::Scenario;
use hightick_swarm::run::run;
use hightick_swarm::target::{Target, TargetConfig};

async fn target() -> Target {
    Target::start("127.0.0.1:0".parse().unwrap(), TargetConfig::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_model_hits_the_expected_request_rate() {
    let target = target().await;
    // 200 players, each asking every 0.5 s: 400 requests per second.
    let text = format!(
        r#"
name = "rate"
users = 200
ramp_up = "1s"
duration = "5s"
drivers = 2
[targets]
t = "http://{}"
[[setup]]
name = "login"
method = "POST"
url = "/login"
json = {{ device = "d{{{{user}}}}" }}
capture = {{ token = "/token" }}
[[behaviour]]
name = "ping"
[[behaviour.step]]
name = "ping"
url = "/ping"
headers = {{ authorization = "Bearer {{{{token}}}}" }}
think = "500ms"
[[threshold]]
metric = "error_rate"
max = 0
"#,
        target.addr
    );
    let scenario = Arc::new(Scenario::parse(&text, "rate.toml").unwrap());
    let mut lines = 0;
    let result = run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| lines += 1,
    )
    .await
    .unwrap();
    assert_eq!(lines, 6);
    assert_eq!(result.steps[0].name, "login");
    assert_eq!(result.steps[0].ok, 200, "every player logged in once");
    assert_eq!(target.logins(), 200);
    assert_eq!(result.total.failed, 0, "{:?}", result.errors);
    assert!(result.passed);
    assert_eq!(result.peak_users, 200);
    // The hold: from 2 s (every player started and one think in) to the end.
    let hold: Vec<_> = result.timeline.iter().filter(|p| p.t_s > 2.0).collect();
    let pings: u64 = hold.iter().map(|p| p.steps[1].requests).sum();
    let seconds = hold.len() as f64 * result.interval_s;
    let rate = pings as f64 / seconds;
    assert!(
        (rate / 400.0 - 1.0).abs() < 0.05,
        "{rate} req/s, timeline {:?}",
        result.timeline
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_are_waited_out_and_failures_are_counted_and_retried() {
    let target = target().await;
    let text = format!(
        r#"
users = 10
duration = "3s"
drivers = 1
[targets]
t = "http://{addr}"
dead = "http://127.0.0.1:1"
[[setup]]
name = "login"
target = "t"
method = "POST"
url = "/login?queue=1"
wait_while_status = [202]
wait_capture = {{ ticket = "/ticket" }}
poll_url = "/login/tickets/{{{{ticket}}}}"
wait_interval = "50ms"
capture = {{ token = "/token" }}
[[setup]]
name = "queue"
target = "t"
url = "/queue"
headers = {{ authorization = "Bearer {{{{token}}}}" }}
wait_while_status = [202]
wait_interval = "100ms"
[[behaviour]]
name = "broken"
[[behaviour.step]]
name = "broken"
target = "t"
url = "/status/500"
retry = {{ attempts = 1 }}
think = "200ms"
[[behaviour]]
name = "unavailable"
[[behaviour.step]]
name = "unavailable"
target = "t"
url = "/status/503"
retry = {{ attempts = 3, backoff = "10ms" }}
think = "200ms"
[[behaviour]]
name = "refused"
[[behaviour.step]]
name = "refused"
target = "dead"
url = "/"
retry = {{ attempts = 2, backoff = "10ms" }}
think = "200ms"
[[threshold]]
metric = "error_rate"
max = 0.01
[[threshold]]
metric = "p99"
step = "login"
max = "5s"
"#,
        addr = target.addr
    );
    let scenario = Arc::new(Scenario::parse(&text, "mixed.toml").unwrap());
    let result = run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap();
    let step = |name: &str| result.steps.iter().find(|s| s.name == name).unwrap();
    // A queued login: asked once, polled its ticket twice (202, then 200).
    let login = step("login");
    assert_eq!((login.ok, login.failed), (30, 0), "{login:?}");
    assert!(login.step_time_p50_us >= 100_000, "{login:?}");
    assert_eq!(target.logins(), 10);
    // Three asks per admission (two 202s, then 200), about 200 ms of waiting.
    let queue = step("queue");
    assert_eq!(queue.failed, 0);
    assert_eq!(queue.ok, 30, "{queue:?}");
    assert!(queue.step_time_p50_us >= 200_000, "{queue:?}");
    // A failed step ends its behaviour. A 500 is not retried; a 503 is
    // (attempts = 3: two retries per three failures); a refused connection too.
    let broken = step("broken");
    assert!(broken.failed > 0 && broken.ok == 0 && broken.retries == 0);
    assert_eq!(broken.errors.get("status"), Some(&broken.failed));
    let unavailable = step("unavailable");
    assert!(
        unavailable.retries > 0 && unavailable.retries * 3 >= unavailable.failed * 2 - 2,
        "{unavailable:?}"
    );
    let refused = step("refused");
    assert!(
        refused.errors.get("connect").copied().unwrap_or(0) > 0,
        "{refused:?}"
    );
    assert!(refused.retries > 0);
    // The error-rate threshold fails, the login one passes: the run fails.
    assert!(!result.thresholds[0].passed && result.thresholds[1].passed);
    assert!(!result.passed);
    assert!(result.errors.iter().any(|e| e.kind == "connect"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_spread_over_source_addresses_within_the_bound() {
    let target = target().await;
    let text = format!(
        r#"
users = 50
duration = "1s"
drivers = 1
think = "20ms"
[targets]
t = "http://{}"
[http]
connections = 4
source_addresses = ["127.0.0.2", "127.0.0.3"]
[[behaviour]]
name = "ping"
[[behaviour.step]]
url = "/ping"
"#,
        target.addr
    );
    let scenario = Arc::new(Scenario::parse(&text, "sources.toml").unwrap());
    let result = run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(result.total.failed, 0, "{:?}", result.errors);
    assert!(result.total.requests > 500, "{:?}", result.total);
    let peers: Vec<String> = target.peers().iter().map(|p| p.to_string()).collect();
    assert_eq!(peers, ["127.0.0.2", "127.0.0.3"]);
    // 50 players shared 4 keep-alive connections.
    assert!(
        target.connections() <= 4,
        "{} connections",
        target.connections()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_log_when_asked_for_has_a_line_per_request_and_rotates() {
    let target = target().await;
    let dir = std::env::temp_dir().join(format!("hightick-swarm-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("requests.log");
    let text = format!(
        r#"
users = 20
ramp_up = "200ms"
duration = "2s"
drivers = 2
[targets]
t = "http://{addr}"
[request_log]
path = "{path}"
rotate_bytes = 4096
keep = 100
[[setup]]
name = "login"
method = "POST"
url = "/login"
capture = {{ token = "/token" }}
[[behaviour]]
name = "ping"
[[behaviour.step]]
name = "ping"
url = "/ping"
think = "100ms"
"#,
        addr = target.addr,
        path = path.display()
    );
    let scenario = Arc::new(Scenario::parse(&text, "log.toml").unwrap());
    let result = run(
        scenario,
        MatchPlayer::of::<Arena>(),
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
    .unwrap();
    let mut files = vec![path.clone()];
    files.extend((1..=100).map(|n| dir.join(format!("requests.log.{n}"))));
    let text: String = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);

    let log = result.request_log.expect("the run reports its request log");
    assert_eq!(log.dropped, 0);
    assert_eq!(log.lines, result.total.requests, "{log:?}");
    assert!(log.rotations >= 1, "{log:?}");
    assert_eq!(text.lines().count() as u64, log.lines);
    let mut logins = 0;
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 5, "{line}");
        assert!(fields[2] == "login" || fields[2] == "ping", "{line}");
        assert_eq!(fields[3], "200", "{line}");
        logins += usize::from(fields[2] == "login");
    }
    assert_eq!(logins, 20);
}
