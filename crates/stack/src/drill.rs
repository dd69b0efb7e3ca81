//! [`Drill`]: a failure a stack run inflicts on itself while the players
//! play, and [`DrillReport`], what was done when and the checks that say
//! whether the service took it: `kill-host` (SIGKILL a server host mid-match,
//! restart it later), `kill-gateway` (SIGKILL one of two or more gateways),
//! `restart-postgres` (restart the private PostgreSQL cluster the run
//! started for itself).

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::probe::Probe;

/// A failure drill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Drill {
    /// SIGKILL a server host mid-match; restart it with its state later.
    KillHost,
    /// SIGKILL one of two or more gateways under load.
    KillGateway,
    /// Restart PostgreSQL under load (a private cluster).
    RestartPostgres,
}

impl Drill {
    /// Every drill, in the order the docs give them.
    pub const ALL: [Drill; 3] = [Drill::KillHost, Drill::KillGateway, Drill::RestartPostgres];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Drill::KillHost => "kill-host",
            Drill::KillGateway => "kill-gateway",
            Drill::RestartPostgres => "restart-postgres",
        }
    }
}

impl fmt::Display for Drill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Drill {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Drill::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Drill::ALL.iter().map(|d| d.name()).collect();
                format!("unknown drill {s:?}; one of {}", names.join(", "))
            })
    }
}

/// One thing the drill did or saw, seconds after the players started.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrillEvent {
    /// Seconds since the players' run began.
    pub at_s: f64,
    /// What happened.
    pub what: String,
}

/// One check of a drill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrillCheck {
    /// What must hold, with the figures.
    pub check: String,
    /// Whether it did.
    pub held: bool,
}

impl DrillCheck {
    pub(crate) fn new(check: impl Into<String>, held: bool) -> Self {
        Self {
            check: check.into(),
            held,
        }
    }
}

/// What a drill did and whether the service took it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrillReport {
    /// The drill.
    pub drill: Drill,
    /// What was done and seen, in order.
    pub events: Vec<DrillEvent>,
    /// Its checks (the run's own checks come on top).
    pub checks: Vec<DrillCheck>,
}

/// The drill's log of events, timed from the players' start; each event is
/// printed as it happens so a live run shows them.
#[derive(Debug)]
pub(crate) struct Timeline {
    start: Instant,
    events: Vec<DrillEvent>,
}

impl Timeline {
    pub(crate) fn new(start: Instant) -> Self {
        Self {
            start,
            events: Vec::new(),
        }
    }

    /// Seconds since the start.
    pub(crate) fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Notes `what` now.
    pub(crate) fn note(&mut self, what: impl Into<String>) {
        let event = DrillEvent {
            at_s: self.now_s(),
            what: what.into(),
        };
        eprintln!("\rdrill +{:.1} s: {}", event.at_s, event.what);
        self.events.push(event);
    }

    pub(crate) fn into_events(self) -> Vec<DrillEvent> {
        self.events
    }
}

/// What a drill works on while the players play.
pub(crate) struct Scene<'a> {
    /// The binary the children run.
    pub exe: &'a Path,
    /// The gateways' base URLs.
    pub gateways: &'a [String],
    /// The servers' bearer secret (for the host listing).
    pub secret: &'a str,
    /// A registered host's heartbeat timeout at the gateways.
    pub host_timeout: Duration,
    /// When the players' run ends.
    pub until: Instant,
    /// Set when the players' run ended early.
    pub stopped: &'a AtomicBool,
}

impl Scene<'_> {
    /// Whether the drill should give up: the players are done.
    pub(crate) fn over(&self) -> bool {
        Instant::now() >= self.until || self.stopped.load(Ordering::Relaxed)
    }

    /// Polls `ready` every 100 ms until it holds (`true`) or the run is
    /// over (`false`).
    pub(crate) fn wait_for(&self, mut ready: impl FnMut() -> bool) -> bool {
        loop {
            if ready() {
                return true;
            }
            if self.over() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until a host listed by one of `gateways` runs a match (`true`)
    /// or the run is over (`false`).
    pub(crate) fn wait_for_a_match(&self, probe: &Probe, gateways: &[String]) -> bool {
        self.wait_for(|| {
            gateways.iter().any(|g| {
                probe
                    .hosts(g, self.secret)
                    .is_some_and(|l| l.iter().any(|h| h.active > 0))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drills_parse_by_name_and_unknown_ones_are_named() {
        for d in Drill::ALL {
            assert_eq!(d.name().parse::<Drill>(), Ok(d));
        }
        let e = "kill-everything".parse::<Drill>().unwrap_err();
        assert!(
            e.contains("kill-everything") && e.contains("kill-host"),
            "{e}"
        );
    }
}
