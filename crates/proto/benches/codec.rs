//! Codec figures: the input batch envelope a client sends every tick (around a
//! 32-bit payload that changes every tick) and the entity
//! records a snapshot carries.
//!
//! `cargo bench -p hightick-proto --bench codec`

use std::hint::black_box;

use hightick_proto::message::{
    EntityRecordHeader, read_entity_record_header, write_end_of_records, write_entity_record_header,
};
use hightick_proto::quantize::PositionQuantizer;
use hightick_proto::{
    BitReader, BitWriter, EntityId, InputBatch, InputCommand, MessageKind, SnapshotHeader,
};
use hightick_telemetry::bench::{figure, measure};

const RECORDS: u16 = 100;

fn input_batch() -> InputBatch<u32> {
    let mut batch = InputBatch::new();
    for back in 0..4u32 {
        batch
            .push(InputCommand::new(
                52_000 - back,
                51_994 - back,
                0x00C0_FFEE ^ back,
            ))
            .unwrap();
    }
    batch
}

/// Encodes and decodes one input batch; returns the payload size in bytes.
fn input_batch_round_trip(batch: &InputBatch<u32>, buf: &mut [u8]) -> usize {
    let mut w = BitWriter::new(buf);
    MessageKind::InputBatch.encode(&mut w).unwrap();
    batch.encode(&mut w).unwrap();
    let len = w.finish();
    let mut r = BitReader::new(&buf[..len]);
    MessageKind::decode(&mut r).unwrap();
    black_box(InputBatch::<u32>::decode(&mut r).unwrap());
    len
}

/// Encodes and decodes a snapshot of `RECORDS` entity updates, each with a
/// quantized position payload; returns the payload size in bytes.
fn snapshot_round_trip(positions: &PositionQuantizer, buf: &mut [u8]) -> usize {
    let mut w = BitWriter::new(buf);
    MessageKind::Snapshot.encode(&mut w).unwrap();
    SnapshotHeader {
        server_tick: 52_000,
        input_ack_tick: 51_998,
        ..Default::default()
    }
    .encode(&mut w)
    .unwrap();
    for i in 0..RECORDS {
        let record = EntityRecordHeader::update(EntityId(i), 0b1);
        write_entity_record_header(&mut w, &record).unwrap();
        positions
            .write(&mut w, [f32::from(i) * 3.5, -12.0, 64.0])
            .unwrap();
    }
    write_end_of_records(&mut w).unwrap();
    let len = w.finish();

    let mut r = BitReader::new(&buf[..len]);
    MessageKind::decode(&mut r).unwrap();
    black_box(SnapshotHeader::decode(&mut r).unwrap());
    while let Some(record) = read_entity_record_header(&mut r).unwrap() {
        black_box(record);
        black_box(positions.read(&mut r).unwrap());
    }
    len
}

// Short samples, many of them: on a shared, loaded machine a long sample is
// likely to include a preemption, and the median of short ones is not.
fn main() {
    let batch = input_batch();
    let mut buf = [0u8; 2048];
    let batch_bytes = input_batch_round_trip(&batch, &mut buf);
    let stats = measure(
        || input_batch_round_trip(black_box(&batch), &mut buf),
        500,
        101,
    );
    figure("proto_input_batch_roundtrip_ns", stats.median_ns(), "ns");

    let positions = PositionQuantizer::new([-4096.0; 3], [4096.0; 3], 1.0 / 64.0).unwrap();
    let snapshot_bytes = snapshot_round_trip(&positions, &mut buf);
    let stats = measure(
        || snapshot_round_trip(black_box(&positions), &mut buf),
        30,
        101,
    );
    let per_record = stats.median_ns() / f64::from(RECORDS);
    figure("proto_entity_record_roundtrip_ns", per_record, "ns");

    println!();
    println!("| payload | bytes | round trip |");
    println!("|---|---|---|");
    println!(
        "| input batch (4 commands, 1 tag byte) | {batch_bytes} | see proto_input_batch_roundtrip_ns |"
    );
    println!(
        "| snapshot: header + {RECORDS} updates with a 1/64-unit position | {snapshot_bytes} | {:.0} ns total |",
        stats.median_ns()
    );
}
