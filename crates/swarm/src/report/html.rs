//! The self-contained HTML report: one file, inline CSS and SVG charts.

use std::fmt::Write as _;

use super::chart::timeline_charts;
use crate::error::SwarmError;
use crate::result::RunResult;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn ms(us: u64) -> String {
    format!("{:.2}", us as f64 / 1e3)
}

/// Renders the report.
pub fn render_html(r: &RunResult) -> Result<String, SwarmError> {
    let charts = timeline_charts(&r.timeline)?;
    let mut h = String::new();
    let title = format!("swarm: {}", escape(&r.scenario));
    let _ = write!(
        h,
        r#"<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 4px 8px; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
.pass {{ color: #2a7d2a; font-weight: bold; }}
.fail {{ color: #c62828; font-weight: bold; }}
.chart {{ margin: 1em 0; }}
</style></head><body>
<h1>{title}</h1>
<p>{model} model, {users} users over {agents} agent(s); ran {elapsed:.1} s (ramp-up {ramp:.1} s); peak {peak} players alive;
{requests} requests, {rps:.1} req/s, {failed} failed.</p>
"#,
        model = escape(&r.model),
        users = r.users,
        agents = r.agents,
        elapsed = r.elapsed_s,
        ramp = r.ramp_up_s,
        peak = r.peak_users,
        requests = r.total.requests,
        rps = r.total.rps,
        failed = r.total.failed,
    );
    if !r.thresholds.is_empty() {
        let verdict = if r.passed { "pass" } else { "fail" };
        let _ = write!(
            h,
            "<h2>Thresholds: <span class=\"{verdict}\">{}</span></h2><table><tr><th>threshold</th><th>measured</th><th>outcome</th></tr>",
            verdict.to_uppercase()
        );
        for t in &r.thresholds {
            let (class, word) = if t.passed {
                ("pass", "PASS")
            } else {
                ("fail", "FAIL")
            };
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"{class}\">{word}</td></tr>",
                escape(&t.threshold),
                escape(&t.shown)
            );
        }
        h.push_str("</table>");
    }
    h.push_str("<h2>Steps</h2><table><tr><th>step</th><th>requests</th><th>req/s</th><th>err %</th><th>retries</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>step time p99 ms</th><th>errors</th></tr>");
    for s in r.steps.iter().chain(std::iter::once(&r.total)) {
        let errors: Vec<String> = s.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&s.name),
            s.requests,
            s.rps,
            s.error_rate * 100.0,
            s.retries,
            ms(s.p50_us),
            ms(s.p90_us),
            ms(s.p99_us),
            ms(s.p999_us),
            ms(s.max_us),
            ms(s.step_time_p99_us),
            escape(&errors.join(", "))
        );
    }
    h.push_str("</table>");
    if let Some(m) = &r.matches {
        let _ = write!(
            h,
            "<h2>Matches</h2><table><tr><th>started</th><th>finished</th><th>snapshots</th><th>inter-arrival p50 ms</th><th>p99 ms</th><th>rtt p50 ms</th><th>rtt p99 ms</th><th>loss %</th><th>desyncs</th><th>decode errors</th><th>disconnects</th></tr><tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td></tr></table>",
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
    h.push_str("<h2>Over time</h2>");
    for c in charts {
        let _ = write!(h, "<div class=\"chart\">{c}</div>");
    }
    h.push_str("</body></html>\n");
    Ok(h)
}
