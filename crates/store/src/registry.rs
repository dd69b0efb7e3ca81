//! The shared host registry's records: what a server host's heartbeat says of
//! it, the host as stored (with the matches gateways allocated on it since),
//! and what a gateway's matchmaker pass adds back. The operations are
//! [`crate::store::Store`]'s `host_*` methods; which host gets a match is the
//! gateway's choice.

use crate::error::StoreError;
use crate::model::{MAX_ID_LEN, check_id, invalid};

/// One heartbeat of a registered host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBeat {
    /// Its stable id (the registry's key).
    pub host_id: String,
    /// Its admin API address (`ip:port`); one host per address.
    pub admin: String,
    /// Matches it may be given at once.
    pub capacity: i64,
    /// Matches it runs.
    pub active: i64,
    /// Whether it is draining.
    pub draining: bool,
    /// Its region tag ("" for none).
    pub region: String,
    /// The game it serves ("" for unnamed).
    pub game: String,
}

/// A registered host as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredHost {
    /// What its last heartbeat said.
    pub beat: HostBeat,
    /// When that heartbeat came, unix ms.
    pub seen_ms: i64,
    /// Matches gateways allocated on it since that heartbeat.
    pub allocated: i64,
    /// Passed over until then (unix ms): it refused a match as full.
    pub full_until_ms: Option<i64>,
}

/// What one matchmaker pass did with a host it read at `seen_ms`: applied
/// only while that is still the host's last heartbeat (a newer one already
/// counts what the host runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTally {
    /// The host.
    pub host_id: String,
    /// The heartbeat the pass read.
    pub seen_ms: i64,
    /// Matches allocated on it.
    pub allocated: i64,
    /// It refused a match as full: pass it over until then (unix ms).
    pub full_until_ms: Option<i64>,
}

pub(crate) fn check_beat(b: &HostBeat) -> Result<(), StoreError> {
    check_id("host_id", &b.host_id)?;
    check_id("admin", &b.admin)?;
    if b.capacity < 0 {
        return Err(invalid("capacity", "must not be negative"));
    }
    if b.active < 0 {
        return Err(invalid("active", "must not be negative"));
    }
    for (field, text) in [("region", &b.region), ("game", &b.game)] {
        if text.len() > MAX_ID_LEN {
            return Err(invalid(field, "must be at most 128 bytes"));
        }
    }
    Ok(())
}
