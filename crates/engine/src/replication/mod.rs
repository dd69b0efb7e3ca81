//! Push replication: what each client is sent, and the client side that
//! applies it.
//!
//! - [`ReplicationWriter`] keeps, per client and entity, the newest tick the
//!   client acknowledged, plus a small ring of sent-packet records (which
//!   entities went in which packet). A snapshot carries every field group
//!   changed since the entity's acked tick; the ack of packet P advances the
//!   acked tick of the entities P carried; a loss leaves them to be sent
//!   again, as their newest values. Entities entering relevance get Enter
//!   records (full state) until one is acked; leaving ones get Leave records
//!   until one is acked. A byte budget per client per tick bounds each
//!   snapshot, and a priority accumulator decides who waits. A record
//!   depends only on the entity, its groups and the client's acked tick, so
//!   within a tick the clients that need the same one share its encoding
//!   (`shared`).
//! - [`FieldGroups`]: an archetype's state written and read group by group
//!   from one declaration (`#[derive(Replicated)]`).
//! - [`ClientWorld`] applies snapshots on the client ([`SnapshotReader`]
//!   parses them).
//! - [`ValueComparison`] turns the writer into the naive polling writer the
//!   benchmarks compare against.

mod client;
mod detect;
mod groups;
mod sent;
mod shared;
mod source;
mod writer;

pub use client::{
    ApplyStats, ClientEntity, ClientWorld, Replica, SnapshotInfo, SnapshotReader, read_whole_group,
};
pub use detect::{ChangeDetection, ChangedTicks, EntityView, ShadowValues, ValueComparison};
pub use groups::{FieldGroups, ReplicaTable};
pub use shared::SharedRecordStats;
pub use source::{RecordTicks, ReplicationSource};
pub use writer::{
    PacketFate, PollingWriter, PushWriter, ReplicationStats, ReplicationWriter, SnapshotSummary,
    WriterConfig,
};
