//! Queue positions pushed at most once a second per socket: one pass over
//! the matchmaking queues ([`Matchmaker::queued_positions`]) a second, and a
//! `queue` push to each socket whose position or queue length changed. The
//! push is stamped with the pass's start, so a client's measured latency
//! includes the pass itself.

use std::sync::{Arc, Weak};
use std::time::Duration;

use hightick_store::clock::now_ms;

use super::{Hub, event};
use crate::matchmaking::{MatchStatus, Matchmaker, WeakMatchmaker};

/// How often positions are pushed (the per-socket rate limit).
pub const EVERY: Duration = Duration::from_secs(1);

/// One pass: pushes every changed position to its sockets.
pub fn push_once(matchmaker: &Matchmaker, hub: &Hub) {
    if hub.is_empty() {
        return;
    }
    let at_ms = now_ms();
    for q in matchmaker.queued_positions() {
        let MatchStatus::Queued {
            position, waiting, ..
        } = q.status
        else {
            continue;
        };
        let state = (position as u64, waiting as u64);
        hub.update(q.account_id, state, || {
            event::render("queue", q.status.body(&q.ticket), at_ms)
        });
    }
}

/// Starts the once-a-second pass on the current tokio runtime; it ends when
/// the matchmaker or the hub is dropped.
pub fn start(matchmaker: &Matchmaker, hub: &Arc<Hub>) {
    let matchmaker = matchmaker.downgrade();
    let hub = Arc::downgrade(hub);
    tokio::spawn(run(matchmaker, hub));
}

async fn run(matchmaker: WeakMatchmaker, hub: Weak<Hub>) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let (Some(matchmaker), Some(hub)) = (matchmaker.upgrade(), hub.upgrade()) else {
            return;
        };
        push_once(&matchmaker, &hub);
    }
}
