//! The sweep report's charts, drawn with the report kit: p99 (and mean) match-tick
//! time against matches with the budget, and per-subsystem mean time stacked per step.

use hightick_report::{BarChart, Bars, Color, Key, Line, LineChart, ReportError, Svg, XAxis};

use crate::sweep::{SweepReport, matches_text};

/// Match-tick p99 and mean against the number of matches; each step's point green when
/// it passed (budget and CPU headroom), red when not; the p99 budget dashed.
pub(crate) fn tick_vs_matches(report: &SweepReport) -> Result<Svg, ReportError> {
    let steps = &report.steps;
    let at = |matches: u32, us: f64| (f64::from(matches), us);
    let budget = steps.iter().find_map(|s| s.summary.tick.budget_p99_us);
    let verdicts = steps.iter().map(|s| {
        let color = if s.passed() { Color::GREEN } else { Color::RED };
        (at(s.matches, s.summary.tick.p99_us), color)
    });
    LineChart::new(
        "p99 tick time against matches",
        "matches at once",
        "match tick (us)",
    )
    .x_axis(XAxis::Counts)
    .line(Line::new(
        "p99",
        Color::ORANGE,
        steps.iter().map(|s| at(s.matches, s.summary.tick.p99_us)),
    ))
    .line(Line::new(
        "mean",
        Color::BLUE,
        steps.iter().map(|s| at(s.matches, s.summary.tick.mean_us)),
    ))
    .dots(5, verdicts)
    .key(Key::block("step passed", Color::GREEN))
    .key(Key::block("step failed", Color::RED))
    .reference("p99 budget", budget, Color::GREY)
    .render()
}

/// Per step, the subsystems' mean times stacked into one bar (subsystem times are
/// exclusive, so the stack is at most the tick mean).
pub(crate) fn subsystem_stacks(report: &SweepReport) -> Result<Svg, ReportError> {
    let steps = &report.steps;
    let names: Vec<&str> = steps.first().map_or_else(Vec::new, |s| {
        s.summary
            .subsystems
            .iter()
            .map(|r| r.name.as_str())
            .collect()
    });
    let mean = |step: usize, i: usize| {
        steps[step]
            .summary
            .subsystems
            .get(i)
            .map_or(0.0, |r| r.mean_us)
    };
    // Subsystems that took no time anywhere are left out (they add nothing to a stack).
    let shown = |i: usize| (0..steps.len()).any(|k| mean(k, i) > 0.0);
    let labels = steps.iter().map(|s| matches_text(s.matches)).collect();
    let mut chart = BarChart::stacked(
        "per-subsystem stacks",
        "mean time per match tick (us)",
        labels,
    );
    for (i, name) in names.iter().enumerate().filter(|(i, _)| shown(*i)) {
        let bars = (0..steps.len()).map(|k| mean(k, i));
        chart = chart.series(Bars::new(*name, Color::nth(i), bars));
    }
    chart.render()
}
