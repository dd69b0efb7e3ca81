//! [`Sampler`]: the service's own figures over time, read every second
//! from each gateway's and each host's `/metrics` while the players play:
//! the login queue, the matchmaking queue, push sockets, matches formed and
//! running, the hosts' late ticks, dropped datagrams and CPU, and the
//! gateways' server errors. Counters are kept as read (cumulative); the
//! report turns them into rates.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::exposition::{server_error, sum, sum_where};

/// How often the service is read.
pub(crate) const EVERY: Duration = Duration::from_secs(1);
/// Longest one read may take.
const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// The service at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServicePoint {
    /// Seconds since the players started.
    pub t_s: f64,
    /// Gateways that answered.
    pub gateways_up: u32,
    /// Hosts that answered.
    pub hosts_up: u32,
    /// Logins waiting for an auth worker, over the gateways.
    pub login_queue_depth: f64,
    /// Players waiting in matchmaking (the shared queue as the gateways
    /// see it: the largest view).
    pub matchmaking_queued: f64,
    /// Push WebSockets open, over the gateways.
    pub push_sockets: f64,
    /// Matches allocated on a host so far, over the gateways.
    pub matches_formed: f64,
    /// Allocation rounds no host accepted so far.
    pub allocation_failures: f64,
    /// Requests the gateways answered with a 5xx so far.
    pub gateway_errors: f64,
    /// Matches the hosts run now.
    pub matches_running: f64,
    /// Clients connected to the hosts now.
    pub players_connected: f64,
    /// Ticks that ran past their period so far, over the hosts.
    pub late_ticks: f64,
    /// Match-ticks that started more than a period after their deadline
    /// so far (the host behind), over the hosts.
    pub late_starts: f64,
    /// Ticks so far, over the hosts.
    pub ticks: f64,
    /// Received datagrams the hosts dropped so far.
    pub datagrams_dropped: f64,
    /// CPU seconds the host processes used so far.
    pub host_cpu_s: f64,
}

/// Reads the gateways and hosts at their `/metrics`.
pub(crate) struct Sampler {
    agent: ureq::Agent,
    gateways: Vec<String>,
    hosts: Vec<String>,
}

impl Sampler {
    /// Reads `gateways` (base URLs) and `hosts` (admin base URLs).
    pub(crate) fn new(gateways: &[String], hosts: &[String]) -> Self {
        Self {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(READ_TIMEOUT))
                .build()
                .into(),
            gateways: gateways.to_vec(),
            hosts: hosts.to_vec(),
        }
    }

    /// Reads every second from `started` until `stopped` is set; the points.
    pub(crate) fn run(&self, started: Instant, stopped: &AtomicBool) -> Vec<ServicePoint> {
        let mut points = Vec::new();
        let mut next = Instant::now();
        while !stopped.load(Ordering::Relaxed) {
            points.push(self.read(started.elapsed().as_secs_f64()));
            next += EVERY;
            while Instant::now() < next && !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        points
    }

    /// One reading, `t_s` after the start.
    pub(crate) fn read(&self, t_s: f64) -> ServicePoint {
        let mut p = ServicePoint {
            t_s,
            ..ServicePoint::default()
        };
        for text in self.gateways.iter().filter_map(|g| self.metrics(g)) {
            p.gateways_up += 1;
            p.login_queue_depth += sum(&text, "hightick_gateway_login_queue_depth");
            p.matchmaking_queued = p
                .matchmaking_queued
                .max(sum(&text, "hightick_gateway_matchmaking_queued"));
            p.push_sockets += sum(&text, "hightick_gateway_push_sockets");
            p.matches_formed += sum(&text, "hightick_gateway_matches_formed_total");
            p.allocation_failures += sum(&text, "hightick_gateway_allocation_failures_total");
            p.gateway_errors +=
                sum_where(&text, "hightick_gateway_requests_total", server_error).unwrap_or(0.0);
        }
        for text in self.hosts.iter().filter_map(|h| self.metrics(h)) {
            p.hosts_up += 1;
            p.matches_running += sum(&text, "hightick_matches");
            p.players_connected += sum(&text, "hightick_players_connected");
            p.late_ticks += sum(&text, "hightick_late_ticks_total");
            p.late_starts += sum(&text, "hightick_late_tick_starts_total");
            p.ticks += sum(&text, "hightick_ticks_total");
            p.datagrams_dropped += sum(&text, "hightick_datagrams_dropped_total");
            p.host_cpu_s += sum(&text, "process_cpu_seconds_total");
        }
        p
    }

    fn metrics(&self, base: &str) -> Option<String> {
        let mut response = self.agent.get(&format!("{base}/metrics")).call().ok()?;
        if response.status() != 200 {
            return None;
        }
        response.body_mut().read_to_string().ok()
    }
}
