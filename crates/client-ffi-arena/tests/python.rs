//! The Python binding (`python/hightick_arena.py`, ctypes over the cdylib,
//! standard library only) and its example bot (`python/bot.py`) play a live
//! match on loopback: snapshots arrive, its inputs reach the server, it
//! predicts its own player, it disconnects cleanly. Python missing is a
//! failure, not a skip: CI installs `python3` if the machine lacks it
//! (.ci/run).

mod support;

use std::process::Command;

use support::{crate_dir, lib_dir, plays_a_live_match};

#[test]
fn the_python_bot_plays_a_live_match_and_leaves_cleanly() {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`python3` is not installed: the Python binding test needs it \
         (apt-get install python3, as .ci/run does)"
    );
    let bot = crate_dir().join("python/bot.py");
    let lib = lib_dir().join("libhightick_arena_client.so");
    plays_a_live_match("python", |token| {
        let mut play = Command::new("python3");
        play.arg(&bot)
            .arg(token)
            .arg("3")
            .env("HIGHTICK_ARENA_LIB", &lib)
            .env("PYTHONDONTWRITEBYTECODE", "1");
        play
    });
}
