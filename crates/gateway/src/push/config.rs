//! [`PushConfig`]: the `[push]` table of the gateway's config.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Settings of the WebSocket push channel (`[push]` in the config file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PushConfig {
    /// Pushes queued per socket; a socket whose queue is full is closed
    /// (its reader is too slow).
    pub queue: usize,
    /// Longest one push may take to write; a socket slower than this is
    /// closed. Milliseconds.
    pub send_timeout_ms: u64,
    /// Seconds between pings; a socket silent for two of them is closed.
    pub ping_s: u64,
    /// Sockets held at once; past it an upgrade is answered 503.
    pub max_sockets: usize,
    /// Largest message a client may send, bytes.
    pub max_message_bytes: usize,
    /// Messages a client may send per ping interval before it is closed
    /// (it has nothing to say but pongs and closes).
    pub max_client_messages: u32,
}

impl Default for PushConfig {
    fn default() -> Self {
        Self {
            queue: 64,
            send_timeout_ms: 10_000,
            ping_s: 20,
            max_sockets: 100_000,
            max_message_bytes: 4096,
            max_client_messages: 64,
        }
    }
}

impl PushConfig {
    /// The first field out of range: its name (under `push.`) and the rule.
    pub fn invalid_field(&self) -> Option<(&'static str, &'static str)> {
        if !(1..=65_536).contains(&self.queue) {
            return Some(("push.queue", "must be in 1..=65536"));
        }
        if !(10..=600_000).contains(&self.send_timeout_ms) {
            return Some(("push.send_timeout_ms", "must be in 10..=600000"));
        }
        if !(1..=3600).contains(&self.ping_s) {
            return Some(("push.ping_s", "must be in 1..=3600"));
        }
        if !(1..=10_000_000).contains(&self.max_sockets) {
            return Some(("push.max_sockets", "must be in 1..=10000000"));
        }
        if !(16..=1_048_576).contains(&self.max_message_bytes) {
            return Some(("push.max_message_bytes", "must be in 16..=1048576"));
        }
        if self.max_client_messages == 0 {
            return Some(("push.max_client_messages", "must be at least 1"));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_valid_and_each_bound_names_its_field() {
        assert_eq!(PushConfig::default().invalid_field(), None);
        let zero_queue = PushConfig {
            queue: 0,
            ..PushConfig::default()
        };
        assert_eq!(zero_queue.invalid_field().map(|f| f.0), Some("push.queue"));
        let no_ping = PushConfig {
            ping_s: 0,
            ..PushConfig::default()
        };
        assert_eq!(no_ping.invalid_field().map(|f| f.0), Some("push.ping_s"));
    }
}
