//! The `kill-gateway` drill (two or more gateways on PostgreSQL): once
//! matches run, SIGKILL the last gateway. The others keep serving: a new
//! login and a store-backed read go through them, and the players that
//! used the dead one fail over to them (the swarm's gateway list). A host
//! links to one gateway, so the hosts linked to the dead one keep their
//! results in their outboxes; after a heartbeat timeout the gateway is
//! started again on its address and they deliver. Nothing charged twice
//! and nothing lost are the run's own checks (the ledger, the outboxes,
//! matches finished = results recorded).

use std::path::Path;
use std::time::Duration;

use crate::children::Process;
use crate::drill::{DrillCheck, Scene, Timeline};
use crate::probe::Probe;

/// How long after matches show the gateway is killed.
const INTO_THE_LOAD: Duration = Duration::from_secs(2);
/// Longest the restarted gateway may take to print its banner.
const RESTART_PATIENCE: Duration = Duration::from_secs(30);

/// What the drill did.
#[derive(Debug, Default, Clone)]
pub(crate) struct KillGatewayFacts {
    killed: Option<String>,
    survivor_login: bool,
    survivor_read: Option<u16>,
    restarted: bool,
}

/// Where a killed gateway is started again from.
pub(crate) struct GatewayStart<'a> {
    /// The gateways' config file.
    pub config: &'a Path,
    /// The log directory.
    pub dir: &'a Path,
}

/// Runs the drill on the last of `gateways`.
pub(crate) fn run(
    scene: &Scene,
    gateways: &mut [Process],
    start: &GatewayStart,
    timeline: &mut Timeline,
) -> KillGatewayFacts {
    let probe = Probe::new();
    let mut facts = KillGatewayFacts::default();
    let n = gateways.len();
    if n < 2 {
        timeline.note("one gateway: nothing to fail over to; no gateway killed");
        return facts;
    }
    let busy = || {
        scene.gateways.iter().any(|g| {
            probe
                .hosts(g, scene.secret)
                .is_some_and(|l| l.iter().any(|h| h.active > 0))
        })
    };
    if !scene.wait_for(busy) {
        timeline.note("no match ran before the players' end; no gateway killed");
        return facts;
    }
    std::thread::sleep(INTO_THE_LOAD);
    let victim = n - 1;
    let url = scene.gateways[victim].clone();
    gateways[victim].kill();
    facts.killed = Some(url.clone());
    timeline.note(format!("SIGKILL gateway {victim} ({url}) under load"));

    let survivor = &scene.gateways[0];
    if let Some(token) = probe.guest_session(survivor, "stack-drill-probe") {
        facts.survivor_login = true;
        let read = probe.store_read(survivor, &token);
        facts.survivor_read = read.status;
        timeline.note(format!(
            "gateway 0 serves on: a new login through its queue, a store read answers {}",
            read.status.map_or("nothing".to_owned(), |s| s.to_string())
        ));
    } else {
        timeline.note("gateway 0 did not log the probe in");
    }

    // Its hosts keep their results until it is back.
    std::thread::sleep(scene.host_timeout);
    if scene.over() {
        return facts;
    }
    let address = url.trim_start_matches("http://").to_owned();
    match Process::start(
        &format!("gateway {victim}"),
        scene.exe,
        &[
            "gateway".to_owned(),
            "--config".to_owned(),
            start.config.display().to_string(),
            "--listen".to_owned(),
            address,
        ],
        &start.dir.join(format!("gateway-{victim}.log")),
        "listening on",
        RESTART_PATIENCE,
    ) {
        Ok((process, _)) => {
            gateways[victim] = process;
            facts.restarted = true;
            timeline.note(format!(
                "gateway {victim} started again on {url}; the hosts linked to it deliver what they kept"
            ));
        }
        Err(e) => timeline.note(format!("gateway {victim} did not start again: {e}")),
    }
    facts
}

/// The drill's checks (nothing lost or doubled: the run's own checks).
pub(crate) fn checks(facts: &KillGatewayFacts) -> Vec<DrillCheck> {
    vec![
        DrillCheck::new(
            match &facts.killed {
                Some(url) => format!("a gateway was killed under load ({url})"),
                None => "a gateway was killed under load (none was)".to_owned(),
            },
            facts.killed.is_some(),
        ),
        DrillCheck::new(
            format!(
                "the surviving gateway served on: login {}, store read {}",
                if facts.survivor_login { "ok" } else { "FAILED" },
                facts
                    .survivor_read
                    .map_or("no answer".to_owned(), |s| s.to_string())
            ),
            facts.survivor_login && facts.survivor_read == Some(200),
        ),
        DrillCheck::new(
            "the killed gateway started again on its address (its hosts deliver)",
            facts.restarted,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drill_that_killed_nothing_fails_and_a_full_one_passes() {
        assert!(checks(&KillGatewayFacts::default()).iter().all(|c| !c.held));
        let done = KillGatewayFacts {
            killed: Some("http://127.0.0.1:1".to_owned()),
            survivor_login: true,
            survivor_read: Some(200),
            restarted: true,
        };
        assert!(checks(&done).iter().all(|c| c.held));
    }
}
