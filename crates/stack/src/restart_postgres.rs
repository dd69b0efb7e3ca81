//! The `restart-postgres` drill: once matches run, stop the run's private
//! PostgreSQL cluster for a few seconds and start it again. Meanwhile a
//! store-backed read is probed: while the database is down the gateway
//! answers 503 with `Retry-After` once a request has waited
//! `database_acquire_timeout_ms` (3 s, under the 4 s outage, so some must)
//! or, sent near the outage's end, holds it until a connection comes; never
//! another error; once it is
//! back it answers again, with no process restarted; matches finishing
//! after that are recorded (their hosts' outboxes kept them through the
//! outage).

use std::time::{Duration, Instant};

use hightick_store::LiveMatch;

use crate::children::{Host, Process};
use crate::cluster::PrivateCluster;
use crate::drill::{DrillCheck, Scene, Timeline};
use crate::error::StackError;
use crate::probe::Probe;
use hightick_store::clock::now_ms;

/// How long PostgreSQL stays down.
const OUTAGE: Duration = Duration::from_secs(4);
/// How long after matches show PostgreSQL is stopped.
const INTO_THE_LOAD: Duration = Duration::from_secs(2);
/// How often a store read is probed from the stop on.
const PROBE_EVERY: Duration = Duration::from_millis(250);
/// Most probes sent (a minute's worth): the gateway must answer again by then.
const MAX_PROBES: usize = 240;

/// One probe sent from the stop on.
struct Probed {
    sent: Instant,
    while_down: bool,
    answer: crate::probe::Answer,
}

/// What the drill did and saw.
#[derive(Debug, Default, Clone)]
pub(crate) struct RestartFacts {
    /// Whether PostgreSQL was stopped and started again.
    restarted: bool,
    /// Probes sent while it was down: answered 503 with Retry-After, held
    /// until it was back and answered 200, and otherwise.
    unavailable: u32,
    held: u32,
    other: Vec<String>,
    /// Seconds from PostgreSQL's start until the gateway answered 200.
    recovered_after_s: Option<f64>,
    /// When the gateway answered again, unix ms.
    recovered_ms: Option<i64>,
    /// Children that were not running at the drill's end.
    exited: Vec<String>,
}

/// Runs the drill on `cluster`, watching `gateways` and `hosts`.
pub(crate) fn run(
    scene: &Scene,
    cluster: &PrivateCluster,
    gateways: &mut [Process],
    hosts: &mut [Host],
    timeline: &mut Timeline,
) -> RestartFacts {
    let probe = Probe::new();
    let gateway = &scene.gateways[0];
    let mut facts = RestartFacts::default();
    if !scene.wait_for_a_match(&probe, std::slice::from_ref(gateway)) {
        timeline.note("no match ran before the players' end; PostgreSQL left alone");
        return facts;
    }
    std::thread::sleep(INTO_THE_LOAD);
    let Some(token) = probe.guest_session(gateway, "stack-drill-probe") else {
        timeline.note("the probe could not log in; PostgreSQL left alone");
        return facts;
    };
    let before = probe.store_read(gateway, &token);
    timeline.note(format!(
        "matches running; a store-backed read answers {}",
        status(&before)
    ));
    if let Err(e) = cluster.stop_server() {
        timeline.note(format!("stopping PostgreSQL failed: {e}"));
        return facts;
    }
    timeline.note("PostgreSQL stopped (pg_ctl stop -m fast)");
    let down = Instant::now();
    // Probes go out every 250 ms from the stop until one sent after the
    // start is answered 200; each may be held while the store waits for
    // a connection.
    let up: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let probes: std::sync::Mutex<Vec<Probed>> = std::sync::Mutex::new(Vec::new());
    let started: Result<(), StackError> = std::thread::scope(|s| {
        for _ in 0..MAX_PROBES {
            let (probe, token, up, probes) = (&probe, &token, &up, &probes);
            s.spawn(move || {
                let sent = Instant::now();
                let answer = probe.store_read(gateway, token);
                // PostgreSQL cannot answer while it is down: a 200 for a
                // read sent then was held until it was back.
                let probed = Probed {
                    while_down: up.get().is_none_or(|u| sent < *u),
                    answer,
                    sent,
                };
                probes.lock().expect("probe list").push(probed);
            });
            std::thread::sleep(PROBE_EVERY);
            if down.elapsed() >= OUTAGE && up.get().is_none() {
                cluster.start_server()?;
                let at = *up.get_or_init(Instant::now);
                timeline.note(format!(
                    "PostgreSQL started again after {:.1} s down",
                    at.duration_since(down).as_secs_f64()
                ));
            }
            let recovered = up.get().is_some_and(|u| {
                probes
                    .lock()
                    .expect("probe list")
                    .iter()
                    .any(|p| p.sent >= *u && p.answer.status == Some(200))
            });
            if recovered || scene.over() {
                break;
            }
        }
        Ok(())
    });
    if let Err(e) = started {
        timeline.note(format!("starting PostgreSQL again failed: {e}"));
        return facts;
    }
    let Some(up) = up.get().copied() else {
        timeline.note("PostgreSQL was not started again");
        return facts;
    };
    facts.restarted = true;
    let probes = probes.into_inner().expect("probe list");
    for p in probes.iter().filter(|p| p.while_down) {
        match (p.answer.status, &p.answer.retry_after) {
            (Some(503), Some(_)) => facts.unavailable += 1,
            (Some(200), _) => facts.held += 1,
            _ => facts.other.push(status(&p.answer)),
        }
    }
    timeline.note(format!(
        "store reads sent while it was down: {} answered 503 with Retry-After, {} held until it was back and answered 200, {} otherwise",
        facts.unavailable,
        facts.held,
        facts.other.len()
    ));
    if let Some(first) = probes
        .iter()
        .filter(|p| p.sent >= up && p.answer.status == Some(200))
        .map(|p| p.sent)
        .min()
    {
        let after = first.saturating_duration_since(up).as_secs_f64();
        facts.recovered_after_s = Some(after);
        facts.recovered_ms = Some(now_ms());
        timeline.note(format!(
            "the gateway answers 200 again, {after:.1} s after PostgreSQL came back"
        ));
    }
    scene.wait_for(|| false);
    facts.exited = gateways
        .iter_mut()
        .filter_map(|g| (!g.running()).then(|| g.name.clone()))
        .chain(hosts.iter_mut().filter_map(|h| {
            let up = h.process.as_mut().is_some_and(Process::running);
            (!up).then(|| h.name().to_owned())
        }))
        .collect();
    facts
}

fn status(answer: &crate::probe::Answer) -> String {
    match (answer.status, &answer.retry_after) {
        (Some(s), Some(r)) => format!("{s} (Retry-After: {r})"),
        (Some(s), None) => s.to_string(),
        (None, _) => "no answer".to_owned(),
    }
}

/// The drill's checks, from what it did and the matches the store formed.
pub(crate) fn checks(facts: &RestartFacts, matches: &[LiveMatch]) -> Vec<DrillCheck> {
    let recorded_after = facts.recovered_ms.map_or(0, |at| {
        matches
            .iter()
            .filter(|m| m.over_ms.is_some_and(|o| o > at))
            .count()
    });
    vec![
        DrillCheck::new(
            "PostgreSQL stopped and started again under load",
            facts.restarted,
        ),
        DrillCheck::new(
            format!(
                "store reads sent while it was down: {} answered 503 with Retry-After, {} held until it was back, {} otherwise{}",
                facts.unavailable,
                facts.held,
                facts.other.len(),
                if facts.other.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", facts.other.join(", "))
                }
            ),
            // At least one must be refused: the gateway's pool waits
            // `database_acquire_timeout_ms` (3 s), under the 4 s outage.
            facts.unavailable > 0 && facts.other.is_empty(),
        ),
        DrillCheck::new(
            match facts.recovered_after_s {
                Some(s) => format!("the gateway answered again {s:.1} s after PostgreSQL was back"),
                None => "the gateway answered again (it did not)".to_owned(),
            },
            facts.recovered_after_s.is_some(),
        ),
        DrillCheck::new(
            format!(
                "no process restarted or died: {}",
                if facts.exited.is_empty() {
                    "every child ran throughout".to_owned()
                } else {
                    format!("{} exited", facts.exited.join(", "))
                }
            ),
            facts.restarted && facts.exited.is_empty(),
        ),
        DrillCheck::new(
            format!("matches recorded after the recovery: {recorded_after}"),
            recorded_after > 0,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovery_with_only_503s_passes_and_anything_else_fails() {
        let done = LiveMatch {
            match_id: "m".to_owned(),
            mode: "duel".to_owned(),
            address: "127.0.0.1:1".to_owned(),
            region: String::new(),
            seats: Vec::new(),
            formed_ms: 1_000,
            over_ms: Some(9_000),
        };
        let mut facts = RestartFacts {
            restarted: true,
            unavailable: 3,
            held: 1,
            other: Vec::new(),
            recovered_after_s: Some(0.5),
            recovered_ms: Some(5_000),
            exited: Vec::new(),
        };
        assert!(
            checks(&facts, std::slice::from_ref(&done))
                .iter()
                .all(|c| c.held)
        );
        facts.other.push("500".to_owned());
        assert!(!checks(&facts, std::slice::from_ref(&done))[1].held);
        // Every request held and none refused: the outage was never answered.
        facts.other.clear();
        facts.unavailable = 0;
        assert!(!checks(&facts, std::slice::from_ref(&done))[1].held);
        facts.exited.push("gateway".to_owned());
        assert!(!checks(&facts, &[done])[3].held);
        assert!(!checks(&RestartFacts::default(), &[]).iter().any(|c| c.held));
    }
}
