//! The scenario file as written: serde structs that refuse unknown fields.
//! [`super::Scenario::parse`] turns them into the checked, compiled form.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::duration::DurationText;
use super::think::ThinkTime;

/// Closed: a fixed population thinking between steps. Open: arrivals at a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// `users` players, each looping over behaviours with think times.
    #[default]
    Closed,
    /// New players arrive at `arrival_rate` per second, run one behaviour and leave.
    Open,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub name: Option<String>,
    #[serde(default)]
    pub model: Model,
    pub users: Spanned<u64>,
    pub arrival_rate: Option<Spanned<f64>>,
    pub ramp_up: Option<DurationText>,
    pub stampede: Option<Spanned<RawStampede>>,
    pub duration: Spanned<DurationText>,
    pub think: Option<ThinkTime>,
    pub interval: Option<Spanned<DurationText>>,
    pub drivers: Option<Spanned<usize>>,
    /// A URL, or a list of them (`["http://a:8080", "http://b:8080"]`);
    /// checked in [`super::compile`], which names the entry at fault.
    #[serde(default)]
    pub targets: BTreeMap<String, Spanned<toml::Value>>,
    pub pacing: Option<RawPacing>,
    pub http: Option<RawHttp>,
    pub retry: Option<RawRetry>,
    pub matches: Option<RawMatches>,
    pub link: Option<Spanned<toml::Value>>,
    pub request_log: Option<RawRequestLog>,
    #[serde(default)]
    pub setup: Vec<RawStep>,
    #[serde(default)]
    pub behaviour: Vec<RawBehaviour>,
    #[serde(default)]
    pub threshold: Vec<RawThreshold>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStampede {
    pub share: Spanned<f64>,
    pub within: DurationText,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequestLog {
    pub path: Spanned<String>,
    pub rotate_bytes: Option<Spanned<u64>>,
    pub keep: Option<Spanned<u32>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPacing {
    pub target_response_time: Spanned<DurationText>,
    pub percentile: Option<Spanned<f64>>,
    pub window: Option<DurationText>,
    pub initial_rate: Option<Spanned<f64>>,
    pub min_rate: Option<Spanned<f64>>,
    pub max_rate: Option<Spanned<f64>>,
    pub max_change: Option<Spanned<f64>>,
    pub gain: Option<Spanned<f64>>,
    pub integral_time: Option<Spanned<DurationText>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttp {
    pub connections: Option<Spanned<usize>>,
    pub timeout: Option<DurationText>,
    #[serde(default)]
    pub source_addresses: Vec<Spanned<String>>,
    pub ca_file: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRetry {
    pub attempts: Option<Spanned<u32>>,
    pub backoff: Option<DurationText>,
    pub max_backoff: Option<DurationText>,
    pub on_status: Option<Vec<u16>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMatches {
    pub mode: Option<String>,
    pub settings: Option<toml::Table>,
    pub tick_rate_hz: Option<Spanned<u32>>,
    pub seed: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBehaviour {
    pub name: String,
    pub weight: Option<Spanned<u32>>,
    pub think: Option<ThinkTime>,
    #[serde(default)]
    pub step: Vec<RawStep>,
}

/// One status or a list of them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum StatusList {
    One(u16),
    Many(Vec<u16>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStep {
    pub name: Option<String>,
    pub target: Option<Spanned<String>>,
    pub method: Option<Spanned<String>>,
    pub url: Option<Spanned<String>>,
    #[serde(default)]
    pub headers: BTreeMap<String, Spanned<String>>,
    pub body: Option<Spanned<String>>,
    pub json: Option<Spanned<toml::Value>>,
    pub expect_status: Option<Spanned<StatusList>>,
    #[serde(default)]
    pub capture: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub wait_while_status: Vec<u16>,
    #[serde(default)]
    pub wait_capture: BTreeMap<String, Spanned<String>>,
    pub poll_url: Option<Spanned<String>>,
    pub wait_interval: Option<DurationText>,
    pub max_wait: Option<DurationText>,
    pub timeout: Option<DurationText>,
    pub retry: Option<RawRetry>,
    pub think: Option<ThinkTime>,
    pub play_match: Option<Spanned<RawPlayMatch>>,
    pub push: Option<Spanned<RawPush>>,
}

/// `push = { event = "match_found", ... }`: the step's answer comes by the
/// player's push socket instead of polling.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPush {
    pub event: Spanned<String>,
    pub url: Option<Spanned<String>>,
    pub headers: Option<BTreeMap<String, Spanned<String>>>,
    pub same: Option<Spanned<String>>,
    pub max_wait: Option<DurationText>,
}

/// How a connect token is written in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TokenEncoding {
    /// Standard base64 (with or without padding; URL-safe accepted too).
    #[default]
    Base64,
    /// Lowercase or uppercase hex.
    Hex,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlayMatch {
    pub token: Spanned<String>,
    pub encoding: Option<TokenEncoding>,
    pub duration: Option<DurationText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThreshold {
    pub metric: Spanned<String>,
    pub step: Option<Spanned<String>>,
    pub max: Option<Spanned<toml::Value>>,
    pub min: Option<Spanned<toml::Value>>,
}
