//! Shared by the library's live tests: the arena's match on a live host
//! (`hightick-ffi-testkit` keeps the host, the tokens and the admin API),
//! a Rust caller of the C ABI, and the checks every client program passes.

#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hightick_arena::game::Arena;
pub(crate) use hightick_ffi_testkit::{
    LiveMatch, TOKEN_TIMEOUT_S, now_us, run, token, tool_present, value,
};

/// A host with one 5v5 match whose roster is `roster` (buy phase half a
/// second, so players run soon).
pub(crate) fn arena_match(roster: &[u64]) -> LiveMatch {
    LiveMatch::start::<Arena>(&serde_json::json!({
        "mode": "5v5",
        "roster": roster,
        "seed": 7,
        "buy_seconds": 0.5,
    }))
}

/// Where cargo put the arena's cdylib and staticlib.
pub(crate) fn lib_dir() -> PathBuf {
    hightick_ffi_testkit::lib_dir("hightick_arena_client")
}

/// The crate's directory.
pub(crate) fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch directory for this test binary's builds.
pub(crate) fn scratch(name: &str) -> PathBuf {
    hightick_ffi_testkit::scratch(env!("CARGO_TARGET_TMPDIR"), name)
}

/// A Rust caller of the C ABI: one handle, the buffers a C caller would
/// own, and one frame's calls.
pub(crate) mod player {
    use std::time::{Duration, Instant};

    use hightick_arena_client::*;
    use hightick_client_ffi::{
        HIGHTICK_LAST_ERROR_BYTES, HightickClient, HightickSnapshotInfo, HightickStatus,
        HightickTickSync,
    };

    pub(crate) const ENTITIES: usize = 256;
    pub(crate) const EVENTS: usize = 64;

    /// A connected (or connecting) handle and its caller-owned buffers.
    pub(crate) struct FfiPlayer {
        pub(crate) handle: HightickClient,
        pub(crate) entities: Box<[HightickArenaEntity]>,
        pub(crate) events: Box<[HightickArenaEvent]>,
        pub(crate) me: Option<u16>,
        pub(crate) snapshots: u64,
        /// Mispredict on purpose: send an input only every third tick,
        /// then one for a tick skipped, looking elsewhere. The client
        /// predicted the skipped tick with the last input repeated (as a
        /// server does for a tick with none); the server, which has not run
        /// it yet, takes the late one: the two part, and the next
        /// authoritative state corrects the client.
        pub(crate) scramble: bool,
        last_tick: u32,
    }

    /// The calling thread's last error.
    pub(crate) fn last_error() -> String {
        let mut text = [0 as std::ffi::c_char; HIGHTICK_LAST_ERROR_BYTES + 1];
        let mut len = 0;
        // SAFETY: the buffer holds its length in bytes.
        let s = unsafe { hightick_last_error(text.as_mut_ptr(), text.len(), &mut len) };
        assert_eq!(s, HightickStatus::Ok);
        // SAFETY: written NUL-terminated.
        unsafe { std::ffi::CStr::from_ptr(text.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    impl FfiPlayer {
        /// Connects with `token` (must succeed).
        pub(crate) fn connect(token: &[u8]) -> Self {
            let mut handle = 0;
            // SAFETY: valid pointers and lengths.
            let s = unsafe {
                hightick_connect(
                    token.as_ptr(),
                    token.len(),
                    std::ptr::null(),
                    super::now_us(),
                    &mut handle,
                )
            };
            assert_eq!(s, HightickStatus::Ok, "{}", last_error());
            Self {
                handle,
                entities: vec![HightickArenaEntity::default(); ENTITIES].into_boxed_slice(),
                events: vec![HightickArenaEvent::default(); EVENTS].into_boxed_slice(),
                me: None,
                snapshots: 0,
                scramble: false,
                last_tick: 0,
            }
        }

        /// One frame: update, events, snapshot, input (running forward).
        /// Returns the first error status of the frame's calls.
        pub(crate) fn frame(&mut self, now_us: u64) -> Result<(), HightickStatus> {
            let h = self.handle;
            check(hightick_update(h, now_us))?;
            let mut n = 0;
            // SAFETY: the buffer holds EVENTS records.
            let s = unsafe { hightick_poll_events(h, self.events.as_mut_ptr(), EVENTS, &mut n) };
            check(s)?;
            for e in &self.events[..n] {
                if e.kind == HIGHTICK_ARENA_EVENT_WELCOME {
                    self.me = Some(e.player);
                }
            }
            let mut info = HightickSnapshotInfo::default();
            // SAFETY: the buffer holds ENTITIES records.
            let s = unsafe {
                hightick_poll_snapshot(h, &mut info, self.entities.as_mut_ptr(), ENTITIES, &mut n)
            };
            if check(s)? == HightickStatus::Ok {
                self.snapshots += 1;
            }
            let mut sync = HightickTickSync::default();
            // SAFETY: valid out pointer.
            if check(unsafe { hightick_tick_sync(h, &mut sync) })? == HightickStatus::Ok {
                let tick = sync.server_tick as u32 + 6;
                let gap = if self.scramble { 3 } else { 1 };
                if tick >= self.last_tick + gap {
                    let skipped = self.last_tick + 1;
                    self.last_tick = tick;
                    let mut input = HightickArenaInput {
                        move_y: 127,
                        ..HightickArenaInput::default()
                    };
                    send(h, tick, &input)?;
                    if self.scramble {
                        input.yaw = 1.5;
                        send(h, skipped, &input)?;
                    }
                }
            }
            Ok(())
        }

        /// Plays frames about 4 ms apart until `done` (or `patience`
        /// passes); returns whether `done` came.
        pub(crate) fn play_until(
            &mut self,
            patience: Duration,
            mut done: impl FnMut(&Self) -> bool,
        ) -> bool {
            let start = Instant::now();
            while start.elapsed() < patience {
                if let Err(s) = self.frame(super::now_us()) {
                    panic!("frame: {s:?}: {}", last_error());
                }
                if done(self) {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(4));
            }
            false
        }
    }

    /// Sends `input` for `tick` (NOT_CONNECTED is no error: the input is
    /// kept for redundancy).
    fn send(
        h: HightickClient,
        tick: u32,
        input: &HightickArenaInput,
    ) -> Result<(), HightickStatus> {
        // SAFETY: valid record.
        let s = unsafe { hightick_send_input(h, tick, tick.saturating_sub(6), input) };
        if s != HightickStatus::NotConnected {
            check(s)?;
        }
        Ok(())
    }

    fn check(s: HightickStatus) -> Result<HightickStatus, HightickStatus> {
        if (s as i32) < 0 { Err(s) } else { Ok(s) }
    }
}

/// The most, in metres, the median frame's predicted position of a client
/// program may be from its interpolated one: about four times the
/// half-metre lead of a run (a 6 m/s run for the 9 ticks between the input
/// lead and the interpolation delay).
pub(crate) const MAX_PREDICTION_GAP_M: f64 = 2.0;

/// Runs a client program (`command` given the token file's path; it plays
/// for 3 seconds and prints `key value` lines) against a live match and
/// checks that snapshots arrived, that its inputs reached the server (the
/// admin API counts them, and its own player moved) and that it left
/// cleanly (the server frees its seat at once, long before the token's
/// timeout could).
pub(crate) fn plays_a_live_match(name: &str, command: impl FnOnce(&Path) -> Command) {
    let live = arena_match(&[7]);
    let token = scratch(name).join("token");
    std::fs::write(&token, live.token(7, TOKEN_TIMEOUT_S)).unwrap();
    let play = command(&token);
    let player = std::thread::spawn(move || run(play, Duration::from_secs(60)));
    // While it plays, the server seats it.
    let connected = live.wait_for("connected", Duration::from_secs(30), |c| c == 1);
    let (ok, stdout, stderr) = player.join().unwrap();
    assert!(ok, "the {name} client failed:\n{stdout}\n{stderr}");
    eprintln!("the {name} client says:\n{stdout}");
    assert_eq!(connected, 1, "the server never seated the {name} client");

    // Snapshots arrived, and its own player moved on them.
    assert!(value(&stdout, "snapshots") > 50.0, "{stdout}");
    assert!(value(&stdout, "welcome") >= 0.0, "{stdout}");
    // The engine told it its avatar, through the engine-level call: the
    // body its Welcome named.
    assert_eq!(
        value(&stdout, "avatar"),
        value(&stdout, "welcome"),
        "{stdout}"
    );
    assert!(value(&stdout, "moved") > 1.0, "{stdout}");
    assert_eq!(
        value(&stdout, "connected_before_disconnect"),
        1.0,
        "{stdout}"
    );
    assert_eq!(value(&stdout, "closed_locally"), 1.0, "{stdout}");
    // It predicted its own player: finite, moving, and close to where the
    // server's snapshots put it (the prediction runs ahead of the drawn
    // past by the input lead and the interpolation delay, about 9 ticks:
    // half a metre at a run; the median leaves out the frames around a
    // spawn, when the two are apart by the teleport).
    assert!(value(&stdout, "predicted_frames") > 50.0, "{stdout}");
    assert_eq!(value(&stdout, "predicted_finite"), 1.0, "{stdout}");
    assert!(value(&stdout, "predicted_moved") > 1.0, "{stdout}");
    assert_eq!(value(&stdout, "predicted_entity_matches"), 1.0, "{stdout}");
    let gap = value(&stdout, "prediction_gap_median_m");
    assert!((0.0..MAX_PREDICTION_GAP_M).contains(&gap), "{stdout}");
    assert!(value(&stdout, "prediction_compared") > 0.0, "{stdout}");
    // Its inputs reached the server.
    let accepted = live.count("inputs_accepted");
    assert!(
        accepted > 100,
        "{accepted} inputs accepted: {}",
        live.info()
    );
    // The server saw it leave: its seat is free, well inside the timeout.
    let patience = Duration::from_secs(TOKEN_TIMEOUT_S as u64 / 4);
    let connected = live.wait_for("connected", patience, |c| c == 0);
    assert_eq!(connected, 0, "the seat is still taken: {}", live.info());
    live.stop();
}
