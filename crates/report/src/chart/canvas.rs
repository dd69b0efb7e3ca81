//! What every chart shares: the canvas and its size, colours, value ranges, legend
//! keys, the legend box, dashed lines and category labels under the plot.

use std::fmt::Display;
use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::Color as _;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Color, Key, Legend, Svg};
use crate::error::ReportError;

/// Every chart's size in pixels (it scales down with the page).
pub(crate) const SIZE: (u32, u32) = (900, 320);
/// Space under the plot for the x labels, and left (and right) of it for the y labels.
pub(crate) const X_LABELS: u32 = 44;
pub(crate) const Y_LABELS: u32 = 76;
pub(crate) const MARGIN: u32 = 12;
/// Tick labels, legend entries and category names; axis descriptions a little larger.
pub(crate) const LABEL_FONT: (&str, u32) = ("sans-serif", 14);
pub(crate) const DESC_FONT: (&str, u32) = ("sans-serif", 15);

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
pub(crate) type Plot<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Wraps a drawing library error with the chart's name.
pub(crate) fn failed<E: Display>(chart: &str) -> impl Fn(E) -> ReportError + '_ {
    move |e| ReportError::Chart {
        chart: chart.to_string(),
        message: e.to_string(),
    }
}

/// Draws on a fresh white canvas and returns the SVG.
pub(crate) fn draw(
    chart: &str,
    paint: impl FnOnce(&Area<'_>) -> Result<(), ReportError>,
) -> Result<Svg, ReportError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(failed(chart))?;
        paint(&root)?;
        root.present().map_err(failed(chart))?;
    }
    Ok(Svg(
        svg.replace(r#" xmlns="http://www.w3.org/2000/svg""#, "")
    ))
}

pub(crate) fn rgb(c: Color) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// From zero to `room` times the largest finite value, never empty.
pub(crate) fn value_range(values: impl IntoIterator<Item = f64>, room: f64) -> Range<f64> {
    let top = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    0.0..if top > 0.0 { top * room } else { 1.0 }
}

pub(crate) fn finite(points: &[(f64, f64)]) -> impl Iterator<Item = (f64, f64)> + '_ {
    points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
}

/// A legend key: a short line in the series colour.
pub(crate) fn line_key(color: Color) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new([(x, y), (x + 16, y)], rgb(color).stroke_width(2))
}

/// A legend key: a small filled box in the series colour.
pub(crate) fn box_key(color: Color) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], rgb(color).filled())
}

/// Legend entries that draw nothing.
pub(crate) fn keys(chart: &mut Plot<'_, '_>, name: &str, keys: &[Key]) -> Result<(), ReportError> {
    for key in keys {
        let entry = chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
            .map_err(failed(name))?
            .label(key.label.as_str());
        if key.line {
            entry.legend(line_key(key.color));
        } else {
            entry.legend(box_key(key.color));
        }
    }
    Ok(())
}

/// A dashed line from `from` to `to` (`dash` drawn, `gap` left out, in pixels).
pub(crate) fn dashed(
    chart: &mut Plot<'_, '_>,
    name: &str,
    (from, to): ((f64, f64), (f64, f64)),
    (dash, gap): (u32, u32),
    color: Color,
    label: Option<&str>,
) -> Result<(), ReportError> {
    let drawn = chart
        .draw_series(DashedLineSeries::new(
            [from, to],
            dash,
            gap,
            rgb(color).stroke_width(2),
        ))
        .map_err(failed(name))?;
    if let Some(label) = label {
        drawn.label(label).legend(line_key(color));
    }
    Ok(())
}

/// Width given up beside the plot for a legend there.
pub(crate) const BESIDE: u32 = 180;

/// The area to plot in, and the strip right of it when the legend goes there.
pub(crate) fn plot_area<'a>(root: &Area<'a>, legend: Legend) -> (Area<'a>, Option<Area<'a>>) {
    if legend == Legend::Beside {
        let (plot, side) = root.split_horizontally(SIZE.0 - BESIDE);
        (plot, Some(side))
    } else {
        (root.clone(), None)
    }
}

/// The legend: in a corner, plotters' box of every labelled series; beside the plot
/// (in `side`), `entries` from the top.
pub(crate) fn legend<'a, 'b: 'a>(
    chart: &mut Plot<'a, 'b>,
    name: &str,
    at: Legend,
    side: Option<&Area<'_>>,
    entries: &[Key],
) -> Result<(), ReportError> {
    let position = match at {
        Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
        Legend::UpperRight => SeriesLabelPosition::UpperRight,
        Legend::LowerLeft => SeriesLabelPosition::LowerLeft,
        Legend::LowerRight => SeriesLabelPosition::LowerRight,
        Legend::Beside => {
            return match side {
                Some(area) => legend_beside(area, name, entries),
                None => Ok(()),
            };
        }
    };
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(LABEL_FONT)
        .position(position)
        .draw()
        .map_err(failed(name))
}

/// One entry a line, from the top of `area`, in the keys' style.
fn legend_beside(area: &Area<'_>, name: &str, entries: &[Key]) -> Result<(), ReportError> {
    let style = LABEL_FONT
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let x = 8;
    for (i, key) in entries.iter().enumerate() {
        let y = MARGIN as i32 + 10 + 22 * i as i32;
        if key.line {
            area.draw(&line_key(key.color)((x, y)))
        } else {
            area.draw(&box_key(key.color)((x, y)))
        }
        .map_err(failed(name))?;
        area.draw(&Text::new(key.label.clone(), (x + 24, y), style.clone()))
            .map_err(failed(name))?;
    }
    Ok(())
}

/// Draws `labels[k]` centred under category `k` (at x = k + 0.5), below the plot.
pub(crate) fn category_labels(
    root: &Area<'_>,
    chart: &Plot<'_, '_>,
    name: &str,
    labels: &[String],
) -> Result<(), ReportError> {
    let style = LABEL_FONT
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_ranges_start_at_zero_and_are_never_empty() {
        assert_eq!(value_range([2.0, f64::NAN, 4.0], 1.5), 0.0..6.0);
        assert_eq!(value_range([], 1.5), 0.0..1.0);
        assert_eq!(value_range([-3.0, f64::INFINITY], 1.5), 0.0..1.0);
    }
}
