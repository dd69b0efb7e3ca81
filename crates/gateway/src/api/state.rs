//! What every request handler shares: the gateway's config, store, login
//! admission, matchmaker, push hub, hosts and counters ([`AppState`]).

use std::sync::Arc;
use std::time::Instant;

use hightick_store::{Store, WriteSender};

use crate::admission::Admission;
use crate::config::GatewayConfig;
use crate::hosts::Hosts;
use crate::login::Logins;
use crate::matchmaking::Matchmaker;
use crate::metrics::RequestCounts;
use crate::push::Hub;
use crate::rate_limit::RateLimit;
use crate::session::SessionSigner;

/// Everything a request may need.
#[derive(Debug)]
pub(crate) struct AppState {
    pub config: GatewayConfig,
    pub store: Store,
    pub logins: Admission<Logins>,
    pub signer: SessionSigner,
    pub matchmaker: Matchmaker,
    /// The push sockets.
    pub push: Arc<Hub>,
    pub hosts: Arc<Hosts>,
    pub results: WriteSender,
    pub server_secret: String,
    pub requests: RequestCounts,
    /// One line per answered request (`[http] access_log`).
    pub access_log: crate::access_log::AccessLog,
    pub rate_limit: RateLimit,
    /// The OpenAPI document for this config, as served.
    pub openapi: String,
    /// Connections the listener closed early or refused.
    pub connections: Arc<crate::listen::ConnectionCounts>,
    /// Injected failures (tests only, feature `fault-injection`; none
    /// otherwise).
    #[cfg_attr(not(feature = "fault-injection"), allow(dead_code))]
    pub faults: crate::faults::Faults,
    pub started: Instant,
}

pub(crate) type Shared = Arc<AppState>;
