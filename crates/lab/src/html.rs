//! The self-contained HTML report of one run: the headline, the charts, the tables,
//! the budget violations and the FIGURE lines, on the report kit's page.

use hightick_report::{Cell, Mark, Page, Table, Tile};

use crate::chart;
use crate::error::LabError;
use crate::summary::RunSummary;

/// Renders the report as one self-contained HTML document.
pub fn render_html(run: &RunSummary) -> Result<String, LabError> {
    let mut page = Page::new(&run.title);
    page.paragraph(&run.headline())
        .note(&run.host_line())
        .tiles(&headline(run));
    page.section("Frame time over time")
        .chart(&chart::frame_time(run)?);
    page.section("Per-subsystem breakdown")
        .chart(&chart::subsystem_breakdown(run)?)
        .table(&subsystem_table(run))
        .note(&format!(
            "{} match ticks, {} late. Red: over budget.",
            run.tick.ticks, run.tick.late_ticks
        ));
    violations(&mut page, run);
    page.section("Server CPU and players over time")
        .chart(&chart::cpu_and_players(run)?);
    page.section("Network").table(&network_table(run));
    page.section("Bots").table(&bot_table(run));
    page.section("Figures").preformatted(run.figures());
    Ok(page.finish())
}

fn headline(run: &RunSummary) -> [Tile; 4] {
    let verdict = if run.within_budget {
        "within budget"
    } else {
        "over budget"
    };
    [
        Tile::new(format!("{:.1}", run.gpc), "games per core"),
        Tile::new(format!("{:.3}", run.server_cpu_cores), "server CPU cores"),
        Tile::new(format!("{:.1} us", run.tick.p99_us), "p99 match tick"),
        Tile::new(verdict, "p99 tick").mark(Mark::verdict(run.within_budget)),
    ]
}

fn subsystem_table(run: &RunSummary) -> Table {
    let rows = run.subsystems.iter().map(|s| {
        vec![
            Cell::text(s.name.clone()),
            Cell::num(s.mean_us, 1).over(s.mean_over_budget()),
            Cell::num(s.p50_us, 1),
            Cell::num(s.p99_us, 1).over(s.p99_over_budget()),
            Cell::num(s.max_us, 1),
            Cell::num_or_dash(s.budget_mean_us, 1),
            Cell::num_or_dash(s.budget_p99_us, 1),
            Cell::num(s.violations as f64, 0).over(s.violations > 0),
        ]
    });
    let t = &run.tick;
    let tick = vec![
        Cell::text("tick (match)"),
        Cell::num(t.mean_us, 1),
        Cell::num(t.p50_us, 1),
        Cell::num(t.p99_us, 1).over(t.budget_p99_us.is_some_and(|b| t.p99_us > b)),
        Cell::num(t.max_us, 1),
        Cell::numeric("-"),
        Cell::num_or_dash(t.budget_p99_us, 1),
        Cell::num(t.late_ticks as f64, 0).over(t.late_ticks > 0),
    ];
    Table::new([
        "subsystem",
        "mean us",
        "p50 us",
        "p99 us",
        "max us",
        "budget mean",
        "budget p99",
        "violations / late",
    ])
    .rows(rows.chain([tick]))
}

/// The run's budget violations as a list (or a line saying there are none).
pub(crate) fn violations(page: &mut Page, run: &RunSummary) {
    let found = run.violations();
    if found.is_empty() {
        page.verdict("Budget violations: none.", true);
        return;
    }
    page.verdict(&format!("Budget violations ({}):", found.len()), false)
        .list(found.iter().map(ToString::to_string));
}

/// `(what, value)` rows of a two-column table.
fn pairs(header: &str, rows: Vec<(String, Cell)>) -> Table {
    Table::new([header, "value"]).rows(rows.into_iter().map(|(what, v)| vec![Cell::text(what), v]))
}

fn network_table(run: &RunSummary) -> Table {
    let n = &run.network;
    let mut rows = vec![
        ("clients".into(), Cell::num(f64::from(n.clients), 0)),
        (
            "bytes/s to each client".into(),
            Cell::num(n.client_bytes_out_per_s, 0),
        ),
        (
            "packets/s to each client".into(),
            Cell::num(n.client_packets_out_per_s, 1),
        ),
        (
            "bytes/s from each client".into(),
            Cell::num(n.client_bytes_in_per_s, 0),
        ),
        ("packets in".into(), Cell::num(n.packets_in as f64, 0)),
        ("packets out".into(), Cell::num(n.packets_out as f64, 0)),
        ("bytes in".into(), Cell::num(n.bytes_in as f64, 0)),
        ("bytes out".into(), Cell::num(n.bytes_out as f64, 0)),
    ];
    for d in &n.drops {
        rows.push((
            format!("dropped: {}", d.reason),
            Cell::num(d.count as f64, 0),
        ));
    }
    pairs("network", rows)
}

fn bot_table(run: &RunSummary) -> Table {
    let b = &run.bots;
    let mut rows = vec![
        ("bots".into(), Cell::num(f64::from(b.bots), 0)),
        (
            "connected".into(),
            Cell::num(f64::from(b.connected), 0).over(b.connected < b.bots),
        ),
        ("snapshots".into(), Cell::num(b.snapshots as f64, 0)),
        (
            "decode errors".into(),
            Cell::num(b.decode_errors as f64, 0).over(b.decode_errors > 0),
        ),
        (
            "desyncs".into(),
            Cell::num(b.desyncs as f64, 0).over(b.desyncs > 0),
        ),
    ];
    for (kind, n) in &b.events {
        rows.push((format!("events: {kind}"), Cell::num(*n as f64, 0)));
    }
    rows.extend([
        (
            "snapshot interval p50 ms".into(),
            Cell::num(b.snapshot_interval_p50_ms, 2),
        ),
        (
            "snapshot interval p99 ms".into(),
            Cell::num(b.snapshot_interval_p99_ms, 2),
        ),
    ]);
    if let Some(per_core) = b.bots_per_core() {
        rows.extend([
            ("bots' own CPU, cores".into(), Cell::num(b.cpu_cores, 3)),
            ("bots per core".into(), Cell::num(per_core, 0)),
        ]);
    }
    pairs("bots", rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_summary_still_renders() {
        let html = render_html(&RunSummary::default()).unwrap();
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(html.ends_with("</html>\n"));
    }
}
