//! When each outbox record is posted next (sans-IO): every record is due at
//! once when it arrives; a post that fails for a passing reason (the gateway
//! unreachable, 5xx, 401, 408, 429) backs off exponentially with jitter, up
//! to a cap; an acknowledgement or a lasting refusal (any other 4xx) ends it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// First retry delay.
pub(crate) const BACKOFF_BASE: Duration = Duration::from_millis(250);
/// Longest retry delay.
pub(crate) const BACKOFF_CAP: Duration = Duration::from_secs(30);

/// How the gateway took one post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PostAnswer {
    /// 2xx: recorded now or before (idempotent by match id).
    Acknowledged,
    /// A lasting refusal (a 4xx that a retry would repeat), with the reason.
    Refused(String),
    /// Anything a later try may get past, with the reason.
    Retry(String),
}

impl PostAnswer {
    /// Classifies an HTTP status (`None`: no answer at all).
    pub(crate) fn of_status(status: Option<u16>, body: &str) -> Self {
        match status {
            Some(200..=299) => Self::Acknowledged,
            Some(s @ (401 | 408 | 429)) => Self::Retry(format!("{s}: {body}")),
            Some(s @ 400..=499) => Self::Refused(format!("{s}: {body}")),
            Some(s) => Self::Retry(format!("{s}: {body}")),
            None => Self::Retry(body.to_owned()),
        }
    }
}

/// The delay before retry `attempt` (1 = the first retry): doubling from
/// [`BACKOFF_BASE`], capped at [`BACKOFF_CAP`], scaled by `jitter` in
/// 0.5..=1.0 so many hosts coming back at once do not post in step.
pub(crate) fn backoff(attempt: u32, jitter: f64) -> Duration {
    let doubled = BACKOFF_BASE.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    doubled.min(BACKOFF_CAP).mul_f64(jitter.clamp(0.5, 1.0))
}

#[derive(Debug, Clone)]
struct Schedule<T> {
    record: T,
    next: Instant,
    failures: u32,
}

/// The records `T` waiting for delivery, by match id, each with its schedule.
#[derive(Debug)]
pub(crate) struct Deliveries<T> {
    waiting: BTreeMap<String, Schedule<T>>,
}

impl<T> Default for Deliveries<T> {
    fn default() -> Self {
        Self {
            waiting: BTreeMap::new(),
        }
    }
}

impl<T> Deliveries<T> {
    /// `record` to deliver under `match_id`, due at `now` (a record already
    /// waiting under that id is kept as it is, with its schedule).
    pub(crate) fn add(&mut self, match_id: &str, record: T, now: Instant) {
        self.waiting.entry(match_id.to_owned()).or_insert(Schedule {
            record,
            next: now,
            failures: 0,
        });
    }

    /// The record waiting under `match_id`.
    pub(crate) fn get(&self, match_id: &str) -> Option<&T> {
        self.waiting.get(match_id).map(|s| &s.record)
    }

    /// Match ids due at `now`, in id order.
    pub(crate) fn due(&self, now: Instant) -> Vec<String> {
        self.waiting
            .iter()
            .filter(|(_, s)| s.next <= now)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// When the next record falls due (`None`: nothing waits).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.waiting.values().map(|s| s.next).min()
    }

    /// Records waiting.
    pub(crate) fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Takes the answer to a post of `match_id`: an acknowledgement or a
    /// refusal ends its schedule (`true`); a retry pushes it back.
    pub(crate) fn answered(
        &mut self,
        match_id: &str,
        answer: &PostAnswer,
        now: Instant,
        jitter: f64,
    ) -> bool {
        match answer {
            PostAnswer::Acknowledged | PostAnswer::Refused(_) => {
                self.waiting.remove(match_id);
                true
            }
            PostAnswer::Retry(_) => {
                if let Some(s) = self.waiting.get_mut(match_id) {
                    s.failures = s.failures.saturating_add(1);
                    s.next = now + backoff(s.failures, jitter);
                }
                false
            }
        }
    }

    /// Failed posts of `match_id` so far.
    #[cfg(test)]
    pub(crate) fn failures(&self, match_id: &str) -> u32 {
        self.waiting.get(match_id).map_or(0, |s| s.failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_split_into_ack_refusal_and_retry() {
        assert_eq!(
            PostAnswer::of_status(Some(200), ""),
            PostAnswer::Acknowledged
        );
        assert!(matches!(
            PostAnswer::of_status(Some(400), "bad"),
            PostAnswer::Refused(r) if r == "400: bad"
        ));
        assert!(matches!(
            PostAnswer::of_status(Some(404), ""),
            PostAnswer::Refused(_)
        ));
        for passing in [401, 408, 429, 500, 503] {
            assert!(
                matches!(
                    PostAnswer::of_status(Some(passing), ""),
                    PostAnswer::Retry(_)
                ),
                "{passing}"
            );
        }
        assert!(matches!(
            PostAnswer::of_status(None, "connection refused"),
            PostAnswer::Retry(_)
        ));
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_jitter_only_shortens() {
        assert_eq!(backoff(1, 1.0), BACKOFF_BASE);
        assert_eq!(backoff(2, 1.0), BACKOFF_BASE * 2);
        assert_eq!(backoff(3, 1.0), BACKOFF_BASE * 4);
        assert_eq!(backoff(40, 1.0), BACKOFF_CAP);
        assert_eq!(backoff(1, 0.5), BACKOFF_BASE / 2);
        assert_eq!(backoff(1, 0.1), BACKOFF_BASE / 2);
        assert_eq!(backoff(1, 7.0), BACKOFF_BASE);
    }

    #[test]
    fn a_failed_post_waits_and_an_answer_ends_the_schedule() {
        let t0 = Instant::now();
        let mut d = Deliveries::<()>::default();
        d.add("m-2", (), t0);
        d.add("m-1", (), t0);
        assert_eq!(d.due(t0), ["m-1", "m-2"]);
        let retry = PostAnswer::Retry("503".into());
        assert!(!d.answered("m-1", &retry, t0, 1.0));
        assert_eq!(d.due(t0), ["m-2"]);
        assert_eq!(d.next_due(), Some(t0));
        assert!(d.answered("m-2", &PostAnswer::Acknowledged, t0, 1.0));
        assert_eq!(d.next_due(), Some(t0 + BACKOFF_BASE));
        assert!(!d.answered("m-1", &retry, t0, 1.0));
        assert_eq!(d.failures("m-1"), 2);
        assert_eq!(d.next_due(), Some(t0 + BACKOFF_BASE * 2));
        // Re-adding a waiting record keeps its schedule.
        d.add("m-1", (), t0);
        assert!(d.due(t0).is_empty());
        assert!(d.answered("m-1", &PostAnswer::Refused("400".into()), t0, 1.0));
        assert_eq!(d.len(), 0);
        assert_eq!(d.next_due(), None);
    }
}
