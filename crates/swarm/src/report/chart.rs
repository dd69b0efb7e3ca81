//! The report's charts over the run's timeline, drawn with the report kit: players,
//! throughput, response time, errors, and pacing when the run was paced.

use hightick_report::{Color, Line, LineChart, ReportError, Svg};

use crate::result::LoadPoint;

/// A line of `value` over the timeline.
fn over(tl: &[LoadPoint], label: &str, color: Color, value: impl Fn(&LoadPoint) -> f64) -> Line {
    Line::new(label, color, tl.iter().map(|p| (p.t_s, value(p))))
}

/// A titled chart of `lines` against time.
fn chart(
    title: &'static str,
    y_desc: &str,
    lines: Vec<Line>,
) -> Result<(&'static str, Svg), ReportError> {
    let mut chart = LineChart::new(title, "time (s)", y_desc);
    for line in lines {
        chart = chart.line(line);
    }
    Ok((title, chart.render()?))
}

/// The report's charts, titled: players, throughput, response time, errors, and
/// pacing when the run was paced.
pub(super) fn timeline_charts(tl: &[LoadPoint]) -> Result<Vec<(&'static str, Svg)>, ReportError> {
    let ms = |us: u64| us as f64 / 1e3;
    let mut charts = vec![
        chart(
            "Players",
            "players",
            vec![
                over(tl, "alive", Color::GREEN, |p| p.users as f64),
                over(tl, "requests in flight", Color::GREY, |p| {
                    p.in_flight as f64
                }),
            ],
        )?,
        chart(
            "Throughput",
            "requests / s",
            vec![over(tl, "requests/s", Color::BLUE, |p| p.rps)],
        )?,
        chart(
            "Response time",
            "ms",
            vec![
                over(tl, "p50", Color::BLUE, |p| ms(p.p50_us)),
                over(tl, "p90", Color::GREEN, |p| ms(p.p90_us)),
                over(tl, "p99", Color::ORANGE, |p| ms(p.p99_us)),
            ],
        )?,
        chart(
            "Errors",
            "failed requests / interval",
            vec![over(tl, "failed", Color::RED, |p| p.failed as f64)],
        )?,
    ];
    if tl.iter().any(|p| p.paced_rate.is_some()) {
        // The rate (hundreds a second) and the percentile it holds (milliseconds) each
        // on an axis of its own.
        let measured = over(tl, "measured percentile (ms)", Color::ORANGE, |p| {
            p.paced_measure_us.map_or(f64::NAN, |m| m / 1e3)
        });
        let pacing = LineChart::new("Pacing", "time (s)", "paced rate (/s)")
            .line(over(tl, "paced rate (/s)", Color::BLUE, |p| {
                p.paced_rate.unwrap_or(f64::NAN)
            }))
            .right_axis("measured percentile (ms)", vec![measured])
            .render()?;
        charts.push(("Pacing", pacing));
    }
    Ok(charts)
}
