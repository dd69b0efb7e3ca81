//! hightick-ffi-testkit: what the tests of a game's C ABI library share.
//!
//! What it is for: a live host on loopback with one match of the game
//! ([`LiveMatch`]), connect tokens for it, its admin API read as JSON (the
//! match's fields by name), and running a client program written in
//! another language (C, C#, Python) to its end with its `key value` output
//! read back ([`run`], [`value`]). Tools a test needs and the machine lacks
//! are named with the Debian packages that bring them ([`tool_present`]);
//! under `CI=true` a missing tool fails the test.
//!
//! What it is not: a game's checks (each library's tests say what its
//! client must have seen).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hightick_engine::mode::HostedGame;
use hightick_net::{ConnectToken, Key, TokenParams};
use hightick_server::{Host, HostConfig};

/// Silence after which the server would time a client out: far longer
/// than the live-match checks wait, so a seat freed in time was freed by
/// the client's disconnect packets.
pub const TOKEN_TIMEOUT_S: i32 = 120;

/// A host with one match.
pub struct LiveMatch {
    /// The host.
    pub host: Host,
    /// The key its tokens are sealed with.
    pub key: Key,
    /// Its admin API.
    pub admin: SocketAddr,
    /// Where the match's clients connect.
    pub address: SocketAddr,
}

impl std::fmt::Debug for LiveMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveMatch")
            .field("admin", &self.admin)
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl LiveMatch {
    /// Starts a one-worker host of game `G` and creates a match with
    /// `request`, the body of `POST /v1/matches` (mode, roster, settings).
    pub fn start<G: HostedGame>(request: &serde_json::Value) -> Self {
        let key = Key::generate(&mut rand::rng());
        let config = HostConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            admin: "127.0.0.1:0".parse().unwrap(),
            workers: 1,
            match_linger_s: 0.5,
            ..HostConfig::default()
        };
        let host = Host::start::<G>(&config, &key).expect("host starts");
        let admin = host.admin_address();
        let (status, answer) = post(admin, "/v1/matches", &request.to_string());
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
    pub fn token(&self, client_id: u64, timeout_seconds: i32) -> Vec<u8> {
        token(&self.key, client_id, self.address, timeout_seconds, 0, 60)
    }

    /// The match as `GET /v1/matches` lists it.
    pub fn info(&self) -> serde_json::Value {
        let (status, answer) = get(self.admin, "/v1/matches");
        assert_eq!(status, 200, "{answer}");
        let list: serde_json::Value = serde_json::from_str(&answer).unwrap();
        list[0].clone()
    }

    /// A field of the match that is a count.
    pub fn count(&self, field: &str) -> u64 {
        let info = self.info();
        info[field]
            .as_u64()
            .unwrap_or_else(|| panic!("match info has no count `{field}`: {info}"))
    }

    /// Waits until `field` of the match satisfies `ok`, up to `patience`;
    /// returns its last value either way.
    pub fn wait_for(&self, field: &str, patience: Duration, ok: impl Fn(u64) -> bool) -> u64 {
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
    pub fn stop(self) {
        self.host.drain(Duration::ZERO);
        self.host.wait();
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token for `client_id` to `server` made `age` seconds ago, expiring
/// `valid_for` seconds after it was made.
pub fn token(
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

/// `GET http://{admin}{path}`: the status and the body.
pub fn get(admin: SocketAddr, path: &str) -> (u16, String) {
    let mut r = agent()
        .get(&format!("http://{admin}{path}"))
        .call()
        .expect("admin answers");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

/// `POST http://{admin}{path}` with a JSON `body`: the status and the body.
pub fn post(admin: SocketAddr, path: &str, body: &str) -> (u16, String) {
    let mut r = agent()
        .post(&format!("http://{admin}{path}"))
        .header("content-type", "application/json")
        .send(body)
        .expect("admin answers");
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

/// Where cargo put the test's package's cdylib and staticlib `library`
/// (`hightick_tag_client`): beside the test binary
/// (`target/<profile>/deps`).
pub fn lib_dir(library: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    for name in [format!("lib{library}.a"), format!("lib{library}.so")] {
        assert!(
            dir.join(&name).exists(),
            "{name} is not in {} (cargo builds it with the test)",
            dir.display()
        );
    }
    dir
}

/// A scratch directory `name` under `tmp` (the test's
/// `env!("CARGO_TARGET_TMPDIR")`).
pub fn scratch(tmp: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(tmp).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Microseconds on this process's monotonic clock (the caller's clock the
/// library is given).
pub fn now_us() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_micros() as u64 + 1_000_000
}

/// Runs `command` to its end, killing it after `patience`; returns its
/// exit success and output.
pub fn run(mut command: std::process::Command, patience: Duration) -> (bool, String, String) {
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
pub fn value(output: &str, key: &str) -> f64 {
    output
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{output}"))
}

/// Whether `tool` runs (`tool --version`). When it does not, the test
/// says loudly that it is skipped, naming the Debian `packages` that bring
/// it; under `CI=true` that is a failure instead (.ci/run installs them).
pub fn tool_present(tool: &str, test: &str, packages: &str) -> bool {
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
