//! Shared by the library's live tests: a host on loopback with one arena
//! match, connect tokens for it, its admin API read as JSON (the match's
//! fields by name, not `MatchInfo`'s types), and where the built libraries
//! are.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hightick_arena::game::Arena;
use hightick_net::{ConnectToken, Key, TokenParams};
use hightick_server::{Host, HostConfig};

/// A host with one 5v5 match whose roster is `roster`.
pub(crate) struct LiveMatch {
    pub(crate) host: Host,
    pub(crate) key: Key,
    pub(crate) admin: SocketAddr,
    /// Where the match's clients connect.
    pub(crate) address: SocketAddr,
}

impl LiveMatch {
    /// Starts a one-worker host and creates the match (buy phase half a
    /// second, so players run soon).
    pub(crate) fn start(roster: &[u64]) -> Self {
        let key = Key::generate(&mut rand::rng());
        let config = HostConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            admin: "127.0.0.1:0".parse().unwrap(),
            workers: 1,
            match_linger_s: 0.5,
            ..HostConfig::default()
        };
        let host = Host::start::<Arena>(&config, &key).expect("host starts");
        let admin = host.admin_address();
        let body = serde_json::json!({
            "mode": "5v5",
            "roster": roster,
            "seed": 7,
            "buy_seconds": 0.5,
        });
        let (status, answer) = post(admin, "/v1/matches", &body.to_string());
        assert_eq!(status, 201, "{answer}");
        let info: serde_json::Value = serde_json::from_str(&answer).unwrap();
        let address = info["address"].as_str().unwrap().parse().unwrap();
        Self {
            host,
            key,
            admin,
            address,
        }
    }

    /// A connect token for `client_id`, valid for a minute, timing out after
    /// `timeout_seconds` of silence.
    pub(crate) fn token(&self, client_id: u64, timeout_seconds: i32) -> Vec<u8> {
        token(&self.key, client_id, self.address, timeout_seconds, 0, 60)
    }

    /// The match as `GET /v1/matches` lists it.
    pub(crate) fn info(&self) -> serde_json::Value {
        let (status, answer) = get(self.admin, "/v1/matches");
        assert_eq!(status, 200, "{answer}");
        let list: serde_json::Value = serde_json::from_str(&answer).unwrap();
        list[0].clone()
    }

    /// A field of the match that is a count.
    pub(crate) fn count(&self, field: &str) -> u64 {
        let info = self.info();
        info[field]
            .as_u64()
            .unwrap_or_else(|| panic!("match info has no count `{field}`: {info}"))
    }

    /// Waits until `field` of the match satisfies `ok`, up to `patience`;
    /// returns its last value either way.
    pub(crate) fn wait_for(
        &self,
        field: &str,
        patience: Duration,
        ok: impl Fn(u64) -> bool,
    ) -> u64 {
        let start = Instant::now();
        loop {
            let v = self.count(field);
            if ok(v) || start.elapsed() > patience {
                return v;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the host.
    pub(crate) fn stop(self) {
        self.host.drain(Duration::ZERO);
        self.host.wait();
    }
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token for `client_id` to `server` made `age` seconds ago, expiring
/// `valid_for` seconds after it was made.
pub(crate) fn token(
    key: &Key,
    client_id: u64,
    server: SocketAddr,
    timeout_seconds: i32,
    age: u64,
    valid_for: u64,
) -> Vec<u8> {
    let create = unix_now() - age;
    ConnectToken::generate(
        &TokenParams {
            protocol_id: hightick_proto::PROTOCOL_ID,
            client_id,
            create_unix: create,
            expire_unix: create + valid_for,
            timeout_seconds,
            server_addresses: &[server],
            user_data: &[],
        },
        key,
        &mut rand::rng(),
    )
    .unwrap()
    .encode()
    .to_vec()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

pub(crate) fn get(admin: SocketAddr, path: &str) -> (u16, String) {
    let mut r = agent()
        .get(&format!("http://{admin}{path}"))
        .call()
        .expect("admin answers");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

pub(crate) fn post(admin: SocketAddr, path: &str, body: &str) -> (u16, String) {
    let mut r = agent()
        .post(&format!("http://{admin}{path}"))
        .header("content-type", "application/json")
        .send(body)
        .expect("admin answers");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

/// Where cargo put this package's cdylib and staticlib: beside the test
/// binary (`target/<profile>/deps`).
pub(crate) fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    for name in ["libhightick_arena_client.a", "libhightick_arena_client.so"] {
        assert!(
            dir.join(name).exists(),
            "{name} is not in {} (cargo builds it with the test)",
            dir.display()
        );
    }
    dir
}

/// The crate's directory.
pub(crate) fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch directory for this test binary's builds.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Microseconds on this process's monotonic clock (the caller's clock the
/// library is given).
pub(crate) fn now_us() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_micros() as u64 + 1_000_000
}

/// Runs `command` to its end, killing it after `patience`; returns its
/// exit success and output.
pub(crate) fn run(
    mut command: std::process::Command,
    patience: Duration,
) -> (bool, String, String) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} starts: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > patience {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} ran past {patience:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.success(), out, err)
}

/// The value of `key value` line `key` in `output`.
pub(crate) fn value(output: &str, key: &str) -> f64 {
    output
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{output}"))
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

/// Silence after which the server would time a client out: far longer
/// than the live-match checks wait, so a seat freed in time was freed by
/// the client's disconnect packets.
pub(crate) const TOKEN_TIMEOUT_S: i32 = 120;

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
    let live = LiveMatch::start(&[7]);
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

/// Whether `tool` runs (`tool --version`). When it does not, the test
/// says loudly that it is skipped, naming the Debian `packages` that bring
/// it; under `CI=true` that is a failure instead (.ci/run installs them).
pub(crate) fn tool_present(tool: &str, test: &str, packages: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let why = format!(
            "{test}: `{tool}` is not installed (apt-get install {packages}; .ci/run installs it)"
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("\n!!! SKIPPED {why}\n");
    }
    found
}
