//! Line charts: series of `(x, y)` points over a continuous, whole-number or category
//! x axis, with optional dots, dashed reference lines across the plot (budgets) and a
//! second y axis on the right.

use std::ops::Range;

use plotters::prelude::*;
use plotters::style::Color as _;

use super::canvas::{
    DESC_FONT, LABEL_FONT, MARGIN, Plot, X_LABELS, Y_LABELS, dashed, draw, failed, finite, legend,
    plot_area, rgb, value_range,
};
use super::{Color, Key, Svg};
use crate::error::ReportError;

/// What the x axis counts.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum XAxis {
    /// Continuous values such as seconds: from zero (or the least value, if below
    /// zero) to the largest, at least one unit wide.
    #[default]
    Continuous,
    /// Whole numbers from zero, such as matches: a little room right of the largest,
    /// and only whole numbers labelled.
    Counts,
    /// One place per label, in order: a point's x is its label's index.
    Categories(Vec<String>),
}

/// One labelled line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    label: String,
    color: Color,
    points: Vec<(f64, f64)>,
    dots: Option<u32>,
}

impl Line {
    /// A line through `points` (non-finite ones are left out).
    pub fn new(
        label: impl Into<String>,
        color: Color,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) -> Line {
        Line {
            label: label.into(),
            color,
            points: points.into_iter().collect(),
            dots: None,
        }
    }

    /// With a dot of this radius (pixels) on every point.
    pub fn with_dots(mut self, radius: u32) -> Line {
        self.dots = Some(radius);
        self
    }
}

/// A line chart, built up and then [rendered](LineChart::render). Legend entries come
/// in the order: lines, right-axis lines, keys, reference lines.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    name: String,
    x_desc: String,
    y_desc: String,
    x_axis: XAxis,
    lines: Vec<Line>,
    right: Option<(String, Vec<Line>)>,
    dots: Vec<((f64, f64), Color)>,
    dot_radius: u32,
    keys: Vec<Key>,
    references: Vec<(String, f64, Color)>,
}

impl LineChart {
    /// An empty chart: `name` says which chart in errors; the axes are described by
    /// `x_desc` and `y_desc`. The y axis runs from zero to 15% above the largest value.
    pub fn new(
        name: impl Into<String>,
        x_desc: impl Into<String>,
        y_desc: impl Into<String>,
    ) -> Self {
        LineChart {
            name: name.into(),
            x_desc: x_desc.into(),
            y_desc: y_desc.into(),
            x_axis: XAxis::Continuous,
            lines: Vec::new(),
            right: None,
            dots: Vec::new(),
            dot_radius: 5,
            keys: Vec::new(),
            references: Vec::new(),
        }
    }

    /// With this kind of x axis (default: continuous).
    pub fn x_axis(mut self, axis: XAxis) -> Self {
        self.x_axis = axis;
        self
    }

    /// With this line, against the left axis.
    pub fn line(mut self, line: Line) -> Self {
        self.lines.push(line);
        self
    }

    /// With a second y axis on the right, described by `desc`, for these lines; labelled
    /// in whole numbers when it runs to 10 or more.
    pub fn right_axis(mut self, desc: impl Into<String>, lines: Vec<Line>) -> Self {
        self.right = Some((desc.into(), lines));
        self
    }

    /// With unlabelled dots of `radius` pixels, each in its own colour (explain the
    /// colours with [`key`](Self::key)).
    pub fn dots(
        mut self,
        radius: u32,
        dots: impl IntoIterator<Item = ((f64, f64), Color)>,
    ) -> Self {
        self.dot_radius = radius;
        self.dots.extend(dots);
        self
    }

    /// With a legend entry that draws nothing in the plot.
    pub fn key(mut self, key: Key) -> Self {
        self.keys.push(key);
        self
    }

    /// With a dashed horizontal line at `y` across the plot, labelled; none when `y`
    /// is `None` or not finite.
    pub fn reference(
        mut self,
        label: impl Into<String>,
        y: impl Into<Option<f64>>,
        color: Color,
    ) -> Self {
        if let Some(y) = y.into().filter(|y| y.is_finite()) {
            self.references.push((label.into(), y, color));
        }
        self
    }

    fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        let right = self.right.iter().flat_map(|(_, lines)| lines);
        self.lines
            .iter()
            .chain(right)
            .flat_map(|l| finite(&l.points))
            .chain(self.dots.iter().map(|(p, _)| *p))
            .map(|(x, _)| x)
            .filter(|x| x.is_finite())
    }

    fn x_range(&self) -> Range<f64> {
        match &self.x_axis {
            XAxis::Continuous => {
                let start = self.xs().fold(0.0_f64, f64::min);
                let end = self.xs().fold(start, f64::max);
                start..end.max(start + 1.0)
            }
            XAxis::Counts => 0.0..self.xs().fold(1.0_f64, f64::max) * 1.08,
            XAxis::Categories(labels) => -0.5..labels.len().max(1) as f64 - 0.5,
        }
    }

    /// The legend's entries, in drawing order.
    fn entries(&self) -> Vec<Key> {
        let right = self.right.iter().flat_map(|(_, lines)| lines);
        let lines = self.lines.iter().chain(right);
        lines
            .map(|l| Key::line(l.label.clone(), l.color))
            .chain(self.keys.iter().cloned())
            .chain(
                self.references
                    .iter()
                    .map(|(label, _, color)| Key::line(label.clone(), *color)),
            )
            .collect()
    }

    /// Draws the chart.
    pub fn render(&self) -> Result<Svg, ReportError> {
        let name = self.name.as_str();
        draw(name, |root| {
            let x = self.x_range();
            let left = value_range(
                self.lines
                    .iter()
                    .flat_map(|l| finite(&l.points))
                    .chain(self.dots.iter().map(|(p, _)| *p))
                    .map(|(_, y)| y)
                    .chain(self.references.iter().map(|(_, y, _)| *y)),
            );
            let (area, side) = plot_area(root);
            let mut builder = ChartBuilder::on(&area);
            builder
                .margin(MARGIN)
                .x_label_area_size(X_LABELS)
                .y_label_area_size(Y_LABELS);
            let Some((desc, lines)) = &self.right else {
                let mut chart = builder
                    .build_cartesian_2d(x.clone(), left)
                    .map_err(failed(name))?;
                self.paint_left(&mut chart, &x)?;
                return legend(&side, name, &self.entries());
            };
            let right = value_range(lines.iter().flat_map(|l| finite(&l.points)).map(|p| p.1));
            // Counts (players) read best whole; a small range needs its decimal.
            let whole = right.end >= 10.0;
            let mut chart = builder
                .right_y_label_area_size(Y_LABELS)
                .build_cartesian_2d(x.clone(), left)
                .map_err(failed(name))?
                .set_secondary_coord(x.clone(), right);
            chart
                .configure_secondary_axes()
                .y_desc(desc.as_str())
                .label_style(LABEL_FONT)
                .axis_desc_style(DESC_FONT)
                .y_label_formatter(&|v| {
                    if whole {
                        format!("{v:.0}")
                    } else {
                        format!("{v:.1}")
                    }
                })
                .draw()
                .map_err(failed(name))?;
            self.paint_left(&mut chart, &x)?;
            for l in lines {
                chart
                    .draw_secondary_series(LineSeries::new(
                        finite(&l.points),
                        rgb(l.color).stroke_width(2),
                    ))
                    .map_err(failed(name))?;
            }
            legend(&side, name, &self.entries())
        })
    }

    /// The axes and grid, then everything against the left axis.
    fn paint_left(&self, chart: &mut Plot<'_, '_>, x: &Range<f64>) -> Result<(), ReportError> {
        let name = self.name.as_str();
        let whole = |v: &f64| {
            if (v - v.round()).abs() < 1e-6 {
                format!("{v:.0}")
            } else {
                String::new()
            }
        };
        let category = |v: &f64| match &self.x_axis {
            XAxis::Categories(labels) if (v - v.round()).abs() < 1e-6 && *v > -0.5 => {
                labels.get(v.round() as usize).cloned().unwrap_or_default()
            }
            _ => String::new(),
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .label_style(LABEL_FONT)
            .axis_desc_style(DESC_FONT);
        match &self.x_axis {
            XAxis::Continuous => {}
            XAxis::Counts => {
                mesh.x_label_formatter(&whole);
            }
            XAxis::Categories(labels) => {
                mesh.x_labels(labels.len().clamp(2, 12))
                    .x_label_formatter(&category);
            }
        }
        mesh.draw().map_err(failed(name))?;
        for l in &self.lines {
            let color = rgb(l.color);
            chart
                .draw_series(LineSeries::new(finite(&l.points), color.stroke_width(2)))
                .map_err(failed(name))?;
            if let Some(radius) = l.dots {
                chart
                    .draw_series(finite(&l.points).map(|p| Circle::new(p, radius, color.filled())))
                    .map_err(failed(name))?;
            }
        }
        let dots = self
            .dots
            .iter()
            .filter(|((x, y), _)| x.is_finite() && y.is_finite());
        chart
            .draw_series(dots.map(|(p, c)| Circle::new(*p, self.dot_radius, rgb(*c).filled())))
            .map_err(failed(name))?;
        for (_, y, color) in &self.references {
            let span = ((x.start, *y), (x.end, *y));
            dashed(chart, name, span, (8, 5), *color)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::tests::{painted, texts};

    #[test]
    fn a_time_series_has_its_lines_reference_and_legend() {
        let svg = LineChart::new("t", "time (s)", "tick (us)")
            .line(Line::new(
                "mean",
                Color::BLUE,
                [(0.0, 10.0), (1.0, 12.0), (2.0, f64::NAN)],
            ))
            .line(Line::new("p99", Color::ORANGE, [(0.0, 20.0), (1.0, 25.0)]))
            .reference("p99 budget <60>", 60.0, Color::GREY)
            .reference("no budget", None, Color::GREY)
            .render()
            .unwrap();
        let texts = texts(&svg);
        for label in ["mean", "p99", "p99 budget <60>", "time (s)", "tick (us)"] {
            assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
        }
        assert!(!texts.iter().any(|t| t == "no budget"));
        // Each line and its legend key.
        assert_eq!(painted(&svg, "polyline", "#1F77B4"), 2, "{}", svg.as_str());
        assert_eq!(painted(&svg, "polyline", "#FF7F0E"), 2);
        assert!(
            painted(&svg, "polyline", "#5A5A5A") > 2,
            "the budget is dashed"
        );
        assert!(!svg.as_str().contains("xmlns"), "inlined into HTML");
    }

    #[test]
    fn dots_counts_and_a_right_axis() {
        let svg = LineChart::new("sweep", "matches", "tick (us)")
            .x_axis(XAxis::Counts)
            .line(Line::new(
                "p99",
                Color::ORANGE,
                [(1.0, 20.0), (2.0, 30.0), (4.0, 80.0)],
            ))
            .dots(5, [((1.0, 20.0), Color::GREEN), ((4.0, 80.0), Color::RED)])
            .key(Key::block("step passed", Color::GREEN))
            .key(Key::block("step failed", Color::RED))
            .right_axis(
                "players",
                vec![Line::new(
                    "players",
                    Color::GREEN,
                    [(1.0, 10.0), (4.0, 40.0)],
                )],
            )
            .render()
            .unwrap();
        let texts = texts(&svg);
        for label in ["step passed", "step failed", "players", "4", "2", "45"] {
            assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
        }
        for half in ["0.5", "1.5", "2.5", "3.5"] {
            assert!(
                !texts.contains(&half.into()),
                "whole numbers on x and right: {texts:?}"
            );
        }
        assert_eq!(painted(&svg, "circle", "#D62728"), 1);
    }

    #[test]
    fn a_small_right_axis_keeps_its_decimal() {
        let svg = LineChart::new("pacing", "time (s)", "rate (/s)")
            .line(Line::new("rate", Color::BLUE, [(0.0, 400.0), (1.0, 420.0)]))
            .right_axis(
                "ms",
                vec![Line::new("p95", Color::ORANGE, [(0.0, 4.0), (1.0, 6.0)])],
            )
            .render()
            .unwrap();
        let texts = texts(&svg);
        assert!(
            texts.contains(&"5.0".into()) && texts.contains(&"ms".into()),
            "{texts:?}"
        );
    }

    #[test]
    fn categories_label_their_places_and_empty_charts_render() {
        let commits = vec!["a1b2".to_string(), "c3d4".to_string()];
        let svg = LineChart::new("history", "commit", "us")
            .x_axis(XAxis::Categories(commits))
            .line(Line::new("fow", Color::nth(13), [(0.0, 3.0), (1.0, 4.0)]).with_dots(3))
            .render()
            .unwrap();
        let texts = texts(&svg);
        assert!(
            texts.contains(&"a1b2".into()) && texts.contains(&"c3d4".into()),
            "{texts:?}"
        );
        assert_eq!(
            painted(&svg, "circle", "#FF7F0E"),
            2,
            "nth cycles the palette"
        );
        let empty = LineChart::new("empty", "x", "y").render().unwrap();
        assert!(crate::chart::tests::texts(&empty).iter().any(|t| t == "y"));
    }
}
