//! `hightick serve` as a child process, for the cli's tests and benches
//! (`benches/agones.rs` includes this file): started with flags, its admin
//! address read from its banner line, its stderr kept in a file.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running `hightick serve`; killed if dropped still running.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) child: Child,
    /// Its admin API, `host:port`.
    pub(crate) admin: String,
    stderr: PathBuf,
}

impl Served {
    /// Runs `hightick serve ARGS` (stderr to the file `stderr`) and waits
    /// for its banner.
    pub(crate) fn start<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>, stderr: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hightick"))
            .arg("serve")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(stderr).unwrap())
            .spawn()
            .expect("hightick serve starts");
        let mut banner = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut banner)
            .unwrap();
        let mut served = Self {
            child,
            admin: String::new(),
            stderr: stderr.to_path_buf(),
        };
        // "hightick serve: admin http://A game G1,G2 host H"
        served.admin = banner
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://"))
            .unwrap_or_else(|| panic!("no admin address in {banner:?}: {}", served.log()))
            .to_owned();
        served
    }

    /// `hightick serve --agones` in `dir` (its key, config and stderr go
    /// there) against the SDK server's REST port `sdk_port`: two workers on loopback,
    /// drain timeout 0, matches lingering `linger_s`, results to
    /// `dir/results.jsonl`.
    pub(crate) fn agones(dir: &Path, sdk_port: u16, linger_s: f64) -> Self {
        let key_file = dir.join("key.hex");
        std::fs::write(&key_file, "cd".repeat(32)).unwrap();
        let config = dir.join("host.toml");
        std::fs::write(&config, format!("match_linger_s = {linger_s:?}\n")).unwrap();
        let port = sdk_port.to_string();
        let loopback = ["--bind", "127.0.0.1:0", "--admin", "127.0.0.1:0"];
        let files = [
            "--config",
            config.to_str().unwrap(),
            "--key-file",
            key_file.to_str().unwrap(),
            "--results",
        ];
        let results = dir.join("results.jsonl");
        let agones = ["--agones", "--agones-sdk-port", &port];
        let rest = ["--workers", "2", "--drain-timeout", "0"];
        Self::start(
            agones
                .into_iter()
                .chain(loopback)
                .chain(rest)
                .chain(files)
                .chain([results.to_str().unwrap()]),
            &dir.join("serve.stderr"),
        )
    }

    /// What it wrote to stderr so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends it SIGTERM (a drain).
    pub(crate) fn sigterm(&self) {
        // SAFETY: kill sends a signal to our own child process.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
    }

    /// Waits up to `patience` for it to exit (panics with its log after).
    pub(crate) fn wait_exit(&mut self, patience: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < patience,
                "hightick serve did not exit within {patience:?}: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
