//! The swarm's self-test (`hightick swarm selftest`): many players held
//! against the local target process (`target`), each sending one request a
//! period, to show how many players one machine holds and at what cost.
//! [`SelftestPlan`] writes its scenario; [`HoldFigures`] reads the hold
//! (after the ramp-up) out of the run's timeline.

use std::net::SocketAddr;
use std::time::Duration;

use crate::result::RunResult;
use crate::scenario::duration::format_duration;

/// What a self-test holds.
#[derive(Debug, Clone)]
pub struct SelftestPlan {
    /// Players.
    pub users: u64,
    /// Each player's request period (zero: closed loop, no think time).
    pub every: Duration,
    /// Ramp-up.
    pub ramp_up: Duration,
    /// Hold after the ramp-up.
    pub hold: Duration,
    /// Keep-alive connections to the target.
    pub connections: usize,
    /// The target's address.
    pub target: SocketAddr,
    /// Driver tasks.
    pub drivers: usize,
}

impl SelftestPlan {
    /// The scenario file's text: a login, then one `/ping` a period.
    pub fn scenario(&self) -> String {
        let every = format_duration(self.every);
        let first = if self.every.is_zero() {
            "\"0s\"".to_owned()
        } else {
            format!("{{ uniform = [\"0s\", \"{every}\"] }}")
        };
        format!(
            r#"
name = "selftest"
users = {users}
ramp_up = "{ramp}"
duration = "{hold}"
drivers = {drivers}
[targets]
t = "http://{target}"
[http]
connections = {connections}
timeout = "10s"
[[setup]]
name = "login"
method = "POST"
url = "/login"
json = {{ device = "selftest-{{{{user}}}}" }}
capture = {{ token = "/token" }}
think = {first}
[[behaviour]]
name = "request"
[[behaviour.step]]
name = "request"
url = "/ping"
headers = {{ authorization = "Bearer {{{{token}}}}" }}
think = "{every}"
[[threshold]]
metric = "error_rate"
max = 0.01
"#,
            users = self.users,
            ramp = format_duration(self.ramp_up),
            hold = format_duration(self.hold),
            drivers = self.drivers,
            target = self.target,
            connections = self.connections,
        )
    }
}

/// What the run's timeline shows of the hold (the intervals after
/// `hold_start`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HoldFigures {
    /// The fewest players alive in any interval of the hold.
    pub held: u64,
    /// Requests in the hold.
    pub requests: u64,
    /// Of those, failed.
    pub failed: u64,
    /// Requests per second over the hold.
    pub rps: f64,
    /// Failed requests of the whole run, percent.
    pub error_pct: f64,
}

impl HoldFigures {
    /// Reads them from `result`.
    pub fn of(result: &RunResult, hold_start: Duration) -> Self {
        let hold: Vec<_> = result
            .timeline
            .iter()
            .filter(|p| p.t_s > hold_start.as_secs_f64())
            .collect();
        let requests: u64 = hold.iter().map(|p| p.requests).sum();
        let seconds = hold.len() as f64 * result.interval_s;
        Self {
            held: hold.iter().map(|p| p.users).min().unwrap_or(0),
            requests,
            failed: hold.iter().map(|p| p.failed).sum(),
            rps: requests as f64 / seconds.max(1e-9),
            error_pct: 100.0 * result.total.failed as f64 / result.total.requests.max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_a_valid_scenario() {
        let plan = SelftestPlan {
            users: 500,
            every: Duration::from_millis(7500),
            ramp_up: Duration::from_secs(10),
            hold: Duration::from_secs(20),
            connections: 16,
            target: "127.0.0.1:9".parse().unwrap(),
            drivers: 2,
        };
        let scenario = crate::Scenario::parse(&plan.scenario(), "selftest").unwrap();
        assert_eq!(scenario.users, 500);
        assert_eq!(scenario.step_names, ["login", "request"]);
    }
}
