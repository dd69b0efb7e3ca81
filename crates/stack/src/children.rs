//! The stack's processes: `gateway` and `serve` children of the stack's own
//! binary, each started with flags, known by the banner line it prints, and
//! stopped with SIGTERM (a drain) or killed.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::StackError;

/// A child process of the stack.
#[derive(Debug)]
pub(crate) struct Process {
    /// What it is (`gateway`, `host 2`).
    pub name: String,
    child: Option<Child>,
}

impl Process {
    /// Starts `exe args...` with stderr to `log` and waits up to `patience`
    /// for a stdout line holding `banner`; returns it with the line.
    pub(crate) fn start(
        name: &str,
        exe: &Path,
        args: &[String],
        log: &Path,
        banner: &str,
        patience: Duration,
    ) -> Result<(Self, String), StackError> {
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(StackError::io(log))?;
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(StackError::io(exe))?;
        let stdout = child.stdout.take().ok_or_else(|| StackError::Child {
            name: name.to_owned(),
            reason: "no stdout".to_owned(),
        })?;
        let (tx, rx) = mpsc::channel();
        let wanted = banner.to_owned();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if !sent && line.contains(&wanted) {
                    let _ = tx.send(line);
                    sent = true;
                }
            }
        });
        let mut process = Self {
            name: name.to_owned(),
            child: Some(child),
        };
        match rx.recv_timeout(patience) {
            Ok(line) => Ok((process, line)),
            Err(_) => {
                process.kill();
                let tail = std::fs::read_to_string(log).unwrap_or_default();
                let tail: Vec<&str> = tail.lines().rev().take(5).collect();
                Err(StackError::Child {
                    name: name.to_owned(),
                    reason: format!(
                        "no `{banner}` line within {patience:?}; its log ({}) ends: {}",
                        log.display(),
                        tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                    ),
                })
            }
        }
    }

    /// Sends SIGTERM and waits up to `patience` for the exit (a drain); kills
    /// it after that. Returns whether it exited on its own.
    pub(crate) fn stop(&mut self, patience: Duration) -> bool {
        let Some(child) = self.child.as_mut() else {
            return true;
        };
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                self.child = None;
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill();
        false
    }

    /// Whether it is still running.
    pub(crate) fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// Kills it at once (SIGKILL).
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A server host of the stack: its process, state directory and the flags
/// it was started with, so it can be started again on the same state.
#[derive(Debug)]
pub(crate) struct Host {
    /// Its process (`None` while it is down after a kill).
    pub process: Option<Process>,
    /// Its `--state-dir`.
    pub state: std::path::PathBuf,
    /// Its stable host id (from its banner).
    pub host_id: String,
    /// The game addresses its current process serves (from its banner).
    pub game: Vec<String>,
    /// Its admin API's base URL (from its banner).
    pub admin: String,
    name: String,
    args: Vec<String>,
}

/// The banner a host prints once it serves.
const HOST_BANNER: &str = "hightick serve: admin";

impl Host {
    /// Starts host `name` as `exe args...`, its log in its state directory.
    pub(crate) fn start(
        name: &str,
        exe: &Path,
        args: Vec<String>,
        state: std::path::PathBuf,
        patience: Duration,
    ) -> Result<Self, StackError> {
        let mut host = Self {
            process: None,
            state,
            host_id: String::new(),
            game: Vec::new(),
            admin: String::new(),
            name: name.to_owned(),
            args,
        };
        host.restart(exe, patience)?;
        Ok(host)
    }

    /// Starts its process (again), on the same state directory; its log
    /// is appended to.
    pub(crate) fn restart(&mut self, exe: &Path, patience: Duration) -> Result<(), StackError> {
        let log = self.state.join("serve.log");
        let (process, banner) =
            Process::start(&self.name, exe, &self.args, &log, HOST_BANNER, patience)?;
        self.host_id = banner_word(&banner, "host").unwrap_or_default();
        self.admin = banner_url(&banner).unwrap_or_default();
        self.game = banner_word(&banner, "game")
            .map(|g| g.split(',').map(str::to_owned).collect())
            .unwrap_or_default();
        self.process = Some(process);
        Ok(())
    }

    /// What it is (`host 1`).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// SIGKILLs its process.
    pub(crate) fn kill(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.kill();
        }
    }
}

/// The word after `key` in a banner line (`game 127.0.0.1:7777` -> the address).
pub(crate) fn banner_word(line: &str, key: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    words.find(|w| *w == key)?;
    words.next().map(str::to_owned)
}

/// The `http://ADDR` in a banner line.
pub(crate) fn banner_url(line: &str) -> Option<String> {
    line.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .map(|w| w.trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banners_give_their_url() {
        assert_eq!(
            banner_url("hightick gateway: listening on http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            banner_url("hightick serve: admin http://127.0.0.1:7780 game 127.0.0.1:7777 host h")
                .as_deref(),
            Some("http://127.0.0.1:7780")
        );
        assert_eq!(banner_url("nothing here"), None);
        let host = "hightick serve: admin http://127.0.0.1:7780 game 127.0.0.1:7777 host h-1";
        assert_eq!(banner_word(host, "game").as_deref(), Some("127.0.0.1:7777"));
        assert_eq!(banner_word(host, "host").as_deref(), Some("h-1"));
        assert_eq!(banner_word(host, "region"), None);
    }
}
