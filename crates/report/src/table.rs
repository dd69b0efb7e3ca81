//! HTML tables: cells that know whether they hold a number (right-aligned) and whether
//! they are marked (over a limit, a pass, a failure).

use std::fmt::Write as _;

use crate::escape::escape;

/// How a cell or a headline tile is marked; each is a class of the stylesheet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A value past its limit (budget, threshold): red and bold.
    Over,
    /// A verdict that passed: green.
    Pass,
    /// A verdict that failed: red.
    Fail,
}

impl Mark {
    /// The verdict for `passed`.
    pub fn verdict(passed: bool) -> Mark {
        if passed { Mark::Pass } else { Mark::Fail }
    }

    /// The stylesheet class.
    pub(crate) fn class(self) -> &'static str {
        match self {
            Mark::Over => "over",
            Mark::Pass => "pass",
            Mark::Fail => "fail",
        }
    }
}

/// One table cell: its text, whether it is a number (right-aligned), and its mark.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    text: String,
    numeric: bool,
    mark: Option<Mark>,
}

impl Cell {
    /// Text, left-aligned.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            numeric: false,
            mark: None,
        }
    }

    /// A number with `decimals` decimals, right-aligned.
    pub fn num(value: f64, decimals: usize) -> Cell {
        Cell::numeric(format!("{value:.decimals$}"))
    }

    /// Text in a number column, right-aligned (e.g. `12.0 / 30.5`).
    pub fn numeric(text: impl Into<String>) -> Cell {
        Cell {
            numeric: true,
            ..Cell::text(text)
        }
    }

    /// A number, or `-` when there is none.
    pub fn num_or_dash(value: Option<f64>, decimals: usize) -> Cell {
        value.map_or_else(|| Cell::numeric("-"), |v| Cell::num(v, decimals))
    }

    /// Marked as over its limit when `over`.
    pub fn over(self, over: bool) -> Cell {
        if over { self.mark(Mark::Over) } else { self }
    }

    /// With this mark.
    pub fn mark(mut self, mark: Mark) -> Cell {
        self.mark = Some(mark);
        self
    }

    fn class(&self) -> String {
        let classes: Vec<&str> = self
            .numeric
            .then_some("n")
            .into_iter()
            .chain(self.mark.map(Mark::class))
            .collect();
        if classes.is_empty() {
            String::new()
        } else {
            format!(" class=\"{}\"", classes.join(" "))
        }
    }
}

/// Rows of cells under a header row. A column whose cells are all numbers has its
/// header right-aligned over them.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these column headers and no rows yet.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// With these rows appended.
    pub fn rows(mut self, rows: impl IntoIterator<Item = Vec<Cell>>) -> Table {
        self.rows.extend(rows);
        self
    }

    /// Appends one row.
    pub fn row(&mut self, cells: Vec<Cell>) -> &mut Table {
        self.rows.push(cells);
        self
    }

    fn numeric_column(&self, i: usize) -> bool {
        !self.rows.is_empty()
            && self
                .rows
                .iter()
                .all(|row| row.get(i).is_none_or(|c| c.numeric))
    }

    pub(crate) fn render(&self, out: &mut String) {
        out.push_str("<table><tr>");
        for (i, h) in self.headers.iter().enumerate() {
            let class = if self.numeric_column(i) {
                " class=\"n\""
            } else {
                ""
            };
            let _ = write!(out, "<th{class}>{}</th>", escape(h));
        }
        out.push_str("</tr>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for cell in row {
                let _ = write!(out, "<td{}>{}</td>", cell.class(), escape(&cell.text));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(table: &Table) -> String {
        let mut out = String::new();
        table.render(&mut out);
        out
    }

    #[test]
    fn cells_carry_their_classes_and_text_is_escaped() {
        let table = Table::new(["step <1>", "p99 ms"]).rows([
            vec![Cell::text("a&b"), Cell::num(12.345, 2).over(true)],
            vec![Cell::text("c"), Cell::num(1.0, 2).over(false)],
            vec![
                Cell::text("PASS").mark(Mark::verdict(true)),
                Cell::num_or_dash(None, 1),
            ],
        ]);
        let out = html(&table);
        assert!(
            out.contains("<th>step &lt;1&gt;</th><th class=\"n\">p99 ms</th>"),
            "{out}"
        );
        assert!(
            out.contains("<td>a&amp;b</td><td class=\"n over\">12.35</td>"),
            "{out}"
        );
        assert!(out.contains("<td class=\"n\">1.00</td>"), "{out}");
        assert!(
            out.contains("<td class=\"pass\">PASS</td><td class=\"n\">-</td>"),
            "{out}"
        );
        assert_eq!(out.matches("<tr>").count(), 4);
    }

    #[test]
    fn a_column_with_any_text_keeps_a_left_header() {
        let table = Table::new(["v"]).rows([vec![Cell::num(1.0, 0)], vec![Cell::text("x")]]);
        assert!(html(&table).contains("<th>v</th>"));
        assert!(html(&Table::new(["v"])).contains("<th>v</th>"), "no rows");
    }
}
