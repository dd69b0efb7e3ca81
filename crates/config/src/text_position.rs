//! Where a byte offset falls in a text file, as the 1-based line and column an
//! editor shows: every config parser in hightick (budgets, maps, host, gateway,
//! swarm scenarios) names the place at fault this way.

/// The 1-based line and column (in characters) of byte `offset` in `text`. An
/// offset past the end is the end; one inside a multi-byte character is that
/// character.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The first fenced code block of language `lang` in the module docs (`//!`
/// lines) of Rust source `source`, without the markers: what a crate's
/// test reads to check that the reference file its docs show still parses.
pub fn doc_block(source: &str, lang: &str) -> Option<String> {
    let fence = format!("//! ```{lang}\n");
    let start = source.find(&fence)? + fence.len();
    let end = start + source[start..].find("//! ```")?;
    Some(
        source[start..end]
            .lines()
            .map(|l| l.trim_start_matches("//!").trim_start())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::{doc_block, line_column};

    #[test]
    fn a_doc_block_is_read_without_its_markers() {
        let source = "//! Docs.\n//! ```toml\n//! a = 1\n//!   b = 2\n//! ```\nfn f() {}\n";
        assert_eq!(doc_block(source, "toml").as_deref(), Some("a = 1\nb = 2"));
        assert_eq!(doc_block(source, "json"), None);
    }

    #[test]
    fn lines_and_columns_count_from_one() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("ab\ncd", 99), (2, 3));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        assert_eq!(line_column("é\nx", 1), (1, 1));
        assert_eq!(line_column("éx", 2), (1, 2));
        assert_eq!(line_column("\néé=", 5), (2, 3));
    }
}
