//! The binary's promises to a new user: help works, and a subcommand that has
//! not landed says so instead of pretending.

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
fn a_subcommand_not_yet_built_says_so_and_fails() {
    let out = hightick(&["gateway"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not yet available"));
}

#[test]
fn a_bad_flag_is_a_clear_error() {
    let out = hightick(&["demo", "--no-such-flag"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}
