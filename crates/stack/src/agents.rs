//! [`Agents`]: the players' processes when a run is distributed: `swarm
//! agent` children of the stack's binary, each on a loopback port of its
//! own, sharing a secret the stack writes; the stack coordinates them as
//! `swarm run --agents` would (each runs a shard of the players and streams
//! its intervals back to be merged).

use std::path::Path;
use std::time::Duration;

use hightick_swarm::distributed::SharedSecret;

use crate::children::{Process, banner_word};
use crate::error::StackError;

/// Longest an agent may take to print its banner.
const START_PATIENCE: Duration = Duration::from_secs(30);

/// Running agents.
pub(crate) struct Agents {
    processes: Vec<Process>,
    /// Their `host:port`.
    pub addrs: Vec<String>,
    /// The secret the coordinator proves it holds.
    pub secret: SharedSecret,
}

impl Agents {
    /// Starts `count` agents of `exe`, their logs and secret in `dir`.
    pub(crate) fn start(exe: &Path, dir: &Path, count: usize) -> Result<Self, StackError> {
        let secret_file = dir.join("swarm.secret");
        let text = hex::encode(rand::random::<[u8; 32]>());
        std::fs::write(&secret_file, text).map_err(StackError::io(&secret_file))?;
        let secret = SharedSecret::load(Some(&secret_file))?;
        let mut agents = Self {
            processes: Vec::with_capacity(count),
            addrs: Vec::with_capacity(count),
            secret,
        };
        for i in 0..count {
            let name = format!("agent {i}");
            let args = [
                "swarm",
                "agent",
                "--listen",
                "127.0.0.1:0",
                "--secret-file",
                &secret_file.display().to_string(),
                "--once",
            ]
            .map(str::to_owned);
            let (process, banner) = Process::start(
                &name,
                exe,
                &args,
                &dir.join(format!("agent-{i}.log")),
                "listening on",
                START_PATIENCE,
            )?;
            let addr = banner_word(&banner, "on")
                .map(|a| a.trim_end_matches(';').to_owned())
                .ok_or_else(|| StackError::Child {
                    name,
                    reason: format!("unexpected banner {banner:?}"),
                })?;
            agents.processes.push(process);
            agents.addrs.push(addr);
        }
        Ok(agents)
    }

    /// Stops them (each has served its one run by now).
    pub(crate) fn stop(&mut self) {
        for p in &mut self.processes {
            p.stop(Duration::from_secs(10));
        }
    }
}
