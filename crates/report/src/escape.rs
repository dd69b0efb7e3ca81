//! HTML escaping.

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_are_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn plain_text_and_other_scripts_pass_unchanged() {
        assert_eq!(
            escape("p99 12.5 us, größer, 时间"),
            "p99 12.5 us, größer, 时间"
        );
        assert_eq!(escape(""), "");
    }

    #[test]
    fn an_escaped_ampersand_is_escaped_again() {
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }
}
