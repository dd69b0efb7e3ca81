//! The server and the gateway as one service: a real hightick-server host
//! registers with a real gateway and heartbeats, the gateway allocates a
//! match on it under the gateway's match id, the match is played out on the
//! host, and its result travels through the host's outbox to the gateway,
//! which records it once and credits its reward policy. A gateway outage and
//! a SIGKILL of the host after the match lose nothing and double nothing.
//!
//! The crashing host runs in a child process: this test binary re-executes
//! itself to run `child_host`, which serves until killed.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Http;
use hightick_arena::game::Arena;
use hightick_gateway::config::{ModeConfig, RewardPolicy};
use hightick_gateway::{Gateway, GatewayConfig, Secrets, open_store};
use hightick_server::{Host, HostConfig, MatchInfo};
use serde_json::{Value, json};

const CHILD_DIR_ENV: &str = "HIGHTICK_TEST_CHILD_HOST_DIR";
const CHILD_GATEWAY_ENV: &str = "HIGHTICK_TEST_CHILD_HOST_GATEWAY";
const SECRET: &str = "service-test-server-secret-0123456789";
const POLICY: RewardPolicy = RewardPolicy {
    win: 100,
    loss: 40,
    draw: 60,
};

/// Short arena rules: one round of a second, so a match ends within seconds.
fn short_rules() -> serde_json::Map<String, Value> {
    let Value::Object(rules) =
        json!({ "rounds_to_win": 1, "buy_seconds": 0.1, "combat_seconds": 1.0 })
    else {
        unreachable!()
    };
    rules
}

/// A gateway config over `dir` with a two-player 5v5 queue on short rules.
fn gateway_config(dir: &Path, listen: SocketAddr) -> GatewayConfig {
    GatewayConfig {
        listen,
        data_dir: dir.join("data"),
        rate_limit_per_s: 0.0,
        token_key_file: Some(dir.join("key.hex")),
        session_key_file: Some(dir.join("session.hex")),
        server_secret_file: Some(dir.join("server.secret")),
        modes: vec![ModeConfig {
            name: "5v5".to_owned(),
            players: 2,
            settings: short_rules(),
        }],
        rewards: POLICY,
        ..GatewayConfig::default()
    }
}

fn write_secrets(dir: &Path) {
    std::fs::write(dir.join("key.hex"), "11".repeat(32)).unwrap();
    std::fs::write(dir.join("session.hex"), "22".repeat(32)).unwrap();
    std::fs::write(dir.join("server.secret"), SECRET).unwrap();
}

async fn start_gateway(dir: &Path, listen: SocketAddr) -> Gateway {
    let config = gateway_config(dir, listen);
    let secrets = Secrets::load(
        config.token_key_file.as_deref(),
        config.session_key_file.as_deref(),
        config.server_secret_file.as_deref(),
    )
    .unwrap();
    let store = open_store(&config).await.unwrap();
    Gateway::start_with_store(&config, secrets, store)
        .await
        .unwrap()
}

/// A host config reporting to `gateway`, its state under `dir/state`.
fn host_config(dir: &Path, gateway: SocketAddr) -> HostConfig {
    HostConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        admin: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        max_matches_per_worker: 4,
        match_linger_s: 0.2,
        gateway: Some(format!("http://{gateway}")),
        server_secret_file: Some(dir.join("server.secret")),
        state_dir: Some(dir.join("state")),
        region: "test-1".to_owned(),
        heartbeat_s: 0.2,
        ..HostConfig::default()
    }
}

fn token_key(dir: &Path) -> hightick_net::Key {
    hightick_net::Key::from_hex(&std::fs::read_to_string(dir.join("key.hex")).unwrap()).unwrap()
}

fn pending(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("state/outbox/pending"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

/// Polls `check` every 100 ms until it gives a value, for at most `patience`.
async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    patience: Duration,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + patience;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The match history of the player whose session is `token`.
async fn history(http: &Http, token: &str) -> Vec<Value> {
    let a = http.get("/v1/me/matches", Some(token)).await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body["matches"].as_array().cloned().unwrap_or_default()
}

fn policy_reward(outcome: &str) -> i64 {
    match outcome {
        "win" => POLICY.win,
        "loss" => POLICY.loss,
        "draw" => POLICY.draw,
        other => panic!("outcome {other}"),
    }
}

/// Runs only inside the child process: a host reporting to the gateway the
/// parent names, its state in the parent's directory, until killed.
#[test]
fn child_host() {
    let (Ok(dir), Ok(gateway)) = (
        std::env::var(CHILD_DIR_ENV),
        std::env::var(CHILD_GATEWAY_ENV),
    ) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let host = Host::start::<Arena>(
        &host_config(&dir, gateway.parse().unwrap()),
        &token_key(&dir),
    )
    .unwrap();
    println!("ADMIN {}", host.admin_address());
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_the_gateway_allocates_is_recorded_under_its_id_with_the_policy_rewards() {
    let dir = common::temp_dir("service");
    write_secrets(&dir);
    let gateway = start_gateway(&dir, "127.0.0.1:0".parse().unwrap()).await;
    let http = Http::new(gateway.address(), 8);
    let config = host_config(&dir, gateway.address());
    let host = Host::start::<Arena>(&config, &token_key(&dir)).unwrap();
    let host_id = host.host_id().to_owned();

    // The host registers by itself, with its id and region.
    let listed = eventually(
        "the host's registration",
        Duration::from_secs(10),
        || async {
            let a = http.get("/v1/hosts", Some(SECRET)).await;
            let hosts = a.body["hosts"].as_array().cloned().unwrap_or_default();
            hosts.into_iter().find(|h| h["host_id"] == host_id.as_str())
        },
    )
    .await;
    assert_eq!(listed["region"], "test-1");
    assert_eq!(listed["game"], "arena");
    assert_eq!(listed["draining"], false);
    assert_eq!(listed["capacity"], 4);

    // Two players queue and are matched on it.
    let mut players = Vec::new();
    for name in ["svc-a", "svc-b"] {
        let (id, token) = http.guest(name).await;
        let a = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": "5v5" }),
                Some(&token),
            )
            .await;
        assert!(a.status == 200 || a.status == 202, "{}", a.text);
        players.push((id, token, a.body["ticket"].as_str().unwrap().to_owned()));
    }
    let (_, token, ticket) = &players[0];
    let assignment = eventually("a match", Duration::from_secs(20), || async {
        let a = http
            .get(
                &format!("/v1/matchmaking/tickets/{ticket}?wait_ms=1000"),
                Some(token),
            )
            .await;
        (a.status == 200).then(|| a.body["match"].clone())
    })
    .await;
    let match_id = assignment["match_id"].as_str().unwrap().to_owned();

    // The gateway's id is the host's.
    let admin = Http::new(host.admin_address(), 2);
    let on_host: Vec<MatchInfo> =
        serde_json::from_str(&admin.get("/v1/matches", None).await.text).unwrap();
    assert!(
        on_host.iter().any(|m| m.id == match_id),
        "{match_id} not among {on_host:?}"
    );

    // The match plays out (no client connects; the rounds run on time), its
    // result is posted, and both players see it once, with the policy's reward.
    for (_, token, _) in &players {
        let entry = eventually("the recorded result", Duration::from_secs(30), || async {
            let h = history(&http, token).await;
            h.into_iter().find(|e| e["match_id"] == match_id.as_str())
        })
        .await;
        let outcome = entry["outcome"].as_str().unwrap();
        assert_eq!(entry["reward"], policy_reward(outcome), "{entry}");
        assert_eq!(history(&http, token).await.len(), 1);
        let profile = http.get("/v1/me/profile", Some(token)).await;
        assert_eq!(profile.body["balance"], policy_reward(outcome));
    }
    eventually("an empty outbox", Duration::from_secs(10), || async {
        pending(&dir).is_empty().then_some(())
    })
    .await;

    // A draining host says so and gets no new match.
    host.drain(Duration::ZERO);
    eventually("the draining flag", Duration::from_secs(10), || async {
        let a = http.get("/v1/hosts", Some(SECRET)).await;
        let hosts = a.body["hosts"].as_array().cloned().unwrap_or_default();
        hosts
            .into_iter()
            .find(|h| h["host_id"] == host_id.as_str() && h["draining"] == true)
    })
    .await;
    for (_, token, _) in &players {
        let a = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({ "mode": "5v5" }),
                Some(token),
            )
            .await;
        assert!(a.status == 200 || a.status == 202, "{}", a.text);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let metrics = http.get("/metrics", None).await.text;
    assert!(
        metrics.contains("hightick_gateway_matches_formed_total 1\n"),
        "no second match on a draining host: {metrics}"
    );
    tokio::task::spawn_blocking(move || host.wait())
        .await
        .unwrap();
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_outlives_a_gateway_outage_and_a_host_sigkill_and_counts_once() {
    let dir = common::temp_dir("service_crash");
    write_secrets(&dir);

    // Two accounts, then the gateway goes down.
    let gateway = start_gateway(&dir, "127.0.0.1:0".parse().unwrap()).await;
    let address = gateway.address();
    let http = Http::new(address, 4);
    let (a, token_a) = http.guest("outage-a").await;
    let (b, token_b) = http.guest("outage-b").await;
    gateway.shutdown().await.unwrap();

    // A host in a child process plays a match while the gateway is down
    // (its admin API takes the server secret, as the gateway presents it).
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_host", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, &dir)
        .env(CHILD_GATEWAY_ENV, address.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let admin: SocketAddr = loop {
        let line = lines.next().expect("the child prints its address").unwrap();
        if let Some((_, a)) = line.split_once("ADMIN ") {
            break a.trim().parse().unwrap();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    let mut body = json!({ "mode": "5v5", "roster": [a, b], "match_id": "m-outage" });
    for (k, v) in short_rules() {
        body[k] = v;
    }
    let created = Http::new(admin, 2)
        .post("/v1/matches", &body, Some(SECRET))
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.body["id"], "m-outage");
    let first_host_id = std::fs::read_to_string(dir.join("state/host-id")).unwrap();

    // The result waits in the outbox; then the host dies by SIGKILL.
    eventually(
        "the result in the outbox",
        Duration::from_secs(30),
        || async {
            pending(&dir)
                .iter()
                .any(|p| p.ends_with("m-outage.json"))
                .then_some(())
        },
    )
    .await;
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");

    // The gateway comes back on the same address and database, and the host
    // restarts on the same state directory: it is the same host, and it
    // delivers the result it owed.
    let gateway = start_gateway(&dir, address).await;
    let host = Host::start::<Arena>(&host_config(&dir, address), &token_key(&dir)).unwrap();
    assert_eq!(host.host_id(), first_host_id.trim());
    let http = Http::new(address, 4);
    let entry = eventually("the delivered result", Duration::from_secs(30), || async {
        history(&http, &token_a).await.into_iter().next()
    })
    .await;
    assert_eq!(entry["match_id"], "m-outage");
    eventually("an empty outbox", Duration::from_secs(10), || async {
        pending(&dir).is_empty().then_some(())
    })
    .await;

    // A post whose reply was lost comes again: recorded once, credited once.
    let outcome_a = entry["outcome"].as_str().unwrap().to_owned();
    let outcome_b = history(&http, &token_b).await[0]["outcome"]
        .as_str()
        .unwrap()
        .to_owned();
    let again = http
        .post_result(
            SECRET,
            &json!({ "match_id": "m-outage", "mode": "5v5", "players": [
                { "account_id": a, "team": 0, "score": 0, "outcome": outcome_a },
                { "account_id": b, "team": 1, "score": 0, "outcome": outcome_b },
            ]}),
        )
        .await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body["recorded"], false);
    for (token, outcome) in [(&token_a, &outcome_a), (&token_b, &outcome_b)] {
        assert_eq!(history(&http, token).await.len(), 1);
        let profile = http.get("/v1/me/profile", Some(token)).await;
        assert_eq!(profile.body["balance"], policy_reward(outcome));
        assert_eq!(profile.body["stats"]["matches_played"], 1);
    }

    host.drain(Duration::ZERO);
    tokio::task::spawn_blocking(move || host.wait())
        .await
        .unwrap();
    gateway.shutdown().await.unwrap();
}
