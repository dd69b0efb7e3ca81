//! SVG charts drawn with plotters' SVG backend into strings: one canvas size, one
//! palette, one legend style. Text is SVG `<text>` in the generic `sans-serif` family,
//! laid out with plotters' own estimate, so no font file is needed to build or run.
//!
//! Two kinds: [`LineChart`] (lines over a continuous, whole-number or category x
//! axis, with dots, reference lines and an optional right axis) and [`BarChart`]
//! (bars per category, grouped side by side or stacked).

mod bar;
mod canvas;
mod line;

pub use bar::{Bar, BarChart, Bars};
pub use line::{Line, LineChart, XAxis};

/// A colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Color(pub u8, pub u8, pub u8);

impl Color {
    /// The first series.
    pub const BLUE: Color = Color(31, 119, 180);
    /// The second series.
    pub const ORANGE: Color = Color(255, 127, 14);
    /// Players, passes.
    pub const GREEN: Color = Color(44, 160, 44);
    /// Over a limit, failures, errors.
    pub const RED: Color = Color(214, 39, 40);
    /// Budgets and other reference lines.
    pub const GREY: Color = Color(90, 90, 90);
    /// Distinct series colours, for charts with many series (cycled past twelve).
    pub const PALETTE: [Color; 12] = [
        Color::BLUE,
        Color::ORANGE,
        Color::GREEN,
        Color(148, 103, 189),
        Color(140, 86, 75),
        Color(227, 119, 194),
        Color(127, 127, 127),
        Color(188, 189, 34),
        Color(23, 190, 207),
        Color(174, 199, 232),
        Color(255, 187, 120),
        Color(152, 223, 138),
    ];

    /// The `i`th palette colour (cycling).
    pub fn nth(i: usize) -> Color {
        Color::PALETTE[i % Color::PALETTE.len()]
    }
}

/// A legend entry that draws nothing in the plot: a colour explained (`over budget`)
/// or a kind of mark that is drawn unlabelled elsewhere (`budget`).
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    label: String,
    color: Color,
    line: bool,
}

impl Key {
    /// A short line in `color`.
    pub fn line(label: impl Into<String>, color: Color) -> Key {
        Key {
            label: label.into(),
            color,
            line: true,
        }
    }

    /// A small filled box in `color`.
    pub fn block(label: impl Into<String>, color: Color) -> Key {
        Key {
            label: label.into(),
            color,
            line: false,
        }
    }
}

/// A drawn chart: SVG markup, ready to inline into HTML (the namespace attribute is
/// left out, as HTML implies it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Svg(String);

impl Svg {
    /// The markup.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The markup, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::Svg;

    /// Parses `svg` as XML (it must be well-formed) and returns it with the texts of
    /// its `<text>` elements.
    pub(crate) fn texts(svg: &Svg) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg.as_str()).expect("well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or_default().trim().to_string())
            .collect()
    }

    /// How many elements named `tag` are stroked or filled in `hex` (e.g. `#1F77B4`).
    pub(crate) fn painted(svg: &Svg, tag: &str, hex: &str) -> usize {
        let doc = roxmltree::Document::parse(svg.as_str()).expect("well-formed SVG");
        doc.descendants()
            .filter(|n| n.has_tag_name(tag))
            .filter(|n| {
                [n.attribute("stroke"), n.attribute("fill")]
                    .iter()
                    .any(|a| a.is_some_and(|c| c.eq_ignore_ascii_case(hex)))
            })
            .count()
    }
}
