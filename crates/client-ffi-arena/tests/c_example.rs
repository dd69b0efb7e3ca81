//! The C example (`c/play.c`), compiled with `cc` against the staticlib and
//! the checked-in header, plays a live match on loopback for a few seconds:
//! snapshots arrive, its inputs reach the server (the admin API counts
//! them, and its own player moves), and it disconnects cleanly (the server
//! frees its seat at once, long before the token's timeout could).

mod support;

use std::process::Command;
use std::time::Duration;

use support::{LiveMatch, crate_dir, lib_dir, run, scratch, value};

/// Silence after which the server would time the client out: far longer
/// than the test waits, so a seat freed in time was freed by the
/// client's disconnect packets.
const TOKEN_TIMEOUT_S: i32 = 120;

#[test]
fn the_c_example_plays_a_live_match_and_leaves_cleanly() {
    let out = scratch("c_example");
    let exe = out.join("play");
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("c/play.c"))
        .arg(lib_dir().join("libhightick_arena_client.a"))
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-o"])
        .arg(&exe);
    let (built, stdout, stderr) = run(cc, Duration::from_secs(120));
    assert!(built, "cc failed:\n{stdout}\n{stderr}");

    let live = LiveMatch::start(&[7]);
    let token = out.join("token");
    std::fs::write(&token, live.token(7, TOKEN_TIMEOUT_S)).unwrap();
    let mut play = Command::new(&exe);
    play.arg(&token).arg("3");
    let player = std::thread::spawn(move || run(play, Duration::from_secs(60)));
    // While it plays, the server seats it.
    let connected = live.wait_for("connected", Duration::from_secs(30), |c| c == 1);
    let (ok, stdout, stderr) = player.join().unwrap();
    assert!(ok, "the C client failed:\n{stdout}\n{stderr}");
    eprintln!("the C client says:\n{stdout}");
    assert_eq!(connected, 1, "the server never seated the C client");

    // Snapshots arrived, and its own player moved on them.
    assert!(value(&stdout, "snapshots") > 50.0, "{stdout}");
    assert!(value(&stdout, "welcome") >= 0.0, "{stdout}");
    assert!(value(&stdout, "moved") > 1.0, "{stdout}");
    assert_eq!(
        value(&stdout, "connected_before_disconnect"),
        1.0,
        "{stdout}"
    );
    assert_eq!(value(&stdout, "closed_locally"), 1.0, "{stdout}");
    // Its inputs reached the server.
    let accepted = live.count("inputs_accepted");
    assert!(
        accepted > 100,
        "{accepted} inputs accepted: {}",
        live.info()
    );
    // The server saw it leave: its seat is free, well inside the timeout.
    let connected = live.wait_for(
        "connected",
        Duration::from_secs(TOKEN_TIMEOUT_S as u64 / 4),
        |c| c == 0,
    );
    assert_eq!(connected, 0, "the seat is still taken: {}", live.info());
    live.stop();
}
