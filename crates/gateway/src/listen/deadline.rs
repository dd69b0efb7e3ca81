//! [`Deadlines`]: when one HTTP/1 connection is closed for being slow or
//! idle. Sans-IO: fed with instants and what happened, it says when the
//! connection must have moved on.
//!
//! - From accept, and from the first byte of each later request, the
//!   headers must be complete within the header timeout ([`Expiry::Header`]):
//!   a client sending a byte at a time gains nothing by it.
//! - Between requests, a kept-alive connection may wait the idle timeout
//!   ([`Expiry::Idle`]).
//! - While a request is being served (a long-poll, say) neither applies.
//!
//! hyper's own `header_read_timeout` cannot express this: it restarts when
//! a kept-alive connection starts waiting for its next request, so it would
//! also be the idle timeout.

use std::time::{Duration, Instant};

/// Which deadline a connection missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// Its request headers did not arrive in time.
    Header,
    /// It sat idle between requests too long.
    Idle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading a request's headers since then.
    Head(Instant),
    /// Between requests since then, no byte of the next one read.
    Idle(Instant),
    /// Serving a request; `read` says whether bytes came in meanwhile.
    Busy { read: bool },
}

/// One connection's deadlines. See the [module docs](self).
#[derive(Debug, Clone)]
pub(crate) struct Deadlines {
    phase: Phase,
    header: Duration,
    idle: Duration,
}

impl Deadlines {
    /// A connection accepted at `now`: its first headers are due.
    pub(crate) fn new(now: Instant, header: Duration, idle: Duration) -> Self {
        Self {
            phase: Phase::Head(now),
            header,
            idle,
        }
    }

    /// Bytes came in at `now`. True when that moved the deadline (the
    /// first byte of a request on an idle connection).
    pub(crate) fn read(&mut self, now: Instant) -> bool {
        match self.phase {
            Phase::Idle(_) => {
                self.phase = Phase::Head(now);
                true
            }
            Phase::Busy { .. } => {
                self.phase = Phase::Busy { read: true };
                false
            }
            Phase::Head(_) => false,
        }
    }

    /// A request's headers are complete: it is being served.
    pub(crate) fn request(&mut self) {
        self.phase = Phase::Busy { read: false };
    }

    /// Its response is ready at `now`. Bytes read while it was served are
    /// the next request's: its headers are due from now.
    pub(crate) fn responded(&mut self, now: Instant) {
        self.phase = match self.phase {
            Phase::Busy { read: true } => Phase::Head(now),
            _ => Phase::Idle(now),
        };
    }

    /// When the connection is closed unless something happens first, and why.
    pub(crate) fn deadline(&self) -> Option<(Instant, Expiry)> {
        match self.phase {
            Phase::Head(since) => Some((since + self.header, Expiry::Header)),
            Phase::Idle(since) => Some((since + self.idle, Expiry::Idle)),
            Phase::Busy { .. } => None,
        }
    }

    /// How often a connection with no deadline (busy) is looked at again:
    /// often enough that an idle deadline starting meanwhile is kept.
    pub(crate) fn recheck(&self) -> Duration {
        self.header.min(self.idle)
    }

    /// The deadline missed by `now`, if one is.
    pub(crate) fn expired(&self, now: Instant) -> Option<Expiry> {
        self.deadline()
            .and_then(|(at, why)| (now >= at).then_some(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(60);

    fn secs(t0: Instant, s: u64) -> Instant {
        t0 + Duration::from_secs(s)
    }

    #[test]
    fn headers_trickling_in_are_cut_off_at_the_header_deadline() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(t0, HEADER, IDLE);
        for s in 0..10 {
            assert!(!d.read(secs(t0, s)), "a byte never extends the deadline");
            assert_eq!(d.expired(secs(t0, s)), None);
        }
        assert_eq!(d.expired(secs(t0, 10)), Some(Expiry::Header));
    }

    #[test]
    fn a_silent_new_connection_is_due_its_headers_too() {
        let t0 = Instant::now();
        let d = Deadlines::new(t0, HEADER, IDLE);
        assert_eq!(d.deadline(), Some((secs(t0, 10), Expiry::Header)));
    }

    #[test]
    fn a_request_in_service_has_no_deadline_and_idle_follows_its_answer() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(t0, HEADER, IDLE);
        d.read(t0);
        d.request();
        assert_eq!(d.expired(secs(t0, 3600)), None);
        d.responded(secs(t0, 100));
        assert_eq!(d.deadline(), Some((secs(t0, 160), Expiry::Idle)));
        assert_eq!(d.expired(secs(t0, 159)), None);
        assert_eq!(d.expired(secs(t0, 160)), Some(Expiry::Idle));
    }

    #[test]
    fn the_next_requests_first_byte_starts_its_header_deadline() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(t0, HEADER, IDLE);
        d.request();
        d.responded(t0);
        // 50 s idle, then a byte: its headers are due 10 s later, sooner
        // than the idle deadline would have been.
        assert!(d.read(secs(t0, 50)));
        assert_eq!(d.deadline(), Some((secs(t0, 60), Expiry::Header)));
        assert!(!d.read(secs(t0, 55)));
        assert_eq!(d.expired(secs(t0, 60)), Some(Expiry::Header));
    }

    #[test]
    fn bytes_pipelined_during_a_request_are_due_from_its_answer() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(t0, HEADER, IDLE);
        d.request();
        assert!(!d.read(secs(t0, 1)));
        d.responded(secs(t0, 2));
        assert_eq!(d.deadline(), Some((secs(t0, 12), Expiry::Header)));
    }
}
