//! The binary's promises to a new user: help works, and bad input gets a
//! clear error.

use std::process::Command;

fn hightick(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args(args)
        .output()
        .expect("the hightick binary runs")
}

#[test]
fn help_lists_the_subcommands() {
    let out = hightick(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["demo", "serve", "gateway", "swarm", "lab"] {
        assert!(text.contains(name), "--help lacks {name}: {text}");
    }
}

#[test]
fn a_bad_scenario_names_its_line_and_field() {
    let dir = std::env::temp_dir().join(format!("hightick-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, "users = 10\nduration = \"1m\"\nthinks = \"1s\"\n").unwrap();
    let out = hightick(&["swarm", "check", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:3:1: thinks: unknown field"), "{err}");
}

#[test]
fn a_bad_flag_is_a_clear_error() {
    let out = hightick(&["demo", "--no-such-flag"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}
