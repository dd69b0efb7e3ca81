//! hightick-report: the report kit the lab and the swarm write their reports with.
//!
//! What it is for:
//! - [`Page`]: one self-contained HTML document: a title, header facts ([`Page::paragraph`],
//!   [`Page::note`]), headline [`Tile`]s, sections, [`Table`]s of [`Cell`]s, lists,
//!   preformatted lines and inline charts. One stylesheet ([`STYLE`]) inline, every text
//!   [`escape`]d, nothing fetched and no script, so a report is one file to mail or
//!   archive.
//! - SVG charts drawn with plotters' SVG backend at one size and in one palette:
//!   [`LineChart`] (lines over time, counts or categories, dots, dashed reference lines
//!   such as budgets, a second y axis) and [`BarChart`] (grouped or stacked bars per
//!   category, bars recoloured and limits marked one by one), each with its legend beside
//!   the plot, where it covers nothing.
//! - [`TextTable`]: aligned columns for terminal output.
//!
//! What it is not: it knows nothing of runs, sweeps or load tests (the lab and the
//! swarm decide what a report says), it writes no files, and it sits below every other
//! hightick crate: it depends on none of them.
//!
//! Checking how a report looks: render one and open it in a browser. Headless Chromium
//! takes a screenshot (see `docs/ARCHITECTURE.md`, "Reports").
//!
//! ```
//! use hightick_report::{Align, Cell, Color, Line, LineChart, Page, Table, TextTable, Tile};
//!
//! let p99 = [(0.0, 41.0), (1.0, 44.5), (2.0, 43.0)];
//! let chart = LineChart::new("tick over time", "time (s)", "match tick (us)")
//!     .line(Line::new("p99", Color::ORANGE, p99))
//!     .reference("p99 budget", 60.0, Color::GREY)
//!     .render()?;
//!
//! let mut page = Page::new("demo <5v5>");
//! page.paragraph("2 matches at 128 Hz")
//!     .tiles(&[Tile::new("74.0", "games per core")])
//!     .section("Tick over time")
//!     .chart(&chart)
//!     .table(&Table::new(["subsystem", "p99 us"]).rows([vec![Cell::text("fow"), Cell::num(12.5, 1)]]));
//! let html = page.finish();
//! assert!(html.contains("<title>demo &lt;5v5&gt;</title>") && html.contains("<svg"));
//!
//! let mut table = TextTable::new(&[("subsystem", Align::Left), ("p99 us", Align::Right)]);
//! table.row(["fow", "12.5"]);
//! assert_eq!(table.render(), "subsystem  p99 us\n---------  ------\nfow          12.5\n");
//! # Ok::<(), hightick_report::ReportError>(())
//! ```

mod chart;
mod error;
mod escape;
mod page;
mod table;
mod text_table;

pub use chart::{Bar, BarChart, Bars, Color, Key, Line, LineChart, Svg, XAxis};
pub use error::ReportError;
pub use escape::escape;
pub use page::{Page, STYLE, Tile};
pub use table::{Cell, Mark, Table};
pub use text_table::{Align, TextTable};
