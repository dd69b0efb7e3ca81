//! Durations as people write them in scenario files: `"7.5s"`, `"250ms"`,
//! `"1m30s"`, `"2h"`. A number without a unit is an error (seconds or
//! milliseconds? the file should say).

use std::time::Duration;

/// Parses `"1.5s"`, `"250ms"`, `"1m30s"`, `"100us"`, `"0s"`. Units: `ns`,
/// `us`, `ms`, `s`, `m`, `h`; each part is a decimal number and a unit.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty duration (write e.g. \"250ms\", \"7.5s\", \"1m30s\")".to_owned());
    }
    let mut total = 0.0_f64;
    let mut rest = s;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 {
            return Err(format!("`{text}`: expected a number at `{rest}`"));
        }
        let number: f64 = rest[..number_len]
            .parse()
            .map_err(|_| format!("`{text}`: `{}` is not a number", &rest[..number_len]))?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => return Err(format!("`{text}`: a unit is missing (ns, us, ms, s, m, h)")),
            other => {
                return Err(format!(
                    "`{text}`: unknown unit `{other}` (ns, us, ms, s, m, h)"
                ));
            }
        };
        total += number * scale;
        rest = rest[unit_len..].trim_start();
    }
    if !total.is_finite() || total > 1e9 {
        return Err(format!("`{text}`: too long"));
    }
    Ok(Duration::from_secs_f64(total))
}

/// Writes a duration the way [`parse_duration`] reads it, compactly.
pub fn format_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us == 0 {
        "0s".to_owned()
    } else if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1_000) {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

/// A duration field in a scenario file, read from a string like `"7.5s"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct DurationText(pub Duration);

impl<'de> serde::Deserialize<'de> for DurationText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = DurationText;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a duration string such as \"250ms\", \"7.5s\" or \"1m30s\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DurationText, E> {
                parse_duration(v).map(DurationText).map_err(E::custom)
            }
        }
        d.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_the_usual_forms() {
        assert_eq!(parse_duration("7.5s"), Ok(Duration::from_millis(7_500)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7_200)));
        assert_eq!(parse_duration("100us"), Ok(Duration::from_micros(100)));
        assert_eq!(parse_duration(" 0s "), Ok(Duration::ZERO));
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for bad in ["", "7", "s", "5 parsecs", "1.2.3s", "-1s", "1e3s", "ms"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("7").unwrap_err().contains("unit is missing"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn formatted_durations_read_back(us in 0u64..10_000_000_000) {
            let d = Duration::from_micros(us);
            prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }

        #[test]
        fn any_text_is_an_answer_not_a_panic(s in "\\PC{0,12}") {
            let _ = parse_duration(&s);
        }
    }
}
