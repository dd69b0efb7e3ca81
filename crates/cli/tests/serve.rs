//! `hightick serve` as a process: it starts from flags and a key file,
//! answers on its admin API, and on SIGTERM drains — no new matches, the
//! running one ended at the drain timeout with its result written whole —
//! and exits cleanly. Bad config is one clear line.

mod served;

use std::process::Command;
use std::time::Duration;

use served::Served;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

#[test]
fn sigterm_drains_and_exits_cleanly_with_results_written() {
    let dir = temp_dir("drain");
    let key_file = dir.join("key.hex");
    std::fs::write(&key_file, "ab".repeat(32)).unwrap();
    let results = dir.join("results.jsonl");
    let mut served = Served::start(
        [
            "--bind",
            "127.0.0.1:0",
            "--admin",
            "127.0.0.1:0",
            "--workers",
            "1",
            "--drain-timeout",
            "1",
            "--key-file",
            key_file.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ],
        &dir.join("serve.stderr"),
    );
    let admin = served.admin.clone();

    let created = agent()
        .post(&format!("http://{admin}/v1/matches"))
        .header("content-type", "application/json")
        .send(r#"{"mode":"5v5","roster":[1,2,3,4,5,6,7,8,9,10]}"#)
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);

    served.sigterm();
    std::thread::sleep(Duration::from_millis(200));
    if let Ok(refused) = agent()
        .post(&format!("http://{admin}/v1/matches"))
        .header("content-type", "application/json")
        .send(r#"{"mode":"5v5","roster":[11]}"#)
    {
        assert_eq!(
            refused.status().as_u16(),
            503,
            "no new match while draining"
        );
    }

    let status = served.wait_exit(Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    let lines = std::fs::read_to_string(&results).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    assert!(lines.ends_with('\n'), "the last line is whole");
    assert!(lines.contains(r#""abandoned":true"#), "{lines}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn serve_error(args: &[&str], env_key: bool) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hightick"));
    command
        .arg("serve")
        .args(args)
        .env_remove("HIGHTICK_KEY")
        .env_remove("POD_IP");
    if env_key {
        command.env("HIGHTICK_KEY", "cd".repeat(32));
    }
    let out = command.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    stderr
}

#[test]
fn bad_config_and_missing_keys_are_one_clear_line() {
    let dir = temp_dir("bad");
    let config = dir.join("host.toml");
    std::fs::write(&config, "workers = 1\nmax_matches_per_wroker = 3\n").unwrap();
    let err = serve_error(&["--config", config.to_str().unwrap()], true);
    assert!(err.contains("host.toml:2:"), "{err}");
    assert!(err.contains("max_matches_per_wroker"), "{err}");

    let err = serve_error(&["--bind", "127.0.0.1:0", "--admin", "127.0.0.1:0"], false);
    assert!(err.contains("HIGHTICK_KEY"), "{err}");

    let key_file = dir.join("short.hex");
    std::fs::write(&key_file, "abc").unwrap();
    let err = serve_error(&["--key-file", key_file.to_str().unwrap()], false);
    assert!(
        err.contains("short.hex") && err.contains("64 hex digits"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// With a gateway to tell, a host bound to 0.0.0.0 must say where players
/// and the gateway reach it: never a silent 127.0.0.1.
#[test]
fn an_unspecified_bind_with_a_gateway_and_nothing_advertised_is_refused_at_start() {
    let dir = temp_dir("advertise");
    let state = dir.join("state");
    let gateway = [
        "--gateway",
        "http://127.0.0.1:9",
        "--state-dir",
        state.to_str().unwrap(),
    ];
    let mut args = vec!["--bind", "0.0.0.0:0", "--admin", "127.0.0.1:0"];
    args.extend(gateway);
    let err = serve_error(&args, true);
    assert!(
        err.contains("public_address") && err.contains("--public-address"),
        "{err}"
    );
    let mut args = vec!["--bind", "127.0.0.1:0", "--admin", "0.0.0.0:0"];
    args.extend(gateway);
    let err = serve_error(&args, true);
    assert!(
        err.contains("advertise_admin") && err.contains("--advertise-admin"),
        "{err}"
    );
    let mut args = vec!["--public-address", "127.0.0.1:0"];
    args.extend(gateway);
    let err = serve_error(&args, true);
    assert!(err.contains("public_address"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
