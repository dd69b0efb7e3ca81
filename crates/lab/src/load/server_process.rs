//! A server instance as a child process (`hightick serve` from the binary the caller
//! names), so its CPU time is its own and the bots' is not, optionally bound to a CPU
//! set the way `taskset`/`numactl --physcpubind` would bind it.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::LabError;

/// How to start one instance.
#[derive(Debug, Clone)]
pub(crate) struct Launch<'a> {
    /// The `hightick` binary.
    pub exe: &'a Path,
    /// Worker threads (0: one per CPU the instance may use).
    pub workers: usize,
    /// The token key file (64 hex digits).
    pub key_file: &'a Path,
    /// A budgets file, or the server's built-in defaults.
    pub budgets: Option<&'a Path>,
    /// CPUs the instance (every thread of it) may run on; `None`: any.
    pub cpus: Option<&'a [u32]>,
    /// Where the instance's stderr goes.
    pub log: PathBuf,
    /// Per-client link adaptation on or off (`None`: the server's default).
    pub adapt: Option<bool>,
}

/// A running `hightick serve`; killed if dropped before [`ServerProcess::stop`].
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Option<Child>,
    log: PathBuf,
    /// Its admin API.
    pub admin: SocketAddr,
}

/// Restricts the calling thread (in a child between fork and exec: the whole process
/// to be) to `cpus`.
fn bind_to(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: CPU_SET bounds-checks against the set's size.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; the set outlives the call.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl ServerProcess {
    /// Starts `hightick serve` on loopback and waits for its banner line.
    pub(crate) fn start(launch: &Launch<'_>) -> Result<Self, LabError> {
        let log = std::fs::File::create(&launch.log)
            .map_err(LabError::io(format!("creating {}", launch.log.display())))?;
        let mut command = Command::new(launch.exe);
        command
            .args(["serve", "--bind", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
            .args(["--workers", &launch.workers.to_string()])
            .args(["--drain-timeout", "2", "--key-file"])
            .arg(launch.key_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        if let Some(adapt) = launch.adapt {
            command.args(["--adapt", if adapt { "on" } else { "off" }]);
        }
        if let Some(budgets) = launch.budgets {
            command.arg("--budgets").arg(budgets);
        }
        if let Some(cpus) = launch.cpus {
            let cpus = cpus.to_vec();
            use std::os::unix::process::CommandExt as _;
            // SAFETY: the closure only makes one system call (sched_setaffinity) on
            // memory allocated before the fork; it neither allocates nor takes locks.
            unsafe {
                command.pre_exec(move || bind_to(&cpus));
            }
        }
        let mut child = command.spawn().map_err(LabError::io(format!(
            "starting {} serve",
            launch.exe.display()
        )))?;
        let stdout = child.stdout.take();
        let mut process = Self {
            child: Some(child),
            log: launch.log.clone(),
            admin: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let mut banner = String::new();
        if let Some(out) = stdout {
            BufReader::new(out)
                .read_line(&mut banner)
                .map_err(LabError::io("reading the server's banner"))?;
        }
        process.admin = parse_banner(&banner).map_err(|e| process.with_log(e))?;
        Ok(process)
    }

    /// The child's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// CPU seconds (user + system) the instance has used so far.
    pub(crate) fn cpu_seconds(&self) -> f64 {
        hightick_process::cpu_seconds_of(&self.pid().to_string()).unwrap_or(0.0)
    }

    /// The error with the last lines the server wrote to stderr.
    fn with_log(&self, message: String) -> LabError {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(5).collect();
        if tail.is_empty() {
            LabError::Server(message)
        } else {
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            LabError::Server(format!("{message}; it said: {}", tail.join(" | ")))
        }
    }

    /// SIGTERM, then waits up to `patience` for a clean exit (killing it after).
    pub(crate) fn stop(mut self, patience: Duration) -> Result<(), LabError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = libc::pid_t::try_from(child.id()).unwrap_or(0);
        // SAFETY: kill sends a signal to our own child process.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let start = Instant::now();
        while start.elapsed() < patience {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(self.with_log(format!("exited with {status}")));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(LabError::io("waiting for the server")(e)),
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(self.with_log(format!("did not drain within {patience:?}; killed")))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The admin address in `hightick serve: admin http://A game G1,G2`.
fn parse_banner(line: &str) -> Result<SocketAddr, String> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("unexpected banner {:?}", line.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_gives_the_admin_address() {
        let admin = parse_banner(
            "hightick serve: admin http://127.0.0.1:7780 game 127.0.0.1:7777,127.0.0.1:7778\n",
        )
        .unwrap();
        assert_eq!(admin.port(), 7780);
        assert!(parse_banner("garbage").is_err());
        assert!(parse_banner("").is_err());
    }

    #[test]
    fn binding_to_the_allowed_cpus_succeeds_and_to_none_fails() {
        let allowed = super::super::placement::allowed_cpus();
        // On a thread of our own, so the test harness's threads are not affected.
        std::thread::spawn(move || {
            assert!(bind_to(&allowed).is_ok());
            assert!(bind_to(&[]).is_err());
        })
        .join()
        .unwrap();
    }
}
