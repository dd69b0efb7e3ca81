//! `hightick stack` end to end, as a user runs it: a gateway and a host as
//! child processes, ten players logging in, matchmaking and playing over
//! UDP; at the end the host drains and posts, and the journey report's
//! checks hold (matches finished = results recorded, no result left in an
//! outbox, the ledger balanced, no desync). Short: it proves the wiring,
//! not the figures (`hightick stack` with defaults gives those).

use std::process::Command;

#[test]
fn a_short_stack_run_records_every_finished_match_and_balances_its_books() {
    let dir = std::env::temp_dir().join(format!("hightick-stack-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let json = dir.with_extension("json");
    let output = Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args([
            "stack",
            "--players",
            "10",
            "--hosts",
            "1",
            "--ramp-up",
            "1s",
        ])
        .args([
            "--duration",
            "25s",
            "--drain-timeout",
            "3",
            "--quiet",
            "--dir",
        ])
        .arg(&dir)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("hightick runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let finished = report["matches_finished"].as_u64().unwrap();
    assert!(finished >= 1, "{stdout}");
    assert_eq!(
        report["audit"]["matches_recorded"].as_u64().unwrap(),
        finished,
        "{stdout}"
    );
    assert_eq!(report["outbox_left"], 0, "{stdout}");
    assert_eq!(report["bots"]["desyncs"], 0, "{stdout}");
    assert!(
        report["bots"]["started"].as_u64().unwrap() >= 10,
        "{stdout}"
    );
    // Every player logged in and was rewarded for its match through the
    // gateway's policy: the books hold one reward per player.
    assert_eq!(report["audit"]["accounts"], 10, "{stdout}");
    assert!(stdout.contains("FIGURE stack_results_recorded"), "{stdout}");
    let html = std::fs::read_to_string(dir.join("journey.html")).expect("the HTML report");
    assert!(html.contains("results recorded by the gateway"), "{html}");
    assert!(html.contains("every check held"), "{html}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&json);
}
