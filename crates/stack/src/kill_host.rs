//! The `kill-host` drill: once host 0 runs a match, SIGKILL it. Its players
//! find out by their connection's silence timeout, queue again and play on
//! another host; the gateway stops giving it matches once its heartbeat
//! timeout passes. Then it is started again on the same `--state-dir`: what
//! its outbox held is delivered, and nothing is recorded twice (the run's
//! own audit). The checks read the matches the store formed.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use hightick_store::LiveMatch;

use crate::children::Host;
use crate::drill::{DrillCheck, Scene, Timeline};
use crate::probe::Probe;
use hightick_store::clock::now_ms;

/// How long after the first match shows on host 0 it is killed (its
/// players are connected and playing by then).
const INTO_THE_MATCH: Duration = Duration::from_secs(2);
/// Longest its restart may take to print its banner.
const RESTART_PATIENCE: Duration = Duration::from_secs(30);

/// What the drill did to host 0.
#[derive(Debug, Default, Clone)]
pub(crate) struct KillHostFacts {
    /// When it was killed, unix ms (`None`: it never ran a match in time).
    killed_ms: Option<i64>,
    /// The game addresses of the killed process.
    dead_game: Vec<String>,
    /// The gateways' heartbeat timeout, ms.
    timeout_ms: i64,
    /// Seconds from the kill until the gateway listed it silent past its
    /// heartbeat timeout.
    stale_after_s: Option<f64>,
    /// Results in its outbox when it was started again (`None`: it was not).
    outbox_at_restart: Option<u64>,
    /// Whether its outbox was empty again before the players' end.
    delivered: bool,
}

/// Runs the drill on `hosts[0]`.
pub(crate) fn run(scene: &Scene, hosts: &mut [Host], timeline: &mut Timeline) -> KillHostFacts {
    let probe = Probe::new();
    let gateway = &scene.gateways[0];
    let mut facts = KillHostFacts {
        timeout_ms: scene.host_timeout.as_millis() as i64,
        ..KillHostFacts::default()
    };
    let Some(host) = hosts.first_mut() else {
        return facts;
    };
    let id = host.host_id.clone();
    let listed = |probe: &Probe| {
        probe
            .hosts(gateway, scene.secret)
            .and_then(|l| l.into_iter().find(|h| h.host_id == id))
    };
    if !scene.wait_for(|| listed(&probe).is_some_and(|h| h.active > 0)) {
        timeline.note(format!(
            "{} ran no match before the players' end",
            host.name()
        ));
        return facts;
    }
    std::thread::sleep(INTO_THE_MATCH);
    let running = listed(&probe).map_or(0, |h| h.active);
    host.kill();
    let killed = Instant::now();
    facts.killed_ms = Some(now_ms());
    facts.dead_game = host.game.clone();
    timeline.note(format!(
        "SIGKILL {} (host id {id}, game {}) with {running} match(es) running",
        host.name(),
        host.game.join(",")
    ));

    let timeout_s = scene.host_timeout.as_secs_f64();
    if scene.wait_for(|| listed(&probe).is_none_or(|h| h.last_seen_s >= timeout_s)) {
        let after = killed.elapsed().as_secs_f64();
        facts.stale_after_s = Some(after);
        timeline.note(format!(
            "the gateway lists {} silent past its heartbeat timeout ({timeout_s:.0} s), {after:.1} s after the kill: no more matches for it",
            host.name()
        ));
    }

    let waiting = pending(host);
    match host.restart(scene.exe, RESTART_PATIENCE) {
        Ok(()) => {
            facts.outbox_at_restart = Some(waiting);
            timeline.note(format!(
                "{} started again on its --state-dir (game {}), {waiting} result(s) waiting in its outbox",
                host.name(),
                host.game.join(",")
            ));
        }
        Err(e) => {
            timeline.note(format!("{} did not start again: {e}", host.name()));
            return facts;
        }
    }
    if scene.wait_for(|| pending(host) == 0) {
        facts.delivered = true;
        timeline.note(format!(
            "{}'s outbox is empty: {waiting} waiting result(s) delivered",
            host.name()
        ));
    }
    facts
}

/// Results waiting in `host`'s outbox.
fn pending(host: &Host) -> u64 {
    std::fs::read_dir(host.state.join("outbox").join("pending")).map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .count() as u64
    })
}

/// The drill's checks, from what it did and the matches the store formed.
/// `cut_short` is how many bots' connections ended before their match did.
pub(crate) fn checks(
    facts: &KillHostFacts,
    matches: &[LiveMatch],
    cut_short: u64,
) -> Vec<DrillCheck> {
    let Some(killed_ms) = facts.killed_ms else {
        return vec![DrillCheck::new(
            "host 0 ran a match to be killed in (it did not)",
            false,
        )];
    };
    let on_dead = |m: &LiveMatch| facts.dead_game.contains(&m.address);
    // Formed on the killed process before the kill, never finished.
    let cut: Vec<&LiveMatch> = matches
        .iter()
        .filter(|m| on_dead(m) && m.formed_ms < killed_ms && m.over_ms.is_none())
        .collect();
    let cut_players: BTreeSet<i64> = cut
        .iter()
        .flat_map(|m| m.seats.iter().map(|s| s.account_id))
        .collect();
    let again: BTreeSet<i64> = matches
        .iter()
        .filter(|m| m.formed_ms > killed_ms && !on_dead(m))
        .flat_map(|m| m.seats.iter().map(|s| s.account_id))
        .filter(|a| cut_players.contains(a))
        .collect();
    let late = matches
        .iter()
        .filter(|m| on_dead(m) && m.formed_ms >= killed_ms + facts.timeout_ms)
        .count();
    let timeout_s = facts.timeout_ms as f64 / 1000.0;
    vec![
        DrillCheck::new(
            format!(
                "killed mid-match: {} match(es) cut off, {} player(s) in them",
                cut.len(),
                cut_players.len()
            ),
            !cut.is_empty(),
        ),
        DrillCheck::new(
            format!(
                "their players found out: {cut_short} bot connection(s) timed out before their match ended"
            ),
            !cut_players.is_empty() && cut_short >= cut_players.len() as u64,
        ),
        DrillCheck::new(
            format!(
                "cut-off players queued again and were matched elsewhere: {} of {}",
                again.len(),
                cut_players.len()
            ),
            !cut_players.is_empty() && again.len() == cut_players.len(),
        ),
        DrillCheck::new(
            format!(
                "matches given to the killed host after its heartbeat timeout ({timeout_s:.0} s): {late}{}",
                facts
                    .stale_after_s
                    .map(|s| format!(" (listed silent {s:.1} s after the kill)"))
                    .unwrap_or_default()
            ),
            late == 0 && facts.stale_after_s.is_some(),
        ),
        DrillCheck::new(
            match facts.outbox_at_restart {
                Some(n) => format!(
                    "started again on its state: {n} result(s) in its outbox, {}",
                    if facts.delivered {
                        "delivered"
                    } else {
                        "NOT delivered"
                    }
                ),
                None => "started again on its state (it did not)".to_owned(),
            },
            facts.outbox_at_restart.is_some() && facts.delivered,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_store::Seat;

    fn formed(id: &str, address: &str, at: i64, over: Option<i64>, players: &[i64]) -> LiveMatch {
        LiveMatch {
            match_id: id.to_owned(),
            mode: "duel".to_owned(),
            address: address.to_owned(),
            region: String::new(),
            seats: players
                .iter()
                .map(|&account_id| Seat {
                    account_id,
                    team: 0,
                })
                .collect(),
            formed_ms: at,
            over_ms: over,
        }
    }

    fn facts() -> KillHostFacts {
        KillHostFacts {
            killed_ms: Some(10_000),
            dead_game: vec!["127.0.0.1:1".to_owned()],
            timeout_ms: 5_000,
            stale_after_s: Some(5.5),
            outbox_at_restart: Some(0),
            delivered: true,
        }
    }

    #[test]
    fn cut_off_players_matched_elsewhere_pass_and_strays_fail() {
        let mut matches = vec![
            formed("a", "127.0.0.1:1", 1_000, Some(5_000), &[1, 2]),
            formed("b", "127.0.0.1:1", 8_000, None, &[3, 4]),
            formed("c", "127.0.0.1:2", 20_000, None, &[3, 4]),
        ];
        assert!(checks(&facts(), &matches, 2).iter().all(|c| c.held));
        // A bot that never noticed fails the second check.
        assert!(!checks(&facts(), &matches, 1)[1].held);
        // Player 4 never played again: the third check fails.
        matches[2].seats.pop();
        let c = checks(&facts(), &matches, 2);
        assert!(!c[2].held, "{c:?}");
        // A match on the dead address after the timeout fails the fourth.
        matches.push(formed("d", "127.0.0.1:1", 16_000, None, &[5, 6]));
        assert!(!checks(&facts(), &matches, 2)[3].held);
    }

    #[test]
    fn a_drill_that_never_killed_fails() {
        let f = KillHostFacts::default();
        assert!(checks(&f, &[], 0).iter().all(|c| !c.held));
    }
}
