//! Random and mutated bytes fed to every decoder: an error or a value, never
//! a panic. A value a decoder accepts must encode again and read back the same.

mod common;

use common::*;
use hightick_proto::message::{EntityRecordHeader, InputBatch};
use hightick_proto::quantize::{
    FloatQuantizer, PositionQuantizer, UnitVectorQuantizer, read_angle,
};
use hightick_proto::{
    BitReader, BitWriter, InputCommand, MessageKind, ResyncRequest, SnapshotHeader,
};
use proptest::prelude::*;

/// Decodes `bytes` with `decode`; if it succeeds, re-encodes the value and
/// checks it decodes to the same value again.
fn decode_is_consistent<T: PartialEq + std::fmt::Debug>(
    bytes: &[u8],
    decode: impl Fn(&mut BitReader) -> Result<T, hightick_proto::ProtoError>,
    encode: impl Fn(&T, &mut BitWriter) -> Result<(), hightick_proto::ProtoError>,
) {
    let Ok(value) = decode(&mut BitReader::new(bytes)) else {
        return;
    };
    let mut buf = [0u8; 2048];
    let mut w = BitWriter::new(&mut buf);
    encode(&value, &mut w).expect("a decoded value encodes");
    let len = w.finish();
    let again = decode(&mut BitReader::new(&buf[..len])).expect("a re-encoded value decodes");
    assert_eq!(again, value);
}

/// Every decoder of the crate, over the same bytes.
fn feed_every_decoder(bytes: &[u8]) {
    decode_is_consistent(bytes, MessageKind::decode, |k, w| k.encode(w));
    decode_is_consistent(bytes, InputBatch::<u16>::decode, InputBatch::encode);
    decode_is_consistent(bytes, InputCommand::<u16>::decode, InputCommand::encode);
    decode_is_consistent(bytes, InputBatch::<()>::decode, InputBatch::encode);
    decode_is_consistent(bytes, SnapshotHeader::decode, SnapshotHeader::encode);
    decode_is_consistent(bytes, EntityRecordHeader::decode, |h, w| match h {
        Some(h) => h.encode(w),
        None => hightick_proto::message::write_end_of_records(w),
    });
    decode_is_consistent(bytes, ResyncRequest::decode, ResyncRequest::encode);

    // A whole snapshot, records and payloads included.
    let mut r = BitReader::new(bytes);
    let mut records = 0usize;
    let _ = MessageKind::decode(&mut r).and_then(|_| read_snapshot(&mut r, |_| records += 1));
    assert!(records <= bytes.len() * 8);

    // Quantizers.
    let pos = PositionQuantizer::new([-100.0; 3], [100.0; 3], 0.01).unwrap();
    if let Ok(p) = pos.read(&mut BitReader::new(bytes)) {
        assert!(p.iter().all(|c| (-100.0..=100.0).contains(c)));
    }
    let f = FloatQuantizer::with_bits(0.0, 1.0, 7).unwrap();
    if let Ok(v) = f.read(&mut BitReader::new(bytes)) {
        assert!((0.0..=1.0).contains(&v));
    }
    if let Ok(v) = UnitVectorQuantizer::new(11)
        .unwrap()
        .read(&mut BitReader::new(bytes))
    {
        let len = v.iter().map(|c| c * c).sum::<f32>().sqrt();
        assert!((len - 1.0).abs() < 1e-5);
    }
    if let Ok(a) = read_angle(&mut BitReader::new(bytes)) {
        assert!((-std::f32::consts::PI..std::f32::consts::PI).contains(&a));
    }

    // The raw reader, every primitive.
    let mut r = BitReader::new(bytes);
    let _ = r.read_varint();
    let _ = r.read_signed_varint();
    let _ = r.read_ranged(3, 1000);
    let _ = r.read_f32();
    let _ = r.read_u64();
    let _ = r.align();
    let _ = r.read_slice(3);
    let mut out = [0u8; 5];
    let _ = r.read_bytes(&mut out);
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(usize),
    SetByte(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::FlipBit),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for m in mutations {
        let len = bytes.len();
        match *m {
            Mutation::FlipBit(i) if len > 0 => bytes[i / 8 % len] ^= 1 << (i % 8),
            Mutation::SetByte(i, b) if len > 0 => bytes[i % len] = b,
            Mutation::Truncate(i) => bytes.truncate(i % (len + 1)),
            Mutation::Insert(i, b) => bytes.insert(i % (len + 1), b),
            Mutation::Remove(i) if len > 0 => {
                bytes.remove(i % len);
            }
            _ => {}
        }
    }
}

/// A valid encoding of some message, to mutate.
fn valid_payload() -> impl Strategy<Value = Vec<u8>> {
    fn encoded(f: impl FnOnce(&mut BitWriter)) -> Vec<u8> {
        let mut buf = [0u8; 1024];
        let mut w = BitWriter::new(&mut buf);
        f(&mut w);
        let len = w.finish();
        buf[..len].to_vec()
    }
    prop_oneof![
        input_batch().prop_map(|b| encoded(|w| b.encode(w).unwrap())),
        resync_request().prop_map(|q| encoded(|w| q.encode(w).unwrap())),
        (
            snapshot_header(),
            proptest::collection::vec(record(), 0..12)
        )
            .prop_map(|(h, recs)| { encoded(|w| write_snapshot(w, &h, &recs).unwrap()) }),
        (
            snapshot_header(),
            proptest::collection::vec(record(), 0..12)
        )
            .prop_map(|(h, recs)| {
                // Without the kind tag, so snapshot decoding starts at the header.
                let mut bytes = encoded(|w| write_snapshot(w, &h, &recs).unwrap());
                bytes.remove(0);
                bytes
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        feed_every_decoder(&bytes);
    }

    #[test]
    fn mutated_messages_never_panic(
        mut bytes in valid_payload(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        mutate(&mut bytes, &mutations);
        feed_every_decoder(&bytes);
    }
}

#[test]
fn every_truncation_of_a_valid_snapshot_is_an_error() {
    let records: Vec<Record> = (0..20u16)
        .map(|i| Record {
            header: EntityRecordHeader::update(hightick_proto::EntityId(i * 97), 0b1010_0101),
            groups: [5, 0, 77, 0, 0, 31, 0, 99],
        })
        .collect();
    let header = SnapshotHeader::default();
    let mut buf = [0u8; 1024];
    let mut w = BitWriter::new(&mut buf);
    write_snapshot(&mut w, &header, &records).unwrap();
    let len = w.finish();
    let mut r = BitReader::new(&buf[..len]);
    MessageKind::decode(&mut r).unwrap();
    assert!(read_snapshot(&mut r, |_| ()).is_ok());
    for cut in 0..len - 1 {
        let mut r = BitReader::new(&buf[..cut]);
        let result = MessageKind::decode(&mut r).and_then(|_| read_snapshot(&mut r, |_| ()));
        assert!(
            result.is_err(),
            "a snapshot cut to {cut} of {len} bytes decoded"
        );
    }
}
