//! [`Launch`]: a stack run over time, and the figures a capacity plan is
//! checked against. The service's side comes from the sampler
//! (`crate::sampler`) every second, the players' side from the
//! swarm's merged intervals (local or from its agents). The HTML report
//! draws both as charts: the login queue, the matchmaking queue and its
//! wait, the matches running, snapshot quality, the hosts' late ticks and
//! the errors.
//!
//! The players' figures are read from the scenario's steps by name:
//! `login` (the login queue), `matchmake` (ticket to match found) and
//! `rejoin` (a fresh token to a running match), as `scenarios/launch.toml`
//! and the stack's own journey name them.

use hightick_report::{Color, Line, LineChart, Page, ReportError, Svg};
use hightick_swarm::result::RunResult;
use hightick_swarm::scenario::{Scenario, StepKind};
use serde::Serialize;

use crate::sampler::ServicePoint;

/// The players' side of one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlayerPoint {
    /// Seconds since the players started, at the interval's end.
    pub t_s: f64,
    /// Players alive.
    pub players: u64,
    /// Logins completed (through the login queue).
    pub logins: u64,
    /// Matches found (tickets answered).
    pub matches_found: u64,
    /// Matchmaking wait of the tickets answered in the interval: median, ms.
    pub matchmaking_wait_p50_ms: f64,
    /// The same, 99th percentile, ms.
    pub matchmaking_wait_p99_ms: f64,
    /// Rejoins granted.
    pub rejoins: u64,
    /// Requests that failed.
    pub failed_requests: u64,
    /// Matches the bots ended (played out or left).
    pub bot_matches_ended: u64,
    /// Snapshot inter-arrival p99 of the bots whose match ended, ms.
    pub snapshot_interarrival_p99_ms: f64,
    /// Their packet loss, %.
    pub packet_loss_pct: f64,
}

/// How the players arrived.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Arrival {
    /// Players in all.
    pub players: u64,
    /// Seconds over which they arrived.
    pub ramp_up_s: f64,
    /// Share that came in the stampede (0: arrivals were even).
    pub stampede_share: f64,
    /// Seconds the stampede took.
    pub stampede_within_s: f64,
    /// Seconds the run held after the ramp-up.
    pub hold_s: f64,
    /// Mean seconds from a match's end to the player's next ticket (see
    /// [`between_matches_s`]).
    pub between_matches_s: f64,
}

/// Mean seconds from a match's end to the player's next ticket in
/// `scenario`: the think times from each behaviour's last match step to its
/// end, weighted by the behaviours' weights (the requests in between add
/// milliseconds; a behaviour without a match adds all its think times).
pub(crate) fn between_matches_s(scenario: &Scenario) -> f64 {
    let weights: u64 = scenario
        .behaviours
        .iter()
        .map(|b| u64::from(b.weight))
        .sum();
    if weights == 0 {
        return 0.0;
    }
    let weighted: f64 = scenario
        .behaviours
        .iter()
        .map(|b| {
            let last_match = b
                .steps
                .iter()
                .rposition(|s| matches!(s.kind, StepKind::PlayMatch(_)))
                .unwrap_or(0);
            let think: f64 = b.steps[last_match..]
                .iter()
                .map(|s| s.think.mean().as_secs_f64())
                .sum();
            f64::from(b.weight) * think
        })
        .sum();
    weighted / weights as f64
}

/// What the hosts could carry and what they used.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Capacity {
    /// Hosts.
    pub hosts: usize,
    /// Worker threads per host.
    pub workers_per_host: usize,
    /// Matches one worker takes at most.
    pub matches_per_worker: usize,
    /// Matches the hosts take at once (hosts x workers x matches per worker).
    pub matches_at_once: usize,
    /// Players per match.
    pub players_per_match: u32,
    /// The machine's logical CPUs (everything shares them).
    pub machine_cores: usize,
    /// CPU cores the host processes used, mean over the run.
    pub host_cores_mean: f64,
    /// Peak matches running at once.
    pub matches_running_peak: f64,
    /// Match length seen, minutes (matches running over time / matches finished).
    pub match_minutes: f64,
}

/// A run over time, with the figures a plan is checked against.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Launch {
    /// The scenario file (none: the stack's own journey).
    pub scenario: Option<String>,
    /// Swarm agents the players ran on (0: in the stack's own process).
    pub agents: usize,
    /// How the players arrived.
    pub arrival: Arrival,
    /// The hosts' capacity and use.
    pub capacity: Capacity,
    /// Logins completed.
    pub logins: u64,
    /// Rejoins granted.
    pub rejoins: u64,
    /// Rejoin requests the players made.
    pub rejoins_asked: u64,
    /// Peak logins per second.
    pub login_rate_peak_per_s: f64,
    /// Peak players in the login queue (over the gateways).
    pub login_queue_peak: f64,
    /// Peak players waiting in matchmaking.
    pub matchmaking_queued_peak: f64,
    /// Mean players waiting in matchmaking over the players' run.
    pub matchmaking_queued_mean: f64,
    /// Tickets answered (matches found) over the run.
    pub tickets_answered: u64,
    /// Mean wait of every ticket, s: the players' time in the matchmaking
    /// queue over their run / the tickets (answered, and still waiting at
    /// the end). Whichever tickets get the freed seats, it is the same
    /// (Little's law); the answered tickets' wait is not.
    pub matchmaking_wait_all_mean_s: f64,
    /// The players' side, per interval.
    pub players: Vec<PlayerPoint>,
    /// The service's side, per second.
    pub service: Vec<ServicePoint>,
}

/// Where a step sits in the result (`None`: the scenario has none so named).
fn step_index(result: &RunResult, name: &str) -> Option<usize> {
    result.steps.iter().position(|s| s.name == name)
}

/// The players' side of `result`, interval by interval.
pub(crate) fn player_points(result: &RunResult) -> Vec<PlayerPoint> {
    let login = step_index(result, "login");
    let matchmake = step_index(result, "matchmake");
    let rejoin = step_index(result, "rejoin");
    result
        .timeline
        .iter()
        .map(|p| {
            let done =
                |i: Option<usize>| i.and_then(|i| p.steps.get(i)).map_or(0, |s| s.steps_done);
            let mm = matchmake.and_then(|i| p.steps.get(i));
            let m = p.matches.as_ref();
            PlayerPoint {
                t_s: p.t_s,
                players: p.users,
                logins: done(login),
                matches_found: done(matchmake),
                matchmaking_wait_p50_ms: mm.map_or(0.0, |s| s.step_time_p50_us as f64 / 1000.0),
                matchmaking_wait_p99_ms: mm.map_or(0.0, |s| s.step_time_p99_us as f64 / 1000.0),
                rejoins: done(rejoin),
                failed_requests: p.failed,
                bot_matches_ended: m.map_or(0, |m| m.started),
                snapshot_interarrival_p99_ms: m
                    .map_or(0.0, |m| m.interarrival_p99_us as f64 / 1000.0),
                packet_loss_pct: m.map_or(0.0, |m| m.packet_loss * 100.0),
            }
        })
        .collect()
}

impl Launch {
    /// Fills the totals and peaks from the series, the players' `result`
    /// and the matches the hosts finished.
    pub(crate) fn summarize(&mut self, result: &RunResult, matches_finished: u64) {
        let interval_s = result.interval_s;
        self.rejoins_asked = step_index(result, "rejoin").map_or(0, |i| result.steps[i].requests);
        self.logins = self.players.iter().map(|p| p.logins).sum();
        self.rejoins = self.players.iter().map(|p| p.rejoins).sum();
        self.login_rate_peak_per_s = self
            .players
            .iter()
            .map(|p| p.logins as f64 / interval_s.max(1e-3))
            .fold(0.0, f64::max);
        let peak = |f: fn(&ServicePoint) -> f64| self.service.iter().map(f).fold(0.0, f64::max);
        self.login_queue_peak = peak(|s| s.login_queue_depth);
        self.matchmaking_queued_peak = peak(|s| s.matchmaking_queued);
        self.capacity.matches_running_peak = peak(|s| s.matches_running);
        if let (Some(first), Some(last)) = (self.service.first(), self.service.last()) {
            let span = (last.t_s - first.t_s).max(1e-3);
            self.capacity.host_cores_mean = (last.host_cpu_s - first.host_cpu_s) / span;
        }
        self.summarize_matchmaking();
        let match_seconds: f64 = self
            .service
            .windows(2)
            .map(|w| w[0].matches_running * (w[1].t_s - w[0].t_s))
            .sum();
        if matches_finished > 0 {
            self.capacity.match_minutes = match_seconds / matches_finished as f64 / 60.0;
        }
    }

    /// The matchmaking queue over the players' run (the readings before its
    /// end, the last one held to the end): its mean, the tickets answered,
    /// and the mean wait of every ticket, the ones waiting at the last
    /// reading counting their wait so far.
    fn summarize_matchmaking(&mut self) {
        self.tickets_answered = self.players.iter().map(|p| p.matches_found).sum();
        let end = self.arrival.ramp_up_s + self.arrival.hold_s;
        let during: Vec<&ServicePoint> = self.service.iter().filter(|s| s.t_s < end).collect();
        let queued_s: f64 = during
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let next = during.get(i + 1).map_or(end, |n| n.t_s);
                s.matchmaking_queued * (next - s.t_s)
            })
            .sum();
        if let (Some(first), Some(last)) = (during.first(), during.last()) {
            self.matchmaking_queued_mean = queued_s / (end - first.t_s).max(1e-3);
            let tickets = self.tickets_answered as f64 + last.matchmaking_queued;
            if tickets > 0.0 {
                self.matchmaking_wait_all_mean_s = queued_s / tickets;
            }
        }
    }

    /// Its lines of the text report, with `FIGURE` lines.
    pub(crate) fn render_text(&self, out: &mut String) {
        use std::fmt::Write as _;
        let (a, c) = (&self.arrival, &self.capacity);
        let on = match self.agents {
            0 => "in the stack's process".to_owned(),
            n => format!("on {n} swarm agents"),
        };
        let _ = writeln!(
            out,
            "  arrivals: {} players {on}, {:.0} % within {:.0} s then a trickle to {:.0} s; hold {:.0} s",
            a.players,
            a.stampede_share * 100.0,
            a.stampede_within_s,
            a.ramp_up_s,
            a.hold_s
        );
        let _ = writeln!(
            out,
            "  capacity: {} host(s) x {} worker(s) = {} matches at once; peak {:.0} running; matches of {:.1} min; hosts used {:.2} of {} cores",
            c.hosts,
            c.workers_per_host,
            c.matches_at_once,
            c.matches_running_peak,
            c.match_minutes,
            c.host_cores_mean,
            c.machine_cores
        );
        let _ = writeln!(
            out,
            "  queues: login peak {:.0} (logins peak {:.1}/s), matchmaking peak {:.0} waiting (mean {:.1}; every ticket waited {:.1} s on average, {} answered); {} rejoins of {} asked; {} readings of the service",
            self.login_queue_peak,
            self.login_rate_peak_per_s,
            self.matchmaking_queued_peak,
            self.matchmaking_queued_mean,
            self.matchmaking_wait_all_mean_s,
            self.tickets_answered,
            self.rejoins,
            self.rejoins_asked,
            self.service.len()
        );
        for (name, value, unit) in [
            ("stack_login_queue_peak", self.login_queue_peak, "players"),
            (
                "stack_matchmaking_queued_peak",
                self.matchmaking_queued_peak,
                "players",
            ),
            (
                "stack_matches_running_peak",
                c.matches_running_peak,
                "matches",
            ),
            ("stack_host_cores_mean", c.host_cores_mean, "cores"),
        ] {
            let _ = writeln!(out, "FIGURE {name} {value:.2} {unit}");
        }
    }

    /// The charts over time, as a section of `page`.
    pub(crate) fn charts(&self, page: &mut Page) -> Result<(), ReportError> {
        page.section("Over time");
        for (title, chart) in [
            ("Login and matchmaking queues", self.queues()?),
            ("Matchmaking wait", self.wait()?),
            ("Matches running", self.matches()?),
            ("Snapshot quality", self.quality()?),
            ("The hosts' late ticks", self.late_ticks()?),
            ("Errors", self.errors()?),
        ] {
            page.subsection(title).chart(&chart);
        }
        Ok(())
    }

    fn service_line(&self, label: &str, color: Color, f: fn(&ServicePoint) -> f64) -> Line {
        Line::new(label, color, self.service.iter().map(|s| (s.t_s, f(s))))
    }

    /// A counter's rate per second between readings.
    fn service_rate(&self, label: &str, color: Color, f: fn(&ServicePoint) -> f64) -> Line {
        Line::new(
            label,
            color,
            self.service.windows(2).map(|w| {
                let dt = (w[1].t_s - w[0].t_s).max(1e-3);
                (w[1].t_s, (f(&w[1]) - f(&w[0])).max(0.0) / dt)
            }),
        )
    }

    fn player_line(&self, label: &str, color: Color, f: fn(&PlayerPoint) -> f64) -> Line {
        Line::new(label, color, self.players.iter().map(|p| (p.t_s, f(p))))
    }

    fn queues(&self) -> Result<Svg, ReportError> {
        LineChart::new("queues", "seconds", "players")
            .line(self.player_line("players alive", Color::GREY, |p| p.players as f64))
            .line(self.service_line("login queue", Color::BLUE, |s| s.login_queue_depth))
            .line(self.service_line("matchmaking queue", Color::ORANGE, |s| s.matchmaking_queued))
            .line(self.service_line("push sockets", Color::GREEN, |s| s.push_sockets))
            .render()
    }

    fn wait(&self) -> Result<Svg, ReportError> {
        let found: Vec<&PlayerPoint> = self
            .players
            .iter()
            .filter(|p| p.matches_found > 0)
            .collect();
        LineChart::new(
            "matchmaking wait",
            "seconds",
            "wait of the tickets answered, s",
        )
        .line(Line::new(
            "p50",
            Color::BLUE,
            found
                .iter()
                .map(|p| (p.t_s, p.matchmaking_wait_p50_ms / 1000.0)),
        ))
        .line(Line::new(
            "p99",
            Color::RED,
            found
                .iter()
                .map(|p| (p.t_s, p.matchmaking_wait_p99_ms / 1000.0)),
        ))
        .render()
    }

    fn matches(&self) -> Result<Svg, ReportError> {
        LineChart::new("matches", "seconds", "matches running")
            .line(self.service_line("running on the hosts", Color::BLUE, |s| s.matches_running))
            .reference(
                "hosts' capacity",
                Some(self.capacity.matches_at_once as f64),
                Color::GREY,
            )
            .right_axis(
                "matches formed per second",
                vec![self.service_rate("formed", Color::ORANGE, |s| s.matches_formed)],
            )
            .render()
    }

    fn quality(&self) -> Result<Svg, ReportError> {
        let ended: Vec<&PlayerPoint> = self
            .players
            .iter()
            .filter(|p| p.bot_matches_ended > 0)
            .collect();
        LineChart::new(
            "snapshot quality",
            "seconds",
            "snapshot inter-arrival p99, ms",
        )
        .line(Line::new(
            "inter-arrival p99",
            Color::BLUE,
            ended
                .iter()
                .map(|p| (p.t_s, p.snapshot_interarrival_p99_ms)),
        ))
        .right_axis(
            "packet loss, %",
            vec![Line::new(
                "packet loss",
                Color::ORANGE,
                ended.iter().map(|p| (p.t_s, p.packet_loss_pct)),
            )],
        )
        .render()
    }

    fn late_ticks(&self) -> Result<Svg, ReportError> {
        LineChart::new("hosts' late ticks", "seconds", "per second")
            .line(self.service_rate("ticks over their period", Color::RED, |s| s.late_ticks))
            .line(self.service_rate("ticks started late", Color::ORANGE, |s| s.late_starts))
            .right_axis(
                "host CPU cores",
                vec![self.service_rate("host CPU", Color::GREY, |s| s.host_cpu_s)],
            )
            .render()
    }

    fn errors(&self) -> Result<Svg, ReportError> {
        LineChart::new("errors", "seconds", "per second")
            .line(
                self.player_line("failed requests per interval (players)", Color::RED, |p| {
                    p.failed_requests as f64
                }),
            )
            .line(self.service_rate("gateway 5xx", Color::ORANGE, |s| s.gateway_errors))
            .line(
                self.service_rate("datagrams dropped (hosts)", Color::GREY, |s| {
                    s.datagrams_dropped
                }),
            )
            .line(self.service_rate("allocations refused", Color::BLUE, |s| {
                s.allocation_failures
            }))
            .render()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matchmaking_queue_is_read_over_the_players_run_alone() {
        let mut l = Launch {
            arrival: Arrival {
                ramp_up_s: 2.0,
                hold_s: 2.0,
                ..Arrival::default()
            },
            ..Launch::default()
        };
        l.service = [
            (0.0, 10.0),
            (1.0, 20.0),
            (2.0, 20.0),
            (3.0, 10.0),
            (4.0, 50.0),
        ]
        .map(|(t_s, matchmaking_queued)| ServicePoint {
            t_s,
            matchmaking_queued,
            ..ServicePoint::default()
        })
        .to_vec();
        l.players = [30, 10]
            .map(|matches_found| PlayerPoint {
                matches_found,
                ..PlayerPoint::default()
            })
            .to_vec();
        l.summarize_matchmaking();
        // 10 + 20 + 20 + 10 player-seconds over the 4 s run (the reading at
        // its end is past it); 40 tickets answered and 10 waiting.
        assert_eq!(l.tickets_answered, 40);
        assert_eq!(l.matchmaking_queued_mean, 15.0);
        assert_eq!(l.matchmaking_wait_all_mean_s, 60.0 / 50.0);
    }

    #[test]
    fn the_launch_scenario_queues_again_after_its_think_times() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/launch.toml");
        let scenario = Scenario::load(std::path::Path::new(file)).unwrap();
        // play (weight 4): results 1.25 + ledger 1.25 + purchase 2 s;
        // leave and rejoin (weight 1): results 1.25 + ledger 2 s.
        assert!((between_matches_s(&scenario) - 4.25).abs() < 1e-9);
    }
}
