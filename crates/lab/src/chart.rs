//! The run report's charts, drawn with the report kit: frame time over the run, the
//! per-subsystem breakdown against budgets, server CPU and players over the run.

use hightick_report::{Bar, BarChart, Bars, Color, Key, Line, LineChart, ReportError, Svg};

use crate::summary::{RunSummary, TargetStats};

/// Match-tick time over the run: mean and p99 lines, the p99 budget dashed.
pub(crate) fn frame_time(run: &RunSummary) -> Result<Svg, ReportError> {
    let tl = &run.timeline;
    LineChart::new("frame time over time", "time (s)", "match tick (us)")
        .line(Line::new(
            "mean",
            Color::BLUE,
            tl.iter().map(|p| (p.t_s, p.tick_mean_us)),
        ))
        .line(Line::new(
            "p99",
            Color::ORANGE,
            tl.iter().map(|p| (p.t_s, p.tick_p99_us)),
        ))
        .reference("p99 budget", run.tick.budget_p99_us, Color::GREY)
        .render()
}

/// Per-subsystem bars of mean and p99, over-budget bars in red, budgets dashed.
pub(crate) fn subsystem_breakdown(run: &RunSummary) -> Result<Svg, ReportError> {
    let subs = &run.subsystems;
    let bars = |pick: fn(&TargetStats) -> (f64, bool, Option<f64>)| {
        subs.iter().map(move |s| {
            let (value, over, budget) = pick(s);
            Bar::new(value).color_if(over, Color::RED).mark(budget)
        })
    };
    let names = subs.iter().map(|s| s.name.clone()).collect();
    BarChart::grouped("per-subsystem breakdown", "time per tick (us)", names)
        .series(Bars::new(
            "mean",
            Color::BLUE,
            bars(|s| (s.mean_us, s.mean_over_budget(), s.budget_mean_us)),
        ))
        .series(Bars::new(
            "p99",
            Color::ORANGE,
            bars(|s| (s.p99_us, s.p99_over_budget(), s.budget_p99_us)),
        ))
        .key(Key::block("over budget", Color::RED))
        .key(Key::line("budget", Color::GREY))
        .render()
}

/// Server CPU cores used (left axis) and players connected (right axis) over the run.
pub(crate) fn cpu_and_players(run: &RunSummary) -> Result<Svg, ReportError> {
    let tl = &run.timeline;
    let players = Line::new(
        "players",
        Color::GREEN,
        tl.iter().map(|p| (p.t_s, p.players as f64)),
    );
    LineChart::new(
        "server CPU and players over time",
        "time (s)",
        "server CPU (cores)",
    )
    .line(Line::new(
        "server CPU (cores)",
        Color::BLUE,
        tl.iter().map(|p| (p.t_s, p.cpu_cores)),
    ))
    .right_axis("players", vec![players])
    .render()
}
