//! The agent protocol's messages, once the two ends have authenticated
//! each other ([`auth`](super::auth)); each travels in an authenticated
//! frame ([`frame`](super::frame): a length, a sequence number and a MAC
//! around what this module encodes).
//!
//! A message is a kind byte and a payload. The coordinator sends `Start`
//! (JSON: the scenario text, the command-line overrides, the shard, when
//! to start), `Rate` (the whole run's paced rate, `f64`) and `Stop`. An
//! agent answers `Ready` or `Failed` (UTF-8 text), then one `Interval` per
//! interval (binary: the counters and every histogram in HdrHistogram V2,
//! then the failovers and the requests per target URL), a last `Interval`
//! flagged as the drain, and `Done`.
//!
//! Decoding never trusts a length: every count is checked against what is
//! left, frames are capped at [`MAX_FRAME`], and histograms must have this
//! crate's bounds.

use serde::{Deserialize, Serialize};

use crate::driver::Shard;
use crate::interval::{ErrorKind, Interval, decode_histogram, encode_histogram};
use crate::scenario::Overrides;

/// The largest frame either side accepts.
pub const MAX_FRAME: usize = 64 << 20;

/// What the coordinator asks an agent to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartPlan {
    /// The scenario's text.
    pub scenario: String,
    /// Its file name (for error messages).
    pub file: String,
    /// Command-line changes.
    pub overrides: Overrides,
    /// This agent's part.
    pub shard: Shard,
    /// Milliseconds from receipt to the run's start.
    pub start_in_ms: u64,
    /// Random seed.
    pub seed: u64,
}

/// One message of the protocol.
#[derive(Debug, Clone)]
pub enum Message {
    /// Coordinator: run this.
    Start(StartPlan),
    /// Coordinator: the whole run's paced rate per second.
    Rate(f64),
    /// Coordinator: stop now.
    Stop,
    /// Agent: started.
    Ready,
    /// Agent: could not start.
    Failed(String),
    /// Agent: interval `seq` (or, if `drain`, what finished after the end).
    Interval {
        /// The interval's number from 0.
        seq: u32,
        /// Whether this is the drain after the run's end.
        drain: bool,
        /// The measurements.
        interval: Box<Interval>,
    },
    /// Agent: finished.
    Done,
}

const START: u8 = 1;
const RATE: u8 = 2;
const STOP: u8 = 3;
const READY: u8 = 10;
const FAILED: u8 = 11;
const INTERVAL: u8 = 12;
const DONE: u8 = 13;

/// Appends `msg` (its kind byte and payload) to `out`.
pub fn encode(msg: &Message, out: &mut Vec<u8>) {
    match msg {
        Message::Start(plan) => {
            out.push(START);
            // A plain struct of strings and numbers always serializes.
            out.extend_from_slice(&serde_json::to_vec(plan).unwrap_or_default());
        }
        Message::Rate(r) => {
            out.push(RATE);
            out.extend_from_slice(&r.to_be_bytes());
        }
        Message::Stop => out.push(STOP),
        Message::Ready => out.push(READY),
        Message::Failed(text) => {
            out.push(FAILED);
            out.extend_from_slice(text.as_bytes());
        }
        Message::Interval {
            seq,
            drain,
            interval,
        } => {
            out.push(INTERVAL);
            encode_interval(*seq, *drain, interval, out);
        }
        Message::Done => out.push(DONE),
    }
}

fn histogram(h: &hdrhistogram::Histogram<u64>, out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    encode_histogram(h, out);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn encode_interval(seq: u32, drain: bool, i: &Interval, out: &mut Vec<u8>) {
    out.extend_from_slice(&seq.to_be_bytes());
    out.push(u8::from(drain));
    out.extend_from_slice(&i.users.to_be_bytes());
    out.extend_from_slice(&i.in_flight.to_be_bytes());
    out.extend_from_slice(&(i.steps.len() as u16).to_be_bytes());
    for s in &i.steps {
        histogram(&s.latency, out);
        histogram(&s.step_time, out);
        for e in s.errors {
            out.extend_from_slice(&e.to_be_bytes());
        }
        out.extend_from_slice(&s.retries.to_be_bytes());
    }
    for h in &i.errors {
        histogram(h, out);
    }
    histogram(&i.matches.interarrival, out);
    histogram(&i.matches.rtt, out);
    for c in i.matches.counters() {
        out.extend_from_slice(&c.to_be_bytes());
    }
    out.extend_from_slice(&i.failovers.to_be_bytes());
    out.extend_from_slice(&(i.urls.len().min(usize::from(u16::MAX)) as u16).to_be_bytes());
    for n in i.urls.iter().take(usize::from(u16::MAX)) {
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// A cursor over a payload that refuses to read past its end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err(format!(
                "truncated: wanted {n} bytes, {} left",
                self.bytes.len()
            ));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut a = [0; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }

    fn histogram(&mut self) -> Result<hdrhistogram::Histogram<u64>, String> {
        let len = self.u32()? as usize;
        decode_histogram(self.take(len)?)
    }
}

fn decode_interval(r: &mut Reader<'_>, steps_expected: usize) -> Result<Message, String> {
    let seq = r.u32()?;
    let drain = match r.u8()? {
        0 => false,
        1 => true,
        other => return Err(format!("drain flag {other}")),
    };
    let users = r.u64()?;
    let in_flight = r.u64()?;
    let steps = r.u16()? as usize;
    if steps != steps_expected {
        return Err(format!(
            "an interval of {steps} steps; the scenario has {steps_expected}"
        ));
    }
    let mut interval = Interval::new(0);
    interval.users = users;
    interval.in_flight = in_flight;
    for _ in 0..steps {
        let mut s = crate::interval::StepSample::empty();
        s.latency = r.histogram()?;
        s.step_time = r.histogram()?;
        for e in &mut s.errors {
            *e = r.u64()?;
        }
        s.retries = r.u64()?;
        interval.steps.push(s);
    }
    for k in 0..ErrorKind::COUNT {
        interval.errors[k] = r.histogram()?;
    }
    interval.matches.interarrival = r.histogram()?;
    interval.matches.rtt = r.histogram()?;
    let mut c = [0; 8];
    for x in &mut c {
        *x = r.u64()?;
    }
    interval.matches.set_counters(c);
    interval.failovers = r.u64()?;
    let urls = usize::from(r.u16()?);
    if urls * 8 > r.bytes.len() {
        return Err(format!("{urls} URL counts in {} bytes", r.bytes.len()));
    }
    interval.urls = (0..urls).map(|_| r.u64()).collect::<Result<_, _>>()?;
    Ok(Message::Interval {
        seq,
        drain,
        interval: Box::new(interval),
    })
}

/// Decodes one message (a frame's body: its kind and payload). An
/// interval must have `steps` steps (the scenario's), so a bad frame cannot
/// make the reader allocate histograms by the million.
pub fn decode(frame: &[u8], steps: usize) -> Result<Message, String> {
    let mut r = Reader { bytes: frame };
    let kind = r.u8()?;
    let msg = match kind {
        START => {
            let plan = serde_json::from_slice(r.take(r.bytes.len())?)
                .map_err(|e| format!("start: {e}"))?;
            Message::Start(plan)
        }
        RATE => {
            let rate = f64::from_bits(r.u64()?);
            if !rate.is_finite() || rate < 0.0 {
                return Err(format!("rate {rate}"));
            }
            Message::Rate(rate)
        }
        STOP => Message::Stop,
        READY => Message::Ready,
        FAILED => Message::Failed(String::from_utf8_lossy(r.take(r.bytes.len())?).into_owned()),
        INTERVAL => decode_interval(&mut r, steps)?,
        DONE => Message::Done,
        other => return Err(format!("unknown message kind {other}")),
    };
    if !r.bytes.is_empty() {
        return Err(format!("{} bytes after the message", r.bytes.len()));
    }
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::{latency_histogram, record_us};
    use proptest::prelude::*;

    fn roundtrip_with(msg: &Message, steps: usize) -> Message {
        let mut out = Vec::new();
        encode(msg, &mut out);
        decode(&out, steps).unwrap()
    }

    fn roundtrip(msg: &Message) -> Message {
        roundtrip_with(msg, 3)
    }

    #[test]
    fn control_messages_round_trip() {
        let plan = StartPlan {
            scenario: "users = 1".into(),
            file: "a.toml".into(),
            overrides: Overrides {
                users: Some(3),
                ..Overrides::default()
            },
            shard: Shard { index: 1, count: 2 },
            start_in_ms: 500,
            seed: 7,
        };
        assert!(matches!(roundtrip(&Message::Start(plan.clone())), Message::Start(p) if p == plan));
        assert!(matches!(roundtrip(&Message::Rate(12.5)), Message::Rate(r) if r == 12.5));
        assert!(
            matches!(roundtrip(&Message::Failed("no".into())), Message::Failed(t) if t == "no")
        );
        for m in [Message::Stop, Message::Ready, Message::Done] {
            let kind = std::mem::discriminant(&m);
            assert_eq!(std::mem::discriminant(&roundtrip(&m)), kind);
        }
        assert!(
            decode(&[RATE, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0], 0).is_err(),
            "NaN rate"
        );
        assert!(decode(&[99], 0).is_err());
        assert!(decode(&[STOP, 0], 0).is_err(), "trailing bytes");
        let mut out = Vec::new();
        let one = Message::Interval {
            seq: 0,
            drain: false,
            interval: Box::new(Interval::new(1)),
        };
        encode(&one, &mut out);
        assert!(decode(&out, 2).unwrap_err().contains("1 steps"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn intervals_round_trip(
            values in proptest::collection::vec((0u16..3, 1u64..10_000_000), 0..100),
            errors in proptest::collection::vec(0u64..1000, 8),
            users in any::<u64>(),
            seq in any::<u32>(),
            urls in proptest::collection::vec(0usize..5, 0..40),
            failovers in any::<u64>(),
        ) {
            let mut i = Interval::new(3);
            for (step, v) in &values {
                i.record_ok(*step, *v);
                i.record_step_time(*step, *v * 2);
            }
            for (k, n) in errors.iter().enumerate() {
                i.steps[k % 3].errors[k] = *n;
                record_us(&mut i.errors[k], *n + 1);
            }
            i.users = users;
            i.failovers = failovers;
            for u in &urls {
                i.record_url(*u);
            }
            i.matches.desyncs = 4;
            record_us(&mut i.matches.rtt, 1234);
            let back = roundtrip(&Message::Interval { seq, drain: true, interval: Box::new(i.clone()) });
            let Message::Interval { seq: s, drain, interval } = back else { panic!() };
            prop_assert_eq!((s, drain, interval.users), (seq, true, users));
            for (a, b) in interval.steps.iter().zip(&i.steps) {
                prop_assert_eq!(&a.latency, &b.latency);
                prop_assert_eq!(&a.step_time, &b.step_time);
                prop_assert_eq!(a.errors, b.errors);
            }
            prop_assert_eq!(&interval.errors, &i.errors);
            prop_assert_eq!(interval.matches.counters(), i.matches.counters());
            prop_assert_eq!(&interval.matches.rtt, &i.matches.rtt);
            prop_assert_eq!((&interval.urls, interval.failovers), (&i.urls, failovers));
        }

        #[test]
        fn damaged_frames_are_errors_not_panics(
            cut in 0usize..400,
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        ) {
            let mut i = Interval::new(2);
            i.record_ok(0, 100);
            i.record_ok(1, 1_000_000);
            let mut out = Vec::new();
            encode(&Message::Interval { seq: 1, drain: false, interval: Box::new(i) }, &mut out);
            let mut frame = out;
            for (at, x) in flips {
                let n = frame.len();
                frame[at % n] ^= x;
            }
            frame.truncate(frame.len().saturating_sub(cut));
            let _ = decode(&frame, 2);
        }

        #[test]
        fn garbage_is_an_error_not_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes, 2);
        }

        /// Two agents' histograms, sent and merged, equal the histogram of
        /// every value they recorded together.
        #[test]
        fn merged_histograms_equal_the_union(
            a in proptest::collection::vec(1u64..100_000_000, 0..300),
            b in proptest::collection::vec(1u64..100_000_000, 0..300),
        ) {
            let mut union = latency_histogram();
            let mut merged = Interval::new(1);
            for values in [&a, &b] {
                let mut agent = Interval::new(1);
                for v in values {
                    agent.record_ok(0, *v);
                    record_us(&mut union, *v);
                }
                let Message::Interval { interval, .. } =
                    roundtrip_with(&Message::Interval { seq: 0, drain: false, interval: Box::new(agent) }, 1)
                else { panic!() };
                merged.add(&interval);
            }
            prop_assert_eq!(&merged.steps[0].latency, &union);
        }
    }
}
