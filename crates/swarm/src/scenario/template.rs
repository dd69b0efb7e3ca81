//! Templates: text with `{{name}}` placeholders, compiled once when the
//! scenario loads and rendered per request into a reused buffer.
//!
//! A name is a built-in ([`Builtin`]: `user`, `iteration`, `random`,
//! `agent`) or a variable captured from an earlier response. Rendering into
//! a JSON body escapes values for a JSON string; elsewhere values go in as
//! they are.

use std::fmt::Write as _;

/// A value every virtual player has without capturing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// The player's number, unique across agents.
    User,
    /// How many behaviours this player has started.
    Iteration,
    /// A fresh random 32-bit number.
    Random,
    /// The agent's index (0 without agents).
    Agent,
}

impl Builtin {
    /// The built-in called `name`.
    pub fn named(name: &str) -> Option<Self> {
        Some(match name {
            "user" => Self::User,
            "iteration" => Self::Iteration,
            "random" => Self::Random,
            "agent" => Self::Agent,
            _ => return None,
        })
    }
}

/// What a placeholder stands for, once compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Var {
    /// A built-in value.
    Builtin(Builtin),
    /// A captured variable, by slot.
    Capture(u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(Box<str>),
    Var(Var),
}

/// A compiled template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// How values are written into the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// As they are.
    None,
    /// Escaped for the inside of a JSON string.
    Json,
}

/// Where rendering finds values.
pub trait Values {
    /// The value of a built-in.
    fn builtin(&mut self, b: Builtin) -> u64;
    /// A captured variable, if this player has it.
    fn capture(&self, slot: u16) -> Option<&str>;
}

/// The names a template uses, in order (for validation).
pub fn placeholders(text: &str) -> Result<Vec<&str>, String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        if rest[..open].contains("}}") {
            return Err(format!("`}}}}` without an opening `{{{{` in `{text}`"));
        }
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| format!("`{{{{` without a closing `}}}}` in `{text}`"))?;
        let name = after[..close].trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(format!(
                "`{{{{{}}}}}` is not a placeholder name (letters, digits, `_`, `.`)",
                &after[..close]
            ));
        }
        names.push(name);
        rest = &after[close + 2..];
    }
    if rest.contains("}}") {
        return Err(format!("`}}}}` without an opening `{{{{` in `{text}`"));
    }
    Ok(names)
}

impl Template {
    /// Compiles `text`, resolving each name with `resolve`; an unknown name
    /// is an error naming it.
    pub fn compile(text: &str, resolve: impl Fn(&str) -> Option<Var>) -> Result<Self, String> {
        placeholders(text)?;
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Text(rest[..open].into()));
            }
            let after = &rest[open + 2..];
            let close = after.find("}}").unwrap_or(after.len());
            let name = after[..close].trim();
            let var = resolve(name).ok_or_else(|| {
                format!(
                    "`{{{{{name}}}}}` is neither a built-in (user, iteration, random, agent) nor captured by any step"
                )
            })?;
            parts.push(Part::Var(var));
            rest = after.get(close + 2..).unwrap_or("");
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.into()));
        }
        Ok(Self { parts })
    }

    /// A template without placeholders.
    pub fn literal(text: &str) -> Self {
        Self {
            parts: vec![Part::Text(text.into())],
        }
    }

    /// Whether it has no placeholders (renders the same every time).
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }

    /// The captured slots it reads.
    pub fn captures(&self) -> impl Iterator<Item = u16> + '_ {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(Var::Capture(slot)) => Some(*slot),
            _ => None,
        })
    }

    /// Appends the rendering to `out`; a captured variable the player does
    /// not have yet is an error carrying its slot.
    pub fn render(
        &self,
        out: &mut String,
        values: &mut dyn Values,
        escape: Escape,
    ) -> Result<(), u16> {
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Var(Var::Builtin(b)) => {
                    let _ = write!(out, "{}", values.builtin(*b));
                }
                Part::Var(Var::Capture(slot)) => {
                    let v = values.capture(*slot).ok_or(*slot)?;
                    match escape {
                        Escape::None => out.push_str(v),
                        Escape::Json => escape_json(out, v),
                    }
                }
            }
        }
        Ok(())
    }
}

fn escape_json(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    struct Fixed(Vec<Option<String>>);
    impl Values for Fixed {
        fn builtin(&mut self, b: Builtin) -> u64 {
            match b {
                Builtin::User => 7,
                _ => 0,
            }
        }
        fn capture(&self, slot: u16) -> Option<&str> {
            self.0.get(slot as usize)?.as_deref()
        }
    }

    fn resolve(name: &str) -> Option<Var> {
        Builtin::named(name)
            .map(Var::Builtin)
            .or((name == "token").then_some(Var::Capture(0)))
    }

    #[test]
    fn renders_builtins_and_captures() {
        let t = Template::compile("/v1/players/{{user}}?t={{ token }}", resolve).unwrap();
        let mut out = String::new();
        t.render(&mut out, &mut Fixed(vec![Some("abc".into())]), Escape::None)
            .unwrap();
        assert_eq!(out, "/v1/players/7?t=abc");
        assert_eq!(t.captures().collect::<Vec<_>>(), vec![0]);
        assert!(!t.is_literal());
        assert!(Template::compile("/plain", resolve).unwrap().is_literal());
    }

    #[test]
    fn a_missing_capture_is_an_error_not_an_empty_string() {
        let t = Template::compile("Bearer {{token}}", resolve).unwrap();
        let mut out = String::new();
        assert_eq!(
            t.render(&mut out, &mut Fixed(vec![None]), Escape::None),
            Err(0)
        );
    }

    #[test]
    fn json_bodies_get_escaped_values() {
        let t = Template::compile(r#"{"name":"{{token}}"}"#, resolve).unwrap();
        let mut out = String::new();
        let mut v = Fixed(vec![Some("a\"b\\c\n".into())]);
        t.render(&mut out, &mut v, Escape::Json).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["name"], "a\"b\\c\n");
    }

    #[test]
    fn bad_templates_say_why() {
        assert!(
            Template::compile("{{nope}}", resolve)
                .unwrap_err()
                .contains("`{{nope}}`")
        );
        assert!(
            Template::compile("{{user", resolve)
                .unwrap_err()
                .contains("closing")
        );
        assert!(
            Template::compile("user}}", resolve)
                .unwrap_err()
                .contains("opening")
        );
        assert!(
            Template::compile("{{a b}}", resolve)
                .unwrap_err()
                .contains("not a placeholder")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn text_without_braces_renders_as_itself(s in "[^{}]{0,40}") {
            let t = Template::compile(&s, resolve).unwrap();
            let mut out = String::new();
            t.render(&mut out, &mut Fixed(vec![]), Escape::None).unwrap();
            prop_assert_eq!(out, s);
        }

        #[test]
        fn any_text_compiles_or_errs_without_panic(s in "\\PC{0,30}") {
            let _ = Template::compile(&s, resolve);
        }

        #[test]
        fn json_escaping_round_trips(v in "\\PC{0,20}") {
            let t = Template::compile(r#"{"v":"{{token}}"}"#, resolve).unwrap();
            let mut out = String::new();
            t.render(&mut out, &mut Fixed(vec![Some(v.clone())]), Escape::Json).unwrap();
            let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
            prop_assert_eq!(parsed["v"].as_str(), Some(v.as_str()));
        }
    }
}
