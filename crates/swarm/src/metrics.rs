//! The run's `/metrics`: [`LiveFigures`], what a run has measured so far
//! (players, requests, errors by kind, a response-time histogram, matches),
//! kept by the [`Aggregate`](crate::aggregate::Aggregate) and carried in
//! every [`Progress`](crate::aggregate::Progress); [`render`] writes them as
//! Prometheus text and [`MetricsEndpoint`] serves the latest at
//! `GET /metrics` (`hightick swarm run --metrics ADDR`).
//!
//! A distributed run's figures are the coordinator's (merged over every
//! agent); agents serve none.

use std::convert::Infallible;
use std::fmt::{self, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hdrhistogram::Histogram;
use hightick_telemetry::prometheus::durations::WAIT_BOUNDS_S;
use hightick_telemetry::prometheus::text::{CONTENT_TYPE, Exposition, Kind};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::error::SwarmError;
use crate::interval::{ErrorKind, Interval};

/// What a run has measured since its start (counters) and now (gauges).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LiveFigures {
    /// Players alive at the last interval's end.
    pub players: u64,
    /// Requests in flight at the last interval's end.
    pub in_flight: u64,
    /// Requests answered or failed.
    pub requests: u64,
    /// Failed requests, by [`ErrorKind`] index.
    pub errors: [u64; ErrorKind::COUNT],
    /// Requests (failures included) that took at most each bound of
    /// [`WAIT_BOUNDS_S`] (cumulative).
    pub duration_buckets: [u64; WAIT_BOUNDS_S.len()],
    /// Sum of those requests' times, seconds (from the HDR histograms: to
    /// their precision).
    pub duration_sum_s: f64,
    /// Matches begun by match-playing players.
    pub matches_started: u64,
    /// Matches that reached their end event.
    pub matches_finished: u64,
    /// Contradictions match bots found with what their client held.
    pub desyncs: u64,
    /// Players that moved to another of a target's URLs.
    pub failovers: u64,
}

impl LiveFigures {
    /// Adds one interval; `all` is its response times, every step's
    /// requests with failures (microseconds).
    pub fn add(&mut self, interval: &Interval, all: &Histogram<u64>) {
        self.players = interval.users;
        self.in_flight = interval.in_flight;
        self.add_counts(interval, all);
    }

    /// Adds what finished after the last interval (counters only).
    pub fn add_counts(&mut self, interval: &Interval, all: &Histogram<u64>) {
        self.requests += interval.requests();
        for step in &interval.steps {
            for (a, b) in self.errors.iter_mut().zip(step.errors) {
                *a += b;
            }
        }
        if !all.is_empty() {
            for (n, bound) in self.duration_buckets.iter_mut().zip(WAIT_BOUNDS_S) {
                *n += all.count_between(0, (bound * 1e6) as u64);
            }
            self.duration_sum_s += all.mean() * all.len() as f64 / 1e6;
        }
        self.matches_started += interval.matches.started;
        self.matches_finished += interval.matches.finished;
        self.desyncs += interval.matches.desyncs;
        self.failovers += interval.failovers;
    }
}

/// Writes `f` as Prometheus text.
pub fn render<W: Write>(f: &LiveFigures, out: &mut W) -> fmt::Result {
    let mut m = Exposition::new(out);
    m.gauge(
        "hightick_swarm_players",
        "Virtual players alive.",
        f.players,
    )?;
    m.gauge(
        "hightick_swarm_requests_in_flight",
        "Requests sent and not yet answered.",
        f.in_flight,
    )?;
    m.counter(
        "hightick_swarm_requests_total",
        "Requests answered or failed.",
        f.requests,
    )?;
    let errors = "hightick_swarm_request_errors_total";
    m.family(errors, Kind::Counter, "Failed requests, by kind.")?;
    for kind in ErrorKind::ALL {
        m.sample(errors, &[("kind", kind.name())], f.errors[kind.index()])?;
    }
    let duration = "hightick_swarm_request_duration_seconds";
    m.family(
        duration,
        Kind::Histogram,
        "Response times of every request, failures included (open model: from the intended start).",
    )?;
    let buckets = WAIT_BOUNDS_S.into_iter().zip(f.duration_buckets);
    m.histogram(duration, &[], buckets, f.requests, f.duration_sum_s)?;
    m.counter(
        "hightick_swarm_matches_started_total",
        "Matches begun by match-playing players.",
        f.matches_started,
    )?;
    m.counter(
        "hightick_swarm_matches_finished_total",
        "Matches that reached their end event.",
        f.matches_finished,
    )?;
    m.counter(
        "hightick_swarm_desyncs_total",
        "Contradictions match bots found with what their client held.",
        f.desyncs,
    )?;
    m.counter(
        "hightick_swarm_failovers_total",
        "Players that moved to another of a target's URLs after one failed.",
        f.failovers,
    )
}

/// Serves the latest [`LiveFigures`] at `GET /metrics`. See the
/// [module docs](self).
#[derive(Debug)]
pub struct MetricsEndpoint {
    /// Where it listens.
    pub addr: SocketAddr,
    latest: Arc<Mutex<LiveFigures>>,
    task: JoinHandle<()>,
}

impl MetricsEndpoint {
    /// Starts listening on `listen` (port 0: any) on the current runtime.
    pub async fn start(listen: SocketAddr) -> Result<Self, SwarmError> {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(SwarmError::io(format!(
                "listening for /metrics on {listen}"
            )))?;
        let addr = listener
            .local_addr()
            .map_err(SwarmError::io("reading the /metrics address"))?;
        let latest = Arc::new(Mutex::new(LiveFigures::default()));
        let task = tokio::spawn(accept(listener, latest.clone()));
        Ok(Self { addr, latest, task })
    }

    /// Shows `figures` from now on.
    pub fn publish(&self, figures: &LiveFigures) {
        *self.latest.lock() = *figures;
    }

    /// Stops serving.
    pub fn stop(self) {
        self.task.abort();
    }
}

async fn accept(listener: TcpListener, latest: Arc<Mutex<LiveFigures>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let latest = latest.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| answer(req, latest.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    req: Request<Incoming>,
    latest: Arc<Mutex<LiveFigures>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (status, content_type, body) = if req.uri().path() != "/metrics" {
        (
            StatusCode::NOT_FOUND,
            "text/plain",
            "no such endpoint\n".to_owned(),
        )
    } else {
        let figures = *latest.lock();
        let mut body = String::with_capacity(4096);
        match render(&figures, &mut body) {
            Ok(()) => (StatusCode::OK, CONTENT_TYPE, body),
            Err(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "text/plain",
                "rendering metrics failed\n".to_owned(),
            ),
        }
    };
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = http::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(http::header::CONTENT_TYPE, v);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::latency_histogram;

    #[test]
    fn intervals_add_up_into_counters_and_buckets() {
        let mut f = LiveFigures::default();
        let mut i = Interval::new(1);
        i.record_ok(0, 800);
        i.record_ok(0, 40_000);
        i.record_error(0, ErrorKind::Timeout, 10_000_000);
        i.users = 7;
        i.failovers = 3;
        let mut all = latency_histogram();
        i.all_latencies_into(&mut all);
        f.add(&i, &all);
        f.add_counts(&i, &all);
        assert_eq!((f.players, f.requests), (7, 6));
        assert_eq!(f.errors[ErrorKind::Timeout.index()], 2);
        assert_eq!(f.duration_buckets[0], 2, "0.8 ms <= 1 ms");
        assert_eq!(f.duration_buckets[5], 4, "40 ms <= 50 ms");
        assert_eq!(f.duration_buckets[12], 6, "10 s <= 10 s");
        let mut text = String::new();
        render(&f, &mut text).unwrap();
        for line in [
            "hightick_swarm_players 7\n",
            "hightick_swarm_requests_total 6\n",
            "hightick_swarm_request_errors_total{kind=\"timeout\"} 2\n",
            "hightick_swarm_request_duration_seconds_bucket{le=\"0.05\"} 4\n",
            "hightick_swarm_request_duration_seconds_bucket{le=\"+Inf\"} 6\n",
            "hightick_swarm_request_duration_seconds_count 6\n",
            "hightick_swarm_failovers_total 6\n",
        ] {
            assert!(text.contains(line), "{line}{text}");
        }
    }
}
