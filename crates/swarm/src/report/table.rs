//! The end-of-run summary as a plain-text table.

use std::fmt::Write as _;

use hightick_report::{Align, TextTable};

use crate::result::RunResult;

fn ms(us: u64) -> String {
    format!("{:.2}", us as f64 / 1e3)
}

/// The summary table: per step, errors, matches, thresholds.
pub fn render_table(r: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "swarm: {} ({} model, {} users, {} agent{}), {:.1} s, peak {} players alive",
        r.scenario,
        r.model,
        r.users,
        r.agents,
        if r.agents == 1 { "" } else { "s" },
        r.elapsed_s,
        r.peak_users
    );
    let mut steps = TextTable::new(&[
        ("step", Align::Left),
        ("requests", Align::Right),
        ("req/s", Align::Right),
        ("err %", Align::Right),
        ("p50 ms", Align::Right),
        ("p90 ms", Align::Right),
        ("p99 ms", Align::Right),
        ("p99.9 ms", Align::Right),
        ("max ms", Align::Right),
    ]);
    for s in r.steps.iter().chain([&r.total]) {
        steps.row([
            s.name.clone(),
            s.requests.to_string(),
            format!("{:.1}", s.rps),
            format!("{:.3}", s.error_rate * 100.0),
            ms(s.p50_us),
            ms(s.p90_us),
            ms(s.p99_us),
            ms(s.p999_us),
            ms(s.max_us),
        ]);
    }
    out.push_str(&steps.render());
    if !r.errors.is_empty() {
        let _ = write!(out, "errors:");
        for e in &r.errors {
            let _ = write!(out, " {} {} (p50 {} ms)", e.kind, e.count, ms(e.p50_us));
        }
        let _ = writeln!(out);
    }
    if r.target_urls.len() > 1 || r.failovers > 0 {
        let _ = write!(out, "targets:");
        for u in &r.target_urls {
            let _ = write!(out, " {} {} {} requests;", u.target, u.url, u.requests);
        }
        let _ = writeln!(out, " failovers {}", r.failovers);
    }
    if let Some(m) = &r.matches {
        let _ = writeln!(
            out,
            "matches: {} started, {} finished; snapshots {}, inter-arrival p50 {} ms p99 {} ms; rtt p50 {} ms p99 {} ms; loss {:.3} %; desyncs {}, decode errors {}, disconnects {}",
            m.started,
            m.finished,
            m.snapshots,
            ms(m.interarrival_p50_us),
            ms(m.interarrival_p99_us),
            ms(m.rtt_p50_us),
            ms(m.rtt_p99_us),
            m.packet_loss * 100.0,
            m.desyncs,
            m.decode_errors,
            m.disconnects
        );
    }
    if let Some(p) = &r.pacing {
        let _ = writeln!(
            out,
            "pacing: p{} held at {} ms; final rate {:.1}/s",
            p.percentile, p.target_ms, p.final_rate
        );
    }
    for t in &r.thresholds {
        let _ = writeln!(
            out,
            "{} {} (measured {})",
            if t.passed { "PASS" } else { "FAIL" },
            t.threshold,
            t.shown
        );
    }
    out
}
