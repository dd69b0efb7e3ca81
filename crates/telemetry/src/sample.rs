//! Sampled frame records: a fixed ring filled on the tick path, drained as
//! JSON lines off it.

use std::io;

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeStruct, Serializer};

use crate::error::TelemetryError;
use crate::record::FrameRecord;
use crate::sub_scope::{SubScopeId, SubScopeRegistry};
use crate::subsystem::Subsystem;

/// A ring of preallocated records; pushing copies into it without allocating.
#[derive(Debug)]
pub(crate) struct SampleRing {
    records: Vec<FrameRecord>,
    oldest: usize,
    len: usize,
    dropped: u64,
}

impl SampleRing {
    pub(crate) fn new(capacity: usize, sub_scopes: usize) -> Self {
        Self {
            records: (0..capacity)
                .map(|_| FrameRecord::new(sub_scopes))
                .collect(),
            oldest: 0,
            len: 0,
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, record: &FrameRecord) {
        let capacity = self.records.len();
        if capacity == 0 {
            return;
        }
        if self.len == capacity {
            self.records[self.oldest].copy_from(record);
            self.oldest = (self.oldest + 1) % capacity;
            self.dropped += 1;
        } else {
            self.records[(self.oldest + self.len) % capacity].copy_from(record);
            self.len += 1;
        }
    }

    pub(crate) fn oldest(&self) -> Option<&FrameRecord> {
        (self.len > 0).then(|| &self.records[self.oldest])
    }

    pub(crate) fn pop_oldest(&mut self) {
        if self.len > 0 {
            self.oldest = (self.oldest + 1) % self.records.len();
            self.len -= 1;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.oldest = 0;
        self.len = 0;
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// Writes one record as one line of JSON.
pub(crate) fn write_json_line(
    mut out: impl io::Write,
    record: &FrameRecord,
    sub_scopes: &SubScopeRegistry,
) -> Result<(), TelemetryError> {
    serde_json::to_writer(&mut out, &JsonFrame { record, sub_scopes }).map_err(io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}

struct JsonFrame<'a> {
    record: &'a FrameRecord,
    sub_scopes: &'a SubScopeRegistry,
}

impl Serialize for JsonFrame<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = self.record;
        let mut s = serializer.serialize_struct("FrameRecord", 7)?;
        s.serialize_field("tick", &r.tick)?;
        s.serialize_field("start_ns", &r.start_ns)?;
        s.serialize_field("total_ns", &r.total_ns)?;
        s.serialize_field("late", &r.late)?;
        s.serialize_field("unattributed_ns", &r.unattributed_ns())?;
        s.serialize_field("subsystems", &JsonSubsystems(r))?;
        s.serialize_field(
            "sub_scopes",
            &JsonSubScopes {
                frame: self,
                under: None,
            },
        )?;
        s.end()
    }
}

struct JsonSubsystems<'a>(&'a FrameRecord);

impl Serialize for JsonSubsystems<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(Subsystem::COUNT))?;
        for s in Subsystem::ALL {
            map.serialize_entry(s.as_str(), &self.0.subsystem(s))?;
        }
        map.end()
    }
}

/// With `under: None`, a map from subsystem to its sub-scopes; with
/// `under: Some(s)`, the map of `s`'s sub-scope names to nanoseconds.
struct JsonSubScopes<'a> {
    frame: &'a JsonFrame<'a>,
    under: Option<Subsystem>,
}

impl JsonSubScopes<'_> {
    fn names(&self) -> impl Iterator<Item = (SubScopeId, Subsystem, &'static str)> + '_ {
        self.frame.sub_scopes.iter()
    }
}

impl Serialize for JsonSubScopes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self.under {
            None => {
                for s in Subsystem::ALL {
                    if self.names().any(|(_, owner, _)| owner == s) {
                        let inner = JsonSubScopes {
                            frame: self.frame,
                            under: Some(s),
                        };
                        map.serialize_entry(s.as_str(), &inner)?;
                    }
                }
            }
            Some(s) => {
                for (id, _, name) in self.names().filter(|(_, owner, _)| *owner == s) {
                    map.serialize_entry(name, &self.frame.record.sub_scope(id))?;
                }
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tick: u64) -> FrameRecord {
        let mut r = FrameRecord::new(1);
        r.tick = tick;
        r
    }

    #[test]
    fn the_ring_keeps_the_newest_and_counts_what_it_drops() {
        let mut ring = SampleRing::new(3, 1);
        for t in 0..5 {
            ring.push(&record(t));
        }
        assert_eq!(ring.dropped(), 2);
        let mut ticks = Vec::new();
        while let Some(r) = ring.oldest() {
            ticks.push(r.tick);
            ring.pop_oldest();
        }
        assert_eq!(ticks, [2, 3, 4]);
        ring.push(&record(9));
        assert_eq!(ring.oldest().map(|r| r.tick), Some(9));
        ring.clear();
        assert!(ring.oldest().is_none());
    }

    #[test]
    fn a_ring_of_zero_keeps_nothing() {
        let mut ring = SampleRing::new(0, 1);
        ring.push(&record(1));
        assert!(ring.oldest().is_none());
        assert_eq!(ring.dropped(), 0);
    }

    #[test]
    fn json_lines_group_sub_scopes_under_their_subsystem() {
        let reg = SubScopeRegistry::new(3);
        let a = reg.register(Subsystem::Physics, "sweep").unwrap();
        let b = reg.register(Subsystem::Fow, "los").unwrap();
        let mut r = FrameRecord::new(3);
        r.tick = 3;
        r.total_ns = 100;
        r.sub_scope_ns[a.index()] = 11;
        r.sub_scope_ns[b.index()] = 22;
        let mut out = Vec::new();
        write_json_line(&mut out, &r, &reg).unwrap();
        assert_eq!(out.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["sub_scopes"]["physics"]["sweep"], 11);
        assert_eq!(v["sub_scopes"]["fow"]["los"], 22);
        assert_eq!(v["unattributed_ns"], 100);
        assert_eq!(v["sub_scopes"].as_object().unwrap().len(), 2);
    }
}
