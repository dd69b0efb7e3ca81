//! `hightick lab` end to end with the real binary: a short two-step sweep (a real
//! server child process and real bots) writes JSON with the fields its report needs,
//! two recorded sweeps of one commit compare without a regression, the history draws,
//! and a run 30% slower in one subsystem fails `lab compare`; a short soak samples the
//! server every interval and judges the samples, and one with churn replaces the
//! matches that end; a tiny breakdown prints every term; `lab plan` plans from a
//! small history made here (a sweep and `lab record`ed figures), naming each
//! figure's source and warning about missing and stale ones.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hightick_lab::{
    BotRow, HistoryLocation, ResultsDb, RunSummary, SweepReport, SweepStep, TargetStats, TickRow,
};
use serde_json::Value;

fn hightick(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the hightick binary runs")
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-cli-lab-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Tick p99 budget of the short sweeps: loose, so that whether a step passes
/// does not depend on how fast a debug build runs on a loaded machine (the
/// test is about what the lab reports, records and compares).
const TEST_TICK_P99_US: f64 = 50_000.0;

/// A short recorded sweep of 1 and 2 matches into `dir/db`; its JSON is `dir/<json>`.
fn short_sweep(dir: &Path, json: &str) -> Output {
    let budgets = dir.join("budgets.toml");
    std::fs::write(
        &budgets,
        format!("[5v5]\nwindow_ticks = 1280\n\n[5v5.tick]\np99_us = {TEST_TICK_P99_US}\n"),
    )
    .unwrap();
    hightick(
        dir,
        &[
            "lab",
            "sweep",
            "--matches",
            "2,1",
            "--step-duration",
            "2s",
            "--warmup",
            "1s",
            "--budgets",
            budgets.to_str().unwrap(),
            "--retries",
            "0",
            "--json",
            json,
            "--report",
            "sweep.html",
            "--record",
            "--data-dir",
            "db",
        ],
    )
}

fn num(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} missing in {v:#}"))
}

#[test]
fn a_short_sweep_reports_records_and_compares_without_regression() {
    let dir = scratch("sweep");
    let out = short_sweep(&dir, "first.json");
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("FIGURE lab_gpc_5v5_128hz "), "{stdout}");
    assert!(stdout.contains("FIGURE lab_max_matches_5v5_128hz "));
    assert!(stdout.contains("budget violations"), "violations are shown");
    assert!(stdout.contains("recorded as run #1"));

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("first.json")).unwrap()).unwrap();
    let steps = json["steps"].as_array().expect("steps");
    let counts: Vec<u64> = steps
        .iter()
        .map(|s| s["matches"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, vec![1, 2], "monotone match counts");
    for step in steps {
        let m = step["matches"].as_u64().unwrap();
        assert!(step["within_budget"].is_boolean());
        assert!(step["cpu_headroom_ok"].is_boolean());
        let s = &step["summary"];
        assert_eq!(s["matches"].as_u64(), Some(m));
        assert!(num(s, "/tick/ticks") > 0.0, "ticks ran: {s:#}");
        assert!(num(s, "/tick/p99_us") > 0.0);
        assert!(s["tick"]["late_ticks"].is_u64());
        assert_eq!(
            s["tick"]["budget_p99_us"].as_f64(),
            Some(TEST_TICK_P99_US),
            "the budgets file given"
        );
        let subsystems = s["subsystems"].as_array().unwrap();
        assert_eq!(subsystems.len(), 10, "every subsystem");
        assert!(
            subsystems
                .iter()
                .all(|r| r["p99_us"].is_f64() && r["mean_us"].is_f64())
        );
        assert!(num(s, "/server_cpu_cores") > 0.0);
        assert!(num(s, "/network/client_bytes_out_per_s") > 0.0);
        assert_eq!(
            s["match_tick_p99_us"].as_array().map(Vec::len),
            Some(m as usize),
            "one p99 per match"
        );
    }
    assert!(json["gpc"].is_f64());
    assert!(json.get("best_matches").is_some());
    assert!(json["cores_available"].as_u64().unwrap() >= 1);
    let html = std::fs::read_to_string(dir.join("sweep.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 2, "curve and stacks");

    // The same build again: the two runs share a commit, so their differences are noise.
    let out = short_sweep(&dir, "second.json");
    assert!(out.status.success(), "{}", text(&out));
    let commit = json["host"]["git_commit"].as_str();
    // Sub-microsecond subsystems of a debug build move by a microsecond between two
    // runs of one binary (a round's purchases fall in one window and not the other):
    // a floor of 5 us keeps that noise from reading as a change.
    let out = hightick(
        &dir,
        &[
            "lab",
            "compare",
            "1",
            "#2",
            "--data-dir",
            "db",
            "--floor-us",
            "5",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if commit.is_some() {
        assert!(out.status.success(), "{}", text(&out));
        assert!(stdout.contains("no regression beyond 10%"), "{stdout}");
        assert!(stdout.contains("same commit"), "{stdout}");
        assert!(stdout.contains("noise measured from 1 group"), "{stdout}");
    } else {
        eprintln!("no git commit known: same-commit noise cannot be measured, compare not judged");
    }
    assert!(stdout.contains("sweeps compared at 2 matches"), "{stdout}");

    let out = hightick(
        &dir,
        &["lab", "history", "--data-dir", "db", "--report", "h.html"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(dir.join("h.html")).unwrap();
    assert_eq!(
        html.matches("<svg").count(),
        2,
        "mean and p99 across commits"
    );
    assert!(
        html.contains("#1 #2") || commit.is_none(),
        "both runs under one commit"
    );

    let out = hightick(&dir, &["lab", "compare", "1", "99", "--data-dir", "db"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no recorded run #99"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_step_can_spread_matches_over_bound_instances() {
    let dir = scratch("bind");
    let out = hightick(
        &dir,
        &[
            "lab",
            "sweep",
            "--matches",
            "2",
            "--instances",
            "2",
            "--bind",
            "--workers",
            "1",
            "--step-duration",
            "1s",
            "--warmup",
            "1s",
            "--json",
            "bound.json",
            "--report",
            "bound.html",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("bound.json")).unwrap()).unwrap();
    assert_eq!(json["instances"].as_u64(), Some(2));
    assert_eq!(json["bind"].as_bool(), Some(true));
    let step = &json["steps"][0]["summary"];
    assert_eq!(step["match_tick_p99_us"].as_array().map(Vec::len), Some(2));
    assert!(num(step, "/tick/ticks") > 0.0, "{step:#}");
    assert!(
        num(step, "/server_cpu_cores") > 0.0,
        "both instances' CPU counted"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn synthetic(fow_mean: f64) -> RunSummary {
    let row = |name: &str, mean: f64| TargetStats {
        name: name.into(),
        mean_us: mean,
        p50_us: mean,
        p99_us: mean * 2.0,
        ..TargetStats::default()
    };
    RunSummary {
        title: "synthetic".into(),
        mode: "5v5".into(),
        tick_rate_hz: 128,
        matches: 8,
        tick: TickRow {
            mean_us: 100.0,
            p99_us: 200.0,
            ..TickRow::default()
        },
        subsystems: vec![row("fow", fow_mean), row("replication", 20.0)],
        ..RunSummary::default()
    }
}

#[test]
fn a_subsystem_thirty_percent_slower_fails_compare() {
    let dir = scratch("compare");
    std::fs::write(dir.join("a.json"), synthetic(10.0).to_json().unwrap()).unwrap();
    std::fs::write(dir.join("b.json"), synthetic(13.0).to_json().unwrap()).unwrap();
    let out = hightick(&dir, &["lab", "compare", "a.json", "b.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("REGRESSION"), "{stdout}");
    assert!(stdout.contains("fow mean +30.0%"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("regressions beyond 10%"));
    // Within a looser gate it passes; the same file against itself always does.
    let out = hightick(
        &dir,
        &["lab", "compare", "a.json", "b.json", "--threshold", "50"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = hightick(&dir, &["lab", "compare", "a.json", "a.json"]);
    assert!(out.status.success(), "{}", text(&out));
    // Garbage is an error, not a panic.
    std::fs::write(dir.join("bad.json"), "{\"steps\": 3}").unwrap();
    let out = hightick(&dir, &["lab", "compare", "a.json", "bad.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The soak's smoke test (the real one runs 30 minutes: `hightick lab soak`): one
/// match for 12 s sampled every 3 s gives four samples of a live server and a verdict
/// on each bound. Whether the bounds held on this shared machine is not asserted: the
/// exit code says it, and the JSON and report are written either way.
#[test]
fn a_short_soak_samples_the_server_and_judges_the_samples() {
    let dir = scratch("soak");
    let out = hightick(
        &dir,
        &[
            "lab",
            "soak",
            "--matches",
            "1",
            "--duration",
            "12s",
            "--interval",
            "3s",
            "--warmup",
            "2s",
            "--workers",
            "1",
            "--json",
            "soak.json",
            "--report",
            "soak.html",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("soak.json"))
            .unwrap_or_else(|_| panic!("{}", text(&out))),
    )
    .unwrap();
    let samples = v["run"]["samples"].as_array().expect("samples");
    assert!(samples.len() >= 3, "{}", text(&out));
    // Each sample was also kept as it came, a JSON line each, and printed.
    let kept: Vec<Value> = std::fs::read_to_string(dir.join("soak.samples.jsonl"))
        .expect("the samples file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(&kept, samples, "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("CPU/tick us").count(),
        samples.len(),
        "{}",
        text(&out)
    );
    for s in samples {
        assert!(s["rss_bytes"].as_u64().unwrap() > 1_000_000, "{s}");
        assert!(s["open_files"].as_u64().unwrap() >= 3, "{s}");
        assert!(s["threads"].as_u64().unwrap() >= 2, "{s}");
        assert!(s["ticks"].as_u64().unwrap() > 0, "{s}");
        assert!(s["cpu_per_tick_us"].as_f64().unwrap() > 0.0, "{s}");
    }
    let bounds = v["verdict"]["bounds"].as_array().expect("bounds");
    assert_eq!(bounds.len(), 5, "{}", text(&out));
    assert_eq!(
        out.status.success(),
        v["verdict"]["held"].as_bool().unwrap(),
        "{}",
        text(&out)
    );
    assert!(stdout.contains("soak: "), "{}", text(&out));
    let html = std::fs::read_to_string(dir.join("soak.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("resident memory"),
        "report"
    );
}

/// Churn: two tiny matches (one round: half a second to buy, two of combat)
/// end every few seconds; the soak replaces each with a new one whose bots
/// join it, so matches are started and the two stay hosted. A sample taken
/// in the moment between a match's retirement and its replacement may count
/// one match short: one such sample is allowed.
#[test]
fn a_soak_with_churn_replaces_ended_matches_and_holds_their_count() {
    let dir = scratch("soak-churn");
    let out = hightick(
        &dir,
        &[
            "lab",
            "soak",
            "--matches",
            "2",
            "--duration",
            "12s",
            "--interval",
            "3s",
            "--warmup",
            "1s",
            "--workers",
            "1",
            "--churn",
            "on",
            "--settings",
            r#"{"rounds_to_win": 1, "buy_seconds": 0.5, "combat_seconds": 2}"#,
            "--json",
            "soak.json",
            "--report",
            "soak.html",
        ],
    );
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("soak.json"))
            .unwrap_or_else(|_| panic!("{}", text(&out))),
    )
    .unwrap();
    let samples = v["run"]["samples"].as_array().expect("samples");
    assert!(samples.len() >= 3, "{}", text(&out));
    let started: u64 = samples
        .iter()
        .map(|s| s["matches_started"].as_u64().unwrap())
        .sum();
    assert!(started >= 1, "no match was replaced\n{}", text(&out));
    // A retired match's ticks still count on the host: every interval ran
    // match ticks and has a CPU cost per tick.
    for s in samples {
        assert!(s["ticks"].as_u64().unwrap() > 0, "{s}");
        assert!(s["cpu_per_tick_us"].as_f64().unwrap() > 0.0, "{s}");
    }
    let hosted: Vec<u64> = samples
        .iter()
        .map(|s| s["matches"].as_u64().unwrap())
        .collect();
    assert!(hosted.iter().all(|&m| m <= 2), "{hosted:?}");
    assert!(
        hosted.iter().filter(|&&m| m == 2).count() >= hosted.len() - 1,
        "the match count did not hold: {hosted:?}\n{}",
        text(&out)
    );
    // The replacements' bots played too.
    let bots = v["run"]["bots"]["bots"].as_u64().unwrap();
    assert!(bots > 20, "bots {bots}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("FIGURE soak_matches_started {started} matches")),
        "{}",
        text(&out)
    );
    let html = std::fs::read_to_string(dir.join("soak.html")).unwrap();
    assert!(html.contains("matches started"), "report");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The terms `lab breakdown` prints, as `FIGURE breakdown_<term>_us`.
const BREAKDOWN_TERMS: [&str; 8] = [
    "floor",
    "floor_woken",
    "tick_warm",
    "tick_cold",
    "wake",
    "sum",
    "live",
    "unexplained",
];

#[test]
fn a_tiny_breakdown_prints_every_term_and_writes_them_as_json() {
    let dir = scratch("breakdown");
    let out = hightick(
        &dir,
        &[
            "lab",
            "breakdown",
            "--matches",
            "1",
            "--warmup",
            "1s",
            "--duration",
            "2s",
            "--sans-io-warmup",
            "500ms",
            "--sans-io",
            "1s",
            "--rounds",
            "3",
            "--floor-samples",
            "5",
            "--floor-ticks",
            "10",
            "--wake",
            "300ms",
            "--json",
            "b.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("b.json")).unwrap()).unwrap();
    for term in BREAKDOWN_TERMS {
        let name = format!("breakdown_{term}_us");
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name.as_str()))
            .unwrap_or_else(|| panic!("no FIGURE {name}:\n{}", text(&out)));
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (fields[0], fields.get(3)),
            ("FIGURE", Some(&"us")),
            "{line}"
        );
        let value: f64 = fields[2].parse().unwrap();
        assert!(value.is_finite(), "{line}");
        // A difference of two measurements may be either sign; every
        // measured term is a cost.
        if term != "unexplained" {
            assert!(value > 0.0, "{line}");
        }
    }
    // The sum is the terms it says, and the rest is live minus the sum.
    let f = |key: &str| num(&json, key);
    let sum = f("/floor/plain_us") + f("/tick_cold_us") + f("/wake_us");
    assert!((f("/sum_us") - sum).abs() < 1e-6, "{json}");
    assert!((f("/unexplained_us") - (f("/live_us") - sum)).abs() < 1e-6);
    assert_eq!(json["live"]["matches"], 1);
    assert_eq!(json["floor"]["clients"], 10);
    assert!(stdout.contains("live - sum"), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sweep of 8 x 5v5 at 128 Hz on this machine and build: 80 games per core, bots
/// at 400 per core.
fn synthetic_sweep() -> SweepReport {
    let host = hightick_lab::load::this_host();
    let summary = RunSummary {
        mode: "5v5".into(),
        tick_rate_hz: 128,
        matches: 8,
        bots: BotRow {
            bots: 80,
            cpu_cores: 0.2,
            ..BotRow::default()
        },
        host: host.clone(),
        ..RunSummary::default()
    };
    SweepReport {
        mode: "5v5".into(),
        tick_rate_hz: 128,
        players_per_match: 10,
        host,
        steps: vec![SweepStep {
            matches: 8,
            within_budget: true,
            cpu_headroom_ok: true,
            summary,
            broken_attempts: Vec::new(),
        }],
        best_matches: Some(8),
        gpc: 80.0,
        ..SweepReport::default()
    }
}

#[test]
fn a_plan_from_a_small_history_names_its_sources_and_warns() {
    let dir = scratch("plan");
    let db = ResultsDb::open(&HistoryLocation::DataDir(dir.join("db"))).unwrap();
    let sweep_id = db.record_sweep(&synthetic_sweep(), &"synthetic").unwrap();
    db.close();

    // Gateway figures through `lab record`: one from standard input, one from a file
    // and an older commit.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args([
            "lab",
            "record",
            "--data-dir",
            "db",
            "--command",
            "cargo bench -p hightick-gateway --bench gateway",
        ])
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"stampede: ...\nFIGURE gateway_guest_logins_per_core_s 4000.0 logins/s\nFIGURE meta_postgres_20000_req_per_gateway_core 3000 req/s\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("recorded 2 figure(s) as run #2"),
        "{}",
        text(&out)
    );
    std::fs::write(
        dir.join("ws.txt"),
        "FIGURE ws_held_sockets 19000.0 sockets\n",
    )
    .unwrap();
    let out = hightick(
        &dir,
        &[
            "lab",
            "record",
            "--data-dir",
            "db",
            "--input",
            "ws.txt",
            "--commit",
            "0000000aaaaaaa",
            "--command",
            "cargo bench -p hightick-gateway --bench ws_hold",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    std::fs::write(dir.join("bad.txt"), "FIGURE ws_held_sockets many sockets\n").unwrap();
    let out = hightick(
        &dir,
        &[
            "lab",
            "record",
            "--data-dir",
            "db",
            "--input",
            "bad.txt",
            "--command",
            "x",
        ],
    );
    assert_fails_naming(&out, "bad.txt: line 1");

    let out = hightick(
        &dir,
        &[
            "lab",
            "plan",
            "--data-dir",
            "db",
            "--ccu",
            "2000",
            "--mode",
            "5v5",
            "--login-rate",
            "20",
            "--requests-per-player-min",
            "6",
            "--json",
            "plan.json",
            "--report",
            "plan.html",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // 200 matches at 80 games per core, 160 matches a 2-core GameServer.
    assert!(
        stdout.contains("FIGURE plan_gameservers 2.000 GameServers"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FIGURE plan_host_cores 4.000 cores"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FIGURE plan_gateway_replicas 1.000 replicas"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("FIGURE plan_store_busy"),
        "the store was never measured"
    );
    assert!(
        stdout.contains("warning: missing: store_results_per_s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cargo bench -p hightick-store --bench store_ops"),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning: missing: gameserver_start_ms"),
        "{stdout}"
    );
    if hightick_lab::load::this_host().git_commit.is_some() {
        assert!(
            stdout.contains(
                "warning: stale: websockets_per_replica was measured on commit 0000000aaaaa"
            ),
            "{stdout}"
        );
        assert!(
            !stdout.contains("stale: games_per_core"),
            "the sweep is of this build: {stdout}"
        );
    }
    assert!(!stdout.contains("other machine"), "{stdout}");
    assert_eq!(
        stdout.contains("warning: debug build: games_per_core"),
        cfg!(debug_assertions),
        "the sweep was recorded by this test's build: {stdout}"
    );

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json")).unwrap()).unwrap();
    let gpc = &json["inputs"]["figures"]["games_per_core"];
    assert_eq!(gpc["value"].as_f64(), Some(80.0));
    assert_eq!(gpc["source"]["run_id"].as_i64(), Some(sweep_id));
    assert!(
        gpc["source"]["command"]
            .as_str()
            .unwrap()
            .starts_with("hightick lab sweep --mode 5v5")
    );
    let numbers = json["numbers"].as_array().unwrap();
    let gameservers = numbers.iter().find(|n| n["key"] == "gameservers").unwrap();
    assert_eq!(gameservers["value"].as_f64(), Some(2.0));
    assert_eq!(gameservers["from"], serde_json::json!(["games_per_core"]));
    let html = std::fs::read_to_string(dir.join("plan.html")).unwrap();
    assert!(html.contains("Measurements") && html.contains("missing: store_results_per_s"));

    let out = hightick(
        &dir,
        &[
            "lab",
            "plan",
            "--data-dir",
            "db",
            "--ccu",
            "0",
            "--login-rate",
            "1",
            "--requests-per-player-min",
            "1",
        ],
    );
    assert_fails_naming(&out, "--ccu");

    // A rehearsal's report missing a figure the plan needs: the error names
    // the file and the field.
    std::fs::write(
        dir.join("rehearsal.json"),
        r#"{"mode": "5v5", "backend": "sqlite", "players": 10, "hosts": 1, "gateways": 1, "elapsed_s": 30.0, "requests": 100}"#,
    )
    .unwrap();
    let out = hightick(
        &dir,
        &[
            "lab",
            "plan",
            "--data-dir",
            "db",
            "--from-rehearsal",
            "rehearsal.json",
        ],
    );
    assert_fails_naming(
        &out,
        "rehearsal.json: launch.arrival.stampede_share: missing",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The command failed, and its error names `needle` (a flag, a file and line).
fn assert_fails_naming(out: &Output, needle: &str) {
    assert!(!out.status.success(), "{}", text(out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(needle),
        "{}",
        text(out)
    );
}
