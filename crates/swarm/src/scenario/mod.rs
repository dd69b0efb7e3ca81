//! Scenarios: what virtual players do, read from a TOML file, checked and
//! compiled once before a run.
//!
//! ```toml
//! name = "meta-game mix"
//! model = "closed"              # closed (users + think time) | open (arrival_rate)
//! users = 1000
//! ramp_up = "30s"
//! duration = "2m"               # after the ramp-up
//! think = { exponential = "7.5s" }
//!
//! [targets]
//! gateway = "http://127.0.0.1:8080"  # or several: ["http://a:8080", "http://b:8080"]
//!
//! [[setup]]                     # once per player, before any behaviour
//! name = "login"
//! method = "POST"
//! url = "/v1/auth/guest"
//! json = { device = "swarm-{{user}}" }
//! capture = { token = "/token" }
//!
//! [[behaviour]]
//! name = "profile"
//! weight = 3
//! [[behaviour.step]]
//! url = "/v1/profile"
//! headers = { authorization = "Bearer {{token}}" }
//!
//! [[threshold]]
//! metric = "p99"
//! step = "login"
//! max = "200ms"
//! ```
//!
//! Every table refuses unknown fields, and every error names the file, the
//! line and column, and the field (`behaviour[0].step[1].url`).
//!
//! A target given a list of URLs (`gateway = ["http://a:8080",
//! "http://b:8080"]`, an empty list or a non-string entry is an error naming
//! `targets.gateway[i]`) spreads its players: player `i` starts on URL
//! `i % n`. A request there that fails at the transport level (refused,
//! reset, timed out) moves the player to the next URL, round robin, and is
//! retried there within `[retry]`'s `attempts` and `backoff`; so does a
//! step whose attempts all answered a status of `on_status` (each URL once
//! per step). The player stays on the new URL, its push socket too. A run
//! counts `failovers` and requests per URL (`target_urls` in the result).
//! Every URL must resolve, and on an agent be on its allow-list. An
//! override ([`Overrides::targets`], `--target name=url`) may give several
//! URLs separated by commas.
//!
//! A closed model may arrive as a launch does: `stampede = { share = 0.4,
//! within = "1m" }` brings that share of the players within the window,
//! then the rest trickle in evenly over the rest of the ramp-up
//! ([`arrivals`]).
//!
//! Other sections: `[pacing]` (`target_response_time`, `percentile`,
//! `window`, `initial_rate`, `min_rate`, `max_rate`, `max_change`, `gain`,
//! `integral_time`), `[http]` (`connections` per target, `timeout`,
//! `source_addresses` such as `["127.0.0.2", "127.0.1.0/24"]`, `ca_file`:
//! the CA in PEM that `https://` targets are checked against, else the
//! public roots; [`crate::tls`]), `[retry]`
//! (`attempts`, `backoff`, `max_backoff`, `on_status`), `[matches]` (`mode`,
//! `tick_rate_hz`, `seed`, and `[matches.settings]`: the game's own match
//! settings, e.g. `map = "plaza"` for the arena), `link` (a link's name or
//! profile file, or `{ profile, share, seed }`: players behind the
//! impairment proxy in their `play_match` steps, [`crate::bots::link`]), `[request_log]` (`path`, `rotate_bytes`, `keep`:
//! a raw per-request log, off unless asked for; see
//! [`request_log`](crate::request_log)). A step is an HTTP request (`method`, `url`,
//! `headers`, `body` or `json`, `expect_status`, `capture`,
//! `wait_while_status` + `wait_capture` + `poll_url` + `wait_interval` +
//! `max_wait` for queues (ask, get a ticket, poll the ticket), `timeout`,
//! `retry`, `think`, and `push = { event, url, headers, same, max_wait }`
//! to wait for the answer on the player's WebSocket instead of polling:
//! [`PushWait`]) or a `play_match = { token = "{{connect_token}}" }`
//! that plays a match with a [`MatchBot`](crate::MatchBot).

#![warn(missing_docs)]

pub mod arrivals;
mod compile;
pub mod duration;
mod raw;
pub mod template;
pub mod think;

use std::net::IpAddr;
use std::time::Duration;

use http::{HeaderName, Method};

use crate::error::SwarmError;
use crate::pacing::PacingConfig;
use crate::request_log::RequestLogConfig;
use crate::retry::RetryPolicy;
use crate::threshold::Threshold;
pub use arrivals::Stampede;
use raw::RawScenario;
pub use raw::{Model, TokenEncoding};
use template::Template;
use think::ThinkTime;

/// A checked, compiled scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name (the file's `name`, or the file name).
    pub name: String,
    /// Where it was read from.
    pub file: String,
    /// Its text (sent to agents, which compile it again).
    pub text: String,
    /// Closed or open.
    pub model: Model,
    /// Closed: the players. Open: the most players alive at once.
    pub users: u64,
    /// Open: players arriving per second (after the ramp-up).
    pub arrival_rate: f64,
    /// Closed: players start evenly over this (or after a stampede, see
    /// [`arrivals`]). Open: the rate climbs linearly over it.
    pub ramp_up: Duration,
    /// Closed: a share of the players arriving within a window first.
    pub stampede: Option<Stampede>,
    /// How long the run holds after the ramp-up.
    pub duration: Duration,
    /// The measurement interval.
    pub interval: Duration,
    /// Driver tasks per process (0: one per core).
    pub drivers: usize,
    /// The HTTP targets, by name (each with one URL or several).
    pub targets: Vec<TargetSpec>,
    /// Steps each player runs once, first.
    pub setup: Vec<Step>,
    /// What players do after the setup, picked by weight.
    pub behaviours: Vec<Behaviour>,
    /// Step names, by step id.
    pub step_names: Vec<String>,
    /// Captured variable names, by slot.
    pub variables: Vec<String>,
    /// Adaptive pacing, if asked for.
    pub pacing: Option<PacingConfig>,
    /// HTTP connection settings.
    pub http: HttpSettings,
    /// Match bot settings for `play_match` steps.
    pub matches: MatchSettings,
    /// Players behind an emulated link in their `play_match` steps
    /// ([`crate::bots::link`]), if any.
    pub link: Option<crate::bots::link::LinkPlan>,
    /// Pass/fail thresholds.
    pub thresholds: Vec<Threshold>,
    /// The raw per-request log, only when asked for (`[request_log]`).
    pub request_log: Option<RequestLogConfig>,
}

/// A named HTTP target: one URL, or several (`gateway = ["http://a:8080",
/// "http://b:8080"]`) that players spread over (player `i` starts on URL
/// `i % n`) and fail over between (see [`crate::driver`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetSpec {
    /// Its name in the scenario.
    pub name: String,
    /// The URL as written (several: joined with `, `).
    pub url: String,
    /// Its URLs, at least one, in the order written.
    pub urls: Vec<TargetUrl>,
}

/// One URL of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetUrl {
    /// The URL as written.
    pub url: String,
    /// `host:port` for the `Host` header.
    pub authority: String,
    /// The host to resolve.
    pub host: String,
    /// The port.
    pub port: u16,
    /// A path prefix put before every step's URL (no trailing `/`).
    pub prefix: String,
    /// `https://`: TLS (its pushes `wss://`), trusting `[http] ca_file`.
    pub tls: bool,
}

impl TargetSpec {
    /// A target with one URL, `http[s]://host[:port][/prefix]`.
    pub fn parse(name: &str, url: &str) -> Result<Self, String> {
        Self::parse_list(name, &[url])
    }

    /// A target with the URLs `urls` (at least one).
    pub fn parse_list(name: &str, urls: &[&str]) -> Result<Self, String> {
        if urls.is_empty() {
            return Err("an empty list: give at least one URL".to_owned());
        }
        Ok(Self {
            name: name.to_owned(),
            url: urls.join(", "),
            urls: urls
                .iter()
                .map(|u| TargetUrl::parse(u))
                .collect::<Result<_, _>>()?,
        })
    }
}

impl TargetUrl {
    /// Reads `http[s]://host[:port][/prefix]`.
    pub fn parse(url: &str) -> Result<Self, String> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("`{url}` is not a URL: {e}"))?;
        let tls = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            Some(other) => {
                return Err(format!(
                    "`{url}`: scheme {other} is not supported (http or https)"
                ));
            }
            None => return Err(format!("`{url}`: say http://host:port")),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| format!("`{url}` has no host"))?;
        if uri.query().is_some() {
            return Err(format!("`{url}`: a target has no query"));
        }
        Ok(Self {
            url: url.to_owned(),
            authority: authority.as_str().to_owned(),
            host: authority.host().trim_matches(['[', ']']).to_owned(),
            port: authority.port_u16().unwrap_or(if tls { 443 } else { 80 }),
            prefix: uri.path().trim_end_matches('/').to_owned(),
            tls,
        })
    }
}

/// HTTP connection settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// Keep-alive connections per target per process, at most.
    pub connections: usize,
    /// Default request timeout.
    pub timeout: Duration,
    /// Source addresses to spread connections over (empty: the system's choice).
    pub sources: Vec<IpAddr>,
    /// The CA certificates (PEM) `https://` targets are checked against;
    /// `None`: the public (webpki) roots.
    pub ca_file: Option<std::path::PathBuf>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            connections: 256,
            timeout: Duration::from_secs(10),
            sources: Vec::new(),
            ca_file: None,
        }
    }
}

/// Match bot settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchSettings {
    /// The game mode the matches run (`None`: the game's first).
    pub mode: Option<String>,
    /// The matches' settings as the game reads them (`[matches.settings]`,
    /// e.g. `map = "plaza"` for the arena); `null` for none.
    pub settings: serde_json::Value,
    /// Bot ticks per second.
    pub tick_rate_hz: u32,
    /// Seed of the bots' decisions.
    pub seed: u64,
}

impl Default for MatchSettings {
    fn default() -> Self {
        Self {
            mode: None,
            settings: serde_json::Value::Null,
            tick_rate_hz: 128,
            seed: 1,
        }
    }
}

/// A behaviour: steps run in order, picked by weight.
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// Its name.
    pub name: String,
    /// Its weight among behaviours.
    pub weight: u32,
    /// Its steps.
    pub steps: Vec<Step>,
}

/// One step of a behaviour or the setup.
#[derive(Debug, Clone)]
pub struct Step {
    /// Its id (index into [`Scenario::step_names`]); steps with the same
    /// name share it and their measurements.
    pub id: u16,
    /// The wait after it.
    pub think: ThinkTime,
    /// What it does.
    pub kind: StepKind,
}

/// What a step does.
#[derive(Debug, Clone)]
pub enum StepKind {
    /// An HTTP request.
    Http(Box<HttpStep>),
    /// Plays a match with a match bot.
    PlayMatch(MatchStep),
}

/// A captured variable: the JSON pointer into the response and the slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The player's variable slot.
    pub slot: u16,
    /// RFC 6901 pointer into the JSON response (`/token`, `/queue/ticket`).
    pub pointer: String,
}

/// An HTTP request step.
#[derive(Debug, Clone)]
pub struct HttpStep {
    /// Index into [`Scenario::targets`].
    pub target: usize,
    /// The method.
    pub method: Method,
    /// The path and query (after the target's prefix).
    pub url: Template,
    /// Headers.
    pub headers: Vec<(HeaderName, Template)>,
    /// The body, if any.
    pub body: Option<Template>,
    /// Whether the body is JSON (sets the content type and escapes values).
    pub json: bool,
    /// Statuses that count as success (empty: any 2xx).
    pub expect: Vec<u16>,
    /// Variables captured from a successful response.
    pub captures: Vec<Capture>,
    /// Statuses that mean "not yet": ask again after `wait_interval`.
    pub wait_while: Vec<u16>,
    /// Variables captured from a "not yet" response (a queue ticket).
    pub wait_captures: Vec<Capture>,
    /// Where to ask again (GET), if not the same request.
    pub poll_url: Option<Template>,
    /// The wait between asks.
    pub wait_interval: Duration,
    /// The longest it waits in all.
    pub max_wait: Duration,
    /// The request timeout.
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
    /// Wait for the answer on the player's push socket instead of polling.
    pub push: Option<PushWait>,
}

/// A step's wait on the player's push socket (`push = { ... }`): after an
/// accepted answer whose captures are not all there yet (a `202` with a
/// ticket), the step waits for a push of type `event` and captures from it.
/// The socket is opened (`url`, `headers`) before the player's first such
/// request and kept: one WebSocket per player.
#[derive(Debug, Clone)]
pub struct PushWait {
    /// The push's `type`.
    pub event: String,
    /// The socket's path (default `/v1/events`).
    pub url: Template,
    /// The socket's request headers (default: the step's own).
    pub headers: Vec<(HeaderName, Template)>,
    /// A JSON pointer whose value must be the same in the answer and the
    /// push (`/ticket`), so an old push never answers a new request.
    pub same: Option<String>,
    /// The longest it waits.
    pub max_wait: Duration,
    /// The step id its event-to-client latency is recorded under (`<step> push`).
    pub latency_id: u16,
}

impl HttpStep {
    /// Whether `status` is a success.
    pub fn accepts(&self, status: u16) -> bool {
        if self.expect.is_empty() {
            (200..300).contains(&status)
        } else {
            self.expect.contains(&status)
        }
    }
}

/// A `play_match` step.
#[derive(Debug, Clone)]
pub struct MatchStep {
    /// The connect token (usually a captured variable).
    pub token: Template,
    /// How the token is written.
    pub encoding: TokenEncoding,
    /// The longest it plays.
    pub duration: Duration,
}

/// Changes to a scenario made from the command line.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Overrides {
    /// Players (closed) or the most alive (open).
    pub users: Option<u64>,
    /// The hold duration, in milliseconds.
    pub duration_ms: Option<u64>,
    /// The ramp-up, in milliseconds.
    pub ramp_up_ms: Option<u64>,
    /// Open model: arrivals per second.
    pub arrival_rate: Option<f64>,
    /// `name=url` target replacements (`name=url1,url2`: several URLs).
    pub targets: Vec<(String, String)>,
}

impl Scenario {
    /// Reads and compiles a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Self, SwarmError> {
        let text = std::fs::read_to_string(path).map_err(|source| SwarmError::ReadScenario {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Compiles scenario `text`; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, SwarmError> {
        let here = compile::Locator { text, file };
        let de = toml::Deserializer::parse(text)
            .map_err(|e| here.error_at(e.span(), "(document)", e.message()))?;
        let raw: RawScenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let field = path
                .strip_suffix(".$__serde_spanned_private_value")
                .unwrap_or(&path)
                .to_owned();
            let inner = e.into_inner();
            here.error_at(inner.span(), &field, inner.message())
        })?;
        compile::Compiler::new(here).compile(raw)
    }

    /// Applies command-line changes; a target that does not exist or a URL
    /// that does not parse is an error.
    pub fn apply(&mut self, o: &Overrides) -> Result<(), SwarmError> {
        let bad = |field: &str, message: String| SwarmError::Scenario {
            file: "(command line)".to_owned(),
            line: 0,
            column: 0,
            field: field.to_owned(),
            message,
        };
        if let Some(users) = o.users {
            if users == 0 {
                return Err(bad("users", "at least 1".to_owned()));
            }
            self.users = users;
        }
        if let Some(ms) = o.duration_ms {
            self.duration = Duration::from_millis(ms);
        }
        if let Some(ms) = o.ramp_up_ms {
            self.ramp_up = Duration::from_millis(ms);
        }
        if let Some(rate) = o.arrival_rate {
            if self.model != Model::Open || rate.is_nan() || rate <= 0.0 {
                return Err(bad(
                    "arrival_rate",
                    "only for open models, and above 0".to_owned(),
                ));
            }
            self.arrival_rate = rate;
        }
        for (name, url) in &o.targets {
            let slot = self
                .targets
                .iter_mut()
                .find(|t| &t.name == name)
                .ok_or_else(|| bad("target", format!("no target named `{name}`")))?;
            let urls: Vec<&str> = url.split(',').map(str::trim).collect();
            *slot = TargetSpec::parse_list(name, &urls).map_err(|m| bad("target", m))?;
        }
        Ok(())
    }

    /// Every step, setup first, then behaviours in order.
    pub fn all_steps(&self) -> impl Iterator<Item = &Step> {
        self.setup
            .iter()
            .chain(self.behaviours.iter().flat_map(|b| &b.steps))
    }

    /// The whole run: ramp-up and hold.
    pub fn total_duration(&self) -> Duration {
        self.ramp_up + self.duration
    }

    /// Every target's every URL, in order: the index a URL has here is
    /// its index in per-URL tables (resolved addresses, pools, counts).
    pub fn target_urls(&self) -> impl Iterator<Item = (&TargetSpec, &TargetUrl)> {
        self.targets
            .iter()
            .flat_map(|t| t.urls.iter().map(move |u| (t, u)))
    }

    /// The id of the step called `name`.
    pub fn step_id(&self, name: &str) -> Option<u16> {
        self.step_names
            .iter()
            .position(|n| n == name)
            .map(|i| i as u16)
    }
}

#[cfg(test)]
mod tests;
