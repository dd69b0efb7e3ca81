//! The server as a child process (`hightick serve` from this same binary),
//! so its CPU time is its own and the bots' is not.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

/// A running `hightick serve`; killed if dropped before [`Self::stop`].
#[derive(Debug)]
pub struct ServerProcess {
    child: Option<Child>,
    /// Its admin API.
    pub admin: SocketAddr,
    /// Its workers' game addresses.
    pub games: Vec<SocketAddr>,
}

impl ServerProcess {
    /// Starts `hightick serve` on loopback with `workers` workers and the
    /// key in `key_file`, and waits for its banner line.
    pub fn start(workers: usize, key_file: &Path) -> Result<Self> {
        let exe = std::env::current_exe().context("locating the hightick binary")?;
        let mut child = Command::new(exe)
            .args(["serve", "--bind", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
            .args([
                "--workers",
                &workers.to_string(),
                "--drain-timeout",
                "2",
                "--key-file",
            ])
            .arg(key_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting hightick serve")?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
        let mut banner = String::new();
        BufReader::new(stdout)
            .read_line(&mut banner)
            .context("reading the server's banner")?;
        let mut process = Self {
            child: Some(child),
            admin: "0.0.0.0:0".parse()?,
            games: Vec::new(),
        };
        let (admin, games) = parse_banner(&banner)?;
        process.admin = admin;
        process.games = games;
        Ok(process)
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGTERM, then waits up to `patience` for a clean exit (killing it after).
    pub fn stop(mut self, patience: Duration) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // SAFETY: kill sends a signal to our own child process.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let start = Instant::now();
        while start.elapsed() < patience {
            if let Some(status) = child.try_wait()? {
                if !status.success() {
                    bail!("the server exited with {status}");
                }
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        bail!("the server did not drain within {patience:?}; killed")
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

/// Reads `hightick serve: admin http://A game G1,G2`.
fn parse_banner(line: &str) -> Result<(SocketAddr, Vec<SocketAddr>)> {
    let bad = || anyhow!("unexpected server banner {line:?}");
    let admin = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .ok_or_else(bad)?
        .parse()
        .map_err(|_| bad())?;
    let games = line
        .split_whitespace()
        .skip_while(|w| *w != "game")
        .nth(1)
        .ok_or_else(bad)?
        .split(',')
        .map(|a| a.parse().map_err(|_| bad()))
        .collect::<Result<Vec<SocketAddr>>>()?;
    Ok((admin, games))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_gives_admin_and_game_addresses() {
        let (admin, games) = parse_banner(
            "hightick serve: admin http://127.0.0.1:7780 game 127.0.0.1:7777,127.0.0.1:7778\n",
        )
        .unwrap();
        assert_eq!(admin.port(), 7780);
        assert_eq!(games.len(), 2);
        assert!(parse_banner("garbage").is_err());
    }
}
