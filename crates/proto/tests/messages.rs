//! Round-trip property tests for every message.

mod common;

use common::*;
use hightick_proto::message::{EntityRecordHeader, InputBatch, MAX_REDUNDANCY};
use hightick_proto::{BitReader, BitWriter, MessageKind};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn input_batch_round_trips(batch in input_batch()) {
        let mut buf = [0u8; 128];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w).unwrap();
        let len = w.finish();
        let mut r = BitReader::new(&buf[..len]);
        let back = InputBatch::decode(&mut r).unwrap();
        prop_assert!(r.remaining_bits() < 8);
        prop_assert_eq!(back.len(), batch.len());
        prop_assert_eq!(back.as_slice(), batch.as_slice());
        // Unused slots decode as defaults.
        for unused in &back.commands[back.len()..] {
            prop_assert_eq!(*unused, Default::default());
        }
    }

    #[test]
    fn redundant_commands_are_cheap(newest in input_command()) {
        // Four commands a tick apart, same input: the three older ones cost
        // 3 bits each (a tick back, same aim lag, payload unchanged).
        let mut batch = InputBatch::new();
        for back in 0..MAX_REDUNDANCY as u32 {
            let mut c = newest;
            c.tick = newest.tick.wrapping_sub(back);
            c.aim_tick = newest.aim_tick.wrapping_sub(back);
            batch.push(c).unwrap();
        }
        let mut buf = [0u8; 64];
        let mut single = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        batch.encode(&mut w).unwrap();
        let mut one = BitWriter::new(&mut single);
        newest.encode(&mut one).unwrap();
        prop_assert_eq!(w.bits_written(), 2 + one.bits_written() + 3 * 3);
    }

    #[test]
    fn snapshot_with_records_round_trips(
        header in snapshot_header(),
        records in proptest::collection::vec(record(), 0..40),
    ) {
        let mut buf = [0u8; 1024];
        let mut w = BitWriter::new(&mut buf);
        write_snapshot(&mut w, &header, &records).unwrap();
        let len = w.finish();
        let mut r = BitReader::new(&buf[..len]);
        prop_assert_eq!(MessageKind::decode(&mut r).unwrap(), MessageKind::Snapshot);
        let mut got = Vec::new();
        let back = read_snapshot(&mut r, |rec| got.push(rec)).unwrap();
        prop_assert_eq!(back, header);
        prop_assert_eq!(got, records);
        prop_assert!(r.remaining_bits() < 8);
    }

    #[test]
    fn entity_record_header_round_trips(h in entity_record_header()) {
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        h.encode(&mut w).unwrap();
        let bits = w.bits_written();
        let mut r = BitReader::new(&buf);
        prop_assert_eq!(EntityRecordHeader::decode(&mut r).unwrap(), Some(h));
        prop_assert_eq!(r.bits_read(), bits);
    }

    #[test]
    fn resync_request_round_trips(req in resync_request()) {
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        req.encode(&mut w).unwrap();
        prop_assert_eq!(hightick_proto::ResyncRequest::decode(&mut BitReader::new(&buf)).unwrap(), req);
    }

    #[test]
    fn message_kind_round_trips(kind in message_kind()) {
        let mut buf = [0u8; 1];
        kind.encode(&mut BitWriter::new(&mut buf)).unwrap();
        prop_assert_eq!(MessageKind::decode(&mut BitReader::new(&buf)).unwrap(), kind);
    }

    #[test]
    fn encoders_are_all_or_nothing(batch in input_batch(), cap in 0usize..24) {
        let mut buf = [0u8; 24];
        let mut w = BitWriter::new(&mut buf[..cap]);
        w.write_bits(0b101, 3).unwrap_or(());
        let before = w.bits_written();
        if batch.encode(&mut w).is_err() {
            prop_assert_eq!(w.bits_written(), before);
        }
    }
}
