//! [`Interval`]: what a swarm measured in one interval (a second by
//! default): per step, an HDR histogram of response times and counts per
//! error kind; per error kind, a histogram of how long failures took; and
//! what match-playing players saw. Drivers record into their own interval,
//! the run collects and merges them each interval, agents stream them to a
//! coordinator that merges theirs. Nothing per request is kept.

use hdrhistogram::Histogram;

/// Response times are microseconds in `[1, 1 hour]` at 3 significant digits.
pub const HIGHEST_US: u64 = 3_600_000_000;

/// A fresh response-time histogram.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("constant histogram bounds are valid")
}

/// Records `us` (clamped into range).
pub fn record_us(h: &mut Histogram<u64>, us: u64) {
    h.saturating_record(us.clamp(1, HIGHEST_US));
}

/// Appends `h` in the HdrHistogram V2 format (uncompressed).
pub fn encode_histogram(h: &Histogram<u64>, out: &mut Vec<u8>) {
    use hdrhistogram::serialization::Serializer as _;
    // Writing into a Vec cannot fail; a histogram too large for usize cannot exist.
    let _ = hdrhistogram::serialization::V2Serializer::new().serialize(h, out);
}

const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_HEADER: usize = 40;

/// Reads a histogram written by [`encode_histogram`]: uncompressed V2 with
/// exactly this crate's bounds (anything else is refused before it can ask
/// for memory).
pub fn decode_histogram(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    use hdrhistogram::serialization::Deserializer;
    if bytes.len() < V2_HEADER {
        return Err(format!(
            "histogram: {} bytes is shorter than a header",
            bytes.len()
        ));
    }
    let u32_at =
        |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let u64_at = |i: usize| (u64::from(u32_at(i)) << 32) | u64::from(u32_at(i + 4));
    if u32_at(0) != V2_COOKIE {
        return Err("histogram: not an uncompressed V2 histogram".to_owned());
    }
    if u32_at(4) as usize != bytes.len() - V2_HEADER {
        return Err("histogram: the payload length does not match".to_owned());
    }
    if (u32_at(12), u64_at(16), u64_at(24)) != (3, 1, HIGHEST_US) {
        return Err("histogram: bounds other than 1 us..1 h at 3 digits".to_owned());
    }
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("histogram: {e:?}"))
}

/// Why a request or step failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// The TCP connection (or the HTTP handshake) failed.
    Connect,
    /// No answer within the step's timeout (or a queue wait over `max_wait`).
    Timeout,
    /// The connection broke or the response was not HTTP.
    Transport,
    /// A status the step does not accept.
    Status,
    /// A capture's JSON pointer found nothing (or the body was not JSON).
    Capture,
    /// A template needed a variable the player has not captured, or
    /// rendered into something that is not a valid URL or header.
    Template,
    /// A match could not start (bad token, socket, a server outside an
    /// agent's allow-list) or the bot failed.
    Match,
    /// Open model: an arrival found every player slot busy.
    Overflow,
}

impl ErrorKind {
    /// Every kind, in index order.
    pub const ALL: [ErrorKind; 8] = [
        Self::Connect,
        Self::Timeout,
        Self::Transport,
        Self::Status,
        Self::Capture,
        Self::Template,
        Self::Match,
        Self::Overflow,
    ];

    /// How many kinds there are.
    pub const COUNT: usize = Self::ALL.len();

    /// Its index in [`Self::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Timeout => "timeout",
            Self::Transport => "transport",
            Self::Status => "status",
            Self::Capture => "capture",
            Self::Template => "template",
            Self::Match => "match",
            Self::Overflow => "overflow",
        }
    }
}

/// One step's measurements.
#[derive(Debug, Clone)]
pub struct StepSample {
    /// Response times of successful requests, microseconds (from the
    /// intended start in the open model: corrected for coordinated omission).
    pub latency: Histogram<u64>,
    /// Time from a step's first attempt to its success, retries and queue
    /// waits included, microseconds.
    pub step_time: Histogram<u64>,
    /// Failed requests by [`ErrorKind`].
    pub errors: [u64; ErrorKind::COUNT],
    /// Requests that were retries.
    pub retries: u64,
}

impl StepSample {
    /// Nothing measured yet.
    pub fn empty() -> Self {
        Self {
            latency: latency_histogram(),
            step_time: latency_histogram(),
            errors: [0; ErrorKind::COUNT],
            retries: 0,
        }
    }

    /// Successful requests.
    pub fn ok(&self) -> u64 {
        self.latency.len()
    }

    /// Failed requests.
    pub fn failed(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Requests, ok or not.
    pub fn requests(&self) -> u64 {
        self.ok() + self.failed()
    }

    /// Adds `other` into it.
    pub fn add(&mut self, other: &StepSample) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.latency.add(&other.latency);
        let _ = self.step_time.add(&other.step_time);
        for (a, b) in self.errors.iter_mut().zip(other.errors) {
            *a += b;
        }
        self.retries += other.retries;
    }

    fn reset(&mut self) {
        self.latency.reset();
        self.step_time.reset();
        self.errors = [0; ErrorKind::COUNT];
        self.retries = 0;
    }
}

/// What match-playing players saw.
#[derive(Debug, Clone)]
pub struct MatchSample {
    /// Snapshot inter-arrival times, microseconds.
    pub interarrival: Histogram<u64>,
    /// Round-trip times from acks (one sample per bot per second), microseconds.
    pub rtt: Histogram<u64>,
    /// Matches begun.
    pub started: u64,
    /// Matches that reached their end event.
    pub finished: u64,
    /// Snapshots applied.
    pub snapshots: u64,
    /// Contradictions with what the client held.
    pub desyncs: u64,
    /// Messages that did not decode.
    pub decode_errors: u64,
    /// Connections that ended before the match did.
    pub disconnects: u64,
    /// Packets presumed lost.
    pub packets_lost: u64,
    /// Packets acknowledged.
    pub packets_acked: u64,
}

impl MatchSample {
    /// Nothing seen yet.
    pub fn empty() -> Self {
        Self {
            interarrival: latency_histogram(),
            rtt: latency_histogram(),
            started: 0,
            finished: 0,
            snapshots: 0,
            desyncs: 0,
            decode_errors: 0,
            disconnects: 0,
            packets_lost: 0,
            packets_acked: 0,
        }
    }

    /// The counters, in wire order.
    pub fn counters(&self) -> [u64; 8] {
        [
            self.started,
            self.finished,
            self.snapshots,
            self.desyncs,
            self.decode_errors,
            self.disconnects,
            self.packets_lost,
            self.packets_acked,
        ]
    }

    /// Sets the counters from wire order.
    pub fn set_counters(&mut self, c: [u64; 8]) {
        [
            self.started,
            self.finished,
            self.snapshots,
            self.desyncs,
            self.decode_errors,
            self.disconnects,
            self.packets_lost,
            self.packets_acked,
        ] = c;
    }

    /// Lost over settled packets.
    pub fn packet_loss(&self) -> f64 {
        let settled = self.packets_lost + self.packets_acked;
        if settled == 0 {
            0.0
        } else {
            self.packets_lost as f64 / settled as f64
        }
    }

    /// Adds `o` into it.
    pub fn add(&mut self, o: &MatchSample) {
        let _ = self.interarrival.add(&o.interarrival);
        let _ = self.rtt.add(&o.rtt);
        let mut c = self.counters();
        for (a, b) in c.iter_mut().zip(o.counters()) {
            *a += b;
        }
        self.set_counters(c);
    }

    fn reset(&mut self) {
        self.interarrival.reset();
        self.rtt.reset();
        self.set_counters([0; 8]);
    }
}

/// One interval's measurements. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Interval {
    /// Per step, by step id.
    pub steps: Vec<StepSample>,
    /// How long failed requests took, per [`ErrorKind`], microseconds.
    pub errors: Vec<Histogram<u64>>,
    /// Match-playing players.
    pub matches: MatchSample,
    /// Players alive at the end of the interval.
    pub users: u64,
    /// Requests in flight at the end of the interval.
    pub in_flight: u64,
    /// Players that moved to another of a target's URLs.
    pub failovers: u64,
    /// Requests per target URL (index: [`Scenario::target_urls`](crate::Scenario::target_urls));
    /// grows to the highest URL recorded, then keeps its memory.
    pub urls: Vec<u64>,
}

impl Interval {
    /// An empty interval for `steps` steps.
    pub fn new(steps: usize) -> Self {
        Self {
            steps: (0..steps).map(|_| StepSample::empty()).collect(),
            errors: ErrorKind::ALL.iter().map(|_| latency_histogram()).collect(),
            matches: MatchSample::empty(),
            users: 0,
            in_flight: 0,
            failovers: 0,
            urls: Vec::new(),
        }
    }

    /// Counts a request to target URL `url`.
    pub fn record_url(&mut self, url: usize) {
        if self.urls.len() <= url {
            self.urls.resize(url + 1, 0);
        }
        self.urls[url] += 1;
    }

    /// Records a success of step `step` after `us` microseconds.
    pub fn record_ok(&mut self, step: u16, us: u64) {
        if let Some(s) = self.steps.get_mut(step as usize) {
            record_us(&mut s.latency, us);
        }
    }

    /// Records a failure of kind `kind` of step `step` after `us` microseconds.
    pub fn record_error(&mut self, step: u16, kind: ErrorKind, us: u64) {
        if let Some(s) = self.steps.get_mut(step as usize) {
            s.errors[kind.index()] += 1;
        }
        record_us(&mut self.errors[kind.index()], us);
    }

    /// Records a completed step that took `us` from its first attempt.
    pub fn record_step_time(&mut self, step: u16, us: u64) {
        if let Some(s) = self.steps.get_mut(step as usize) {
            record_us(&mut s.step_time, us);
        }
    }

    /// Counts a retry of step `step`.
    pub fn record_retry(&mut self, step: u16) {
        if let Some(s) = self.steps.get_mut(step as usize) {
            s.retries += 1;
        }
    }

    /// Adds `other`'s measurements; gauges (users, in flight) add too, so
    /// shards of one run sum to the whole.
    pub fn add(&mut self, other: &Interval) {
        for (a, b) in self.steps.iter_mut().zip(&other.steps) {
            a.add(b);
        }
        for (a, b) in self.errors.iter_mut().zip(&other.errors) {
            let _ = a.add(b);
        }
        self.matches.add(&other.matches);
        self.users += other.users;
        self.in_flight += other.in_flight;
        self.failovers += other.failovers;
        if self.urls.len() < other.urls.len() {
            self.urls.resize(other.urls.len(), 0);
        }
        for (a, b) in self.urls.iter_mut().zip(&other.urls) {
            *a += b;
        }
    }

    /// Empties it, keeping its memory.
    pub fn reset(&mut self) {
        self.steps.iter_mut().for_each(StepSample::reset);
        self.errors.iter_mut().for_each(Histogram::reset);
        self.matches.reset();
        self.users = 0;
        self.in_flight = 0;
        self.failovers = 0;
        self.urls.iter_mut().for_each(|n| *n = 0);
    }

    /// Requests over every step.
    pub fn requests(&self) -> u64 {
        self.steps.iter().map(StepSample::requests).sum()
    }

    /// Failed requests over every step.
    pub fn failed(&self) -> u64 {
        self.steps.iter().map(StepSample::failed).sum()
    }

    /// Response times of every step's requests, failures included, merged
    /// into `into` (what pacing measures).
    pub fn all_latencies_into(&self, into: &mut Histogram<u64>) {
        for s in &self.steps {
            let _ = into.add(&s.latency);
        }
        for e in &self.errors {
            let _ = into.add(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn histograms_round_trip(values in proptest::collection::vec(1u64..HIGHEST_US, 0..200)) {
            let mut h = latency_histogram();
            for v in &values {
                record_us(&mut h, *v);
            }
            let mut bytes = Vec::new();
            encode_histogram(&h, &mut bytes);
            let back = decode_histogram(&bytes).unwrap();
            prop_assert_eq!(back, h);
        }

        #[test]
        fn garbage_is_an_error_not_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = decode_histogram(&bytes);
        }

        #[test]
        fn a_damaged_histogram_is_an_error_not_a_panic(cut in 0usize..60, flip in 0usize..60) {
            let mut h = latency_histogram();
            for v in [1, 50, 1_000, 123_456, 9_999_999] {
                record_us(&mut h, v);
            }
            let mut bytes = Vec::new();
            encode_histogram(&h, &mut bytes);
            let mut damaged = bytes.clone();
            let i = flip % damaged.len();
            damaged[i] ^= 0x5a;
            let _ = decode_histogram(&damaged);
            bytes.truncate(bytes.len().saturating_sub(cut));
            let _ = decode_histogram(&bytes);
        }
    }

    #[test]
    fn adding_shards_gives_the_whole() {
        let mut a = Interval::new(2);
        let mut b = Interval::new(2);
        a.record_ok(0, 100);
        a.record_ok(1, 5_000);
        b.record_ok(0, 300);
        b.record_error(1, ErrorKind::Timeout, 10_000_000);
        b.record_retry(1);
        a.users = 3;
        b.users = 4;
        a.matches.desyncs = 1;
        b.matches.packets_lost = 2;
        a.record_url(0);
        b.record_url(1);
        b.record_url(1);
        b.failovers = 1;
        let mut sum = Interval::new(2);
        sum.add(&a);
        sum.add(&b);
        assert_eq!(sum.requests(), 4);
        assert_eq!(sum.failed(), 1);
        assert_eq!(sum.steps[0].ok(), 2);
        assert_eq!(sum.steps[1].errors[ErrorKind::Timeout.index()], 1);
        assert_eq!(sum.steps[1].retries, 1);
        assert_eq!(sum.errors[ErrorKind::Timeout.index()].len(), 1);
        assert_eq!(sum.users, 7);
        assert_eq!((sum.matches.desyncs, sum.matches.packets_lost), (1, 2));
        assert_eq!((sum.urls.as_slice(), sum.failovers), (&[1, 2][..], 1));
        let mut all = latency_histogram();
        sum.all_latencies_into(&mut all);
        assert_eq!(all.len(), 4);
        sum.reset();
        assert_eq!((sum.requests(), sum.users), (0, 0));
        assert_eq!((sum.urls.as_slice(), sum.failovers), (&[0, 0][..], 0));
        assert_eq!(
            ErrorKind::ALL[ErrorKind::Overflow.index()],
            ErrorKind::Overflow
        );
    }
}
