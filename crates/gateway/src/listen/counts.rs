//! [`ConnectionCounts`]: what the HTTP listener closed or refused, for
//! `/metrics`.

use std::sync::atomic::{AtomicU64, Ordering};

use super::deadline::Expiry;

/// Connections the listener ended early, by why.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    header: AtomicU64,
    idle: AtomicU64,
    per_ip: AtomicU64,
}

impl ConnectionCounts {
    pub(crate) fn expired(&self, why: Expiry) {
        let counter = match why {
            Expiry::Header => &self.header,
            Expiry::Idle => &self.idle,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn refused_per_ip(&self) {
        self.per_ip.fetch_add(1, Ordering::Relaxed);
    }

    /// Closed for headers not complete by the header deadline.
    pub fn closed_header_timeout(&self) -> u64 {
        self.header.load(Ordering::Relaxed)
    }

    /// Closed for idling between requests past the idle timeout.
    pub fn closed_idle(&self) -> u64 {
        self.idle.load(Ordering::Relaxed)
    }

    /// Refused at accept: their address held `max_connections_per_ip`.
    pub fn refused_per_ip_total(&self) -> u64 {
        self.per_ip.load(Ordering::Relaxed)
    }
}
