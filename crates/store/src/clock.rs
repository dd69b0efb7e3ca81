//! The wall clock of every timestamp the store writes and the gateway
//! compares against (sessions, tickets, heartbeats, results): Unix
//! milliseconds.

/// Milliseconds since the Unix epoch (0 before it; saturating far after).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
