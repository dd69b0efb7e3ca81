//! The sweep's self-contained HTML report: the answer, the p99-tick-against-matches
//! curve, per-subsystem stacks per step, the step table, every step's budget
//! violations, the plaza probe and the FIGURE lines.

use std::fmt::Write as _;

use crate::error::LabError;
use crate::html::{STYLE, escape, num, numeric_text, opt, over, table, text, violations};
use crate::summary::GPC_HEADROOM;
use crate::sweep::{SweepReport, matches_text};
use crate::sweep_chart;

/// Renders the sweep as one HTML document.
pub fn render_sweep_html(report: &SweepReport) -> Result<String, LabError> {
    let mut out = String::with_capacity(128 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n\
         <p>{}</p>\n<p class=\"muted\">{}; budgets: {}</p>\n",
        escape(&report.title),
        escape(&report.title),
        escape(&report.headline()),
        escape(&crate::summary::host_line(&report.host)),
        escape(&report.budget_file),
    );
    let best = report
        .best_matches
        .map_or_else(|| "none".to_string(), |m| m.to_string());
    let _ = write!(
        out,
        "<div class=\"headline\"><div><b>{:.1}</b>games per core</div>\
         <div><b>{}</b>matches within budget with 10% CPU headroom</div>",
        report.gpc,
        escape(&best)
    );
    if !report.plaza.is_empty() {
        let hz = report
            .plaza_max_hz
            .map_or_else(|| "none".to_string(), |h| format!("{h} Hz"));
        let _ = write!(
            out,
            "<div><b>{}</b>plaza100 highest rate within budget</div>",
            escape(&hz)
        );
    }
    out.push_str("</div>\n");
    let _ = writeln!(out, "<p>{}</p>", escape(&report.answer()));

    out.push_str("<h2>p99 match tick against matches</h2>\n");
    out.push_str(&sweep_chart::tick_vs_matches(report)?);
    out.push_str("<h2>Per-subsystem mean, stacked, per step</h2>\n");
    out.push_str(&sweep_chart::subsystem_stacks(report)?);
    step_table(&mut out, report);
    subsystem_table(&mut out, report);

    out.push_str("<h2>Budget violations</h2>\n");
    for step in &report.steps {
        let _ = writeln!(out, "<h3>{}</h3>", matches_text(step.matches));
        violations(&mut out, &step.summary);
    }
    if !report.plaza.is_empty() {
        plaza_table(&mut out, report);
        for p in &report.plaza {
            let _ = writeln!(out, "<h3>{} at {} Hz</h3>", escape(&p.mode), p.tick_rate_hz);
            violations(&mut out, &p.summary);
        }
    }
    out.push_str("<h2>Figures</h2>\n<pre>");
    for line in report.figures() {
        out.push_str(&escape(&line));
        out.push('\n');
    }
    out.push_str("</pre>\n</body></html>\n");
    Ok(out)
}

fn verdict(ok: bool) -> crate::html::Cell {
    over(text(if ok { "ok" } else { "no" }), !ok)
}

fn step_table(out: &mut String, report: &SweepReport) {
    out.push_str("<h2>Steps</h2>\n");
    let cpu_limit = f64::from(report.cores_available) * GPC_HEADROOM;
    let rows = report
        .steps
        .iter()
        .map(|step| {
            let s = &step.summary;
            let worst = s.match_tick_p99_us.iter().copied().fold(0.0, f64::max);
            let over_budget = s.tick.budget_p99_us.is_some_and(|b| worst > b);
            vec![
                num(f64::from(step.matches), 0),
                num(s.tick.mean_us, 1),
                num(s.tick.p99_us, 1),
                over(num(worst, 1), over_budget),
                opt(s.tick.budget_p99_us),
                over(num(s.tick.late_ticks as f64, 0), s.tick.late_ticks > 0),
                over(num(s.server_cpu_cores, 3), !step.cpu_headroom_ok),
                num(cpu_limit, 2),
                num(s.network.client_bytes_out_per_s, 0),
                num(s.gpc, 1),
                verdict(step.within_budget),
                verdict(step.cpu_headroom_ok),
            ]
        })
        .collect();
    table(
        out,
        &[
            "matches",
            "tick mean us",
            "tick p99 us",
            "worst match p99 us",
            "p99 budget",
            "late ticks",
            "server CPU",
            "CPU limit",
            "B/s per client",
            "games per core",
            "budget",
            "CPU headroom",
        ],
        rows,
    );
}

fn subsystem_table(out: &mut String, report: &SweepReport) {
    out.push_str("<h2>Per-subsystem mean / p99 by step (us)</h2>\n");
    let Some(first) = report.steps.first() else {
        return;
    };
    let headers: Vec<String> = std::iter::once("subsystem".to_string())
        .chain(report.steps.iter().map(|s| matches_text(s.matches)))
        .collect();
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let rows = first
        .summary
        .subsystems
        .iter()
        .map(|row| {
            let mut cells = vec![text(row.name.clone())];
            for step in &report.steps {
                let cell = step
                    .summary
                    .subsystems
                    .iter()
                    .find(|r| r.name == row.name)
                    .map_or_else(
                        || text("-"),
                        |r| {
                            over(
                                numeric_text(format!("{:.1} / {:.1}", r.mean_us, r.p99_us)),
                                r.mean_over_budget() || r.p99_over_budget(),
                            )
                        },
                    );
                cells.push(cell);
            }
            cells
        })
        .collect();
    table(out, &header_refs, rows);
    out.push_str("<p class=\"muted\">Red: over its mean or p99 budget.</p>\n");
}

fn plaza_table(out: &mut String, report: &SweepReport) {
    out.push_str("<h2>plaza100: one 100-player match per tick rate</h2>\n");
    let rows = report
        .plaza
        .iter()
        .map(|p| {
            let s = &p.summary;
            vec![
                num(f64::from(p.tick_rate_hz), 0),
                text(p.mode.clone()),
                num(s.tick.mean_us, 1),
                over(num(s.tick.p99_us, 1), !p.within_budget),
                opt(s.tick.budget_p99_us),
                num(s.server_cpu_cores, 3),
                num(s.network.client_bytes_out_per_s, 0),
                verdict(p.within_budget),
            ]
        })
        .collect();
    table(
        out,
        &[
            "tick rate Hz",
            "mode",
            "tick mean us",
            "tick p99 us",
            "p99 budget",
            "server CPU",
            "B/s per client",
            "budget",
        ],
        rows,
    );
}
