//! [`MatchConfig`]: everything a match allocates at creation is sized here.

use serde::{Deserialize, Serialize};

use crate::error::EngineError;
use crate::lag_comp::RewindLimits;
use crate::replication::WriterConfig;

/// The sizes and rates of one match. Every buffer the tick uses is allocated
/// from these numbers when the match is created.
///
/// In a TOML file every field is optional (defaults below):
///
/// ```toml
/// tick_rate_hz = 128            # fixed simulation rate
/// max_players = 10              # player (and client) slots
/// max_entities = 256            # replicated entity slots
/// input_window_ticks = 64       # how far ahead of the simulation inputs are held
/// snapshot_budget_bytes = 896   # snapshot bytes per client per tick
/// sent_packet_ring = 64         # snapshot packets in flight per client
/// sent_entry_pool = 4096        # entity records those packets may carry in all
/// max_events_per_player = 64    # reliable events queued per client
/// entity_reuse_delay_ticks = 256 # quarantine of a freed entity id
/// pose_interval_ticks = 1       # lag-compensation record interval (every tick: rewinds exactly)
/// max_rewind_ms = 250           # furthest lag compensation rewinds (a 200 ms round trip + interpolation)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchConfig {
    /// Simulation ticks per second (1..=1000).
    pub tick_rate_hz: u32,
    /// Player slots (1..=4096).
    pub max_players: u16,
    /// Replicated entity slots (1..=65535).
    pub max_entities: u16,
    /// Ticks ahead of the simulation an input may arrive and be held.
    pub input_window_ticks: u16,
    /// Snapshot payload bytes per client per tick, everything included
    /// (32..=65000). A snapshot travels as one unreliable message, so it must
    /// fit the packet layer's `unreliable_budget` less 3 bytes of framing
    /// (896 with `hightick-net`'s default of 900).
    pub snapshot_budget_bytes: u16,
    /// Snapshot packets per client whose fate is awaited (2..=4096).
    pub sent_packet_ring: u16,
    /// Entity records those packets may carry in all (at least `max_entities`).
    pub sent_entry_pool: u32,
    /// Reliable events queued per client before new ones are dropped (and
    /// the client resynced); the queue holds at least twice the player
    /// slots plus 16 whatever this says, so a reconnect's introductions (one
    /// per other player, typically) always fit
    /// ([`Self::event_queue_capacity`]).
    pub max_events_per_player: u16,
    /// Ticks a freed entity id waits before reuse.
    pub entity_reuse_delay_ticks: u32,
    /// Lag-compensation poses are recorded every this many ticks (>= 1).
    /// The default, 1, makes a rewind blend the two ticks around the time the
    /// shooter saw, as the client drew them; a sparser interval blends over
    /// ticks the client saw separately and misjudges shots grazing a limb
    /// (docs/PERFORMANCE.md, "The even aim mix").
    pub pose_interval_ticks: u32,
    /// The furthest lag compensation rewinds, in milliseconds. The default,
    /// 250, covers the `bad` link's longest round trip (200 ms) plus two
    /// ticks of interpolation and a tick's phase at 128 Hz; a shooter
    /// further behind has its shots resolved against the targets as they
    /// were this long ago (it bounds how long after reaching cover a target
    /// can still be hit).
    pub max_rewind_ms: u32,
}

impl MatchConfig {
    /// The defaults, with the rate and the slots a game sizes for itself.
    pub fn sized(tick_rate_hz: u32, max_players: u16, max_entities: u16) -> Self {
        Self {
            tick_rate_hz,
            max_players,
            max_entities,
            ..Self::default()
        }
    }
}

impl Default for MatchConfig {
    fn default() -> Self {
        Self {
            tick_rate_hz: 128,
            max_players: 10,
            max_entities: 256,
            input_window_ticks: 64,
            snapshot_budget_bytes: 896,
            sent_packet_ring: 64,
            sent_entry_pool: 4096,
            max_events_per_player: 64,
            entity_reuse_delay_ticks: 256,
            pose_interval_ticks: 1,
            max_rewind_ms: 250,
        }
    }
}

impl MatchConfig {
    /// Events one client's queue holds: [`Self::max_events_per_player`],
    /// but at least `2 * max_players + 16`.
    pub fn event_queue_capacity(&self) -> usize {
        usize::from(self.max_events_per_player).max(2 * usize::from(self.max_players) + 16)
    }
}

fn check(ok: bool, field: &'static str, reason: &'static str) -> Result<(), EngineError> {
    if ok {
        Ok(())
    } else {
        Err(EngineError::Config { field, reason })
    }
}

impl MatchConfig {
    /// Checks every field; the error names the first field at fault.
    pub fn validate(&self) -> Result<(), EngineError> {
        check(
            (1..=1000).contains(&self.tick_rate_hz),
            "tick_rate_hz",
            "must be 1..=1000",
        )?;
        check(
            (1..=4096).contains(&self.max_players),
            "max_players",
            "must be 1..=4096",
        )?;
        check(self.max_entities >= 1, "max_entities", "must be at least 1")?;
        check(
            self.input_window_ticks >= 1,
            "input_window_ticks",
            "must be at least 1",
        )?;
        check(
            (32..=65000).contains(&self.snapshot_budget_bytes),
            "snapshot_budget_bytes",
            "must be 32..=65000",
        )?;
        check(
            (2..=4096).contains(&self.sent_packet_ring),
            "sent_packet_ring",
            "must be 2..=4096",
        )?;
        check(
            self.sent_entry_pool >= u32::from(self.max_entities),
            "sent_entry_pool",
            "must be at least max_entities",
        )?;
        check(
            self.pose_interval_ticks >= 1,
            "pose_interval_ticks",
            "must be at least 1",
        )?;
        Ok(())
    }

    /// Parses a TOML document and validates it. Errors name the field.
    pub fn from_toml(text: &str) -> Result<Self, EngineError> {
        let config: Self =
            toml::from_str(text).map_err(|e| EngineError::ConfigParse(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// The sizes of the match's replication writer.
    pub fn writer(&self) -> WriterConfig {
        WriterConfig {
            clients: usize::from(self.max_players),
            entities: usize::from(self.max_entities),
            budget_bytes: usize::from(self.snapshot_budget_bytes),
            sent_packets: usize::from(self.sent_packet_ring),
            sent_entries: self.sent_entry_pool as usize,
        }
    }

    /// The lag-compensation limits for this tick rate.
    pub fn rewind_limits(&self) -> RewindLimits {
        RewindLimits::new(
            self.tick_rate_hz,
            self.pose_interval_ticks,
            self.max_rewind_ms,
        )
    }

    /// Seconds per tick.
    pub fn dt(&self) -> f32 {
        1.0 / self.tick_rate_hz.max(1) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip_through_toml() {
        let c = MatchConfig::default();
        c.validate().unwrap();
        let text = toml::to_string(&c).unwrap();
        assert_eq!(MatchConfig::from_toml(&text).unwrap(), c);
        assert_eq!(MatchConfig::from_toml("").unwrap(), c);
    }

    #[test]
    fn errors_name_the_field() {
        let err = MatchConfig::from_toml("tick_rate_hz = 0")
            .unwrap_err()
            .to_string();
        assert!(err.contains("tick_rate_hz"), "{err}");
        let err = MatchConfig::from_toml("max_entities = 300\nsent_entry_pool = 10")
            .unwrap_err()
            .to_string();
        assert!(err.contains("sent_entry_pool"), "{err}");
        let err = MatchConfig::from_toml("max_players = \"ten\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_players"), "{err}");
        let err = MatchConfig::from_toml("tick_rate = 64")
            .unwrap_err()
            .to_string();
        assert!(err.contains("tick_rate"), "{err}");
    }
}
