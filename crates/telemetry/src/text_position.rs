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

#[cfg(test)]
mod tests {
    use super::line_column;

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
