//! A rehearsal's own figures, read from the report `hightick stack --json`
//! writes: its players and how they arrived (a stampede, then a trickle),
//! the time between a player's matches, the login time, the hosts and the
//! matches they hold at once, the players per match and the match length;
//! and what the run measured, for the plan to be set against: the
//! matchmaking wait (mean, median, 99th percentile) and the matches running
//! at the peak. A plan built from a [`Rehearsal`] ([`Rehearsal::target`] and
//! `PlanInputs::rehearsal`) predicts the rehearsal.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::error::LabError;
use crate::plan::inputs::{Deployment, StoreBackend, Target};
use crate::plan::queue::QueueModel;

/// What the run measured, to set the plan against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFigures {
    /// Mean wait of every ticket, those still waiting at the end counting
    /// their wait so far (the queue over time / the tickets), s.
    pub wait_all_mean_s: f64,
    /// Mean players waiting in matchmaking over the run.
    pub queued_mean: f64,
    /// Mean matchmaking wait of the tickets answered (ticket to match found), s.
    pub wait_mean_s: f64,
    /// Their median, s.
    pub wait_p50_s: f64,
    /// Their 99th percentile, s.
    pub wait_p99_s: f64,
    /// Most matches the hosts ran at once.
    pub matches_running_peak: f64,
}

/// A rehearsal's shape and outcome, from its report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rehearsal {
    /// The report file it was read from.
    pub file: String,
    /// The command that ran it, rebuilt from the report.
    pub command: String,
    /// The mode played.
    pub mode: String,
    /// The store it ran on.
    pub store: StoreBackend,
    /// Players in all.
    pub players: u64,
    /// Seconds over which they arrived.
    pub ramp_up_s: f64,
    /// Share that came in the stampede (0: even arrivals).
    pub stampede_share: f64,
    /// Seconds the stampede took.
    pub stampede_within_s: f64,
    /// Seconds the run held after the ramp-up.
    pub hold_s: f64,
    /// Mean seconds from a match's end to the player's next ticket.
    pub between_matches_s: f64,
    /// Mean login, s (through the login queue).
    pub login_s: f64,
    /// Server hosts.
    pub hosts: u64,
    /// Gateways (their matchmaking passes claim disjoint tickets).
    pub gateways: u64,
    /// Matches the hosts hold at once.
    pub matches_at_once: u64,
    /// Players per match.
    pub players_per_match: u32,
    /// Seconds a match held its seat on a host (the run's mean).
    pub match_s: f64,
    /// Peak logins per second.
    pub login_rate_peak_per_s: f64,
    /// Requests per player per minute over the run.
    pub requests_per_player_min: f64,
    /// What the run measured.
    pub measured: RunFigures,
}

/// The fields of the report the plan reads, by dotted path.
pub mod field {
    /// Players in all.
    pub const PLAYERS: &str = "players";
    /// The mode.
    pub const MODE: &str = "mode";
    /// `sqlite` or `postgres`.
    pub const BACKEND: &str = "backend";
    /// Hosts.
    pub const HOSTS: &str = "hosts";
    /// Gateways.
    pub const GATEWAYS: &str = "gateways";
    /// The players' run, s.
    pub const ELAPSED: &str = "elapsed_s";
    /// Requests the players made.
    pub const REQUESTS: &str = "requests";
    /// Mean login, ms.
    pub const LOGIN_MEAN: &str = "login.mean_ms";
    /// Mean matchmaking wait, ms.
    pub const WAIT_MEAN: &str = "match_found.mean_ms";
    /// Median matchmaking wait, ms.
    pub const WAIT_P50: &str = "match_found.p50_ms";
    /// 99th percentile matchmaking wait, ms.
    pub const WAIT_P99: &str = "match_found.p99_ms";
    /// The ramp-up, s.
    pub const RAMP_UP: &str = "launch.arrival.ramp_up_s";
    /// The stampede's share.
    pub const STAMPEDE_SHARE: &str = "launch.arrival.stampede_share";
    /// The stampede's window, s.
    pub const STAMPEDE_WITHIN: &str = "launch.arrival.stampede_within_s";
    /// The hold after the ramp-up, s.
    pub const HOLD: &str = "launch.arrival.hold_s";
    /// From a match's end to the next ticket, s.
    pub const BETWEEN_MATCHES: &str = "launch.arrival.between_matches_s";
    /// Matches the hosts hold at once.
    pub const MATCHES_AT_ONCE: &str = "launch.capacity.matches_at_once";
    /// Players per match.
    pub const PLAYERS_PER_MATCH: &str = "launch.capacity.players_per_match";
    /// Match length, minutes.
    pub const MATCH_MINUTES: &str = "launch.capacity.match_minutes";
    /// Peak matches running.
    pub const MATCHES_RUNNING_PEAK: &str = "launch.capacity.matches_running_peak";
    /// Peak logins per second.
    pub const LOGIN_RATE_PEAK: &str = "launch.login_rate_peak_per_s";
    /// Mean wait of every ticket, s.
    pub const WAIT_ALL_MEAN: &str = "launch.matchmaking_wait_all_mean_s";
    /// Mean players waiting in matchmaking.
    pub const QUEUED_MEAN: &str = "launch.matchmaking_queued_mean";
    /// The scenario file (null: the stack's own journey).
    pub const SCENARIO: &str = "launch.scenario";
}

/// A report's JSON, read field by field; each error names the file and the field.
struct Report<'a> {
    file: &'a str,
    json: Value,
}

impl Report<'_> {
    fn error(&self, field: &'static str, message: impl Into<String>) -> LabError {
        LabError::Rehearsal {
            file: self.file.to_owned(),
            field,
            message: message.into(),
        }
    }

    fn get(&self, field: &'static str) -> Option<&Value> {
        field.split('.').try_fold(&self.json, |v, part| v.get(part))
    }

    /// A number at or above 0.
    fn number(&self, field: &'static str) -> Result<f64, LabError> {
        let v = self.get(field).ok_or_else(|| {
            self.error(
                field,
                "missing (is this a `hightick stack --json` report of this version?)",
            )
        })?;
        match v.as_f64() {
            Some(x) if x >= 0.0 && x.is_finite() => Ok(x),
            _ => Err(self.error(field, format!("must be a number at or above 0, not {v}"))),
        }
    }

    /// A number above 0, with what its being 0 means.
    fn positive(&self, field: &'static str, if_zero: &str) -> Result<f64, LabError> {
        let x = self.number(field)?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.error(field, format!("is 0: {if_zero}")))
        }
    }

    fn text(&self, field: &'static str) -> Result<String, LabError> {
        self.get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.error(field, "missing, or not text"))
    }
}

impl Rehearsal {
    /// Reads the report at `path`.
    pub fn read(path: &Path) -> Result<Self, LabError> {
        let text = std::fs::read_to_string(path).map_err(|e| LabError::Rehearsal {
            file: path.display().to_string(),
            field: "(the whole report)",
            message: format!("cannot be read: {e}"),
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// Reads a report's JSON `text`, from `file`.
    pub fn from_json(text: &str, file: &str) -> Result<Self, LabError> {
        use field::*;
        let json = serde_json::from_str(text).map_err(|e| LabError::Rehearsal {
            file: file.to_owned(),
            field: "(the whole report)",
            message: format!("not JSON: {e}"),
        })?;
        let r = Report { file, json };
        let store = match r.text(BACKEND)?.as_str() {
            "sqlite" => StoreBackend::Sqlite,
            "postgres" => StoreBackend::Postgres,
            other => {
                return Err(r.error(BACKEND, format!("`{other}` is neither sqlite nor postgres")));
            }
        };
        let players = r.positive(PLAYERS, "a rehearsal of no players")? as u64;
        let elapsed_s = r.positive(ELAPSED, "the players never ran")?;
        let hosts = r.positive(HOSTS, "a rehearsal with no hosts")? as u64;
        let stampede_share = r.number(STAMPEDE_SHARE)?;
        if stampede_share > 1.0 {
            return Err(r.error(STAMPEDE_SHARE, "must be from 0 to 1"));
        }
        let scenario = r.get(SCENARIO).and_then(Value::as_str);
        let ramp_up_s = r.number(RAMP_UP)?;
        let hold_s = r.number(HOLD)?;
        let command = format!(
            "hightick stack{} --players {players} --hosts {hosts} --ramp-up {ramp_up_s}s --duration {hold_s}s",
            scenario.map_or_else(String::new, |s| format!(" --scenario {s}"))
        );
        Ok(Rehearsal {
            file: file.to_owned(),
            command,
            mode: r.text(MODE)?,
            store,
            players,
            ramp_up_s,
            stampede_share,
            stampede_within_s: r.number(STAMPEDE_WITHIN)?,
            hold_s,
            between_matches_s: r.number(BETWEEN_MATCHES)?,
            login_s: r.number(LOGIN_MEAN)? / 1000.0,
            hosts,
            gateways: r.positive(GATEWAYS, "a rehearsal with no gateway")? as u64,
            matches_at_once: r.positive(
                MATCHES_AT_ONCE,
                "the hosts listed no room (did they register with the gateway?)",
            )? as u64,
            players_per_match: r.positive(PLAYERS_PER_MATCH, "matches of no players")? as u32,
            match_s: r.positive(
                MATCH_MINUTES,
                "no match finished: a run too short to show the match length",
            )? * 60.0,
            login_rate_peak_per_s: r.number(LOGIN_RATE_PEAK)?,
            requests_per_player_min: r.number(REQUESTS)? / players as f64 / (elapsed_s / 60.0),
            measured: RunFigures {
                wait_all_mean_s: r.number(WAIT_ALL_MEAN)?,
                queued_mean: r.number(QUEUED_MEAN)?,
                wait_mean_s: r.number(WAIT_MEAN)? / 1000.0,
                wait_p50_s: r.number(WAIT_P50)? / 1000.0,
                wait_p99_s: r.number(WAIT_P99)? / 1000.0,
                matches_running_peak: r.number(MATCHES_RUNNING_PEAK)?,
            },
        })
    }

    /// The target the rehearsal played: its players, mode (at `tick_rate_hz`,
    /// which the report does not carry), peak logins, requests per player and
    /// match length; purchases are not told apart in the report (0).
    pub fn target(&self, tick_rate_hz: u32) -> Target {
        Target {
            ccu: self.players,
            mode: self.mode.clone(),
            players_per_match: self.players_per_match,
            tick_rate_hz,
            login_rate_per_s: self.login_rate_peak_per_s,
            requests_per_player_min: self.requests_per_player_min,
            purchases_per_player_min: 0.0,
            match_minutes: self.match_s / 60.0,
            store: self.store,
        }
    }

    /// Matches one host holds.
    pub fn matches_per_host(&self) -> f64 {
        self.matches_at_once as f64 / self.hosts.max(1) as f64
    }

    /// The queue model of the rehearsal deployed as `d`, its hosts holding
    /// `matches_at_once` (`None`: room for every match).
    pub fn queue_model(&self, d: &Deployment, matches_at_once: Option<u64>) -> QueueModel {
        QueueModel {
            players: self.players,
            ramp_up_s: self.ramp_up_s,
            stampede: (self.stampede_share > 0.0)
                .then_some((self.stampede_share, self.stampede_within_s)),
            run_s: self.ramp_up_s + self.hold_s,
            login_s: self.login_s,
            players_per_match: self.players_per_match,
            matches_at_once,
            match_s: self.match_s,
            between_matches_s: self.between_matches_s,
            pass_s: d.matchmaking_pass_s,
            seat_free_lag_s: d.host_heartbeat_s / 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fixtures::rehearsal_report;

    #[test]
    fn a_report_gives_the_rehearsals_shape_and_outcome() {
        let r = Rehearsal::from_json(&rehearsal_report().to_string(), "run.json").unwrap();
        assert_eq!(r.players, 200);
        assert_eq!(r.gateways, 1);
        assert_eq!(r.matches_at_once, 4);
        assert_eq!(r.matches_per_host(), 2.0);
        assert_eq!(r.match_s, 12.0);
        assert_eq!(r.login_s, 0.05);
        assert_eq!(r.measured.wait_p50_s, 30.0);
        assert_eq!(r.store, StoreBackend::Sqlite);
        assert!(r.command.contains("--scenario launch.toml --players 200"));
        let t = r.target(128);
        assert_eq!(t.ccu, 200);
        assert!((t.requests_per_player_min - 6.0).abs() < 1e-9);
        assert!(t.validate().is_ok());
        let m = r.queue_model(&Deployment::default(), Some(4));
        assert_eq!(m.stampede, Some((0.5, 1.0)));
        assert_eq!(m.run_s, 65.0);
        assert_eq!(m.seat_free_lag_s, 1.0);
    }

    #[test]
    fn a_missing_or_bad_figure_names_the_file_and_field() {
        let mut json = rehearsal_report();
        json["launch"]["capacity"]
            .as_object_mut()
            .unwrap()
            .remove("match_minutes");
        let e = Rehearsal::from_json(&json.to_string(), "run.json").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("run.json: launch.capacity.match_minutes: missing"),
            "{e}"
        );
        let mut json = rehearsal_report();
        json["launch"]["capacity"]["matches_at_once"] = 0.into();
        let e = Rehearsal::from_json(&json.to_string(), "run.json").unwrap_err();
        assert!(e.to_string().contains("matches_at_once: is 0"), "{e}");
        let e = Rehearsal::from_json("{", "run.json").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("run.json: (the whole report): not JSON")
        );
    }
}
