//! Plain-text tables for terminal output: every column as wide as its widest cell.

use std::fmt::Write as _;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right (names, words).
    Left,
    /// Padded on the left (numbers).
    Right,
}

/// Rows of cells under a header; rendered with every column as wide as its widest cell,
/// two spaces between columns and a rule of `-` under the header.
#[derive(Debug, Clone)]
pub struct TextTable {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these column titles and alignments.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        TextTable {
            header: columns.iter().map(|(t, _)| (*t).to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are blank, extra cells are ignored.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
    }

    /// The table as lines of text, a rule under the header, each line ending in `\n`
    /// with no trailing spaces.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        self.line(&mut out, &self.header, &widths);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        self.line(&mut out, &rule, &widths);
        for row in &self.rows {
            self.line(&mut out, row, &widths);
        }
        out
    }

    fn line(&self, out: &mut String, cells: &[String], widths: &[usize]) {
        let mut line = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let _ = match self.align[i] {
                Align::Left => write!(line, "{cell:<width$}"),
                Align::Right => write!(line, "{cell:>width$}"),
            };
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_to_the_widest_cell() {
        let mut t = TextTable::new(&[("name", Align::Left), ("value", Align::Right)]);
        t.row(["a", "1"]);
        t.row(["longer", "12345678"]);
        let text = t.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "name       value");
        assert_eq!(lines[1], "------  --------");
        assert_eq!(lines[2], "a              1");
        assert_eq!(lines[3], "longer  12345678");
    }

    #[test]
    fn wide_characters_count_as_one_column_each() {
        let mut t = TextTable::new(&[("step", Align::Left), ("ms", Align::Right)]);
        t.row(["größe", "1.00"]);
        t.row(["a", "12.50"]);
        let text = t.render();
        let ends: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
        assert_eq!(ends, vec![12, 12, 12, 12], "{text}");
    }

    #[test]
    fn short_rows_are_padded_and_long_rows_cut() {
        let mut t = TextTable::new(&[("a", Align::Left), ("b", Align::Left)]);
        t.row(["only"]);
        t.row(["x", "y", "ignored"]);
        let text = t.render();
        assert!(text.contains("only\n"), "{text}");
        assert!(!text.contains("ignored"), "{text}");
    }
}
