//! The C# binding (`csharp/`: P/Invoke declarations, the `ArenaClient`
//! wrapper and a console example), compiled with Mono's `mcs` and run with
//! `mono` against the cdylib, plays a live match on loopback: snapshots
//! arrive, its inputs reach the server, it disconnects cleanly. Without
//! Mono it says it skips; under `CI=true` that is a failure (.ci/run
//! installs `mono-mcs` and `mono-runtime`).

mod support;

use std::process::Command;
use std::time::Duration;

use support::{crate_dir, lib_dir, plays_a_live_match, run, scratch, tool_present};

#[test]
fn the_csharp_example_plays_a_live_match_and_leaves_cleanly() {
    let packages = "mono-mcs mono-runtime";
    let test = "the C# binding test";
    if !(tool_present("mcs", test, packages) && tool_present("mono", test, packages)) {
        return;
    }
    let exe = scratch("csharp").join("play.exe");
    let dir = crate_dir().join("csharp");
    let mut mcs = Command::new("mcs");
    mcs.arg("-warnaserror+")
        .arg(format!("-out:{}", exe.display()))
        .args(["ArenaRecords.cs", "HightickArena.cs", "Example.cs"].map(|f| dir.join(f)));
    let (built, stdout, stderr) = run(mcs, Duration::from_secs(120));
    assert!(built, "mcs failed:\n{stdout}\n{stderr}");
    let libs = lib_dir();
    plays_a_live_match("csharp", |token| {
        let mut play = Command::new("mono");
        play.arg(&exe)
            .arg(token)
            .arg("3")
            .env("LD_LIBRARY_PATH", &libs);
        play
    });
}
