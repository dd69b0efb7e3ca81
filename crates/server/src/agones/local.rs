//! [`LocalSdkServer`]: the real Agones SDK server (the sidecar binary) run
//! on this machine without Kubernetes, for tests, benches and trying
//! `serve --agones` by hand. In local mode (`--local -f FILE`) it holds
//! the GameServer from `FILE` in memory, applies every SDK call to it and
//! shows it on `GET /gameserver` (its REST port); rewriting `FILE` replaces
//! it, which is how [`LocalSdkServer::allocate`] plays the allocator. In
//! conformance mode (`--test a,b,c`, which the tool only honours without
//! `--local`) it exits non-zero unless exactly those calls were made.
//!
//! The tool is `$HIGHTICK_AGONES_SDK_SERVER`, else the copy vendored in
//! the repository, `third_party/agones-sdk-server/agones-sdk-server`, in the
//! nearest ancestor of the working directory that has it.
//!
//! ```no_run
//! use std::time::Duration;
//! use hightick_server::agones::local::LocalSdkServer;
//!
//! let tool = LocalSdkServer::find_tool().unwrap().expect("the tool");
//! let dir = std::env::temp_dir();
//! let sdk = LocalSdkServer::start_local(&tool, &dir, 4).unwrap();
//! println!("SDK REST port {}", sdk.http_port);
//! let gs = sdk
//!     .wait_until(Duration::from_secs(10), "Ready", |gs| gs["status"]["state"] == "Ready")
//!     .unwrap();
//! assert_eq!(LocalSdkServer::counter(&gs, "matches"), Some((0, 4)));
//! ```

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::{Value, json};

/// The environment variable naming the tool.
pub const TOOL_ENV: &str = "HIGHTICK_AGONES_SDK_SERVER";
/// Where the repository keeps its copy of the tool.
const VENDORED: &str = "third_party/agones-sdk-server/agones-sdk-server";
/// The GameServer's name in the file.
const NAME: &str = "hightick-local";
/// The annotation [`LocalSdkServer::allocate`] numbers its allocations with,
/// to see when the tool has taken each.
const SEQUENCE: &str = "local.hightick.dev/allocation";
/// How often [`LocalSdkServer::wait_until`] looks.
const POLL: Duration = Duration::from_millis(2);
/// Longest the tool may take to answer after it starts.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The tool unpacks itself on its first run: starts wait for each other
/// until the first answers.
static STARTING: Mutex<()> = Mutex::new(());

/// A running SDK server; killed when dropped. See the [module docs](self).
#[derive(Debug)]
pub struct LocalSdkServer {
    child: Child,
    /// The gRPC port.
    pub grpc_port: u16,
    /// The REST port (`GET /gameserver`; what `serve --agones-sdk-port` takes).
    pub http_port: u16,
    file: PathBuf,
    log: PathBuf,
    allocations: std::sync::atomic::AtomicU64,
    /// `status.address` and `status.ports` as Agones would set them
    /// ([`Self::set_address`]), kept when the file is rewritten.
    reached_at: Mutex<Value>,
}

impl LocalSdkServer {
    /// The tool's path: `None` when it is nowhere; an error when
    /// `$HIGHTICK_AGONES_SDK_SERVER` names a file that is not there.
    pub fn find_tool() -> Result<Option<PathBuf>, String> {
        if let Some(path) = std::env::var_os(TOOL_ENV) {
            let path = PathBuf::from(path);
            return if path.is_file() {
                Ok(Some(path))
            } else {
                Err(format!("${TOOL_ENV} = {}: no such file", path.display()))
            };
        }
        let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
        Ok(cwd
            .ancestors()
            .map(|a| a.join(VENDORED))
            .find(|p| p.is_file()))
    }

    /// [`Self::find_tool`] for a test or bench named `what`: when the tool
    /// is nowhere, says loudly on stderr that `what` is skipped and returns
    /// `None`; panics when `$HIGHTICK_AGONES_SDK_SERVER` names a missing
    /// file, or when the tool is nowhere under `CI=true` (the repository
    /// vendors it: there, a missing tool is a failure).
    pub fn tool_or_skip(what: &str) -> Option<PathBuf> {
        match Self::find_tool() {
            Ok(Some(tool)) => Some(tool),
            Ok(None) => {
                let why = format!(
                    "the Agones SDK server is not here (set ${TOOL_ENV}, or run from a checkout \
                     that has {VENDORED})"
                );
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "{what}: {why}"
                );
                eprintln!("\n*** SKIPPED {what}: {why} ***\n");
                None
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }

    /// Starts the tool in local mode in `dir` (its GameServer file and log
    /// go there) with a GameServer in state `Scheduled` whose Counter
    /// `matches` has `capacity`.
    pub fn start_local(tool: &Path, dir: &Path, capacity: i64) -> std::io::Result<Self> {
        let file = dir.join("gameserver.json");
        write_game_server(&file, "Scheduled", &json!({}), (0, capacity), &json!({}))?;
        let file_arg = file.display().to_string();
        Self::start(tool, dir, file, &["--local", "-f", &file_arg])
    }

    /// Starts the tool in conformance mode: for `timeout_s` seconds it
    /// records the SDK calls it gets, then exits 0 if they are exactly
    /// `calls` (by name: `ready`, `health`, `getcounter`...).
    pub fn start_conformance(
        tool: &Path,
        dir: &Path,
        calls: &[&str],
        timeout_s: u32,
    ) -> std::io::Result<Self> {
        let list = calls.join(",");
        let timeout = timeout_s.to_string();
        let args = [
            "--test",
            &list,
            "--timeout",
            &timeout,
            "--sdk-name",
            "hightick",
        ];
        Self::start(tool, dir, dir.join("unused.json"), &args)
    }

    fn start(tool: &Path, dir: &Path, file: PathBuf, args: &[&str]) -> std::io::Result<Self> {
        let [grpc_port, http_port, health_port] = free_ports()?;
        let log = dir.join("agones-sdk-server.log");
        let out = std::fs::File::create(&log)?;
        let _starting = STARTING.lock();
        let child = Command::new(tool)
            .args(args)
            .args(["--address", "localhost"])
            .args(["--grpc-port", &grpc_port.to_string()])
            .args(["--http-port", &http_port.to_string()])
            .args(["--health-port", &health_port.to_string()])
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?;
        let mut server = Self {
            child,
            grpc_port,
            http_port,
            file,
            log,
            allocations: std::sync::atomic::AtomicU64::new(0),
            reached_at: Mutex::new(json!({})),
        };
        let deadline = Instant::now() + START_TIMEOUT;
        while server.game_server().is_err() {
            if Instant::now() > deadline || server.child.try_wait()?.is_some() {
                return Err(std::io::Error::other(format!(
                    "the Agones SDK server did not answer: {}",
                    server.log_text()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    /// The GameServer as `GET /gameserver` shows it.
    pub fn game_server(&self) -> Result<Value, String> {
        let url = format!("http://127.0.0.1:{}/gameserver", self.http_port);
        ureq::get(&url)
            .call()
            .map_err(|e| e.to_string())?
            .body_mut()
            .read_json::<Value>()
            .map_err(|e| e.to_string())
    }

    /// Polls the GameServer until `done` holds (then returns it) or
    /// `timeout` passes (an error naming `what` and the last GameServer).
    pub fn wait_until(
        &self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Result<Value, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let gs = self.game_server();
            if let Ok(gs) = &gs
                && done(gs)
            {
                return Ok(gs.clone());
            }
            if Instant::now() > deadline {
                return Err(format!("no {what} within {timeout:?}; last: {gs:?}"));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Plays the allocator: the GameServer becomes `Allocated` with
    /// `annotations` and its Counter `matches` one higher, as a
    /// GameServerAllocation with that metadata and counter action does.
    /// Returns once the tool shows it. (Labels the SDK set are dropped: the
    /// file is the whole GameServer.)
    pub fn allocate(&self, annotations: &[(&str, &str)]) -> Result<(), String> {
        let gs = self.game_server()?;
        let (count, capacity) = Self::counter(&gs, "matches").ok_or("no Counter matches")?;
        if count >= capacity {
            return Err(format!("Counter matches is full ({count} of {capacity})"));
        }
        let sequence = 1 + self
            .allocations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut annotations: serde_json::Map<String, Value> = annotations
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect();
        annotations.insert(SEQUENCE.to_owned(), Value::from(sequence.to_string()));
        write_game_server(
            &self.file,
            "Allocated",
            &Value::Object(annotations),
            (count + 1, capacity),
            &self.reached_at(),
        )
        .map_err(|e| e.to_string())?;
        let taken = sequence.to_string();
        self.wait_until(START_TIMEOUT, "the allocation taken", |gs| {
            gs["object_meta"]["annotations"][SEQUENCE] == taken.as_str()
        })
        .map(drop)
    }

    /// Plays Agones setting where players reach the GameServer: its
    /// `status.address` and `status.ports` (name, port) become these, state,
    /// annotations and counter kept. Returns once the tool shows them.
    pub fn set_address(&self, address: &str, ports: &[(&str, u16)]) -> Result<(), String> {
        let gs = self.game_server()?;
        let (count, capacity) = Self::counter(&gs, "matches").ok_or("no Counter matches")?;
        let ports: Vec<Value> = ports
            .iter()
            .map(|(name, port)| json!({ "name": name, "port": port }))
            .collect();
        let reached_at = json!({ "address": address, "ports": ports });
        *self.reached_at.lock() = reached_at.clone();
        let state = gs["status"]["state"].as_str().unwrap_or("Scheduled");
        write_game_server(
            &self.file,
            state,
            &gs["object_meta"]["annotations"],
            (count, capacity),
            &reached_at,
        )
        .map_err(|e| e.to_string())?;
        self.wait_until(START_TIMEOUT, "the address taken", |gs| {
            gs["status"]["address"] == address
        })
        .map(drop)
    }

    fn reached_at(&self) -> Value {
        self.reached_at.lock().clone()
    }

    /// A Counter's count and capacity in a GameServer as `GET /gameserver`
    /// shows it (int64 values come as strings).
    pub fn counter(gs: &Value, name: &str) -> Option<(i64, i64)> {
        let c = &gs["status"]["counters"][name];
        let number = |v: &Value| v.as_str()?.parse().ok().or(v.as_i64());
        Some((number(&c["count"])?, number(&c["capacity"])?))
    }

    /// Everything the tool logged so far (one JSON object per line).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits up to `timeout` for the tool to exit (conformance mode).
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<ExitStatus, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                return Err(format!("still running after {timeout:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for LocalSdkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three free loopback ports (bound together, then let go).
fn free_ports() -> std::io::Result<[u16; 3]> {
    let listeners = [
        TcpListener::bind("127.0.0.1:0")?,
        TcpListener::bind("127.0.0.1:0")?,
        TcpListener::bind("127.0.0.1:0")?,
    ];
    let mut ports = [0; 3];
    for (port, l) in ports.iter_mut().zip(&listeners) {
        *port = l.local_addr()?.port();
    }
    Ok(ports)
}

/// Writes the GameServer file in place (the tool watches for writes, not
/// renames): `state`, `annotations`, the Counter `matches` (count,
/// capacity) and `reached_at` (`{"address", "ports"}` or `{}`) in its status.
fn write_game_server(
    file: &Path,
    state: &str,
    annotations: &Value,
    (count, capacity): (i64, i64),
    reached_at: &Value,
) -> std::io::Result<()> {
    let counters = json!({ "matches": { "count": count, "capacity": capacity } });
    let mut status = json!({ "state": state, "counters": counters });
    if let (Some(status), Some(reached_at)) = (status.as_object_mut(), reached_at.as_object()) {
        status.extend(reached_at.clone());
    }
    let gs = json!({
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": { "name": NAME, "annotations": annotations },
        "spec": { "counters": counters },
        "status": status,
    });
    std::fs::write(file, serde_json::to_vec_pretty(&gs)?)
}
