//! The C example (`c/play.c`), compiled with `cc` against the staticlib and
//! the checked-in header, plays a live match on loopback for a few seconds:
//! snapshots arrive, its inputs reach the server, and it disconnects
//! cleanly (`support::plays_a_live_match` says how each is seen).

mod support;

use std::process::Command;
use std::time::Duration;

use support::{crate_dir, lib_dir, plays_a_live_match, run, scratch};

#[test]
fn the_c_example_plays_a_live_match_and_leaves_cleanly() {
    let exe = scratch("c").join("play");
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("c/play.c"))
        .arg(lib_dir().join("libhightick_arena_client.a"))
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-o"])
        .arg(&exe);
    let (built, stdout, stderr) = run(cc, Duration::from_secs(120));
    assert!(built, "cc failed:\n{stdout}\n{stderr}");
    plays_a_live_match("c", |token| {
        let mut play = Command::new(&exe);
        play.arg(token).arg("3");
        play
    });
}
