//! Tag's generated C# binding, compiled with Mono's `mcs` beside a small
//! console client (`csharp/Play.cs`) and run with `mono` against the
//! generated cdylib, plays a live tag match on loopback: it learns its
//! runner (its avatar, from the engine), chases the other runner with its
//! inputs, reads every runner from the snapshots and checks them against
//! the game's rules, tags it (an event naming its own runner), and
//! disconnects cleanly. Without Mono it says it skips; under
//! `CI=true` that is a failure (.ci/run installs `mono-mcs` and
//! `mono-runtime`).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use hightick_example_tag::{HALF_FIELD, Tag};
use hightick_ffi_testkit::{
    LiveMatch, TOKEN_TIMEOUT_S, lib_dir, run, scratch, tool_present, value,
};

#[test]
fn the_generated_csharp_binding_plays_tag_live_with_no_desync() {
    let packages = "mono-mcs mono-runtime";
    let test = "tag's C# binding test";
    if !(tool_present("mcs", test, packages) && tool_present("mono", test, packages)) {
        return;
    }
    let scratch = scratch(env!("CARGO_TARGET_TMPDIR"), "tag-csharp");
    let exe = scratch.join("play.exe");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("csharp");
    let mut mcs = Command::new("mcs");
    mcs.arg("-warnaserror+")
        .arg(format!("-out:{}", exe.display()))
        .args(["HightickTag.cs", "Play.cs"].map(|f| dir.join(f)));
    let (built, stdout, stderr) = run(mcs, Duration::from_secs(120));
    assert!(built, "mcs failed:\n{stdout}\n{stderr}");

    // Two runners in a match of a minute: the C# client's starts at
    // (1000, 0) and is "it" (the first one in always is); the other seat's
    // runner stands still 10 m away, in sight.
    let live = LiveMatch::start::<Tag>(&serde_json::json!({ "mode": "tag", "roster": [7, 8] }));
    let token = scratch.join("token");
    std::fs::write(&token, live.token(7, TOKEN_TIMEOUT_S)).unwrap();
    let mut play = Command::new("mono");
    play.arg(&exe)
        .arg(&token)
        .arg("4")
        .env("LD_LIBRARY_PATH", lib_dir("hightick_tag_client"));
    let player = std::thread::spawn(move || run(play, Duration::from_secs(60)));
    let connected = live.wait_for("connected", Duration::from_secs(30), |c| c == 1);
    let (ok, stdout, stderr) = player.join().unwrap();
    assert!(ok, "the C# client failed:\n{stdout}\n{stderr}");
    eprintln!("the C# client says:\n{stdout}");
    assert_eq!(connected, 1, "the server never seated the C# client");

    // It read positions and events through the generated records, and
    // every state it saw obeys tag's rules: no desync, nothing garbled.
    assert!(value(&stdout, "snapshots") > 50.0, "{stdout}");
    assert_eq!(value(&stdout, "bad_snapshots"), 0.0, "{stdout}");
    assert_eq!(value(&stdout, "decode_errors"), 0.0, "{stdout}");
    assert!(value(&stdout, "runner") >= 0.0, "{stdout}");
    assert!(value(&stdout, "it_snapshots") > 0.0, "{stdout}");
    // Its input moved its runner to the other one, and it tagged it: the
    // event names its avatar.
    let (start, end) = (value(&stdout, "start_x"), value(&stdout, "end_x"));
    assert!(end < start - 100.0, "{stdout}");
    assert!(end.abs() <= f64::from(HALF_FIELD), "{stdout}");
    assert_eq!(value(&stdout, "tagged_by_me"), 1.0, "{stdout}");
    assert!(value(&stdout, "inputs_sent") > 100.0, "{stdout}");
    let accepted = live.count("inputs_accepted");
    assert!(
        accepted > 100,
        "{accepted} inputs accepted: {}",
        live.info()
    );
    assert_eq!(
        value(&stdout, "connected_before_disconnect"),
        1.0,
        "{stdout}"
    );
    assert_eq!(value(&stdout, "closed_locally"), 1.0, "{stdout}");
    let patience = Duration::from_secs(TOKEN_TIMEOUT_S as u64 / 4);
    let connected = live.wait_for("connected", patience, |c| c == 0);
    assert_eq!(connected, 0, "the seat is still taken: {}", live.info());
    live.stop();
}
