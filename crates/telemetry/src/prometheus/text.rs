//! [`Exposition`]: the one Prometheus text (format 0.0.4) writer every
//! `/metrics` in the workspace uses: `# HELP` and `# TYPE` once per family,
//! samples with escaped label values, and histograms whose bucket bounds are
//! in the family's base unit (seconds, bytes).
//!
//! Names follow Prometheus conventions: base units in the name (`_seconds`,
//! `_bytes`), `_total` on counters and only on counters. [`Exposition::family`]
//! refuses a name that breaks them, so a badly named family fails the first
//! test that renders it rather than a dashboard later.

use std::fmt::{self, Display, Write};

/// The `Content-Type` of a `/metrics` answer.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What a family is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (resets on restart); its name ends in `_total`.
    Counter,
    /// Goes up and down.
    Gauge,
    /// Cumulative buckets (`_bucket{le=..}`), `_sum` and `_count`.
    Histogram,
}

impl Kind {
    /// Its name in `# TYPE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram => "histogram",
        }
    }
}

/// Name endings that carry a unit other than the base one.
const NON_BASE_UNITS: [&str; 10] = [
    "_ms",
    "_us",
    "_ns",
    "_millis",
    "_milliseconds",
    "_microseconds",
    "_nanoseconds",
    "_minutes",
    "_kb",
    "_mb",
];

/// Why `name` may not name a family of `kind`, if it may not: not
/// `[a-zA-Z_:][a-zA-Z0-9_:]*`, a counter without `_total`, `_total` on
/// anything else, or a unit that is not a base unit.
pub fn name_problem(name: &str, kind: Kind) -> Option<String> {
    let mut chars = name.chars();
    let well_formed = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
    if !well_formed {
        return Some(format!("`{name}` is not a metric name"));
    }
    let total = name.ends_with("_total");
    if kind == Kind::Counter && !total {
        return Some(format!("counter `{name}` must end in `_total`"));
    }
    if kind != Kind::Counter && total {
        return Some(format!(
            "{} `{name}` must not end in `_total`",
            kind.as_str()
        ));
    }
    let stem = name.strip_suffix("_total").unwrap_or(name);
    if let Some(unit) = NON_BASE_UNITS.iter().find(|u| stem.ends_with(*u)) {
        return Some(format!(
            "`{name}` carries `{unit}`: use the base unit (`_seconds`, `_bytes`)"
        ));
    }
    None
}

/// Writes Prometheus text into `out`. See the [module docs](self).
///
/// ```
/// use hightick_telemetry::prometheus::text::{Exposition, Kind};
///
/// let mut body = String::new();
/// let mut m = Exposition::new(&mut body);
/// m.gauge("hightick_matches", "Matches hosted.", 3)?;
/// m.family("hightick_drops_total", Kind::Counter, "Drops, by reason.")?;
/// m.sample("hightick_drops_total", &[("reason", "replay")], 2)?;
/// m.family("x_seconds", Kind::Histogram, "How long.")?;
/// m.histogram("x_seconds", &[], [(0.001, 1), (0.01, 4)], 5, 0.07)?;
/// assert!(body.contains("# TYPE hightick_matches gauge\nhightick_matches 3\n"));
/// assert!(body.contains("hightick_drops_total{reason=\"replay\"} 2\n"));
/// assert!(body.contains("x_seconds_bucket{le=\"0.01\"} 4\nx_seconds_bucket{le=\"+Inf\"} 5\n"));
/// # Ok::<(), std::fmt::Error>(())
/// ```
#[derive(Debug)]
pub struct Exposition<'w, W: Write> {
    out: &'w mut W,
}

impl<'w, W: Write> Exposition<'w, W> {
    /// A writer appending to `out`.
    pub fn new(out: &'w mut W) -> Self {
        Self { out }
    }

    /// Starts a family: its `# HELP` and `# TYPE` lines. A name that breaks
    /// the conventions ([`name_problem`]) is an error.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) -> fmt::Result {
        if name_problem(name, kind).is_some() {
            return Err(fmt::Error);
        }
        write!(self.out, "# HELP {name} ")?;
        for c in help.chars() {
            match c {
                '\\' => self.out.write_str("\\\\")?,
                '\n' => self.out.write_str("\\n")?,
                c => self.out.write_char(c)?,
            }
        }
        writeln!(self.out)?;
        writeln!(self.out, "# TYPE {name} {}", kind.as_str())
    }

    /// A family of one unlabelled counter sample.
    pub fn counter(&mut self, name: &str, help: &str, value: impl Display) -> fmt::Result {
        self.family(name, Kind::Counter, help)?;
        self.sample(name, &[], value)
    }

    /// A family of one unlabelled gauge sample.
    pub fn gauge(&mut self, name: &str, help: &str, value: impl Display) -> fmt::Result {
        self.family(name, Kind::Gauge, help)?;
        self.sample(name, &[], value)
    }

    /// One sample of the current family.
    pub fn sample(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        value: impl Display,
    ) -> fmt::Result {
        self.sample_with(name, labels, &[], value)
    }

    /// One sample whose labels are `labels` then `extra`.
    pub fn sample_with(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        extra: &[(&str, &str)],
        value: impl Display,
    ) -> fmt::Result {
        self.out.write_str(name)?;
        let mut all = labels.iter().chain(extra).peekable();
        if all.peek().is_some() {
            self.out.write_char('{')?;
            for (i, (k, v)) in all.enumerate() {
                if i > 0 {
                    self.out.write_char(',')?;
                }
                write!(self.out, "{k}=\"")?;
                for c in v.chars() {
                    match c {
                        '\\' => self.out.write_str("\\\\")?,
                        '"' => self.out.write_str("\\\"")?,
                        '\n' => self.out.write_str("\\n")?,
                        c => self.out.write_char(c)?,
                    }
                }
                self.out.write_char('"')?;
            }
            self.out.write_char('}')?;
        }
        writeln!(self.out, " {value}")
    }

    /// One histogram series of the current family: `buckets` are (upper
    /// bound in the base unit, cumulative count) in rising order; the
    /// `+Inf` bucket is `count`; `sum` is in the base unit.
    pub fn histogram(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        buckets: impl IntoIterator<Item = (f64, u64)>,
        count: u64,
        sum: f64,
    ) -> fmt::Result {
        let mut series = String::with_capacity(name.len() + 7);
        series.push_str(name);
        series.push_str("_bucket");
        let mut le = String::with_capacity(24);
        for (bound, cumulative) in buckets {
            le.clear();
            write!(le, "{bound}")?;
            self.sample_with(&series, labels, &[("le", &le)], cumulative)?;
        }
        self.sample_with(&series, labels, &[("le", "+Inf")], count)?;
        series.truncate(name.len());
        series.push_str("_sum");
        self.sample(&series, labels, sum)?;
        series.truncate(name.len());
        series.push_str("_count");
        self.sample(&series, labels, count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_conventions() {
        assert_eq!(
            name_problem("hightick_bytes_sent_total", Kind::Counter),
            None
        );
        assert_eq!(
            name_problem("hightick_admission_seconds", Kind::Histogram),
            None
        );
        assert_eq!(
            name_problem("process_cpu_seconds_total", Kind::Counter),
            None
        );
        for (name, kind) in [
            ("hightick_bytes_sent", Kind::Counter),
            ("hightick_matches_total", Kind::Gauge),
            ("hightick_wait_ms", Kind::Histogram),
            ("hightick_rtt_us_total", Kind::Counter),
            ("1x", Kind::Gauge),
            ("a-b", Kind::Gauge),
            ("", Kind::Gauge),
        ] {
            assert!(name_problem(name, kind).is_some(), "{name}");
        }
        let mut body = String::new();
        let mut m = Exposition::new(&mut body);
        assert!(m.counter("hightick_sent", "no suffix", 1).is_err());
        assert!(body.is_empty());
    }

    #[test]
    fn help_and_label_values_are_escaped() {
        let mut body = String::new();
        let mut m = Exposition::new(&mut body);
        m.family("a_total", Kind::Counter, "two\nlines \\ here")
            .unwrap();
        m.sample("a_total", &[("mode", "a\"b\\c\nd")], 1).unwrap();
        assert_eq!(
            body,
            "# HELP a_total two\\nlines \\\\ here\n# TYPE a_total counter\na_total{mode=\"a\\\"b\\\\c\\nd\"} 1\n"
        );
    }

    #[test]
    fn a_histogram_ends_with_inf_sum_and_count() {
        let mut body = String::new();
        let mut m = Exposition::new(&mut body);
        m.family("w_seconds", Kind::Histogram, "wait").unwrap();
        m.histogram(
            "w_seconds",
            &[("queue", "5v5")],
            [(0.5, 1), (1.0, 2)],
            3,
            2.25,
        )
        .unwrap();
        let want = "w_seconds_bucket{queue=\"5v5\",le=\"0.5\"} 1\n\
                    w_seconds_bucket{queue=\"5v5\",le=\"1\"} 2\n\
                    w_seconds_bucket{queue=\"5v5\",le=\"+Inf\"} 3\n\
                    w_seconds_sum{queue=\"5v5\"} 2.25\n\
                    w_seconds_count{queue=\"5v5\"} 3\n";
        assert!(body.ends_with(want), "{body}");
    }
}
