//! One gateway's snapshot of the shared queue, rebuilt from the store after
//! every matchmaker pass: each waiting ticket's position (one read of the
//! whole queue per pass, not one scan per poll) and the tickets matched
//! lately. Polls and pushes are answered from it; a ticket it does not hold
//! yet (joined at another gateway since the last pass) is read from the store.

use std::collections::HashMap;

use hightick_store::{LiveMatch, QueueTicket, TicketState};

/// A waiting ticket's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// Its mode.
    pub(crate) mode: String,
    /// Its players.
    pub(crate) members: Vec<i64>,
    /// Players ahead of it in its mode, plus one.
    pub(crate) position: usize,
    /// Whether a pass has claimed it.
    pub(crate) forming: bool,
}

/// A matched ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Matched {
    /// Its players.
    pub(crate) members: Vec<i64>,
    /// Its match.
    pub(crate) match_id: String,
    /// When it was matched, unix ms.
    pub(crate) settled_ms: i64,
}

/// The snapshot.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// Waiting tickets by id.
    pub(crate) places: HashMap<String, Place>,
    /// Players waiting per mode.
    pub(crate) waiting: HashMap<String, usize>,
    /// Tickets matched lately, by id.
    pub(crate) matched: HashMap<String, Matched>,
    /// Matches seen lately, by id.
    pub(crate) matches: HashMap<String, LiveMatch>,
    /// The latest `settled_ms` seen.
    pub(crate) watermark_ms: i64,
}

impl View {
    /// Replaces the waiting part with `waiting` (by mode, then join time).
    pub(crate) fn set_waiting(&mut self, waiting: &[QueueTicket]) {
        self.places.clear();
        self.waiting.clear();
        for t in waiting {
            let ahead = self.waiting.entry(t.mode.clone()).or_insert(0);
            self.places.insert(
                t.ticket.clone(),
                Place {
                    mode: t.mode.clone(),
                    members: t.members.clone(),
                    position: *ahead + 1,
                    forming: t.state == TicketState::Forming,
                },
            );
            *ahead += t.members.len();
        }
    }

    /// Adds matched tickets; returns those not seen before.
    pub(crate) fn add_matched(&mut self, matched: Vec<QueueTicket>) -> Vec<(String, Matched)> {
        let mut new = Vec::new();
        for t in matched {
            let (Some(match_id), Some(settled_ms)) = (t.match_id, t.settled_ms) else {
                continue;
            };
            self.watermark_ms = self.watermark_ms.max(settled_ms);
            if self.matched.contains_key(&t.ticket) {
                continue;
            }
            let m = Matched {
                members: t.members,
                match_id,
                settled_ms,
            };
            self.matched.insert(t.ticket.clone(), m.clone());
            new.push((t.ticket, m));
        }
        new
    }

    /// Forgets matched tickets and matches older than `before_ms`.
    pub(crate) fn prune(&mut self, before_ms: i64) {
        self.matched.retain(|_, m| m.settled_ms >= before_ms);
        self.matches.retain(|_, m| m.formed_ms >= before_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(id: &str, mode: &str, members: Vec<i64>) -> QueueTicket {
        QueueTicket {
            ticket: id.to_owned(),
            mode: mode.to_owned(),
            members,
            rating: 1000,
            region: String::new(),
            joined_ms: 0,
            state: TicketState::Queued,
            match_id: None,
            team: None,
            settled_ms: None,
        }
    }

    #[test]
    fn positions_count_players_ahead_per_mode() {
        let mut v = View::default();
        v.set_waiting(&[
            ticket("a", "duel", vec![1]),
            ticket("b", "duel", vec![2, 3]),
            ticket("c", "duel", vec![4]),
            ticket("d", "solo", vec![5]),
        ]);
        let pos = |t: &str| v.places[t].position;
        assert_eq!((pos("a"), pos("b"), pos("c"), pos("d")), (1, 2, 4, 1));
        assert_eq!(v.waiting["duel"], 4);
    }

    #[test]
    fn a_matched_ticket_is_new_once() {
        let mut v = View::default();
        let mut t = ticket("a", "duel", vec![1]);
        t.match_id = Some("m".to_owned());
        t.settled_ms = Some(50);
        assert_eq!(v.add_matched(vec![t.clone()]).len(), 1);
        assert!(v.add_matched(vec![t]).is_empty());
        assert_eq!(v.watermark_ms, 50);
        v.prune(51);
        assert!(v.matched.is_empty());
    }
}
