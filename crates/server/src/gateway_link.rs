//! The host's link to its gateway, on a thread of its own: it registers and
//! heartbeats (host id, admin address, capacity, active matches, draining,
//! region) and posts each result the outbox holds, with the match id as its
//! idempotency key, retrying with backoff until the gateway acknowledges it.
//! On its way out (the host drained) it keeps posting for a while; what is
//! still unacknowledged then stays in the outbox for the next start.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::admin::AdminState;
use crate::delivery::{Deliveries, PostAnswer};
use crate::error::ServerError;
use hightick_host_api::{Heartbeat, MatchResult};

use crate::outbox::Outbox;
use crate::results::Settling;

/// Longest one HTTP call to the gateway may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest the link sleeps, so a drain's heartbeat goes out promptly.
const MAX_SLEEP: Duration = Duration::from_millis(200);
/// How long a stopping host keeps posting what its outbox holds.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(10);

/// Who the host is to its gateway, and where that is.
#[derive(Debug, Clone)]
pub(crate) struct LinkSetup {
    /// The gateway's base URL (`http://gw:8080`).
    pub url: String,
    /// The servers' bearer secret.
    pub secret: String,
    /// This host's stable identity.
    pub host_id: String,
    /// Region tag matchmaking may prefer.
    pub region: String,
    /// How often to heartbeat.
    pub heartbeat: Duration,
    /// The admin address the gateway allocates matches through.
    pub admin: SocketAddr,
    /// The game the host serves.
    pub game: &'static str,
    /// The outbox the link delivers from.
    pub outbox: Outbox,
}

/// Starts the link thread. It ends once `records` is closed (the results
/// thread is done) and the outbox is flushed or [`FLUSH_TIMEOUT`] passed.
pub(crate) fn start(
    setup: LinkSetup,
    records: Receiver<MatchResult>,
    state: Arc<AdminState>,
    settling: Arc<Settling>,
) -> Result<JoinHandle<()>, ServerError> {
    let mut link = Link {
        agent: ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(CALL_TIMEOUT))
            .build()
            .into(),
        deliveries: Deliveries::default(),
        reachable: true,
        setup,
        state,
        settling,
    };
    for record in link.setup.outbox.pending()? {
        link.add(record, Instant::now());
    }
    Ok(std::thread::Builder::new()
        .name("hightick-gateway-link".to_owned())
        .spawn(move || link.run(&records))?)
}

struct Link {
    agent: ureq::Agent,
    setup: LinkSetup,
    deliveries: Deliveries<MatchResult>,
    /// Whether the last call got through (to log changes once).
    reachable: bool,
    state: Arc<AdminState>,
    settling: Arc<Settling>,
}

impl Link {
    fn run(mut self, records: &Receiver<MatchResult>) {
        let mut next_heartbeat = Instant::now();
        let mut was_draining = false;
        let mut flush_until = None;
        loop {
            let now = Instant::now();
            let draining = self.state.draining.load(Ordering::SeqCst);
            if now >= next_heartbeat || draining != was_draining {
                self.heartbeat(draining);
                was_draining = draining;
                next_heartbeat = now + self.setup.heartbeat;
            }
            self.post_due(Instant::now());
            self.settling.set_unacknowledged(self.deliveries.len());
            if let Some(until) = flush_until
                && (self.deliveries.len() == 0 || Instant::now() >= until)
            {
                break;
            }
            let wake = self
                .deliveries
                .next_due()
                .unwrap_or(next_heartbeat)
                .min(next_heartbeat)
                .min(Instant::now() + MAX_SLEEP);
            if flush_until.is_some() {
                std::thread::sleep(wake.saturating_duration_since(Instant::now()));
                continue;
            }
            match records.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                Ok(record) => {
                    self.add(record, Instant::now());
                    self.settling.set_unacknowledged(self.deliveries.len());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    flush_until = Some(Instant::now() + FLUSH_TIMEOUT);
                }
            }
        }
        self.heartbeat(true);
        if self.deliveries.len() > 0 {
            eprintln!(
                "hightick serve: {} result(s) not yet acknowledged by the gateway stay in the outbox for the next start",
                self.deliveries.len()
            );
        }
    }

    fn add(&mut self, record: MatchResult, now: Instant) {
        let match_id = record.match_id.clone();
        self.deliveries.add(&match_id, record, now);
    }

    fn heartbeat(&mut self, draining: bool) {
        let workers = &self.state.workers;
        let capacity = workers.iter().map(|w| w.max_matches).sum();
        let active = workers
            .iter()
            .map(|w| w.load.matches.load(Ordering::Relaxed))
            .sum::<usize>()
            + self.settling.pending();
        let body = Heartbeat {
            host_id: Some(self.setup.host_id.clone()),
            admin: self.setup.admin,
            capacity,
            active: active.min(capacity),
            draining,
            region: self.setup.region.clone(),
            game: self.setup.game.to_owned(),
        };
        let answer = self.post("/v1/hosts", &body, None);
        self.note_reachability(&answer, "heartbeat");
    }

    fn post_due(&mut self, now: Instant) {
        for match_id in self.deliveries.due(now) {
            let Some(record) = self.deliveries.get(&match_id) else {
                continue;
            };
            let answer = self.post("/v1/results", record, Some(&match_id));
            self.note_reachability(&answer, "result");
            let jitter = 0.5 + rand::random::<f64>() * 0.5;
            if !self
                .deliveries
                .answered(&match_id, &answer, Instant::now(), jitter)
            {
                continue;
            }
            let done = match &answer {
                PostAnswer::Refused(reason) => {
                    eprintln!(
                        "hightick serve: the gateway refused the result of match {match_id} ({reason}); kept in the outbox's rejected/"
                    );
                    self.setup.outbox.reject(&match_id, reason)
                }
                _ => self.setup.outbox.acknowledge(&match_id),
            };
            if let Err(e) = done {
                eprintln!("hightick serve: outbox, match {match_id}: {e}");
            }
        }
    }

    fn note_reachability(&mut self, answer: &PostAnswer, what: &str) {
        let reachable = !matches!(answer, PostAnswer::Retry(_));
        if reachable != self.reachable {
            match answer {
                PostAnswer::Retry(reason) => eprintln!(
                    "hightick serve: gateway {} not reachable ({what}: {reason}); results wait in the outbox",
                    self.setup.url
                ),
                _ => eprintln!("hightick serve: gateway {} reachable again", self.setup.url),
            }
            self.reachable = reachable;
        }
    }

    fn post(&self, path: &str, body: &impl Serialize, idempotency_key: Option<&str>) -> PostAnswer {
        let url = format!("{}{path}", self.setup.url.trim_end_matches('/'));
        let mut request = self
            .agent
            .post(&url)
            .header("authorization", &format!("Bearer {}", self.setup.secret));
        if let Some(key) = idempotency_key {
            request = request.header("idempotency-key", key);
        }
        match request.send_json(body) {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let text = response.body_mut().read_to_string().unwrap_or_default();
                PostAnswer::of_status(Some(status), text.trim())
            }
            Err(e) => PostAnswer::of_status(None, &e.to_string()),
        }
    }
}
