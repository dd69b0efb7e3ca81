//! The self-contained HTML report on the report kit's page: what ran, the headline,
//! thresholds, per-step and match tables, and the charts over time.

use hightick_report::{Cell, Mark, Page, Table, Tile};

use super::chart::timeline_charts;
use crate::error::SwarmError;
use crate::result::RunResult;

fn ms(us: u64) -> Cell {
    Cell::numeric(format!("{:.2}", us as f64 / 1e3))
}

/// Renders the report.
pub fn render_html(r: &RunResult) -> Result<String, SwarmError> {
    let mut page = Page::new(&format!("swarm: {}", r.scenario));
    page.paragraph(&format!(
        "{} model, {} users over {} agent(s); ran {:.1} s (ramp-up {:.1} s); peak {} players alive; \
         {} requests, {:.1} req/s, {} failed.",
        r.model,
        r.users,
        r.agents,
        r.elapsed_s,
        r.ramp_up_s,
        r.peak_users,
        r.total.requests,
        r.total.rps,
        r.total.failed,
    ))
    .tiles(&headline(r));
    if !r.thresholds.is_empty() {
        let passed = r.thresholds.iter().filter(|t| t.passed).count();
        page.section("Thresholds")
            .verdict(
                &format!("{passed} of {} thresholds passed", r.thresholds.len()),
                r.passed,
            )
            .table(&thresholds(r));
    }
    page.section("Steps").table(&steps(r));
    if let Some(m) = &r.matches {
        let row = vec![
            Cell::num(m.started as f64, 0),
            Cell::num(m.finished as f64, 0),
            Cell::num(m.snapshots as f64, 0),
            ms(m.interarrival_p50_us),
            ms(m.interarrival_p99_us),
            ms(m.rtt_p50_us),
            ms(m.rtt_p99_us),
            Cell::num(m.packet_loss * 100.0, 3),
            Cell::num(m.desyncs as f64, 0).over(m.desyncs > 0),
            Cell::num(m.decode_errors as f64, 0).over(m.decode_errors > 0),
            Cell::num(m.disconnects as f64, 0),
        ];
        let table = Table::new([
            "started",
            "finished",
            "snapshots",
            "inter-arrival p50 ms",
            "p99 ms",
            "rtt p50 ms",
            "rtt p99 ms",
            "loss %",
            "desyncs",
            "decode errors",
            "disconnects",
        ])
        .rows([row]);
        page.section("Matches").table(&table);
    }
    page.section("Over time");
    for (title, svg) in timeline_charts(&r.timeline)? {
        page.subsection(title).chart(&svg);
    }
    Ok(page.finish())
}

fn headline(r: &RunResult) -> Vec<Tile> {
    let t = &r.total;
    let mut tiles = vec![
        Tile::new(format!("{:.1}", t.rps), "requests/s"),
        Tile::new(
            format!("{:.2} ms", t.p99_us as f64 / 1e3),
            "p99 response time",
        ),
        Tile::new(format!("{:.2} %", t.error_rate * 100.0), "failed"),
        Tile::new(r.peak_users.to_string(), "peak players alive"),
    ];
    if r.target_urls.len() > 1 || r.failovers > 0 {
        let spread: Vec<String> = r
            .target_urls
            .iter()
            .map(|u| u.requests.to_string())
            .collect();
        tiles.push(Tile::new(spread.join(" / "), "requests per target URL"));
        tiles.push(Tile::new(r.failovers.to_string(), "failovers"));
    }
    if !r.thresholds.is_empty() {
        let word = if r.passed { "PASS" } else { "FAIL" };
        tiles.push(Tile::new(word, "thresholds").mark(Mark::verdict(r.passed)));
    }
    tiles
}

fn thresholds(r: &RunResult) -> Table {
    let rows = r.thresholds.iter().map(|t| {
        vec![
            Cell::text(t.threshold.clone()),
            Cell::numeric(t.shown.clone()),
            Cell::text(if t.passed { "PASS" } else { "FAIL" }).mark(Mark::verdict(t.passed)),
        ]
    });
    Table::new(["threshold", "measured", "outcome"]).rows(rows)
}

fn steps(r: &RunResult) -> Table {
    let rows = r.steps.iter().chain([&r.total]).map(|s| {
        let errors: Vec<String> = s.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        vec![
            Cell::text(s.name.clone()),
            Cell::num(s.requests as f64, 0),
            Cell::num(s.rps, 1),
            Cell::num(s.error_rate * 100.0, 3),
            Cell::num(s.retries as f64, 0),
            ms(s.p50_us),
            ms(s.p90_us),
            ms(s.p99_us),
            ms(s.p999_us),
            ms(s.max_us),
            ms(s.step_time_p99_us),
            Cell::text(errors.join(", ")),
        ]
    });
    Table::new([
        "step",
        "requests",
        "req/s",
        "err %",
        "retries",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "step time p99 ms",
        "errors",
    ])
    .rows(rows)
}
