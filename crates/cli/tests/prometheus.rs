//! A real Prometheus reads what we expose: `hightick serve`, `hightick
//! gateway` and `hightick swarm run --metrics` on loopback; `promtool check
//! metrics` passes on each `/metrics` body; a `prometheus` with a generated
//! config (scrape interval 1 s, storage in a temp dir, explicit loopback
//! ports) scrapes all three, and its HTTP API returns the series we expect
//! and accepts every expression of the Grafana dashboards in deploy/grafana.
//!
//! Needs Debian's `prometheus` package (2.42, with `promtool`): under
//! `CI=true` its absence fails the test, elsewhere it is skipped loudly.

mod support;

use std::io::Write as _;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{Proc, Running, get, temp_dir, tool};

/// How long the whole test may wait for Prometheus to see everything.
const PATIENCE: Duration = Duration::from_secs(40);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// `promtool check metrics` on `body`: its complaints, if any.
fn promtool_check(promtool: &std::path::Path, body: &str) -> Result<(), String> {
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() && said.trim().is_empty() {
        Ok(())
    } else {
        Err(said)
    }
}

/// What every sample of a query's answer must satisfy.
type Check = fn(f64) -> bool;

/// An instant query's result vector (`data.result`), or the error Prometheus gave.
fn query(prometheus: &str, promql: &str) -> Result<Vec<serde_json::Value>, String> {
    let url = format!("http://{prometheus}/api/v1/query");
    let mut r = support::agent()
        .get(&url)
        .query("query", promql)
        .call()
        .map_err(|e| e.to_string())?;
    let body = r.body_mut().read_to_string().map_err(|e| e.to_string())?;
    let json: serde_json::Value =
        serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
    if json["status"] != "success" {
        return Err(body);
    }
    Ok(json["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

fn value_of(sample: &serde_json::Value) -> f64 {
    sample["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

#[test]
fn prometheus_scrapes_server_gateway_and_swarm() {
    let (Some(prometheus), Some(promtool)) = (
        tool("prometheus", "prometheus"),
        tool("promtool", "prometheus"),
    ) else {
        return;
    };
    let dir = temp_dir("prometheus");
    let running = Running::start(&dir, Duration::from_secs(60));

    for (job, body) in running.bodies() {
        if let Err(complaints) = promtool_check(&promtool, &body) {
            panic!("promtool check metrics, {job}:\n{complaints}\n--- body ---\n{body}");
        }
    }

    let mut config = String::from(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n",
    );
    for (job, addr) in running.jobs() {
        config.push_str(&format!(
            "  - job_name: {job}\n    static_configs:\n      - targets: [\"{addr}\"]\n"
        ));
    }
    let config_file = dir.join("prometheus.yml");
    std::fs::write(&config_file, &config).unwrap();
    let web = format!("127.0.0.1:{}", free_port());
    let _prometheus = Proc(
        Command::new(&prometheus)
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("prometheus starts"),
    );

    // Each expectation: a query and what its samples must satisfy.
    let expectations: [(&str, Check); 7] = [
        (r#"up{job=~"hightick-.*"}"#, |v| v == 1.0),
        (r#"hightick_matches{job="hightick-server"}"#, |v| v == 1.0),
        (
            r#"hightick_tick_duration_seconds_count{job="hightick-server",mode="5v5"}"#,
            |v| v > 0.0,
        ),
        (
            r#"sum by (subsystem) (hightick_subsystem_duration_seconds_count{mode="5v5"})"#,
            |v| v > 0.0,
        ),
        (
            r#"hightick_gateway_logins_total{job="hightick-gateway"}"#,
            |v| v > 0.0,
        ),
        (
            r#"hightick_swarm_requests_total{job="hightick-swarm"}"#,
            |v| v > 0.0,
        ),
        (
            "histogram_quantile(0.99, sum by (le) (rate(hightick_swarm_request_duration_seconds_bucket[5s])))",
            |v| v > 0.0 && v.is_finite(),
        ),
    ];
    let deadline = Instant::now() + PATIENCE;
    let mut waiting: Vec<_> = expectations.to_vec();
    while !waiting.is_empty() {
        let mut last = String::new();
        waiting.retain(|(promql, ok)| match query(&web, promql) {
            Ok(samples) => {
                let good = !samples.is_empty() && samples.iter().all(|s| ok(value_of(s)));
                if promql.starts_with("up") && samples.len() != 3 {
                    last = format!("{promql}: {samples:?}");
                    return true;
                }
                if !good {
                    last = format!("{promql}: {samples:?}");
                }
                !good
            }
            Err(e) => {
                last = format!("{promql}: {e}");
                true
            }
        });
        if waiting.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus did not show what we expect within {PATIENCE:?}; still waiting on {} queries, last: {last}",
            waiting.len()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let (status, _) = get(&format!("http://{web}/-/ready"));
    assert_eq!(status, 200);

    // Every dashboard expression is PromQL Prometheus accepts.
    for (file, expr) in support::dashboard_expressions() {
        let promql = support::with_grafana_variables(&expr);
        if let Err(e) = query(&web, &promql) {
            panic!("{file}: Prometheus refuses `{expr}`: {e}");
        }
    }
}
