//! Proptest strategies for every message, shared by the integration tests.

#![allow(dead_code)]

use hightick_proto::message::{
    EntityId, EntityRecordHeader, InputBatch, InputCommand, MAX_REDUNDANCY, MessageKind,
    ResyncReason, ResyncRequest, SnapshotHeader, SnapshotKind,
};
use proptest::prelude::*;

pub(crate) fn entity_id() -> impl Strategy<Value = EntityId> {
    prop_oneof![0u16..64, 0u16..1024, any::<u16>()].prop_map(EntityId)
}

/// A command whose payload is a `u16` (a test game's input).
pub(crate) fn input_command() -> impl Strategy<Value = InputCommand<u16>> {
    (
        any::<u32>(),
        any::<u16>(),
        prop_oneof![0u32..64, any::<u32>()],
    )
        .prop_map(|(tick, payload, lag)| InputCommand::new(tick, tick.wrapping_sub(lag), payload))
}

/// A batch whose older commands often repeat the payload and aim lag of the
/// newer one and usually sit one tick apart, as a real client's do.
pub(crate) fn input_batch() -> impl Strategy<Value = InputBatch<u16>> {
    let older = (
        prop_oneof![3 => Just(1u32), 1 => 2u32..10, 1 => 1u32..=u32::MAX],
        input_command(),
        any::<[bool; 2]>(),
    );
    (
        input_command(),
        proptest::collection::vec(older, 0..MAX_REDUNDANCY),
    )
        .prop_map(|(newest, older)| {
            let mut batch = InputBatch::new();
            batch.push(newest).unwrap();
            let mut newer = newest;
            for (back, fresh, keep) in older {
                let tick = newer.tick.wrapping_sub(back);
                let c = InputCommand {
                    tick,
                    payload: if keep[0] {
                        newer.payload
                    } else {
                        fresh.payload
                    },
                    aim_tick: if keep[1] {
                        tick.wrapping_sub(newer.tick.wrapping_sub(newer.aim_tick))
                    } else {
                        fresh.aim_tick
                    },
                };
                batch.push(c).unwrap();
                newer = c;
            }
            batch
        })
}

pub(crate) fn snapshot_header() -> impl Strategy<Value = SnapshotHeader> {
    (
        any::<u32>(),
        prop_oneof![-8i32..8, any::<i32>()],
        any::<bool>(),
    )
        .prop_map(|(server_tick, offset, full)| SnapshotHeader {
            server_tick,
            input_ack_tick: server_tick.wrapping_add(offset as u32),
            kind: if full {
                SnapshotKind::FullResync
            } else {
                SnapshotKind::Delta
            },
        })
}

pub(crate) fn entity_record_header() -> impl Strategy<Value = EntityRecordHeader> {
    prop_oneof![
        (entity_id(), 1u8..=255).prop_map(|(e, m)| EntityRecordHeader::update(e, m)),
        (entity_id(), any::<u8>(), any::<u8>())
            .prop_map(|(e, a, m)| EntityRecordHeader::enter(e, a, m)),
        entity_id().prop_map(EntityRecordHeader::leave),
    ]
}

pub(crate) fn resync_request() -> impl Strategy<Value = ResyncRequest> {
    (
        prop::sample::select(ResyncReason::ALL),
        proptest::option::of(any::<u32>()),
    )
        .prop_map(|(reason, last_server_tick)| ResyncRequest {
            reason,
            last_server_tick,
        })
}

pub(crate) fn message_kind() -> impl Strategy<Value = MessageKind> {
    prop::sample::select(MessageKind::ALL.to_vec())
}

/// One record of a test snapshot: its header and one payload value per
/// group in its mask (each written in `payload_bits(group)` bits).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    pub header: EntityRecordHeader,
    pub groups: [u32; 8],
}

/// The bits a test game writes for field group `g`.
pub(crate) fn payload_bits(group: u32) -> u32 {
    [3, 9, 17, 1, 32, 5, 12, 7][group as usize]
}

pub(crate) fn record() -> impl Strategy<Value = Record> {
    (entity_record_header(), any::<[u32; 8]>()).prop_map(|(header, raw)| {
        let mut groups = [0; 8];
        for g in 0..8 {
            if header.group_mask & (1 << g) != 0 {
                let bits = payload_bits(g);
                groups[g as usize] = if bits == 32 {
                    raw[g as usize]
                } else {
                    raw[g as usize] & ((1 << bits) - 1)
                };
            }
        }
        Record { header, groups }
    })
}

use hightick_proto::message::{
    read_entity_record_header, write_end_of_records, write_entity_record_header,
};
use hightick_proto::{BitReader, BitWriter, ProtoError};

/// Writes a whole test snapshot: kind tag, header, records, end marker.
pub(crate) fn write_snapshot(
    w: &mut BitWriter,
    header: &SnapshotHeader,
    records: &[Record],
) -> Result<(), ProtoError> {
    MessageKind::Snapshot.encode(w)?;
    header.encode(w)?;
    for record in records {
        write_entity_record_header(w, &record.header)?;
        for g in 0..8 {
            if record.header.group_mask & (1 << g) != 0 {
                w.write_bits(record.groups[g as usize], payload_bits(g))?;
            }
        }
    }
    write_end_of_records(w)
}

/// Reads a test snapshot written by [`write_snapshot`] (after its kind tag),
/// calling `on_record` for each record.
pub(crate) fn read_snapshot(
    r: &mut BitReader,
    mut on_record: impl FnMut(Record),
) -> Result<SnapshotHeader, ProtoError> {
    let header = SnapshotHeader::decode(r)?;
    while let Some(record_header) = read_entity_record_header(r)? {
        let mut groups = [0; 8];
        for g in 0..8 {
            if record_header.group_mask & (1 << g) != 0 {
                groups[g as usize] = r.read_bits(payload_bits(g))?;
            }
        }
        on_record(Record {
            header: record_header,
            groups,
        });
    }
    Ok(header)
}
