//! A link profile in a TOML file. Errors name the file, the line and
//! column, and the field at fault.
//!
//! ```toml
//! name = "train"          # for reports (default: the file's stem)
//! base = "mobile"         # start from a built-in (default: a perfect link)
//!
//! [both]                  # applies to each direction unless it sets its own
//! latency_ms = 60         # one way
//! jitter_ms = 20          # plus or minus, uniform; order is kept
//! loss = 0.01             # independent random loss, 0..=1
//! reorder = 0.001         # share held back by reorder_delay_ms
//! reorder_delay_ms = 10
//! duplicate = 0.001       # share delivered twice
//! rate_bytes_per_s = 250000   # bandwidth cap (0: none) ...
//! queue_bytes = 65536         # ... and the queue in front of it (tail drop)
//!
//! [both.bursts]           # Gilbert–Elliott loss, stepped once per datagram
//! enter = 0.01            # good -> bad
//! leave = 0.3             # bad -> good (mean spell 1/leave datagrams)
//! loss_bad = 1.0          # default 1
//! loss_good = 0.0         # default 0
//!
//! [both.outage]           # everything dropped for length_s every every_s
//! every_s = 30
//! length_s = 1
//! first_after_s = 10      # after the flow's first datagram (default every_s)
//!
//! [down]                  # server to client: overrides [both]
//! rate_bytes_per_s = 500000
//! ```
//!
//! `[up]` is client to server.

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use hightick_config::text_position::line_column;
use serde::Deserialize;
use toml::Spanned;

use crate::error::NetemError;
use crate::profile::{DirectionProfile, GilbertElliott, LinkProfile, Outage, RateLimit};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    name: Option<Spanned<String>>,
    base: Option<Spanned<String>>,
    #[serde(default)]
    both: RawDirection,
    #[serde(default)]
    up: RawDirection,
    #[serde(default)]
    down: RawDirection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDirection {
    latency_ms: Option<Spanned<f64>>,
    jitter_ms: Option<Spanned<f64>>,
    loss: Option<Spanned<f64>>,
    reorder: Option<Spanned<f64>>,
    reorder_delay_ms: Option<Spanned<f64>>,
    duplicate: Option<Spanned<f64>>,
    rate_bytes_per_s: Option<Spanned<u64>>,
    queue_bytes: Option<Spanned<u64>>,
    bursts: Option<RawBursts>,
    outage: Option<RawOutage>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBursts {
    enter: Spanned<f64>,
    leave: Spanned<f64>,
    loss_bad: Option<Spanned<f64>>,
    loss_good: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutage {
    every_s: Spanned<f64>,
    length_s: Spanned<f64>,
    first_after_s: Option<Spanned<f64>>,
}

/// Where each field set in the file is, to name it in errors.
struct Places<'a> {
    text: &'a str,
    file: &'a str,
    spans: Vec<(String, Range<usize>)>,
    /// Where fields not set in the file came from (`base`), if anywhere.
    fallback: Range<usize>,
}

impl Places<'_> {
    fn error(&self, span: Range<usize>, field: impl Into<String>, reason: &str) -> NetemError {
        let (line, column) = line_column(self.text, span.start);
        NetemError::FileField {
            file: self.file.to_owned(),
            line,
            column,
            field: field.into(),
            reason: reason.to_owned(),
        }
    }

    /// The error of a profile that failed validation, placed at its field.
    fn placed(&self, err: NetemError) -> NetemError {
        match err {
            NetemError::Invalid { field, reason } => {
                let span = self
                    .spans
                    .iter()
                    .rev()
                    .find(|(f, _)| *f == field)
                    .map_or(self.fallback.clone(), |(_, s)| s.clone());
                self.error(span, field, &reason)
            }
            other => other,
        }
    }
}

/// Reads the profile file at `path`.
pub fn load(path: &Path) -> Result<LinkProfile, NetemError> {
    let text = hightick_config::read(path)?;
    let stem = path
        .file_stem()
        .map_or_else(|| "file".to_owned(), |s| s.to_string_lossy().into_owned());
    parse(&text, &path.display().to_string(), &stem)
}

/// Parses profile text; `file` names it in errors, `default_name` is the
/// profile's name when the text gives none.
pub fn parse(text: &str, file: &str, default_name: &str) -> Result<LinkProfile, NetemError> {
    let raw: RawLink = hightick_config::parse_toml(text, file)?;
    let mut places = Places {
        text,
        file,
        spans: Vec::new(),
        fallback: 0..0,
    };
    let mut link = match &raw.base {
        Some(base) => {
            places.fallback = base.span();
            LinkProfile::builtin(base.get_ref()).map_err(|_| {
                places.error(
                    base.span(),
                    "base",
                    "must be a built-in link: lan, wifi, mobile or bad",
                )
            })?
        }
        None => LinkProfile {
            name: String::new(),
            up: DirectionProfile::PERFECT,
            down: DirectionProfile::PERFECT,
        },
    };
    link.name = raw
        .name
        .as_ref()
        .map_or_else(|| default_name.to_owned(), |n| n.get_ref().clone());
    for (path, direction) in [("up", &mut link.up), ("down", &mut link.down)] {
        apply(&mut places, path, &raw.both, direction)?;
        let own = if path == "up" { &raw.up } else { &raw.down };
        apply(&mut places, path, own, direction)?;
    }
    link.validate().map_err(|e| places.placed(e))?;
    Ok(link)
}

/// Sets the fields `raw` sets on `to`, noting where each came from under
/// the name `path.field`.
fn apply(
    places: &mut Places<'_>,
    path: &str,
    raw: &RawDirection,
    to: &mut DirectionProfile,
) -> Result<(), NetemError> {
    let note = |places: &mut Places<'_>, field: &str, span: Range<usize>| {
        let name = format!("{path}.{field}");
        places.spans.push((name.clone(), span));
        name
    };
    let duration = |places: &Places<'_>, name: String, v: &Spanned<f64>, scale: f64| {
        Duration::try_from_secs_f64(*v.get_ref() * scale)
            .map_err(|_| places.error(v.span(), name, "must be a finite number, 0 or more"))
    };
    if let Some(v) = &raw.latency_ms {
        let name = note(places, "latency_ms", v.span());
        to.latency = duration(places, name, v, 1e-3)?;
    }
    if let Some(v) = &raw.jitter_ms {
        let name = note(places, "jitter_ms", v.span());
        to.jitter = duration(places, name, v, 1e-3)?;
    }
    if let Some(v) = &raw.reorder_delay_ms {
        let name = note(places, "reorder_delay_ms", v.span());
        to.reorder_delay = duration(places, name, v, 1e-3)?;
    }
    for (field, value, target) in [
        ("loss", &raw.loss, &mut to.loss),
        ("reorder", &raw.reorder, &mut to.reorder),
        ("duplicate", &raw.duplicate, &mut to.duplicate),
    ] {
        if let Some(v) = value {
            note(places, field, v.span());
            *target = *v.get_ref();
        }
    }
    apply_rate(places, path, raw, to);
    if let Some(b) = &raw.bursts {
        note(places, "bursts.enter", b.enter.span());
        note(places, "bursts.leave", b.leave.span());
        let mut ge = GilbertElliott {
            enter: *b.enter.get_ref(),
            leave: *b.leave.get_ref(),
            loss_bad: 1.0,
            loss_good: 0.0,
        };
        if let Some(v) = &b.loss_bad {
            note(places, "bursts.loss_bad", v.span());
            ge.loss_bad = *v.get_ref();
        }
        if let Some(v) = &b.loss_good {
            note(places, "bursts.loss_good", v.span());
            ge.loss_good = *v.get_ref();
        }
        to.bursts = Some(ge);
    }
    if let Some(o) = &raw.outage {
        let every_name = note(places, "outage.every_s", o.every_s.span());
        let length_name = note(places, "outage.length_s", o.length_s.span());
        let every = duration(places, every_name, &o.every_s, 1.0)?;
        let first_after = match &o.first_after_s {
            Some(v) => {
                let name = note(places, "outage.first_after_s", v.span());
                duration(places, name, v, 1.0)?
            }
            None => every,
        };
        to.outage = Some(Outage {
            every,
            length: duration(places, length_name, &o.length_s, 1.0)?,
            first_after,
        });
    }
    Ok(())
}

/// The bandwidth cap part of [`apply`]: a rate of 0 removes the cap; a
/// queue without a cap of its own keeps the inherited one's rate.
fn apply_rate(places: &mut Places<'_>, path: &str, raw: &RawDirection, to: &mut DirectionProfile) {
    if let Some(v) = &raw.rate_bytes_per_s {
        places
            .spans
            .push((format!("{path}.rate_bytes_per_s"), v.span()));
        to.rate = match *v.get_ref() {
            0 => None,
            bytes_per_s => Some(RateLimit {
                bytes_per_s,
                queue_bytes: to.rate.map_or(64 * 1024, |r| r.queue_bytes),
            }),
        };
    }
    if let Some(v) = &raw.queue_bytes {
        places.spans.push((format!("{path}.queue_bytes"), v.span()));
        if let Some(r) = &mut to.rate {
            r.queue_bytes = *v.get_ref();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_parses() {
        let source = include_str!("profile_file.rs");
        let text = hightick_config::text_position::doc_block(source, "toml").unwrap();
        let link = parse(&text, "train.toml", "train").unwrap();
        assert_eq!(link.name, "train");
        assert_eq!(link.up.latency, Duration::from_millis(60));
        assert_eq!(link.down.rate.unwrap().bytes_per_s, 500_000);
        assert_eq!(link.up.rate.unwrap().bytes_per_s, 250_000);
        assert_eq!(link.up.rate.unwrap().queue_bytes, 65_536);
        assert_eq!(
            link.down.outage.unwrap().first_after,
            Duration::from_secs(10)
        );
        assert_eq!(link.up.bursts.unwrap().leave, 0.3);
    }

    #[test]
    fn a_file_starts_from_its_base_and_overrides_one_direction() {
        let link = parse("base = \"wifi\"\n[down]\nloss = 0.05\n", "f.toml", "f").unwrap();
        assert_eq!(link.name, "f");
        assert_eq!(link.up, LinkProfile::builtin("wifi").unwrap().up);
        assert_eq!(link.down.loss, 0.05);
        assert_eq!(link.down.latency, Duration::from_millis(15));
        let empty = parse("", "e.toml", "e").unwrap();
        assert_eq!(empty.up, DirectionProfile::PERFECT);
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let err = parse("[both]\nlatency_ms = 5\nloss = 1.5\n", "x.toml", "x").unwrap_err();
        assert_eq!(err.to_string(), "x.toml:3:8: `up.loss` must be in 0..=1");
        let err = parse("[down]\njitter_ms = -3\n", "x.toml", "x").unwrap_err();
        assert!(
            err.to_string().starts_with("x.toml:2:13: `down.jitter_ms`"),
            "{err}"
        );
        let err = parse("[up]\nlatency = 5\n", "x.toml", "x").unwrap_err();
        assert!(err.to_string().starts_with("x.toml:2:1:"), "{err}");
        assert!(err.to_string().contains("latency"), "{err}");
        let err = parse("base = \"moon\"\n", "x.toml", "x").unwrap_err();
        assert!(err.to_string().starts_with("x.toml:1:8: `base`"), "{err}");
        let err = parse("[up.outage]\nevery_s = 2\nlength_s = 3\n", "x.toml", "x").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("x.toml:3:12: `up.outage.length_s`"),
            "{err}"
        );
        let err = load(Path::new("/nonexistent/link.toml")).unwrap_err();
        assert!(
            err.to_string().starts_with("/nonexistent/link.toml"),
            "{err}"
        );
    }
}
