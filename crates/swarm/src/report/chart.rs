//! Line charts over the run's timeline, drawn with plotters' SVG backend
//! into strings (text as SVG `<text>`, no font files needed).

use plotters::prelude::*;

use crate::error::SwarmError;
use crate::result::LoadPoint;

const SIZE: (u32, u32) = (900, 300);

/// One line of a chart.
#[derive(Debug)]
pub struct Series {
    /// Its legend label.
    pub label: &'static str,
    /// Its colour.
    pub color: RGBColor,
    /// `(seconds, value)` points.
    pub points: Vec<(f64, f64)>,
}

fn failed(chart: &str) -> impl Fn(String) -> SwarmError + '_ {
    move |e| SwarmError::Report(format!("chart {chart}: {e}"))
}

/// Draws `series` against time, with `y_label`, into an SVG string.
pub fn line_chart(title: &str, y_label: &str, series: &[Series]) -> Result<String, SwarmError> {
    let fail = failed(title);
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let x_end = series
        .iter()
        .flat_map(|s| s.points.iter().filter(finite).map(|p| p.0))
        .fold(1.0_f64, f64::max);
    let y_top = series
        .iter()
        .flat_map(|s| s.points.iter().filter(finite).map(|p| p.1))
        .fold(0.0_f64, f64::max);
    let y_top = if y_top > 0.0 { y_top * 1.15 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..x_end, 0.0..y_top)
            .map_err(|e| fail(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(y_label)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        for s in series {
            let color = s.color;
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().filter(finite).copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| fail(e.to_string()))?
                .label(s.label)
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    // Inlined into HTML, where the namespace is implied.
    Ok(svg.replace(r#" xmlns="http://www.w3.org/2000/svg""#, ""))
}

const BLUE: RGBColor = RGBColor(31, 119, 180);
const ORANGE: RGBColor = RGBColor(255, 127, 14);
const GREEN: RGBColor = RGBColor(44, 160, 44);
const RED: RGBColor = RGBColor(214, 39, 40);
const GREY: RGBColor = RGBColor(110, 110, 110);

fn over(tl: &[LoadPoint], f: impl Fn(&LoadPoint) -> f64) -> Vec<(f64, f64)> {
    tl.iter().map(|p| (p.t_s, f(p))).collect()
}

/// The report's four charts: users, throughput, latency, errors.
pub fn timeline_charts(tl: &[LoadPoint]) -> Result<Vec<String>, SwarmError> {
    let mut charts = vec![
        line_chart(
            "Players",
            "players",
            &[
                Series {
                    label: "alive",
                    color: GREEN,
                    points: over(tl, |p| p.users as f64),
                },
                Series {
                    label: "requests in flight",
                    color: GREY,
                    points: over(tl, |p| p.in_flight as f64),
                },
            ],
        )?,
        line_chart(
            "Throughput",
            "requests / s",
            &[Series {
                label: "requests/s",
                color: BLUE,
                points: over(tl, |p| p.rps),
            }],
        )?,
        line_chart(
            "Response time",
            "ms",
            &[
                Series {
                    label: "p50",
                    color: BLUE,
                    points: over(tl, |p| p.p50_us as f64 / 1e3),
                },
                Series {
                    label: "p90",
                    color: GREEN,
                    points: over(tl, |p| p.p90_us as f64 / 1e3),
                },
                Series {
                    label: "p99",
                    color: ORANGE,
                    points: over(tl, |p| p.p99_us as f64 / 1e3),
                },
            ],
        )?,
        line_chart(
            "Errors",
            "failed requests / interval",
            &[Series {
                label: "failed",
                color: RED,
                points: over(tl, |p| p.failed as f64),
            }],
        )?,
    ];
    if tl.iter().any(|p| p.paced_rate.is_some()) {
        charts.push(line_chart(
            "Pacing",
            "rate / s and measured ms",
            &[
                Series {
                    label: "paced rate (/s)",
                    color: BLUE,
                    points: over(tl, |p| p.paced_rate.unwrap_or(f64::NAN)),
                },
                Series {
                    label: "measured percentile (ms)",
                    color: ORANGE,
                    points: over(tl, |p| p.paced_measure_us.map_or(f64::NAN, |m| m / 1e3)),
                },
            ],
        )?);
    }
    Ok(charts)
}
