//! What every chart shares: the canvas and its size, fonts, colours, value ranges,
//! the legend beside the plot, dashed lines and category labels under the plot.

use std::fmt::Display;
use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::Color as _;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Color, Key, Svg};
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

/// From zero to 15% above the largest finite value, never empty.
pub(crate) fn value_range(values: impl IntoIterator<Item = f64>) -> Range<f64> {
    let top = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    0.0..if top > 0.0 { top * 1.15 } else { 1.0 }
}

pub(crate) fn finite(points: &[(f64, f64)]) -> impl Iterator<Item = (f64, f64)> + '_ {
    points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
}

/// A dashed line from `from` to `to` (`dash` drawn, `gap` left out, in pixels).
pub(crate) fn dashed(
    chart: &mut Plot<'_, '_>,
    name: &str,
    (from, to): ((f64, f64), (f64, f64)),
    (dash, gap): (u32, u32),
    color: Color,
) -> Result<(), ReportError> {
    chart
        .draw_series(DashedLineSeries::new(
            [from, to],
            dash,
            gap,
            rgb(color).stroke_width(2),
        ))
        .map_err(failed(name))?;
    Ok(())
}

/// Width given up right of the plot for its legend.
pub(crate) const LEGEND_WIDTH: u32 = 180;

/// The area to plot in, and the strip right of it for the legend.
pub(crate) fn plot_area<'a>(root: &Area<'a>) -> (Area<'a>, Area<'a>) {
    root.split_horizontally(SIZE.0 - LEGEND_WIDTH)
}

/// The legend, beside the plot (in `side`): one entry a line from the top, a short
/// line or a small box in the entry's colour, then its label. It never covers the data.
pub(crate) fn legend(side: &Area<'_>, name: &str, entries: &[Key]) -> Result<(), ReportError> {
    let style = LABEL_FONT
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let x = 8;
    for (i, key) in entries.iter().enumerate() {
        let y = MARGIN as i32 + 10 + 22 * i as i32;
        let c = rgb(key.color);
        if key.line {
            side.draw(&PathElement::new([(x, y), (x + 16, y)], c.stroke_width(2)))
        } else {
            side.draw(&Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()))
        }
        .map_err(failed(name))?;
        side.draw(&Text::new(key.label.clone(), (x + 24, y), style.clone()))
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
        let r = value_range([2.0, f64::NAN, 4.0]);
        assert!(r.start == 0.0 && (r.end - 4.6).abs() < 1e-9, "{r:?}");
        assert_eq!(value_range([]), 0.0..1.0);
        assert_eq!(value_range([-3.0, f64::INFINITY]), 0.0..1.0);
    }
}
