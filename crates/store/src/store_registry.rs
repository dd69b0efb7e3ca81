//! [`Store`]'s shared host registry (the records are in `registry.rs`, the
//! statements in `backend/ops/registry.rs`).

use super::{Backend, Store, postgres, sqlite};
use crate::error::StoreError;
use crate::registry::{HostBeat, HostTally, RegisteredHost};

impl Store {
    /// Records a host's heartbeat `beat`, heard at `seen_ms` (unix ms): its
    /// row is replaced, the matches allocated on it since the last one and its
    /// full mark go, and another host id on the same admin address is dropped.
    pub async fn host_heartbeat(&self, beat: &HostBeat, seen_ms: i64) -> Result<(), StoreError> {
        let beat = beat.clone();
        on_backend_write!(self, in_transaction, host_heartbeat(&beat, seen_ms))
    }

    /// Every host heard from at or after `seen_since_ms`, by host id.
    pub async fn hosts_registered(
        &self,
        seen_since_ms: i64,
    ) -> Result<Vec<RegisteredHost>, StoreError> {
        on_backend!(self, hosts_registered(seen_since_ms))
    }

    /// Adds what a matchmaker pass did (matches allocated, full refusals) to
    /// each host it names, unless the host has heartbeat since the pass read
    /// it; returns how many hosts took theirs.
    pub async fn hosts_tally(&self, tallies: &[HostTally]) -> Result<u64, StoreError> {
        let tallies = tallies.to_vec();
        on_backend_write!(self, in_transaction, hosts_tally(&tallies))
    }

    /// Forgets the hosts silent since before `before_ms`; returns how many.
    pub async fn hosts_forget(&self, before_ms: i64) -> Result<u64, StoreError> {
        on_backend_write!(self, autocommit, hosts_forget(before_ms))
    }
}
