//! The Python binding (`python/hightick_arena.py`, ctypes over the cdylib,
//! standard library only) and its example bot (`python/bot.py`) play a live
//! match on loopback: snapshots arrive, its inputs reach the server, it
//! predicts its own player, it disconnects cleanly. Without Python it says
//! it skips; under `CI=true` that is a failure (.ci/run installs `python3`
//! if the machine lacks it).

mod support;

use std::process::Command;

use support::{crate_dir, lib_dir, plays_a_live_match, tool_present};

#[test]
fn the_python_bot_plays_a_live_match_and_leaves_cleanly() {
    if !tool_present("python3", "the Python binding test", "python3") {
        return;
    }
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
