//! The end-of-run summary as a plain-text table.

use std::fmt::Write as _;

use crate::result::{RunResult, StepSummary};

fn ms(us: u64) -> String {
    format!("{:.2}", us as f64 / 1e3)
}

fn row(out: &mut String, s: &StepSummary) {
    let _ = writeln!(
        out,
        "{:<28} {:>9} {:>9.1} {:>7.3} {:>9} {:>9} {:>9} {:>9} {:>9}",
        truncate(&s.name, 28),
        s.requests,
        s.rps,
        s.error_rate * 100.0,
        ms(s.p50_us),
        ms(s.p90_us),
        ms(s.p99_us),
        ms(s.p999_us),
        ms(s.max_us)
    );
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
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
    let _ = writeln!(
        out,
        "{:<28} {:>9} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "step", "requests", "req/s", "err %", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms"
    );
    for s in &r.steps {
        row(&mut out, s);
    }
    row(&mut out, &r.total);
    if !r.errors.is_empty() {
        let _ = write!(out, "errors:");
        for e in &r.errors {
            let _ = write!(out, " {} {} (p50 {} ms)", e.kind, e.count, ms(e.p50_us));
        }
        let _ = writeln!(out);
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
