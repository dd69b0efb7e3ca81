//! [`Hub`]: the open push sockets by account, each with a bounded queue.
//! Publishing never waits: a full queue means the socket's reader is too
//! slow, and the socket is kicked (its task closes it with a reason).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::{Notify, mpsc};

use super::config::PushConfig;

#[derive(Debug)]
struct Subscriber {
    id: u64,
    tx: mpsc::Sender<String>,
    kick: Arc<Notify>,
    /// The last rate-limited state pushed (`None`: none since the last event).
    last_state: Option<(u64, u64)>,
}

/// Counters of the push channel at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PushCounts {
    /// Sockets open.
    pub sockets: usize,
    /// Pushes queued for sockets since start.
    pub pushed: u64,
    /// Sockets closed because their queue was full (slow readers).
    pub dropped_slow: u64,
    /// Sockets closed for silence (no pong), a slow write, or too many messages.
    pub dropped_other: u64,
    /// Upgrades refused because `max_sockets` were open.
    pub refused_full: u64,
}

/// The open push sockets. See the [module docs](self).
#[derive(Debug)]
pub struct Hub {
    sockets: Mutex<HashMap<i64, Vec<Subscriber>>>,
    queue: usize,
    max_sockets: usize,
    next_id: AtomicU64,
    open: AtomicUsize,
    pushed: AtomicU64,
    dropped_slow: AtomicU64,
    dropped_other: AtomicU64,
    refused_full: AtomicU64,
}

/// One socket's place in the count of open sockets; dropping it frees it.
#[derive(Debug)]
pub struct Seat {
    hub: Arc<Hub>,
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.hub.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One socket's subscription to its account's pushes; dropping it
/// unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    hub: Arc<Hub>,
    account: i64,
    id: u64,
    rx: mpsc::Receiver<String>,
    kick: Arc<Notify>,
}

impl Subscription {
    /// The next push (`None`: the hub dropped this socket).
    pub async fn next(&mut self) -> Option<String> {
        self.rx.recv().await
    }

    /// A push already queued, if any.
    pub fn try_next(&mut self) -> Option<String> {
        self.rx.try_recv().ok()
    }

    /// Notified when the hub drops this socket for a full queue.
    pub fn kick(&self) -> Arc<Notify> {
        Arc::clone(&self.kick)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut sockets = self.hub.lock();
        if let Some(subs) = sockets.get_mut(&self.account) {
            subs.retain(|s| s.id != self.id);
            if subs.is_empty() {
                sockets.remove(&self.account);
            }
        }
    }
}

impl Hub {
    /// An empty hub with `config`'s queue size and socket limit.
    pub fn new(config: &PushConfig) -> Arc<Self> {
        Arc::new(Self {
            sockets: Mutex::new(HashMap::new()),
            queue: config.queue.max(1),
            max_sockets: config.max_sockets,
            next_id: AtomicU64::new(0),
            open: AtomicUsize::new(0),
            pushed: AtomicU64::new(0),
            dropped_slow: AtomicU64::new(0),
            dropped_other: AtomicU64::new(0),
            refused_full: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<i64, Vec<Subscriber>>> {
        self.sockets.lock()
    }

    /// A seat for one more socket, unless `max_sockets` are open.
    pub fn seat(self: &Arc<Self>) -> Option<Seat> {
        let taken = self
            .open
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max_sockets).then_some(n + 1)
            });
        if taken.is_err() {
            self.refused_full.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(Seat {
            hub: Arc::clone(self),
        })
    }

    /// Subscribes one socket to `account`'s pushes.
    pub fn subscribe(self: &Arc<Self>, account: i64) -> Subscription {
        let (tx, rx) = mpsc::channel(self.queue);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let kick = Arc::new(Notify::new());
        self.lock().entry(account).or_default().push(Subscriber {
            id,
            tx,
            kick: Arc::clone(&kick),
            last_state: None,
        });
        Subscription {
            hub: Arc::clone(self),
            account,
            id,
            rx,
            kick,
        }
    }

    /// Whether no socket is subscribed.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Queues `text` for every socket of `account`.
    pub fn publish(&self, account: i64, text: String) {
        let mut sockets = self.lock();
        let Some(subs) = sockets.get_mut(&account) else {
            return;
        };
        subs.retain_mut(|s| {
            s.last_state = None;
            self.deliver(s, text.clone())
        });
        if subs.is_empty() {
            sockets.remove(&account);
        }
    }

    /// Queues a rate-limited state update for each socket of `account`
    /// whose last one differs from `state`; `render` makes the text (only
    /// when some socket needs it).
    pub fn update(&self, account: i64, state: (u64, u64), render: impl FnOnce() -> String) {
        let mut sockets = self.lock();
        let Some(subs) = sockets.get_mut(&account) else {
            return;
        };
        if subs.iter().all(|s| s.last_state == Some(state)) {
            return;
        }
        let text = render();
        subs.retain_mut(|s| {
            if s.last_state == Some(state) {
                return true;
            }
            s.last_state = Some(state);
            self.deliver(s, text.clone())
        });
        if subs.is_empty() {
            sockets.remove(&account);
        }
    }

    /// Queues `text` on `s`; false when `s` is to be dropped.
    fn deliver(&self, s: &Subscriber, text: String) -> bool {
        match s.tx.try_send(text) {
            Ok(()) => {
                self.pushed.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.dropped_slow.fetch_add(1, Ordering::Relaxed);
                s.kick.notify_one();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Counts a socket closed for silence, a slow write or chatter.
    pub fn dropped(&self) {
        self.dropped_other.fetch_add(1, Ordering::Relaxed);
    }

    /// Counters now.
    pub fn counts(&self) -> PushCounts {
        PushCounts {
            sockets: self.open.load(Ordering::Relaxed),
            pushed: self.pushed.load(Ordering::Relaxed),
            dropped_slow: self.dropped_slow.load(Ordering::Relaxed),
            dropped_other: self.dropped_other.load(Ordering::Relaxed),
            refused_full: self.refused_full.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hub(queue: usize, max_sockets: usize) -> Arc<Hub> {
        Hub::new(&PushConfig {
            queue,
            max_sockets,
            ..PushConfig::default()
        })
    }

    #[tokio::test]
    async fn a_full_queue_kicks_only_its_own_socket() {
        let hub = hub(2, 10);
        let mut slow = hub.subscribe(1);
        let mut fine = hub.subscribe(1);
        let kicked = slow.kick();
        for n in 0..2 {
            hub.publish(1, format!("{n}"));
            assert_eq!(fine.try_next().as_deref(), Some(format!("{n}").as_str()));
        }
        hub.publish(1, "2".to_owned());
        // The slow one is kicked and no longer gets anything; the other does.
        tokio::time::timeout(std::time::Duration::from_secs(5), kicked.notified())
            .await
            .unwrap();
        assert_eq!(fine.try_next().as_deref(), Some("2"));
        hub.publish(1, "3".to_owned());
        assert_eq!(fine.try_next().as_deref(), Some("3"));
        assert_eq!(slow.try_next().as_deref(), Some("0"));
        assert_eq!(slow.try_next().as_deref(), Some("1"));
        assert_eq!(slow.next().await, None);
        assert_eq!(hub.counts().dropped_slow, 1);
    }

    #[test]
    fn updates_go_out_only_on_change_and_events_reset_them() {
        let hub = hub(16, 10);
        let mut s = hub.subscribe(5);
        hub.update(5, (3, 10), || "p3".to_owned());
        hub.update(5, (3, 10), || unreachable!("unchanged: not rendered"));
        hub.update(5, (2, 10), || "p2".to_owned());
        hub.publish(5, "found".to_owned());
        hub.update(5, (2, 10), || "p2 again".to_owned());
        let got: Vec<String> = std::iter::from_fn(|| s.try_next()).collect();
        assert_eq!(got, ["p3", "p2", "found", "p2 again"]);
        hub.update(6, (1, 1), || unreachable!("nobody listens"));
        drop(s);
        assert!(hub.is_empty());
    }

    #[test]
    fn seats_stop_at_the_limit_and_come_back_when_dropped() {
        let hub = hub(1, 2);
        let a = hub.seat().unwrap();
        let _b = hub.seat().unwrap();
        assert!(hub.seat().is_none());
        drop(a);
        assert!(hub.seat().is_some());
        assert_eq!(hub.counts().refused_full, 1);
    }
}
