//! The Agones lifecycle's figures, against the real Agones SDK server in
//! local mode (`third_party/agones-sdk-server`):
//! - `agones_start_to_ready_ms`: from spawning `hightick serve --agones` to
//!   its GameServer showing Ready (process start, SDK connect, labels,
//!   every worker running, the Ready call);
//! - `agones_sigterm_to_shutdown_ms_N`: from SIGTERM to the GameServer
//!   showing Shutdown with N allocated matches running, at drain timeout 0
//!   and linger 0 (the matches are ended at once: what is measured is the
//!   host's own drain, the results written, the N counter give-backs and
//!   the Shutdown call; a real drain adds up to `drain_timeout_s` plus
//!   `match_linger_s`).
//!
//! Each figure is the median of `RUNS` runs; the GameServer is polled every
//! 2 ms over its REST port. Run with:
//! `cargo bench -p hightick-cli --bench agones`

#[path = "../tests/served/mod.rs"]
mod served;

use std::time::{Duration, Instant};

use hightick_server::agones::annotations::{MATCH_ID, MODE, ROSTER};
use hightick_server::agones::local::LocalSdkServer;
use serde_json::Value;
use served::Served;

const RUNS: usize = 5;
const DRAINING: [usize; 3] = [0, 8, 32];
const WAIT: Duration = Duration::from_secs(60);

fn state(gs: &Value) -> &str {
    gs["status"]["state"].as_str().unwrap_or_default()
}

fn hosted(admin: &str) -> usize {
    ureq::get(&format!("http://{admin}/v1/matches"))
        .call()
        .ok()
        .and_then(|mut r| r.body_mut().read_json::<Vec<Value>>().ok())
        .map_or(0, |m| m.len())
}

/// One run with `n` matches: (start to Ready, SIGTERM to Shutdown).
fn run(tool: &std::path::Path, n: usize, round: usize) -> (Duration, Duration) {
    let dir = std::env::temp_dir().join(format!(
        "hightick-bench-agones-{}-{n}-{round}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sidecar = LocalSdkServer::start_local(tool, &dir, 64).unwrap();
    let start = Instant::now();
    let mut served = Served::agones(&dir, sidecar.http_port, 0.0);
    sidecar
        .wait_until(WAIT, "Ready", |gs| state(gs) == "Ready")
        .unwrap();
    let ready = start.elapsed();
    for k in 0..n {
        let id = format!("m-{k}");
        let roster = (k + 1).to_string();
        sidecar
            .allocate(&[(MATCH_ID, &id), (MODE, "5v5"), (ROSTER, &roster)])
            .unwrap();
        let asked = Instant::now();
        while hosted(&served.admin) < k + 1 {
            assert!(asked.elapsed() < WAIT, "allocation {k}: {}", served.log());
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let term = Instant::now();
    served.sigterm();
    sidecar
        .wait_until(WAIT, "Shutdown", |gs| state(gs) == "Shutdown")
        .unwrap();
    let drained = term.elapsed();
    let gs = sidecar.game_server().unwrap();
    assert_eq!(LocalSdkServer::counter(&gs, "matches"), Some((0, 64)));
    assert!(served.wait_exit(WAIT).success(), "{}", served.log());
    let _ = std::fs::remove_dir_all(&dir);
    (ready, drained)
}

fn median_ms(mut values: Vec<Duration>) -> f64 {
    values.sort();
    values[values.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let Some(tool) = LocalSdkServer::tool_or_skip("the Agones lifecycle bench") else {
        return;
    };
    let mut ready = Vec::new();
    for n in DRAINING {
        let mut drained = Vec::new();
        for round in 0..RUNS {
            let (r, d) = run(&tool, n, round);
            ready.push(r);
            drained.push(d);
        }
        println!(
            "FIGURE agones_sigterm_to_shutdown_ms_{n} {:.1} ms",
            median_ms(drained)
        );
    }
    println!("FIGURE agones_start_to_ready_ms {:.1} ms", median_ms(ready));
}
