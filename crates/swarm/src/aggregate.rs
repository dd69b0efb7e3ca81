//! [`Aggregate`]: the run's side of measurement. It takes one merged
//! [`Interval`] per interval (from local drivers, or from every agent),
//! keeps the totals and a compact timeline, runs the pacing controller on
//! the last few intervals, and at the end turns it all into a
//! [`RunResult`].

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;

use crate::interval::{Interval, latency_histogram};
use crate::metrics::LiveFigures;
use crate::pacing::Pacer;
use crate::result::{
    LoadPoint, MatchSummary, PacingSummary, RunResult, StepPoint, Totals, UrlSummary,
};
use crate::scenario::{Model, Scenario};
use crate::threshold::Threshold;

/// A line's worth of how the run is going.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Time since the start.
    pub elapsed: Duration,
    /// The run's planned length.
    pub total: Duration,
    /// Players alive.
    pub users: u64,
    /// Requests per second in the last interval.
    pub rps: f64,
    /// Median response time in the last interval, microseconds.
    pub p50_us: u64,
    /// 99th percentile in the last interval, microseconds.
    pub p99_us: u64,
    /// Failed requests so far.
    pub errors: u64,
    /// The paced rate, if pacing.
    pub paced_rate: Option<f64>,
    /// Everything measured so far, as `/metrics` shows it.
    pub figures: LiveFigures,
}

impl fmt::Display for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "users {} | {:.0} req/s | p50 {:.1} ms p99 {:.1} ms | errors {}",
            self.users,
            self.rps,
            self.p50_us as f64 / 1e3,
            self.p99_us as f64 / 1e3,
            self.errors
        )?;
        if let Some(rate) = self.paced_rate {
            write!(f, " | paced {rate:.1}/s")?;
        }
        let left = self.total.saturating_sub(self.elapsed);
        write!(f, " | {} s left", left.as_secs())
    }
}

/// The run's measurements. See the [module docs](self).
#[derive(Debug)]
pub struct Aggregate {
    scenario: String,
    model: Model,
    users: u64,
    agents: u32,
    ramp_up: Duration,
    interval: Duration,
    total_planned: Duration,
    step_names: Vec<String>,
    /// Every target URL as `(target, url)`, in [`Scenario::target_urls`] order.
    urls: Vec<(String, String)>,
    thresholds: Vec<Threshold>,
    total: Interval,
    pacer: Option<Pacer>,
    recent: VecDeque<Histogram<u64>>,
    measured: Histogram<u64>,
    timeline: Vec<LoadPoint>,
    peak_users: u64,
    started_unix_ms: u64,
    last_t: Duration,
    figures: LiveFigures,
}

impl Aggregate {
    /// Starts measuring a run of `scenario` over `agents` agents.
    pub fn new(scenario: &Scenario, agents: u32) -> Self {
        Self {
            scenario: scenario.name.clone(),
            model: scenario.model,
            users: scenario.users,
            agents: agents.max(1),
            ramp_up: scenario.ramp_up,
            interval: scenario.interval,
            total_planned: scenario.total_duration(),
            step_names: scenario.step_names.clone(),
            urls: scenario
                .target_urls()
                .map(|(t, u)| (t.name.clone(), u.url.clone()))
                .collect(),
            thresholds: scenario.thresholds.clone(),
            total: Interval::new(scenario.step_names.len()),
            pacer: scenario.pacing.clone().map(Pacer::new),
            recent: VecDeque::new(),
            measured: latency_histogram(),
            timeline: Vec::new(),
            peak_users: 0,
            started_unix_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            last_t: Duration::ZERO,
            figures: LiveFigures::default(),
        }
    }

    /// The paced rate for the whole run, if pacing.
    pub fn rate(&self) -> Option<f64> {
        self.pacer.as_ref().map(Pacer::rate)
    }

    /// Everything measured so far.
    pub fn total(&self) -> &Interval {
        &self.total
    }

    /// The timeline so far.
    pub fn timeline(&self) -> &[LoadPoint] {
        &self.timeline
    }

    /// Adds the interval that ended `t` after the start (merged over every
    /// driver and agent) and returns the new paced rate, if pacing.
    pub fn push(&mut self, t: Duration, interval: &Interval) -> Option<f64> {
        self.total.add(interval);
        self.peak_users = self.peak_users.max(interval.users);
        let span = t.saturating_sub(self.last_t).as_secs_f64().max(1e-3);
        self.last_t = t;

        let mut all = self.recycled();
        interval.all_latencies_into(&mut all);
        self.figures.add(interval, &all);
        let q = |h: &Histogram<u64>, q: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q)
            }
        };
        let mut point = LoadPoint {
            t_s: t.as_secs_f64(),
            users: interval.users,
            in_flight: interval.in_flight,
            requests: interval.requests(),
            failed: interval.failed(),
            rps: interval.requests() as f64 / span,
            p50_us: q(&all, 0.5),
            p90_us: q(&all, 0.9),
            p99_us: q(&all, 0.99),
            max_us: if all.is_empty() { 0 } else { all.max() },
            paced_rate: None,
            paced_measure_us: None,
            steps: interval
                .steps
                .iter()
                .map(|s| StepPoint {
                    requests: s.requests(),
                    failed: s.failed(),
                    p50_us: q(&s.latency, 0.5),
                    p99_us: q(&s.latency, 0.99),
                    step_time_p50_us: q(&s.step_time, 0.5),
                    step_time_p99_us: q(&s.step_time, 0.99),
                    steps_done: s.step_time.len(),
                })
                .collect(),
            matches: (interval.matches.started > 0).then(|| MatchSummary::build(&interval.matches)),
        };
        self.recent.push_back(all);
        let rate = self.pace(&mut point);
        self.timeline.push(point);
        rate
    }

    fn recycled(&mut self) -> Histogram<u64> {
        let window = self
            .pacer
            .as_ref()
            .map_or(1, |p| p.config().window as usize);
        if self.recent.len() >= window
            && let Some(mut h) = self.recent.pop_front()
        {
            h.reset();
            return h;
        }
        latency_histogram()
    }

    fn pace(&mut self, point: &mut LoadPoint) -> Option<f64> {
        let pacer = self.pacer.as_mut()?;
        self.measured.reset();
        for h in &self.recent {
            let _ = self.measured.add(h);
        }
        let config = pacer.config();
        let measure = (self.measured.len() >= config.min_samples)
            .then(|| self.measured.value_at_quantile(config.quantile) as f64);
        let rate = pacer.update(measure);
        point.paced_rate = Some(rate);
        point.paced_measure_us = measure;
        Some(rate)
    }

    /// Adds what finished after the last interval (the drain) to the totals only.
    pub fn absorb(&mut self, late: &Interval) {
        self.total.add(late);
        let mut all = latency_histogram();
        late.all_latencies_into(&mut all);
        self.figures.add_counts(late, &all);
    }

    /// How the run is going.
    pub fn progress(&self, elapsed: Duration) -> Progress {
        let last = self.timeline.last();
        Progress {
            elapsed,
            total: self.total_planned,
            users: last.map_or(0, |p| p.users),
            rps: last.map_or(0.0, |p| p.rps),
            p50_us: last.map_or(0, |p| p.p50_us),
            p99_us: last.map_or(0, |p| p.p99_us),
            errors: self.total.failed(),
            paced_rate: self.rate(),
            figures: self.figures,
        }
    }

    /// The result; `elapsed` is the run's length.
    pub fn finish(self, elapsed: Duration) -> RunResult {
        let elapsed_s = elapsed.as_secs_f64();
        let totals = Totals {
            step_names: &self.step_names,
            total: &self.total,
            elapsed_s,
        };
        let thresholds = totals.judge(&self.thresholds);
        let (total, steps) = totals.step_summaries();
        RunResult {
            scenario: self.scenario,
            model: match self.model {
                Model::Closed => "closed".to_owned(),
                Model::Open => "open".to_owned(),
            },
            users: self.users,
            agents: self.agents,
            started_unix_ms: self.started_unix_ms,
            elapsed_s,
            ramp_up_s: self.ramp_up.as_secs_f64(),
            interval_s: self.interval.as_secs_f64(),
            peak_users: self.peak_users,
            total,
            steps,
            errors: totals.error_summaries(),
            matches: totals.match_summary(),
            pacing: self.pacer.as_ref().map(|p| PacingSummary {
                target_ms: p.config().target.as_secs_f64() * 1e3,
                percentile: p.config().quantile * 100.0,
                final_rate: p.rate(),
            }),
            passed: thresholds.iter().all(|t| t.passed),
            thresholds,
            failovers: self.total.failovers,
            target_urls: self
                .urls
                .into_iter()
                .enumerate()
                .map(|(i, (target, url))| UrlSummary {
                    target,
                    url,
                    requests: self.total.urls.get(i).copied().unwrap_or(0),
                })
                .collect(),
            timeline: self.timeline,
            request_log: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::ErrorKind;

    const TEXT: &str = r#"
users = 10
duration = "3s"
[targets]
t = "http://127.0.0.1:1"
[[setup]]
name = "login"
url = "/login"
[[behaviour]]
name = "read"
[[behaviour.step]]
name = "read"
url = "/read"
[[threshold]]
metric = "p99"
step = "login"
max = "10ms"
[[threshold]]
metric = "error_rate"
max = 0.1
"#;

    #[test]
    fn intervals_become_a_timeline_totals_and_threshold_outcomes() {
        let s = Scenario::parse(TEXT, "t.toml").unwrap();
        let mut agg = Aggregate::new(&s, 1);
        let mut i = Interval::new(2);
        for k in 0..100 {
            i.record_ok(0, 1_000 + k);
            i.record_ok(1, 50_000);
        }
        i.record_error(1, ErrorKind::Status, 2_000);
        i.users = 10;
        assert_eq!(agg.push(Duration::from_secs(1), &i), None);
        i.reset();
        for _ in 0..5 {
            i.record_ok(0, 20_000);
        }
        i.users = 8;
        agg.push(Duration::from_millis(2_000), &i);
        let p = agg.progress(Duration::from_secs(2));
        assert_eq!((p.users, p.errors), (8, 1));
        assert!(p.to_string().contains("1 s left"), "{p}");
        let r = agg.finish(Duration::from_secs(2));
        assert_eq!(r.timeline.len(), 2);
        assert_eq!(r.timeline[0].requests, 201);
        assert_eq!(r.peak_users, 10);
        assert_eq!(r.steps[0].requests, 105);
        assert_eq!(r.steps[1].errors.get("status"), Some(&1));
        assert_eq!(r.total.requests, 206);
        // The p99 of login is 20 ms, over 10 ms: fails; the error rate passes.
        assert!(!r.thresholds[0].passed, "{:?}", r.thresholds);
        assert!(r.thresholds[1].passed);
        assert!(!r.passed);
        assert_eq!(r.errors[0].kind, "status");
        let back: RunResult = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.steps[0].latency().unwrap().len(), 105);
    }
}
