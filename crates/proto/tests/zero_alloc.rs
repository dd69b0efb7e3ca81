//! Encoding and decoding the hot-path messages allocates nothing.

use hightick_proto::message::{
    EntityRecordHeader, read_entity_record_header, write_end_of_records, write_entity_record_header,
};
use hightick_proto::quantize::PositionQuantizer;
use hightick_proto::{
    BitReader, BitWriter, EntityId, InputBatch, InputCommand, MessageKind, SnapshotHeader,
    SnapshotKind,
};
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};

#[global_allocator]
static A: CountingAllocator = CountingAllocator;

fn batch() -> InputBatch<u32> {
    let mut batch = InputBatch::new();
    for back in 0..4u32 {
        batch
            .push(InputCommand::new(
                1_000 - back,
                990 - back,
                0x00C0_FFEE ^ back,
            ))
            .unwrap();
    }
    batch
}

#[test]
fn input_batch_round_trip_allocates_nothing() {
    let batch = batch();
    let mut buf = [0u8; 128];
    let allocations = count_allocations(|| {
        let mut w = BitWriter::new(&mut buf);
        MessageKind::InputBatch.encode(&mut w).unwrap();
        batch.encode(&mut w).unwrap();
        let len = w.finish();
        let mut r = BitReader::new(&buf[..len]);
        assert_eq!(
            MessageKind::decode(&mut r).unwrap(),
            MessageKind::InputBatch
        );
        let back = InputBatch::<u32>::decode(&mut r).unwrap();
        assert_eq!(back.len(), 4);
    });
    assert_eq!(allocations, 0);
}

#[test]
fn snapshot_with_100_records_round_trip_allocates_nothing() {
    let positions = PositionQuantizer::new([-4096.0; 3], [4096.0; 3], 1.0 / 64.0).unwrap();
    let header = SnapshotHeader {
        server_tick: 77_000,
        input_ack_tick: 76_998,
        kind: SnapshotKind::Delta,
    };
    let mut buf = [0u8; 4096];
    let allocations = count_allocations(|| {
        let mut w = BitWriter::new(&mut buf);
        MessageKind::Snapshot.encode(&mut w).unwrap();
        header.encode(&mut w).unwrap();
        for i in 0..100u16 {
            let record = match i % 10 {
                0 => EntityRecordHeader::enter(EntityId(i), 2, 0b11),
                9 => EntityRecordHeader::leave(EntityId(i)),
                _ => EntityRecordHeader::update(EntityId(i), 0b01),
            };
            write_entity_record_header(&mut w, &record).unwrap();
            if record.group_mask & 1 != 0 {
                positions.write(&mut w, [f32::from(i), -3.0, 64.0]).unwrap();
            }
            if record.group_mask & 2 != 0 {
                w.write_u8(100).unwrap();
            }
        }
        write_end_of_records(&mut w).unwrap();
        let len = w.finish();

        let mut r = BitReader::new(&buf[..len]);
        assert_eq!(MessageKind::decode(&mut r).unwrap(), MessageKind::Snapshot);
        assert_eq!(SnapshotHeader::decode(&mut r).unwrap(), header);
        let mut records = 0;
        while let Some(record) = read_entity_record_header(&mut r).unwrap() {
            if record.group_mask & 1 != 0 {
                positions.read(&mut r).unwrap();
            }
            if record.group_mask & 2 != 0 {
                assert_eq!(r.read_u8().unwrap(), 100);
            }
            records += 1;
        }
        assert_eq!(records, 100);
    });
    assert_eq!(allocations, 0);
}
