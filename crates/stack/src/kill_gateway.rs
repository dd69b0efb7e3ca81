//! The `kill-gateway` drill (two or more gateways on PostgreSQL): once the
//! first match is formed, while players still log in and queue, SIGKILL
//! the last gateway. The others keep serving: a new
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
use std::collections::BTreeSet;

use hightick_store::LiveMatch;

use crate::drill::{DrillCheck, Scene, Timeline};
use crate::probe::Probe;
use hightick_store::clock::now_ms;

/// How long after the first match shows the gateway is killed: its
/// matchmaking pass has recorded the match by then (killed between
/// allocating and recording, it would leave its claimed tickets to the
/// store's 30 s claim expiry and the host a match nobody joins).
const INTO_THE_LOAD: Duration = Duration::from_secs(1);
/// Longest the restarted gateway may take to print its banner.
const RESTART_PATIENCE: Duration = Duration::from_secs(30);

/// What the drill did.
#[derive(Debug, Default, Clone)]
pub(crate) struct KillGatewayFacts {
    killed: Option<String>,
    killed_ms: Option<i64>,
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
    if !scene.wait_for_a_match(&probe, scene.gateways) {
        timeline.note("no match ran before the players' end; no gateway killed");
        return facts;
    }
    std::thread::sleep(INTO_THE_LOAD);
    let victim = n - 1;
    let url = scene.gateways[victim].clone();
    gateways[victim].kill();
    facts.killed = Some(url.clone());
    facts.killed_ms = Some(now_ms());
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

/// The drill's checks (nothing lost or doubled: the run's own checks),
/// from what it did and the matches the store formed for the `players`.
pub(crate) fn checks(
    facts: &KillGatewayFacts,
    matches: &[LiveMatch],
    players: u64,
) -> Vec<DrillCheck> {
    let seated = |after: i64| -> BTreeSet<i64> {
        matches
            .iter()
            .filter(|m| m.formed_ms > after)
            .flat_map(|m| m.seats.iter().map(|s| s.account_id))
            .collect()
    };
    let all = seated(i64::MIN).len() as u64;
    let after_kill = facts.killed_ms.map_or(0, |k| seated(k).len());
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
            format!(
                "queues carried on: {all} of {players} players matched, {after_kill} in matches formed after the kill"
            ),
            all >= players && after_kill > 0,
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

    fn formed(at: i64, players: &[i64]) -> LiveMatch {
        LiveMatch {
            match_id: format!("m{at}"),
            mode: "duel".to_owned(),
            address: "127.0.0.1:1".to_owned(),
            region: String::new(),
            seats: players
                .iter()
                .map(|&account_id| hightick_store::Seat {
                    account_id,
                    team: 0,
                })
                .collect(),
            formed_ms: at,
            over_ms: None,
        }
    }

    #[test]
    fn a_drill_that_killed_nothing_fails_and_a_full_one_passes() {
        let nothing = checks(&KillGatewayFacts::default(), &[], 2);
        assert!(nothing.iter().all(|c| !c.held), "{nothing:?}");
        let formed = [formed(1_000, &[1, 2]), formed(9_000, &[3, 4])];
        let done = KillGatewayFacts {
            killed: Some("http://127.0.0.1:1".to_owned()),
            killed_ms: Some(5_000),
            survivor_login: true,
            survivor_read: Some(200),
            restarted: true,
        };
        assert!(checks(&done, &formed, 4).iter().all(|c| c.held));
        // A player never matched fails the queue check.
        assert!(!checks(&done, &formed, 5)[2].held);
    }
}
