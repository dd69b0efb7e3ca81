//! The adapter's decisions, without I/O: which GameServer update is a new
//! allocation, which ended match gives its slot of the `matches` counter
//! back, and when an emptied GameServer may go back to Ready.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::annotations::{Allocation, MATCH_ID};
use crate::error::ServerError;

/// The GameServer state an allocation puts it in.
pub(crate) const ALLOCATED: &str = "Allocated";
/// How long the `matches` counter may hold a count with no allocation's
/// match running before the count is taken for stray (allocations whose
/// annotations were overwritten before the host saw them) and reset.
pub(crate) const STRAY_GRACE: Duration = Duration::from_secs(10);

/// What to do with an idle GameServer, given its `matches` count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idle {
    /// The count is 0: back to Ready.
    Ready,
    /// An allocation may be on its way: wait for its update.
    Wait,
    /// The count has been held for [`STRAY_GRACE`] with nothing running:
    /// set it to 0, then Ready.
    Reset,
}

/// What a GameServer update asks of the host.
#[derive(Debug)]
pub(crate) enum Update {
    /// A new allocation: create its match.
    Create(Allocation),
    /// A new allocation whose annotations describe no match: give its
    /// counter increment back.
    Refuse {
        /// The allocation's match id.
        match_id: String,
        /// Which annotation is at fault.
        error: ServerError,
    },
    /// Nothing new (a label, a counter, a state change).
    Nothing,
}

/// What the adapter knows of its GameServer. See the [module docs](self).
#[derive(Debug, Default)]
pub(crate) struct Lifecycle {
    /// The match id of the last allocation seen (each allocation writes a
    /// new one; every other update repeats it).
    last_match_id: Option<String>,
    /// Matches created from allocations and not yet ended.
    live: HashSet<String>,
    /// Whether the GameServer was Allocated at its last update.
    allocated: bool,
    /// Since when an idle GameServer's counter has held a count.
    stray_since: Option<Instant>,
}

impl Lifecycle {
    /// Takes a GameServer update (its state and annotations).
    pub(crate) fn observe(&mut self, state: &str, annotations: &HashMap<String, String>) -> Update {
        let was_allocated = self.allocated;
        self.allocated = state == ALLOCATED;
        if !self.allocated {
            return Update::Nothing;
        }
        let Some(id) = annotations.get(MATCH_ID) else {
            // Allocated afresh without a match: an allocator that wrote no
            // annotations. Its counter slot goes back.
            return match was_allocated {
                true => Update::Nothing,
                false => Update::Refuse {
                    match_id: "(none)".to_owned(),
                    error: ServerError::Allocation {
                        annotation: MATCH_ID,
                        reason: "missing".to_owned(),
                    },
                },
            };
        };
        if self.last_match_id.as_ref() == Some(id) {
            return Update::Nothing;
        }
        self.last_match_id = Some(id.clone());
        match Allocation::read(annotations) {
            Ok(Some(allocation)) => Update::Create(allocation),
            Ok(None) => Update::Nothing,
            Err(error) => Update::Refuse {
                match_id: id.clone(),
                error: error.into(),
            },
        }
    }

    /// The match of an allocation is running.
    pub(crate) fn created(&mut self, match_id: &str) {
        self.live.insert(match_id.to_owned());
        self.stray_since = None;
    }

    /// A match ended: `true` if an allocation made it (its counter slot is
    /// given back), `false` for one the admin API made.
    pub(crate) fn ended(&mut self, match_id: &str) -> bool {
        self.live.remove(match_id)
    }

    /// Allocations' matches running now.
    pub(crate) fn live(&self) -> usize {
        self.live.len()
    }

    /// Whether the GameServer is Allocated with no allocation's match
    /// running: it may go back to Ready (once the counter agrees: an
    /// allocation may be on its way).
    pub(crate) fn idle(&self) -> bool {
        self.allocated && self.live.is_empty()
    }

    /// What to do, [`Self::idle`], with `count` on the `matches` counter
    /// read at `now`.
    pub(crate) fn idle_count(&mut self, count: i64, now: Instant) -> Idle {
        if count <= 0 {
            self.stray_since = None;
            return Idle::Ready;
        }
        let since = *self.stray_since.get_or_insert(now);
        if now.saturating_duration_since(since) >= STRAY_GRACE {
            self.stray_since = None;
            Idle::Reset
        } else {
            Idle::Wait
        }
    }

    /// The adapter asked for Ready.
    pub(crate) fn readied(&mut self) {
        self.allocated = false;
        self.stray_since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::annotations::{MODE, ROSTER};
    use super::*;

    fn gs(id: &str, roster: &str) -> HashMap<String, String> {
        [(MATCH_ID, id), (MODE, "5v5"), (ROSTER, roster)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn each_allocation_is_created_once() {
        let mut l = Lifecycle::default();
        assert!(matches!(
            l.observe("Ready", &HashMap::new()),
            Update::Nothing
        ));
        let Update::Create(a) = l.observe(ALLOCATED, &gs("m-1", "1,2")) else {
            panic!("no create");
        };
        assert_eq!(a.match_id(), "m-1");
        l.created("m-1");
        // A counter or label update repeats the annotations: nothing new.
        assert!(matches!(
            l.observe(ALLOCATED, &gs("m-1", "1,2")),
            Update::Nothing
        ));
        // A second allocation on the same GameServer.
        assert!(matches!(
            l.observe(ALLOCATED, &gs("m-2", "3,4")),
            Update::Create(_)
        ));
        l.created("m-2");
        assert_eq!(l.live(), 2);
    }

    #[test]
    fn an_emptied_allocated_server_is_idle() {
        let mut l = Lifecycle::default();
        let _ = l.observe(ALLOCATED, &gs("m-1", "1"));
        l.created("m-1");
        assert!(!l.idle());
        assert!(!l.ended("admin-made"), "not an allocation's match");
        assert!(l.ended("m-1"));
        assert!(l.idle());
        l.readied();
        assert!(!l.idle());
    }

    #[test]
    fn a_count_held_with_nothing_running_is_reset_after_the_grace() {
        let mut l = Lifecycle::default();
        let _ = l.observe(ALLOCATED, &gs("m-1", "1"));
        let t0 = Instant::now();
        assert_eq!(l.idle_count(0, t0), Idle::Ready);
        // Two allocations' annotations, one seen: the count stays at 1.
        assert_eq!(l.idle_count(1, t0), Idle::Wait);
        assert_eq!(l.idle_count(1, t0 + STRAY_GRACE / 2), Idle::Wait);
        assert_eq!(l.idle_count(1, t0 + STRAY_GRACE), Idle::Reset);
        // A new match in between starts the wait over.
        assert_eq!(l.idle_count(1, t0), Idle::Wait);
        l.created("m-2");
        assert_eq!(l.idle_count(1, t0 + STRAY_GRACE), Idle::Wait);
    }

    #[test]
    fn an_allocation_without_annotations_is_refused() {
        let mut l = Lifecycle::default();
        let _ = l.observe("Ready", &HashMap::new());
        assert!(matches!(
            l.observe(ALLOCATED, &HashMap::new()),
            Update::Refuse { .. }
        ));
        // Its later updates are not refused again.
        assert!(matches!(
            l.observe(ALLOCATED, &HashMap::new()),
            Update::Nothing
        ));
    }

    #[test]
    fn bad_annotations_are_refused_once() {
        let mut l = Lifecycle::default();
        let Update::Refuse { match_id, error } = l.observe(ALLOCATED, &gs("m-9", "one")) else {
            panic!("not refused");
        };
        assert_eq!(match_id, "m-9");
        assert!(error.to_string().contains(ROSTER), "{error}");
        assert!(matches!(
            l.observe(ALLOCATED, &gs("m-9", "one")),
            Update::Nothing
        ));
        assert!(l.idle());
    }
}
