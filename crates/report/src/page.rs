//! The self-contained HTML page: one document with the stylesheet inline, charts as
//! inline SVG, nothing fetched and no script. Content goes in top to bottom.

use std::fmt::Write as _;

use crate::chart::Svg;
use crate::escape::escape;
use crate::table::{Mark, Table};

/// The one stylesheet of every report.
pub const STYLE: &str = include_str!("style.css");

/// One headline figure: a big value over a short label (`74.0` / `games per core`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    value: String,
    label: String,
    mark: Option<Mark>,
}

impl Tile {
    /// A value and what it is.
    pub fn new(value: impl Into<String>, label: impl Into<String>) -> Tile {
        Tile {
            value: value.into(),
            label: label.into(),
            mark: None,
        }
    }

    /// With the value marked (a verdict, a value over its limit).
    pub fn mark(mut self, mark: Mark) -> Tile {
        self.mark = Some(mark);
        self
    }
}

/// An HTML report being written: a title, then header facts, tiles and sections in
/// the order they are added. Every text is escaped; charts go in as [`Svg`].
#[derive(Debug)]
pub struct Page {
    html: String,
}

impl Page {
    /// A page with this title (the document's and its `<h1>`).
    pub fn new(title: &str) -> Page {
        let mut html = String::with_capacity(64 * 1024);
        let title = escape(title);
        let _ = write!(
            html,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width\">\
             <title>{title}</title><style>\n{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
        );
        Page { html }
    }

    /// A paragraph of text.
    pub fn paragraph(&mut self, text: &str) -> &mut Page {
        let _ = writeln!(self.html, "<p>{}</p>", escape(text));
        self
    }

    /// A paragraph in grey: a secondary fact (host, inputs, a legend to a table).
    pub fn note(&mut self, text: &str) -> &mut Page {
        let _ = writeln!(self.html, "<p class=\"muted\">{}</p>", escape(text));
        self
    }

    /// A paragraph in the colour of a verdict: green when `passed`, red when not.
    pub fn verdict(&mut self, text: &str, passed: bool) -> &mut Page {
        let class = Mark::verdict(passed).class();
        let _ = writeln!(self.html, "<p class=\"{class}\">{}</p>", escape(text));
        self
    }

    /// A row of headline figures.
    pub fn tiles(&mut self, tiles: &[Tile]) -> &mut Page {
        self.html.push_str("<div class=\"headline\">");
        for t in tiles {
            let class = t
                .mark
                .map_or_else(String::new, |m| format!(" class=\"{}\"", m.class()));
            let _ = write!(
                self.html,
                "<div><b{class}>{}</b>{}</div>",
                escape(&t.value),
                escape(&t.label)
            );
        }
        self.html.push_str("</div>\n");
        self
    }

    /// A section heading (`<h2>`).
    pub fn section(&mut self, title: &str) -> &mut Page {
        let _ = writeln!(self.html, "<h2>{}</h2>", escape(title));
        self
    }

    /// A heading inside a section (`<h3>`).
    pub fn subsection(&mut self, title: &str) -> &mut Page {
        let _ = writeln!(self.html, "<h3>{}</h3>", escape(title));
        self
    }

    /// A chart, inline.
    pub fn chart(&mut self, svg: &Svg) -> &mut Page {
        self.html.push_str(svg.as_str());
        self.html.push('\n');
        self
    }

    /// A table.
    pub fn table(&mut self, table: &Table) -> &mut Page {
        table.render(&mut self.html);
        self
    }

    /// A bulleted list.
    pub fn list<S: AsRef<str>>(&mut self, items: impl IntoIterator<Item = S>) -> &mut Page {
        self.html.push_str("<ul>\n");
        for item in items {
            let _ = writeln!(self.html, "<li>{}</li>", escape(item.as_ref()));
        }
        self.html.push_str("</ul>\n");
        self
    }

    /// Lines of monospaced text (FIGURE lines, a terminal table).
    pub fn preformatted<S: AsRef<str>>(&mut self, lines: impl IntoIterator<Item = S>) -> &mut Page {
        self.html.push_str("<pre>");
        for line in lines {
            self.html.push_str(&escape(line.as_ref()));
            self.html.push('\n');
        }
        self.html.push_str("</pre>\n");
        self
    }

    /// The finished document.
    pub fn finish(mut self) -> String {
        self.html.push_str("</body></html>\n");
        self.html
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Cell;

    #[test]
    fn a_page_is_one_self_contained_document() {
        let mut page = Page::new("run <1> & \"two\"");
        page.paragraph("a < b")
            .note("host: 2 cores")
            .tiles(&[
                Tile::new("74.0", "games per core"),
                Tile::new("within budget", "p99 tick").mark(Mark::Pass),
            ])
            .section("Steps")
            .table(&Table::new(["matches"]).rows([vec![Cell::num(2.0, 0)]]))
            .verdict("Budget violations: none.", true)
            .subsection("2 matches")
            .list(["fow mean 48 us > 35 us"])
            .preformatted(["FIGURE gpc 74.0 games/core"]);
        let html = page.finish();
        assert!(html.starts_with("<!DOCTYPE html>\n"), "{html}");
        assert!(html.ends_with("</body></html>\n"));
        assert!(html.contains("<title>run &lt;1&gt; &amp; &quot;two&quot;</title>"));
        assert!(html.contains("<h1>run &lt;1&gt; &amp; &quot;two&quot;</h1>"));
        assert!(html.contains("<p>a &lt; b</p>"));
        assert!(html.contains("<b class=\"pass\">within budget</b>p99 tick"));
        assert!(html.contains("<p class=\"pass\">Budget violations: none.</p>"));
        assert!(html.contains("<li>fow mean 48 us &gt; 35 us</li>"));
        assert!(html.contains("<pre>FIGURE gpc 74.0 games/core\n</pre>"));
        assert!(html.contains(STYLE));
        for external in [
            "http://", "https://", "src=", "href=", "<script", "@import", "url(",
        ] {
            assert!(!html.contains(external), "found {external}");
        }
    }
}
