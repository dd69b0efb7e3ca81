//! The sweep's self-contained HTML report: the answer, the p99-tick-against-matches
//! curve, per-subsystem stacks per step, the step table, every step's budget
//! violations, the plaza probe and the FIGURE lines, on the report kit's page.

use hightick_report::{Cell, Page, Table, Tile};

use crate::error::LabError;
use crate::html::violations;
use crate::summary::GPC_HEADROOM;
use crate::sweep::chart;
use crate::sweep::{SweepReport, matches_text};

/// Renders the sweep as one HTML document.
pub fn render_sweep_html(report: &SweepReport) -> Result<String, LabError> {
    let mut page = Page::new(&report.title);
    page.paragraph(&report.headline())
        .note(&format!(
            "{}; budgets: {}",
            crate::summary::host_line(&report.host),
            report.budget_file
        ))
        .tiles(&headline(report))
        .paragraph(&report.answer());
    page.section("p99 match tick against matches")
        .chart(&chart::tick_vs_matches(report)?);
    page.section("Per-subsystem mean, stacked, per step")
        .chart(&chart::subsystem_stacks(report)?);
    page.section("Steps").table(&step_table(report));
    page.section("Per-subsystem mean / p99 by step (us)");
    if let Some(table) = subsystem_table(report) {
        page.table(&table).note("Red: over its mean or p99 budget.");
    }
    page.section("Budget violations");
    for step in &report.steps {
        page.subsection(&matches_text(step.matches));
        violations(&mut page, &step.summary);
    }
    if !report.plaza.is_empty() {
        page.section("plaza100: one 100-player match per tick rate")
            .table(&plaza_table(report));
        for p in &report.plaza {
            page.subsection(&format!("{} at {} Hz", p.mode, p.tick_rate_hz));
            violations(&mut page, &p.summary);
        }
    }
    page.section("Figures").preformatted(report.figures());
    Ok(page.finish())
}

fn headline(report: &SweepReport) -> Vec<Tile> {
    let best = report
        .best_matches
        .map_or_else(|| "none".to_string(), |m| m.to_string());
    let mut tiles = vec![
        Tile::new(format!("{:.1}", report.gpc), "games per core"),
        Tile::new(best, "matches within budget with 10% CPU headroom"),
    ];
    if !report.plaza.is_empty() {
        let hz = report
            .plaza_max_hz
            .map_or_else(|| "none".to_string(), |h| format!("{h} Hz"));
        tiles.push(Tile::new(hz, "plaza100 highest rate within budget"));
    }
    tiles
}

fn verdict(ok: bool) -> Cell {
    Cell::text(if ok { "ok" } else { "no" }).over(!ok)
}

fn step_table(report: &SweepReport) -> Table {
    let cpu_limit = f64::from(report.cores_available) * GPC_HEADROOM;
    let rows = report.steps.iter().map(|step| {
        let s = &step.summary;
        let worst = s.match_tick_p99_us.iter().copied().fold(0.0, f64::max);
        let over_budget = s.tick.budget_p99_us.is_some_and(|b| worst > b);
        vec![
            Cell::num(f64::from(step.matches), 0),
            Cell::num(s.tick.mean_us, 1),
            Cell::num(s.tick.p99_us, 1),
            Cell::num(worst, 1).over(over_budget),
            Cell::num_or_dash(s.tick.budget_p99_us, 1),
            Cell::num(s.tick.late_ticks as f64, 0).over(s.tick.late_ticks > 0),
            Cell::num(s.server_cpu_cores, 3).over(!step.cpu_headroom_ok),
            Cell::num(cpu_limit, 2),
            Cell::num(s.network.client_bytes_out_per_s, 0),
            Cell::num(s.gpc, 1),
            verdict(step.within_budget),
            verdict(step.cpu_headroom_ok),
        ]
    });
    Table::new([
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
    ])
    .rows(rows)
}

/// Subsystems by step, `mean / p99` in each cell; none without steps.
fn subsystem_table(report: &SweepReport) -> Option<Table> {
    let first = report.steps.first()?;
    let headers = std::iter::once("subsystem".to_string())
        .chain(report.steps.iter().map(|s| matches_text(s.matches)));
    let rows = first.summary.subsystems.iter().map(|row| {
        let mut cells = vec![Cell::text(row.name.clone())];
        for step in &report.steps {
            let found = step.summary.subsystems.iter().find(|r| r.name == row.name);
            cells.push(found.map_or_else(
                || Cell::text("-"),
                |r| {
                    Cell::numeric(format!("{:.1} / {:.1}", r.mean_us, r.p99_us))
                        .over(r.mean_over_budget() || r.p99_over_budget())
                },
            ));
        }
        cells
    });
    Some(Table::new(headers).rows(rows))
}

fn plaza_table(report: &SweepReport) -> Table {
    let rows = report.plaza.iter().map(|p| {
        let s = &p.summary;
        vec![
            Cell::num(f64::from(p.tick_rate_hz), 0),
            Cell::text(p.mode.clone()),
            Cell::num(s.tick.mean_us, 1),
            Cell::num(s.tick.p99_us, 1).over(!p.within_budget),
            Cell::num_or_dash(s.tick.budget_p99_us, 1),
            Cell::num(s.server_cpu_cores, 3),
            Cell::num(s.network.client_bytes_out_per_s, 0),
            verdict(p.within_budget),
        ]
    });
    Table::new([
        "tick rate Hz",
        "mode",
        "tick mean us",
        "tick p99 us",
        "p99 budget",
        "server CPU",
        "B/s per client",
        "budget",
    ])
    .rows(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_report::Mark;

    #[test]
    fn verdict_cells_are_marked_when_they_fail() {
        assert_eq!(verdict(true), Cell::text("ok"));
        assert_eq!(verdict(false), Cell::text("no").mark(Mark::Over));
    }
}
