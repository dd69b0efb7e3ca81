//! Bar charts: one place per category (named under the plot), the series' bars side
//! by side (grouped) or on top of one another (stacked).

use plotters::prelude::*;
use plotters::style::Color as _;

use super::canvas::{
    DESC_FONT, LABEL_FONT, MARGIN, X_LABELS, Y_LABELS, category_labels, dashed, draw, failed,
    legend, plot_area, rgb, value_range,
};
use super::{Color, Key, Svg};
use crate::error::ReportError;

/// One bar: its value, and optionally its own colour and a limit marked across it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    value: f64,
    color: Option<Color>,
    mark: Option<f64>,
}

impl Bar {
    /// A bar of this height (a non-finite or negative value draws nothing).
    pub fn new(value: f64) -> Bar {
        Bar {
            value,
            color: None,
            mark: None,
        }
    }

    /// In `color` instead of its series' colour when `when` (e.g. over budget).
    pub fn color_if(mut self, when: bool, color: Color) -> Bar {
        if when {
            self.color = Some(color);
        }
        self
    }

    /// With a dashed line across it at `limit` (grouped bars only), when there is one.
    pub fn mark(mut self, limit: Option<f64>) -> Bar {
        self.mark = limit.filter(|l| l.is_finite());
        self
    }

    fn height(&self) -> f64 {
        if self.value.is_finite() {
            self.value.max(0.0)
        } else {
            0.0
        }
    }
}

impl From<f64> for Bar {
    fn from(value: f64) -> Bar {
        Bar::new(value)
    }
}

/// One labelled series: a bar per category, in category order.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    label: String,
    color: Color,
    bars: Vec<Bar>,
}

impl Bars {
    /// A series of bars in `color`.
    pub fn new<B: Into<Bar>>(
        label: impl Into<String>,
        color: Color,
        bars: impl IntoIterator<Item = B>,
    ) -> Bars {
        Bars {
            label: label.into(),
            color,
            bars: bars.into_iter().map(Into::into).collect(),
        }
    }
}

/// A bar chart, built up and then [rendered](BarChart::render). Legend entries come
/// in the order: series, keys.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    name: String,
    y_desc: String,
    categories: Vec<String>,
    stacked: bool,
    series: Vec<Bars>,
    keys: Vec<Key>,
}

impl BarChart {
    /// Series side by side in each category. `name` says which chart in errors.
    pub fn grouped(
        name: impl Into<String>,
        y_desc: impl Into<String>,
        categories: Vec<String>,
    ) -> Self {
        BarChart {
            name: name.into(),
            y_desc: y_desc.into(),
            categories,
            stacked: false,
            series: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// Series stacked in each category, the first at the bottom.
    pub fn stacked(
        name: impl Into<String>,
        y_desc: impl Into<String>,
        categories: Vec<String>,
    ) -> Self {
        BarChart {
            stacked: true,
            ..BarChart::grouped(name, y_desc, categories)
        }
    }

    /// With this series.
    pub fn series(mut self, bars: Bars) -> Self {
        self.series.push(bars);
        self
    }

    /// With a legend entry that draws nothing in the plot.
    pub fn key(mut self, key: Key) -> Self {
        self.keys.push(key);
        self
    }

    /// The height of category `k`'s stack below series `upto`.
    fn stack_below(&self, k: usize, upto: usize) -> f64 {
        self.series[..upto]
            .iter()
            .filter_map(|s| s.bars.get(k))
            .map(Bar::height)
            .sum()
    }

    fn y_values(&self) -> Vec<f64> {
        if self.stacked {
            (0..self.categories.len())
                .map(|k| self.stack_below(k, self.series.len()))
                .collect()
        } else {
            self.series
                .iter()
                .flat_map(|s| &s.bars)
                .flat_map(|b| [b.value].into_iter().chain(b.mark))
                .collect()
        }
    }

    /// `(left, right)` of series `s`'s bar within category `k`.
    fn span(&self, k: usize, s: usize) -> (f64, f64) {
        let x = k as f64;
        if self.stacked {
            return (x + 0.2, x + 0.8);
        }
        // The bars share 0.76 of the category's width, 0.04 apart.
        let n = self.series.len().max(1) as f64;
        let width = (0.76 - 0.04 * (n - 1.0)) / n;
        let left = x + 0.12 + (width + 0.04) * s as f64;
        (left, left + width)
    }

    /// The legend's entries: the series (top first when stacked), then the keys.
    fn entries(&self) -> Vec<Key> {
        let mut series: Vec<Key> = self
            .series
            .iter()
            .map(|s| Key::block(s.label.clone(), s.color))
            .collect();
        if self.stacked {
            series.reverse();
        }
        series
            .into_iter()
            .chain(self.keys.iter().cloned())
            .collect()
    }

    /// Draws the chart.
    pub fn render(&self) -> Result<Svg, ReportError> {
        let name = self.name.as_str();
        draw(name, |root| {
            let y = value_range(self.y_values());
            let (area, side) = plot_area(root);
            let mut chart = ChartBuilder::on(&area)
                .margin(MARGIN)
                .x_label_area_size(X_LABELS)
                .y_label_area_size(Y_LABELS)
                .build_cartesian_2d(0.0..self.categories.len().max(1) as f64, y)
                .map_err(failed(name))?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .y_desc(self.y_desc.as_str())
                .label_style(LABEL_FONT)
                .axis_desc_style(DESC_FONT)
                .draw()
                .map_err(failed(name))?;
            for (s, series) in self.series.iter().enumerate() {
                let rects = series.bars.iter().enumerate().map(|(k, bar)| {
                    let (x0, x1) = self.span(k, s);
                    let below = if self.stacked {
                        self.stack_below(k, s)
                    } else {
                        0.0
                    };
                    let color = rgb(bar.color.unwrap_or(series.color));
                    Rectangle::new([(x0, below), (x1, below + bar.height())], color.filled())
                });
                chart.draw_series(rects).map_err(failed(name))?;
            }
            if !self.stacked {
                for (s, series) in self.series.iter().enumerate() {
                    for (k, bar) in series.bars.iter().enumerate() {
                        if let Some(limit) = bar.mark {
                            let (x0, x1) = self.span(k, s);
                            let span = ((x0 - 0.04, limit), (x1 + 0.04, limit));
                            dashed(&mut chart, name, span, (5, 3), Color::GREY)?;
                        }
                    }
                }
            }
            legend(&side, name, &self.entries())?;
            category_labels(root, &chart, name, &self.categories)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::tests::{painted, texts};

    fn names() -> Vec<String> {
        vec!["fow".into(), "physics & co".into(), "network".into()]
    }

    #[test]
    fn grouped_bars_recolour_mark_and_name_their_categories() {
        let svg = BarChart::grouped("subsystems", "us per tick", names())
            .series(Bars::new(
                "mean",
                Color::BLUE,
                [
                    Bar::new(10.0).mark(Some(12.0)),
                    Bar::new(50.0).color_if(true, Color::RED).mark(Some(35.0)),
                    Bar::new(f64::NAN),
                ],
            ))
            .series(Bars::new("p99", Color::ORANGE, [20.0, 60.0, 1.0]))
            .key(Key::block("over budget", Color::RED))
            .key(Key::line("budget", Color::GREY))
            .render()
            .unwrap();
        let texts = texts(&svg);
        for label in [
            "fow",
            "physics & co",
            "network",
            "mean",
            "p99",
            "over budget",
            "budget",
        ] {
            assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
        }
        // Bars plus a legend box each; the over-budget bar is red.
        assert_eq!(painted(&svg, "rect", "#1F77B4"), 2 + 1);
        assert_eq!(painted(&svg, "rect", "#FF7F0E"), 3 + 1);
        assert_eq!(painted(&svg, "rect", "#D62728"), 1 + 1);
        assert!(
            painted(&svg, "polyline", "#5A5A5A") > 2,
            "budget marks are dashed"
        );
    }

    #[test]
    fn the_legend_lists_stacks_top_first() {
        let chart = BarChart::stacked("stacks", "us", vec!["1".into()])
            .series(Bars::new("bottom", Color::nth(0), [1.0]))
            .series(Bars::new("top", Color::nth(1), [2.0]))
            .key(Key::line("budget", Color::GREY));
        let labels: Vec<String> = chart.entries().into_iter().map(|k| k.label).collect();
        assert_eq!(labels, ["top", "bottom", "budget"]);
        let texts = texts(&chart.render().unwrap());
        let at = |t: &str| texts.iter().position(|x| x == t).unwrap();
        assert!(
            at("top") < at("bottom") && at("bottom") < at("budget"),
            "{texts:?}"
        );
    }

    #[test]
    fn stacked_bars_sit_on_one_another() {
        let chart = BarChart::stacked("stacks", "us", vec!["1".into(), "2".into()])
            .series(Bars::new("a", Color::nth(0), [1.0, 2.0]))
            .series(Bars::new("b", Color::nth(1), [3.0, f64::INFINITY]));
        assert_eq!(chart.stack_below(0, 2), 4.0);
        assert_eq!(chart.stack_below(1, 2), 2.0, "a non-finite bar is empty");
        assert_eq!(chart.span(1, 1), (1.2, 1.8));
        let svg = chart.render().unwrap();
        assert_eq!(painted(&svg, "rect", "#FF7F0E"), 2 + 1);
        let grouped = BarChart::grouped("g", "us", names())
            .series(Bars::new("a", Color::BLUE, [1.0]))
            .series(Bars::new("b", Color::BLUE, [1.0]));
        let (l, r) = grouped.span(0, 1);
        assert!((l - 0.52).abs() < 1e-9 && (r - 0.88).abs() < 1e-9);
    }
}
