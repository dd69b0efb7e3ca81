//! The guide's last step for a game of one's own: `tag stack` runs tag as
//! a service on this machine (a gateway that knows tag's modes from the
//! game itself, a host, players logging in, queueing for `tag`, playing
//! over UDP) and its results reach the gateway's books.

use std::process::Command;

#[test]
fn tag_plays_the_whole_journey_through_its_own_gateway() {
    let dir = std::env::temp_dir().join(format!("tag-stack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let json = dir.with_extension("json");
    // Tag's short rules are 30-second matches: 40 s see the first ones end.
    let output = Command::new(env!("CARGO_BIN_EXE_hightick-example-tag"))
        .args(["stack", "--players", "6", "--hosts", "1", "--workers", "1"])
        .args([
            "--ramp-up",
            "1s",
            "--duration",
            "40s",
            "--drain-timeout",
            "3",
        ])
        .args(["--quiet", "--dir"])
        .arg(&dir)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("the tag binary runs");
    let out = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())
            .unwrap_or_else(|e| panic!("no report ({e}): {out}"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&json);
    assert!(output.status.success(), "{out}");
    assert_eq!(report["mode"], "tag", "{out}");
    let finished = report["matches_finished"].as_u64().unwrap_or(0);
    assert!(finished >= 1, "{out}");
    assert_eq!(report["audit"]["matches_recorded"], finished, "{out}");
    assert_eq!(report["audit"]["accounts"], 6, "{out}");
    assert_eq!(
        report["audit"]["balance_total"], report["audit"]["ledger_total"],
        "{out}"
    );
    assert_eq!(report["bots"]["desyncs"], 0, "{out}");
}
