//! The report's charts, drawn with plotters' SVG backend into strings.
//!
//! Text is emitted as SVG `<text>` elements in a generic `sans-serif` family and laid out
//! with plotters' built-in estimate, so no font file is needed at build or run time.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::LabError;
use crate::summary::{RunSummary, TargetStats, TimelinePoint};

pub(crate) const WIDE: (u32, u32) = (900, 320);
pub(crate) const MEAN_COLOR: RGBColor = RGBColor(31, 119, 180);
pub(crate) const P99_COLOR: RGBColor = RGBColor(255, 127, 14);
pub(crate) const OVER_COLOR: RGBColor = RGBColor(214, 39, 40);
pub(crate) const BUDGET_COLOR: RGBColor = RGBColor(90, 90, 90);
const PLAYERS_COLOR: RGBColor = RGBColor(44, 160, 44);

pub(crate) fn failed<E: std::fmt::Display>(chart: &'static str) -> impl Fn(E) -> LabError {
    move |e| LabError::Chart {
        chart,
        message: e.to_string(),
    }
}

/// Draws into a fresh SVG string; the namespace attribute is left out since the SVG is
/// inlined into HTML, where it is implied.
pub(crate) fn svg_string(
    chart: &'static str,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), LabError>,
) -> Result<String, LabError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, WIDE).into_drawing_area();
        root.fill(&WHITE).map_err(failed(chart))?;
        draw(&root)?;
        root.present().map_err(failed(chart))?;
    }
    Ok(svg.replace(r#" xmlns="http://www.w3.org/2000/svg""#, ""))
}

/// The time span of the timeline from zero (or the earliest sample, if before zero),
/// never empty.
fn time_range(timeline: &[TimelinePoint]) -> std::ops::Range<f64> {
    let times = || timeline.iter().map(|p| p.t_s).filter(|t| t.is_finite());
    let start = times().fold(0.0_f64, f64::min);
    let end = times().fold(start, f64::max);
    start..end.max(start + 1.0)
}

/// A y range from zero to a little above the largest finite value, never empty.
pub(crate) fn value_range(values: impl IntoIterator<Item = f64>) -> std::ops::Range<f64> {
    value_range_with_room(values, 1.15)
}

/// A y range from zero to `room` times the largest finite value, never empty.
pub(crate) fn value_range_with_room(
    values: impl IntoIterator<Item = f64>,
    room: f64,
) -> std::ops::Range<f64> {
    let top = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    0.0..if top > 0.0 { top * room } else { 1.0 }
}

pub(crate) fn finite_points(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    points
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect()
}

pub(crate) type Plot<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A legend key: a short line in the series colour.
pub(crate) fn line_key(color: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
}

/// A legend key: a small filled box in the series colour.
pub(crate) fn box_key(color: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
}

/// Draws one labelled line of `(x, y)` points, skipping non-finite ones.
pub(crate) fn line(
    chart: &mut Plot<'_, '_>,
    name: &'static str,
    points: impl Iterator<Item = (f64, f64)>,
    color: RGBColor,
    label: &str,
) -> Result<(), LabError> {
    chart
        .draw_series(LineSeries::new(
            finite_points(points),
            color.stroke_width(2),
        ))
        .map_err(failed(name))?
        .label(label)
        .legend(line_key(color));
    Ok(())
}

/// Draws the legend box of every labelled series.
pub(crate) fn legend<'a, 'b: 'a>(
    chart: &mut Plot<'a, 'b>,
    name: &'static str,
    position: SeriesLabelPosition,
) -> Result<(), LabError> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(failed(name))
}

/// Match-tick time over the run: mean and p99 lines, the p99 budget dashed.
pub(crate) fn frame_time(run: &RunSummary) -> Result<String, LabError> {
    const NAME: &str = "frame time over time";
    svg_string(NAME, |root| {
        let tl = &run.timeline;
        let x = time_range(tl);
        let y = value_range(
            tl.iter()
                .flat_map(|p| [p.tick_mean_us, p.tick_p99_us])
                .chain(run.tick.budget_p99_us),
        );
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(x.clone(), y)
            .map_err(failed(NAME))?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("match tick (us)")
            .draw()
            .map_err(failed(NAME))?;
        let mean = tl.iter().map(|p| (p.t_s, p.tick_mean_us));
        line(&mut chart, NAME, mean, MEAN_COLOR, "mean")?;
        let p99 = tl.iter().map(|p| (p.t_s, p.tick_p99_us));
        line(&mut chart, NAME, p99, P99_COLOR, "p99")?;
        if let Some(budget) = run.tick.budget_p99_us.filter(|b| b.is_finite()) {
            chart
                .draw_series(DashedLineSeries::new(
                    [(x.start, budget), (x.end, budget)],
                    8,
                    5,
                    BUDGET_COLOR.stroke_width(2),
                ))
                .map_err(failed(NAME))?
                .label("p99 budget")
                .legend(line_key(BUDGET_COLOR));
        }
        legend(&mut chart, NAME, SeriesLabelPosition::UpperRight)
    })
}

/// Per-subsystem bars of mean and p99, over-budget bars in red, budgets dashed.
pub(crate) fn subsystem_breakdown(run: &RunSummary) -> Result<String, LabError> {
    const NAME: &str = "per-subsystem breakdown";
    svg_string(NAME, |root| {
        let subs = &run.subsystems;
        let n = subs.len().max(1) as f64;
        // Room above the tallest bar for the legend.
        let y = value_range_with_room(
            subs.iter().flat_map(|s| {
                [s.mean_us, s.p99_us]
                    .into_iter()
                    .chain(s.budget_mean_us)
                    .chain(s.budget_p99_us)
            }),
            1.6,
        );
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..n, y)
            .map_err(failed(NAME))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("time per tick (us)")
            .draw()
            .map_err(failed(NAME))?;
        let bar = |x0: f64, x1: f64, v: f64, over: bool, color: RGBColor| {
            let fill = if over { OVER_COLOR } else { color };
            Rectangle::new([(x0, 0.0), (x1, v.max(0.0))], fill.filled())
        };
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        let i = |k: usize| k as f64;
        type Pick = fn(&TargetStats) -> (f64, bool);
        let kinds: [(f64, &str, RGBColor, Pick); 2] = [
            (0.12, "mean", MEAN_COLOR, |s| {
                (s.mean_us, s.mean_over_budget())
            }),
            (0.52, "p99", P99_COLOR, |s| (s.p99_us, s.p99_over_budget())),
        ];
        for (offset, label, color, pick) in kinds {
            chart
                .draw_series(subs.iter().enumerate().map(|(k, s)| {
                    let (v, over) = pick(s);
                    bar(i(k) + offset, i(k) + offset + 0.36, finite(v), over, color)
                }))
                .map_err(failed(NAME))?
                .label(label)
                .legend(box_key(color));
        }
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            .map_err(failed(NAME))?
            .label("over budget")
            .legend(box_key(OVER_COLOR));
        chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
            .map_err(failed(NAME))?
            .label("budget")
            .legend(line_key(BUDGET_COLOR));
        for (k, s) in subs.iter().enumerate() {
            let spans = [
                (s.budget_mean_us, i(k) + 0.08, i(k) + 0.52),
                (s.budget_p99_us, i(k) + 0.48, i(k) + 0.92),
            ];
            for (budget, x0, x1) in spans {
                if let Some(b) = budget.filter(|b| b.is_finite()) {
                    chart
                        .draw_series(DashedLineSeries::new(
                            [(x0, b), (x1, b)],
                            5,
                            3,
                            BUDGET_COLOR.stroke_width(2),
                        ))
                        .map_err(failed(NAME))?;
                }
            }
        }
        legend(&mut chart, NAME, SeriesLabelPosition::UpperRight)?;
        // Subsystem names under their bars, drawn in pixel space below the plot.
        let names: Vec<String> = subs.iter().map(|s| s.name.clone()).collect();
        category_labels(root, &chart, NAME, &names)
    })
}

/// Server CPU cores used (left axis) and players connected (right axis) over the run.
pub(crate) fn cpu_and_players(run: &RunSummary) -> Result<String, LabError> {
    const NAME: &str = "server CPU and players over time";
    svg_string(NAME, |root| {
        let tl = &run.timeline;
        let x = time_range(tl);
        let cores = value_range(tl.iter().map(|p| p.cpu_cores));
        let players = value_range(tl.iter().map(|p| p.players as f64));
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .right_y_label_area_size(60)
            .build_cartesian_2d(x.clone(), cores)
            .map_err(failed(NAME))?
            .set_secondary_coord(x, players);
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("server CPU (cores)")
            .draw()
            .map_err(failed(NAME))?;
        chart
            .configure_secondary_axes()
            .y_desc("players")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()
            .map_err(failed(NAME))?;
        let cpu = tl.iter().map(|p| (p.t_s, p.cpu_cores));
        line(&mut chart, NAME, cpu, MEAN_COLOR, "server CPU (cores)")?;
        let pl = finite_points(tl.iter().map(|p| (p.t_s, p.players as f64)));
        chart
            .draw_secondary_series(LineSeries::new(pl, PLAYERS_COLOR.stroke_width(2)))
            .map_err(failed(NAME))?
            .label("players")
            .legend(line_key(PLAYERS_COLOR));
        legend(&mut chart, NAME, SeriesLabelPosition::LowerRight)
    })
}

/// Distinct series colours, one per subsystem (in telemetry order) and more.
pub(crate) const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
];

/// Draws `labels[k]` centred under category `k` (at x = k + 0.5) below the plot.
pub(crate) fn category_labels(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &Plot<'_, '_>,
    name: &'static str,
    labels: &[String],
) -> Result<(), LabError> {
    let style = ("sans-serif", 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (k, label) in labels.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(k as f64 + 0.5, 0.0));
        root.draw(&Text::new(label.clone(), (px, py + 6), style.clone()))
            .map_err(failed(name))?;
    }
    Ok(())
}
