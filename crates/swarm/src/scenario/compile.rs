//! Turning the raw file into a [`Scenario`]: defaults, cross-field checks
//! (targets, variables, thresholds naming steps) and errors that point at
//! the line and field.

use hightick_config::text_position::line_column;
use std::net::IpAddr;
use std::ops::Range;
use std::time::Duration;

use http::{HeaderName, Method};
use toml::Spanned;

use super::raw::{self, Model, RawRetry, RawScenario, RawStep};
use super::template::{Builtin, Template, Var};
use super::think::ThinkTime;
use super::{
    Behaviour, Capture, HttpSettings, HttpStep, MatchSettings, MatchStep, PushWait, Scenario,
    Stampede, Step, StepKind, TargetSpec, TargetUrl, duration,
};
use crate::bots::link::LinkPlan;
use crate::error::SwarmError;
use crate::pacing::PacingConfig;
use crate::request_log::RequestLogConfig;
use crate::retry::RetryPolicy;
use crate::threshold::{Bound, Metric, Threshold, Unit};

#[derive(Clone, Copy)]
pub(super) struct Locator<'a> {
    pub text: &'a str,
    pub file: &'a str,
}

impl Locator<'_> {
    pub(super) fn error_at(
        &self,
        span: Option<Range<usize>>,
        field: &str,
        message: &str,
    ) -> SwarmError {
        let (line, column) = span.map_or((1, 1), |s| line_column(self.text, s.start));
        SwarmError::Scenario {
            file: self.file.to_owned(),
            line,
            column,
            field: if field.is_empty() || field == "." {
                "(document)".to_owned()
            } else {
                field.to_owned()
            },
            message: message.trim().to_owned(),
        }
    }
}

pub(super) struct Compiler<'a> {
    at: Locator<'a>,
    step_names: Vec<String>,
    variables: Vec<String>,
}

type Compiled<T> = Result<T, SwarmError>;

impl<'a> Compiler<'a> {
    pub(super) fn new(at: Locator<'a>) -> Self {
        Self {
            at,
            step_names: Vec::new(),
            variables: Vec::new(),
        }
    }

    fn err<T>(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> Compiled<T> {
        Err(self.at.error_at(Some(span), field, &message.into()))
    }

    /// Compiles the raw file into a [`Scenario`], checking its sections in order.
    pub(super) fn compile(mut self, raw: RawScenario) -> Compiled<Scenario> {
        let file = self.at.file.to_owned();
        let (users, arrival_rate) = self.population(&raw)?;
        let (duration, interval) = self.timing(&raw)?;
        let stampede = self.stampede(&raw)?;
        let drivers = self.drivers(&raw)?;
        let targets = self.targets(&raw)?;
        let http = self.http(&raw)?;
        let retry = match &raw.retry {
            Some(r) => self.retry(r, &RetryPolicy::default(), "retry")?,
            None => RetryPolicy::default(),
        };
        let matches = self.match_settings(&raw)?;
        let link = match &raw.link {
            Some(l) => Some(self.link(l)?),
            None => None,
        };
        self.declare_variables(&raw)?;

        let default_think = raw.think.unwrap_or_default();
        let mut setup = Vec::new();
        for (i, step) in raw.setup.iter().enumerate() {
            setup.push(self.step(
                step,
                &format!("setup[{i}]"),
                default_think,
                &targets,
                &http,
                &retry,
            )?);
        }
        let behaviours = self.behaviours(&raw, default_think, &targets, &http, &retry)?;
        self.check_step_counts(&setup, &behaviours)?;

        let pacing = match &raw.pacing {
            None => None,
            Some(p) => {
                Some(self.pacing(p, raw.model, arrival_rate, users, default_think, interval)?)
            }
        };

        let request_log = match &raw.request_log {
            None => None,
            Some(l) => Some(self.request_log(l)?),
        };

        let mut thresholds = Vec::new();
        for (i, t) in raw.threshold.iter().enumerate() {
            thresholds.push(self.threshold(t, i)?);
        }

        Ok(Scenario {
            name: raw.name.unwrap_or_else(|| {
                std::path::Path::new(&file)
                    .file_stem()
                    .map_or(file.clone(), |s| s.to_string_lossy().into_owned())
            }),
            text: self.at.text.to_owned(),
            file,
            model: raw.model,
            users,
            arrival_rate,
            ramp_up: raw.ramp_up.unwrap_or_default().0,
            stampede,
            duration,
            interval,
            drivers,
            targets,
            setup,
            behaviours,
            step_names: self.step_names,
            variables: self.variables,
            pacing,
            http,
            matches,
            link,
            thresholds,
            request_log,
        })
    }

    /// The players: `users` and, for an open model, its `arrival_rate` (else 0).
    fn population(&self, raw: &RawScenario) -> Compiled<(u64, f64)> {
        let users = *raw.users.get_ref();
        if users == 0 {
            return self.err(raw.users.span(), "users", "at least 1 player");
        }
        let arrival_rate = match (raw.model, &raw.arrival_rate) {
            (Model::Open, Some(r)) if *r.get_ref() > 0.0 && r.get_ref().is_finite() => *r.get_ref(),
            (Model::Open, Some(r)) => return self.err(r.span(), "arrival_rate", "above 0"),
            (Model::Open, None) => {
                return self.err(
                    0..0,
                    "arrival_rate",
                    "an open model needs arrival_rate (players arriving per second)",
                );
            }
            (Model::Closed, Some(r)) => {
                return self.err(
                    r.span(),
                    "arrival_rate",
                    "only for model = \"open\" (a closed model has users and think times)",
                );
            }
            (Model::Closed, None) => 0.0,
        };
        Ok((users, arrival_rate))
    }

    /// A closed model's `stampede`: a share in `(0, 1]` within a window
    /// longer than zero.
    fn stampede(&self, raw: &RawScenario) -> Compiled<Option<Stampede>> {
        let Some(s) = &raw.stampede else {
            return Ok(None);
        };
        if raw.model != Model::Closed {
            return self.err(
                s.span(),
                "stampede",
                "only for model = \"closed\" (an open model's arrivals follow arrival_rate)",
            );
        }
        let share = *s.get_ref().share.get_ref();
        if !(share > 0.0 && share <= 1.0) {
            return self.err(s.get_ref().share.span(), "stampede.share", "in (0, 1]");
        }
        let within = s.get_ref().within.0;
        if within.is_zero() {
            return self.err(s.span(), "stampede.within", "longer than 0s");
        }
        Ok(Some(Stampede { share, within }))
    }

    /// The run's `duration` and its sampling `interval` (1s unless set).
    fn timing(&self, raw: &RawScenario) -> Compiled<(Duration, Duration)> {
        let duration = raw.duration.get_ref().0;
        if duration.is_zero() {
            return self.err(raw.duration.span(), "duration", "longer than 0s");
        }
        let interval = match &raw.interval {
            Some(i) if i.get_ref().0 < Duration::from_millis(50) => {
                return self.err(i.span(), "interval", "at least 50ms");
            }
            Some(i) => i.get_ref().0,
            None => Duration::from_secs(1),
        };
        Ok((duration, interval))
    }

    /// The number of driver threads (0 unless set, at most 1024).
    fn drivers(&self, raw: &RawScenario) -> Compiled<usize> {
        match &raw.drivers {
            Some(d) if *d.get_ref() > 1024 => self.err(d.span(), "drivers", "at most 1024"),
            Some(d) => Ok(*d.get_ref()),
            None => Ok(0),
        }
    }

    /// The `[targets]`, each name with its parsed URL or URLs.
    fn targets(&self, raw: &RawScenario) -> Compiled<Vec<TargetSpec>> {
        let mut targets = Vec::new();
        for (name, value) in &raw.targets {
            let field = format!("targets.{name}");
            let at = value.span();
            let spec = match value.get_ref() {
                toml::Value::String(url) => TargetSpec::parse(name, url),
                toml::Value::Array(list) if list.is_empty() => {
                    return self.err(at, &field, "an empty list: give at least one URL");
                }
                toml::Value::Array(list) => {
                    let mut urls = Vec::with_capacity(list.len());
                    for (i, entry) in list.iter().enumerate() {
                        let url = match entry.as_str() {
                            Some(url) => TargetUrl::parse(url),
                            None => Err(format!("a URL string, not {}", entry.type_str())),
                        };
                        match url {
                            Ok(url) => urls.push(url),
                            Err(m) => return self.err(at, &format!("{field}[{i}]"), m),
                        }
                    }
                    let written: Vec<&str> = urls.iter().map(|u| u.url.as_str()).collect();
                    Ok(TargetSpec {
                        name: name.clone(),
                        url: written.join(", "),
                        urls,
                    })
                }
                other => Err(format!(
                    "a URL string or a list of them, not {}",
                    other.type_str()
                )),
            };
            match spec {
                Ok(t) => targets.push(t),
                Err(m) => return self.err(at, &field, m),
            }
        }
        Ok(targets)
    }

    /// The `[matches]` settings (mode, settings, tick rate, seed), else the defaults.
    fn match_settings(&self, raw: &RawScenario) -> Compiled<MatchSettings> {
        let Some(m) = &raw.matches else {
            return Ok(MatchSettings::default());
        };
        let defaults = MatchSettings::default();
        let tick_rate_hz = match &m.tick_rate_hz {
            Some(t) if !(1..=1000).contains(t.get_ref()) => {
                return self.err(t.span(), "matches.tick_rate_hz", "between 1 and 1000");
            }
            Some(t) => *t.get_ref(),
            None => defaults.tick_rate_hz,
        };
        let settings = match &m.settings {
            None => serde_json::Value::Null,
            Some(table) => match serde_json::to_value(table) {
                Ok(value) => value,
                Err(e) => return self.err(0..0, "matches.settings", e.to_string()),
            },
        };
        Ok(MatchSettings {
            mode: m.mode.clone(),
            settings,
            tick_rate_hz,
            seed: m.seed.unwrap_or(defaults.seed),
        })
    }

    /// The `link` key: a link's name or file, or a table of `profile`,
    /// `share` and `seed`.
    fn link(&self, raw: &Spanned<toml::Value>) -> Compiled<LinkPlan> {
        let span = raw.span();
        let (link, share, seed) = match raw.get_ref() {
            toml::Value::String(name) => (name.clone(), 1.0, 1),
            toml::Value::Table(t) => {
                if let Some(key) = t
                    .keys()
                    .find(|k| !["profile", "share", "seed"].contains(&k.as_str()))
                {
                    return self.err(
                        span,
                        &format!("link.{key}"),
                        "unknown key (profile, share, seed)",
                    );
                }
                let Some(toml::Value::String(name)) = t.get("profile") else {
                    return self.err(
                        span,
                        "link.profile",
                        "a link's name (lan, wifi, mobile, bad) or a profile file",
                    );
                };
                let share = match t.get("share") {
                    None => 1.0,
                    Some(toml::Value::Float(f)) => *f,
                    Some(toml::Value::Integer(i)) => *i as f64,
                    Some(_) => return self.err(span, "link.share", "a number in 0..=1"),
                };
                if !(0.0..=1.0).contains(&share) {
                    return self.err(span, "link.share", "a number in 0..=1");
                }
                let seed = match t.get("seed") {
                    None => 1,
                    Some(toml::Value::Integer(i)) if *i >= 0 => *i as u64,
                    Some(_) => return self.err(span, "link.seed", "a whole number, 0 or more"),
                };
                (name.clone(), share, seed)
            }
            _ => {
                return self.err(
                    span,
                    "link",
                    "a link's name or a table (profile, share, seed)",
                );
            }
        };
        match hightick_netem::link_named(&link) {
            Ok(profile) => Ok(LinkPlan {
                link,
                profile,
                share,
                seed,
            }),
            Err(e) => self.err(span, "link", e.to_string()),
        }
    }

    /// Declares every variable any step captures, refusing captures into a built-in.
    fn declare_variables(&mut self, raw: &RawScenario) -> Compiled<()> {
        // Variables first, so a step may use what a later step captures
        // (a behaviour's loop comes round again).
        let all_raw_steps = raw
            .setup
            .iter()
            .chain(raw.behaviour.iter().flat_map(|b| &b.step));
        for step in all_raw_steps {
            for name in step.capture.keys().chain(step.wait_capture.keys()) {
                if !self.variables.contains(name) {
                    self.variables.push(name.clone());
                }
            }
        }
        let setup_captures = raw.setup.iter().map(|s| (s, "setup".to_owned()));
        let behaviour_captures = raw.behaviour.iter().enumerate().flat_map(|(b, beh)| {
            beh.step
                .iter()
                .map(move |s| (s, format!("behaviour[{b}].step")))
        });
        for (step, path) in setup_captures.chain(behaviour_captures) {
            if let Some((name, pointer)) = step
                .capture
                .iter()
                .chain(&step.wait_capture)
                .find(|(name, _)| Builtin::named(name).is_some())
            {
                return self.err(
                    pointer.span(),
                    &format!("{path}.capture.{name}"),
                    format!("`{name}` is a built-in; capture into another name"),
                );
            }
        }
        Ok(())
    }

    /// Compiles each `[[behaviour]]` with its steps, think time and weight.
    fn behaviours(
        &mut self,
        raw: &RawScenario,
        default_think: ThinkTime,
        targets: &[TargetSpec],
        http: &HttpSettings,
        retry: &RetryPolicy,
    ) -> Compiled<Vec<Behaviour>> {
        let mut behaviours = Vec::new();
        for (b, beh) in raw.behaviour.iter().enumerate() {
            let think = beh.think.unwrap_or(default_think);
            let weight = beh.weight.as_ref().map_or(1, |w| *w.get_ref());
            if beh.step.is_empty() {
                return self.err(
                    0..0,
                    &format!("behaviour[{b}].step"),
                    format!("behaviour `{}` has no steps", beh.name),
                );
            }
            let mut steps = Vec::new();
            for (s, step) in beh.step.iter().enumerate() {
                steps.push(self.step(
                    step,
                    &format!("behaviour[{b}].step[{s}]"),
                    think,
                    targets,
                    http,
                    retry,
                )?);
            }
            behaviours.push(Behaviour {
                name: beh.name.clone(),
                weight,
                steps,
            });
        }
        Ok(behaviours)
    }

    /// Checks that some behaviour can be picked, that the step names fit, and that
    /// there is a step at all.
    fn check_step_counts(&self, setup: &[Step], behaviours: &[Behaviour]) -> Compiled<()> {
        if !behaviours.is_empty() && behaviours.iter().all(|b| b.weight == 0) {
            return self.err(
                0..0,
                "behaviour[0].weight",
                "every weight is 0: nothing to pick",
            );
        }
        if self.step_names.len() > 1024 {
            return self.err(0..0, "behaviour", "more than 1024 distinct step names");
        }
        if setup.is_empty() && behaviours.is_empty() {
            return self.err(
                0..0,
                "behaviour",
                "no steps at all: add [[setup]] or [[behaviour]] with [[behaviour.step]]",
            );
        }
        Ok(())
    }

    fn request_log(&self, l: &raw::RawRequestLog) -> Compiled<RequestLogConfig> {
        if l.path.get_ref().trim().is_empty() {
            return self.err(
                l.path.span(),
                "request_log.path",
                "a file path, e.g. \"requests.log\"",
            );
        }
        let mut config = RequestLogConfig::at(l.path.get_ref());
        if let Some(r) = &l.rotate_bytes {
            if *r.get_ref() < 4096 {
                return self.err(r.span(), "request_log.rotate_bytes", "at least 4096");
            }
            config.rotate_bytes = *r.get_ref();
        }
        if let Some(k) = &l.keep {
            if *k.get_ref() > 10_000 {
                return self.err(k.span(), "request_log.keep", "at most 10000 rotated files");
            }
            config.keep = *k.get_ref();
        }
        Ok(config)
    }

    fn http(&self, raw: &RawScenario) -> Compiled<HttpSettings> {
        let mut http = HttpSettings::default();
        let Some(h) = &raw.http else {
            return Ok(http);
        };
        if let Some(c) = &h.connections {
            if !(1..=16_384).contains(c.get_ref()) {
                return self.err(c.span(), "http.connections", "between 1 and 16384");
            }
            http.connections = *c.get_ref();
        }
        if let Some(t) = h.timeout {
            http.timeout = t.0;
        }
        for (i, s) in h.source_addresses.iter().enumerate() {
            match parse_sources(s.get_ref()) {
                Ok(mut ips) => http.sources.append(&mut ips),
                Err(m) => return self.err(s.span(), &format!("http.source_addresses[{i}]"), m),
            }
        }
        if let Some(ca) = &h.ca_file {
            let path = std::path::PathBuf::from(ca.get_ref());
            // Read now, so that `swarm check` and the start of a run say
            // what is wrong with it.
            if let Err(m) = crate::tls::TlsClient::new(Some(&path)) {
                return self.err(ca.span(), "http.ca_file", &m);
            }
            http.ca_file = Some(path);
        }
        Ok(http)
    }

    fn retry(&self, r: &RawRetry, base: &RetryPolicy, path: &str) -> Compiled<RetryPolicy> {
        let mut policy = base.clone();
        if let Some(a) = &r.attempts {
            if !(1..=100).contains(a.get_ref()) {
                return self.err(a.span(), &format!("{path}.attempts"), "between 1 and 100");
            }
            policy.attempts = *a.get_ref();
        }
        if let Some(b) = r.backoff {
            policy.backoff = b.0;
        }
        if let Some(m) = r.max_backoff {
            policy.max_backoff = m.0;
        }
        if let Some(s) = &r.on_status {
            policy.on_status = s.clone();
        }
        Ok(policy)
    }

    fn pacing(
        &self,
        p: &raw::RawPacing,
        model: Model,
        arrival_rate: f64,
        users: u64,
        think: ThinkTime,
        interval: Duration,
    ) -> Compiled<PacingConfig> {
        let intervals = |d: Duration| d.as_secs_f64() / interval.as_secs_f64();
        let target = p.target_response_time.get_ref().0;
        if target.is_zero() {
            return self.err(
                p.target_response_time.span(),
                "pacing.target_response_time",
                "longer than 0s",
            );
        }
        let natural = match model {
            Model::Open => arrival_rate,
            Model::Closed => users as f64 / think.mean().as_secs_f64().max(0.001),
        };
        let mut c = PacingConfig::new(target, (natural / 10.0).max(1.0));
        c.max_rate = natural.max(1.0);
        let positive = |v: &Option<Spanned<f64>>, field: &str| -> Compiled<Option<f64>> {
            match v {
                Some(x) if !(*x.get_ref() > 0.0 && x.get_ref().is_finite()) => {
                    self.err(x.span(), &format!("pacing.{field}"), "above 0")
                }
                Some(x) => Ok(Some(*x.get_ref())),
                None => Ok(None),
            }
        };
        if let Some(pc) = &p.percentile {
            let v = *pc.get_ref();
            if !(v > 0.0 && v <= 100.0) {
                return self.err(pc.span(), "pacing.percentile", "in (0, 100], e.g. 99");
            }
            c.quantile = v / 100.0;
        }
        if let Some(w) = p.window {
            c.window = intervals(w.0).round().clamp(1.0, 600.0) as u32;
        }
        if let Some(v) = positive(&p.min_rate, "min_rate")? {
            c.min_rate = v;
        }
        if let Some(v) = positive(&p.max_rate, "max_rate")? {
            c.max_rate = v;
        }
        if c.max_rate < c.min_rate {
            let span = p.max_rate.as_ref().map_or(0..0, |s| s.span());
            return self.err(span, "pacing.max_rate", "below min_rate");
        }
        c.initial_rate = c.initial_rate.clamp(c.min_rate, c.max_rate);
        if let Some(v) = positive(&p.initial_rate, "initial_rate")? {
            c.initial_rate = v;
        }
        if let Some(v) = positive(&p.max_change, "max_change")? {
            c.max_change = v;
        }
        if let Some(v) = positive(&p.gain, "gain")? {
            c.gain = v;
        }
        if let Some(t) = &p.integral_time {
            if t.get_ref().0.is_zero() {
                return self.err(t.span(), "pacing.integral_time", "longer than 0s");
            }
            c.integral_intervals = intervals(t.get_ref().0);
        }
        Ok(c)
    }

    fn threshold(&self, t: &raw::RawThreshold, i: usize) -> Compiled<Threshold> {
        let path = format!("threshold[{i}]");
        let metric = Metric::parse(t.metric.get_ref()).map_or_else(
            || {
                self.err(
                    t.metric.span(),
                    &format!("{path}.metric"),
                    format!(
                        "unknown metric `{}`; one of {}",
                        t.metric.get_ref(),
                        Metric::NAMES
                    ),
                )
            },
            Ok,
        )?;
        let step = match &t.step {
            Some(s) if !metric.is_per_step() => {
                return self.err(
                    s.span(),
                    &format!("{path}.step"),
                    format!("{metric} is about match bots, not a step"),
                );
            }
            Some(s) if !self.step_names.contains(s.get_ref()) => {
                return self.err(
                    s.span(),
                    &format!("{path}.step"),
                    format!(
                        "no step named `{}` (steps: {})",
                        s.get_ref(),
                        self.step_names.join(", ")
                    ),
                );
            }
            Some(s) => Some(s.get_ref().clone()),
            None => None,
        };
        let (value, field, make): (&Spanned<toml::Value>, &str, fn(f64) -> Bound) =
            match (&t.max, &t.min) {
                (Some(v), None) => (v, "max", Bound::Max),
                (None, Some(v)) => (v, "min", Bound::Min),
                (Some(v), Some(_)) => {
                    return self.err(v.span(), &format!("{path}.max"), "max or min, not both");
                }
                (None, None) => {
                    return self.err(t.metric.span(), &path, "a threshold needs max or min");
                }
            };
        let field = format!("{path}.{field}");
        let limit = match (metric.unit(), value.get_ref()) {
            (Unit::Duration, toml::Value::String(s)) => match duration::parse_duration(s) {
                Ok(d) => d.as_secs_f64() * 1e6,
                Err(m) => return self.err(value.span(), &field, m),
            },
            (Unit::Duration, _) => {
                return self.err(value.span(), &field, "a duration such as \"200ms\"");
            }
            (unit, toml::Value::Integer(n)) if *n >= 0 => {
                let v = *n as f64;
                if unit == Unit::Fraction && v > 1.0 {
                    return self.err(value.span(), &field, "a fraction in [0, 1]");
                }
                v
            }
            (Unit::Count, _) => return self.err(value.span(), &field, "a whole number >= 0"),
            (unit, toml::Value::Float(f)) if *f >= 0.0 && f.is_finite() => {
                if unit == Unit::Fraction && *f > 1.0 {
                    return self.err(value.span(), &field, "a fraction in [0, 1]");
                }
                *f
            }
            _ => return self.err(value.span(), &field, "a number >= 0"),
        };
        Ok(Threshold {
            metric,
            step,
            bound: make(limit),
        })
    }

    fn step_id(&mut self, name: String) -> u16 {
        if let Some(i) = self.step_names.iter().position(|n| *n == name) {
            return i as u16;
        }
        self.step_names.push(name);
        (self.step_names.len() - 1) as u16
    }

    fn resolver(&self) -> impl Fn(&str) -> Option<Var> + '_ {
        |name| {
            Builtin::named(name).map(Var::Builtin).or_else(|| {
                self.variables
                    .iter()
                    .position(|v| v == name)
                    .map(|slot| Var::Capture(slot as u16))
            })
        }
    }

    fn template(&self, s: &Spanned<String>, field: &str) -> Compiled<Template> {
        Template::compile(s.get_ref(), self.resolver()).or_else(|m| self.err(s.span(), field, m))
    }

    fn captures(
        &self,
        raw: &std::collections::BTreeMap<String, Spanned<String>>,
        path: &str,
    ) -> Compiled<Vec<Capture>> {
        let mut captures = Vec::new();
        for (name, pointer) in raw {
            let p = pointer.get_ref();
            if !(p.is_empty() || p.starts_with('/')) {
                return self.err(
                    pointer.span(),
                    &format!("{path}.{name}"),
                    "a JSON pointer such as \"/token\" (RFC 6901)",
                );
            }
            let slot = self
                .variables
                .iter()
                .position(|v| v == name)
                .unwrap_or_default() as u16;
            captures.push(Capture {
                slot,
                pointer: p.clone(),
            });
        }
        Ok(captures)
    }

    /// Compiles one step at `path`: a match to play or an HTTP request.
    fn step(
        &mut self,
        raw: &RawStep,
        path: &str,
        default_think: ThinkTime,
        targets: &[TargetSpec],
        http: &HttpSettings,
        retry: &RetryPolicy,
    ) -> Compiled<Step> {
        let think = raw.think.unwrap_or(default_think);
        if let Some(pm) = &raw.play_match {
            return self.play_match_step(raw, pm, path, think);
        }
        let url = self.step_url(raw, path)?;
        let target = self.step_target(raw, url, path, targets)?;
        let method = self.step_method(raw, path)?;
        let url_t = self.template(url, &format!("{path}.url"))?;
        let headers = self.step_headers(raw, path)?;
        let (body, json) = self.step_body(raw, path)?;
        let captures = self.captures(&raw.capture, &format!("{path}.capture"))?;
        let wait_captures = self.captures(&raw.wait_capture, &format!("{path}.wait_capture"))?;
        let poll_url = self.poll_url(raw, path)?;
        let expect = self.expect_status(raw, path)?;
        let step_retry = match &raw.retry {
            Some(r) => self.retry(r, retry, &format!("{path}.retry"))?,
            None => retry.clone(),
        };
        let name = raw
            .name
            .clone()
            .unwrap_or_else(|| format!("{} {}", method, url.get_ref()));
        let push = self.push_wait(raw, path, &name, &headers)?;
        let id = self.step_id(name);
        Ok(Step {
            id,
            think,
            kind: StepKind::Http(Box::new(HttpStep {
                target,
                method,
                url: url_t,
                headers,
                body,
                json,
                expect,
                captures,
                wait_while: raw.wait_while_status.clone(),
                wait_captures,
                poll_url,
                wait_interval: raw
                    .wait_interval
                    .map_or(Duration::from_millis(500), |d| d.0),
                max_wait: raw.max_wait.map_or(Duration::from_secs(600), |d| d.0),
                timeout: raw.timeout.map_or(http.timeout, |d| d.0),
                retry: step_retry,
                push,
            })),
        })
    }

    /// Compiles a step's `push = { ... }`, if it has one.
    fn push_wait(
        &mut self,
        raw: &RawStep,
        path: &str,
        name: &str,
        step_headers: &[(HeaderName, Template)],
    ) -> Compiled<Option<PushWait>> {
        let Some(push) = &raw.push else {
            return Ok(None);
        };
        if raw.poll_url.is_some() || !raw.wait_while_status.is_empty() {
            return self.err(
                push.span(),
                &format!("{path}.push"),
                "push replaces polling: drop poll_url and wait_while_status",
            );
        }
        let p = push.get_ref();
        if p.event.get_ref().is_empty() {
            return self.err(
                p.event.span(),
                &format!("{path}.push.event"),
                "a push type such as \"match_found\"",
            );
        }
        let url = match &p.url {
            Some(u) if !u.get_ref().starts_with('/') => {
                return self.err(
                    u.span(),
                    &format!("{path}.push.url"),
                    "a path starting with `/`",
                );
            }
            Some(u) => self.template(u, &format!("{path}.push.url"))?,
            None => Template::compile("/v1/events", self.resolver())
                .or_else(|m| self.err(push.span(), &format!("{path}.push.url"), m))?,
        };
        let headers = match &p.headers {
            Some(h) => self.headers(h, &format!("{path}.push.headers"))?,
            None => step_headers.to_vec(),
        };
        if let Some(same) = &p.same
            && !(same.get_ref().is_empty() || same.get_ref().starts_with('/'))
        {
            return self.err(
                same.span(),
                &format!("{path}.push.same"),
                "a JSON pointer such as \"/ticket\" (RFC 6901)",
            );
        }
        let latency_id = self.step_id(format!("{name} push"));
        Ok(Some(PushWait {
            event: p.event.get_ref().clone(),
            url,
            headers,
            same: p.same.as_ref().map(|s| s.get_ref().clone()),
            max_wait: p.max_wait.map_or(Duration::from_secs(600), |d| d.0),
            latency_id,
        }))
    }

    /// Compiles a `play_match` step, refusing any HTTP request field beside it.
    fn play_match_step(
        &mut self,
        raw: &RawStep,
        pm: &Spanned<raw::RawPlayMatch>,
        path: &str,
        think: ThinkTime,
    ) -> Compiled<Step> {
        let conflicting = [
            ("url", raw.url.is_some()),
            ("poll_url", raw.poll_url.is_some()),
            ("wait_capture", !raw.wait_capture.is_empty()),
            ("method", raw.method.is_some()),
            ("body", raw.body.is_some()),
            ("json", raw.json.is_some()),
            ("capture", !raw.capture.is_empty()),
            ("headers", !raw.headers.is_empty()),
            ("push", raw.push.is_some()),
        ];
        if let Some((field, _)) = conflicting.iter().find(|(_, set)| *set) {
            return self.err(
                pm.span(),
                &format!("{path}.{field}"),
                "a play_match step makes no HTTP request; put the request in its own step",
            );
        }
        let pm = pm.get_ref();
        let token = self.template(&pm.token, &format!("{path}.play_match.token"))?;
        let id = self.step_id(raw.name.clone().unwrap_or_else(|| "play_match".to_owned()));
        Ok(Step {
            id,
            think,
            kind: StepKind::PlayMatch(MatchStep {
                token,
                encoding: pm.encoding.unwrap_or_default(),
                duration: pm.duration.map_or(Duration::from_secs(600), |d| d.0),
            }),
        })
    }

    /// The step's `url`, which must be there and be a path starting with `/`.
    fn step_url<'r>(&self, raw: &'r RawStep, path: &str) -> Compiled<&'r Spanned<String>> {
        let Some(url) = &raw.url else {
            return self.err(
                0..0,
                &format!("{path}.url"),
                "a step needs url (an HTTP request) or play_match",
            );
        };
        if !url.get_ref().starts_with('/') {
            return self.err(
                url.span(),
                &format!("{path}.url"),
                "a path starting with `/`; the host comes from [targets]",
            );
        }
        Ok(url)
    }

    /// The index in `targets` of the step's target: the one named, else the only one.
    fn step_target(
        &self,
        raw: &RawStep,
        url: &Spanned<String>,
        path: &str,
        targets: &[TargetSpec],
    ) -> Compiled<usize> {
        match &raw.target {
            Some(t) => match targets.iter().position(|x| &x.name == t.get_ref()) {
                Some(i) => Ok(i),
                None => self.err(
                    t.span(),
                    &format!("{path}.target"),
                    format!("no target named `{}` in [targets]", t.get_ref()),
                ),
            },
            None if targets.len() == 1 => Ok(0),
            None if targets.is_empty() => self.err(
                url.span(),
                &format!("{path}.target"),
                "no [targets]: add e.g. gateway = \"http://127.0.0.1:8080\"",
            ),
            None => self.err(
                url.span(),
                &format!("{path}.target"),
                "several targets: say which one with target = \"...\"",
            ),
        }
    }

    /// The step's HTTP method (GET unless set, any case).
    fn step_method(&self, raw: &RawStep, path: &str) -> Compiled<Method> {
        match &raw.method {
            None => Ok(Method::GET),
            Some(m) => match Method::from_bytes(m.get_ref().to_ascii_uppercase().as_bytes()) {
                Ok(m) => Ok(m),
                Err(_) => self.err(m.span(), &format!("{path}.method"), "not an HTTP method"),
            },
        }
    }

    /// The step's headers, each name checked and each value a template.
    fn step_headers(&self, raw: &RawStep, path: &str) -> Compiled<Vec<(HeaderName, Template)>> {
        self.headers(&raw.headers, &format!("{path}.headers"))
    }

    /// Header templates from a `headers` table at `path`.
    fn headers(
        &self,
        raw: &std::collections::BTreeMap<String, Spanned<String>>,
        path: &str,
    ) -> Compiled<Vec<(HeaderName, Template)>> {
        let mut headers = Vec::new();
        for (name, value) in raw {
            let field = format!("{path}.{name}");
            let Ok(h) = HeaderName::from_bytes(name.as_bytes()) else {
                return self.err(value.span(), &field, "not a header name");
            };
            headers.push((h, self.template(value, &field)?));
        }
        Ok(headers)
    }

    /// The step's body template from `body` or `json` (at most one), and whether it
    /// is JSON.
    fn step_body(&self, raw: &RawStep, path: &str) -> Compiled<(Option<Template>, bool)> {
        match (&raw.body, &raw.json) {
            (Some(b), None) => Ok((Some(self.template(b, &format!("{path}.body"))?), false)),
            (None, Some(j)) => {
                let text = serde_json::to_string(j.get_ref()).map_err(|e| {
                    self.at
                        .error_at(Some(j.span()), &format!("{path}.json"), &e.to_string())
                })?;
                let t = Template::compile(&text, self.resolver())
                    .or_else(|m| self.err(j.span(), &format!("{path}.json"), m))?;
                Ok((Some(t), true))
            }
            (Some(b), Some(_)) => {
                self.err(b.span(), &format!("{path}.body"), "body or json, not both")
            }
            (None, None) => Ok((None, false)),
        }
    }

    /// The step's `poll_url` template, after checking that waiting fields come
    /// with `wait_while_status`.
    fn poll_url(&self, raw: &RawStep, path: &str) -> Compiled<Option<Template>> {
        if raw.wait_while_status.is_empty() {
            if let Some((name, p)) = raw.wait_capture.iter().next() {
                return self.err(
                    p.span(),
                    &format!("{path}.wait_capture.{name}"),
                    "wait_capture needs wait_while_status",
                );
            }
            if let Some(p) = &raw.poll_url {
                return self.err(
                    p.span(),
                    &format!("{path}.poll_url"),
                    "poll_url needs wait_while_status",
                );
            }
        }
        match &raw.poll_url {
            Some(p) if !p.get_ref().starts_with('/') => self.err(
                p.span(),
                &format!("{path}.poll_url"),
                "a path starting with `/`; the host comes from [targets]",
            ),
            Some(p) => Ok(Some(self.template(p, &format!("{path}.poll_url"))?)),
            None => Ok(None),
        }
    }

    /// The statuses the step expects (empty unless set), each 100..599.
    fn expect_status(&self, raw: &RawStep, path: &str) -> Compiled<Vec<u16>> {
        Ok(raw
            .expect_status
            .as_ref()
            .map(|s| {
                let span = s.span();
                let v = match s.get_ref() {
                    raw::StatusList::One(x) => vec![*x],
                    raw::StatusList::Many(v) => v.clone(),
                };
                if v.iter().any(|s| !(100..=599).contains(s)) {
                    return self.err(
                        span,
                        &format!("{path}.expect_status"),
                        "statuses are 100..599",
                    );
                }
                Ok(v)
            })
            .transpose()?
            .unwrap_or_default())
    }
}

/// Reads `127.0.0.2`, `::1` or an IPv4 block `127.0.1.0/24` (at most 65,536 addresses).
fn parse_sources(text: &str) -> Result<Vec<IpAddr>, String> {
    if let Some((base, bits)) = text.split_once('/') {
        let base: std::net::Ipv4Addr = base
            .parse()
            .map_err(|_| format!("`{base}` is not an IPv4 address"))?;
        let bits: u32 = bits
            .parse()
            .ok()
            .filter(|b| (16..=32).contains(b))
            .ok_or_else(|| format!("`/{bits}`: a prefix length from 16 to 32"))?;
        let size = 1u32 << (32 - bits);
        let start = u32::from(base) & !(size - 1);
        // Skip the network and broadcast addresses of blocks bigger than 2.
        let range = if size > 2 { 1..size - 1 } else { 0..size };
        Ok(range
            .map(|i| IpAddr::V4(std::net::Ipv4Addr::from(start + i)))
            .collect())
    } else {
        text.parse::<IpAddr>().map(|ip| vec![ip]).map_err(|_| {
            format!("`{text}` is not an IP address or an IPv4 block like 127.0.1.0/24")
        })
    }
}
