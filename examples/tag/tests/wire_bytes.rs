//! Tag's derived codecs against the hand-written ones they replaced (kept
//! here, verbatim in effect): the input, the events and the "it" flag are
//! the same bytes, each side reading what the other wrote; positions are
//! fewer bits (a range over the field instead of varints).

use hightick_engine::events::ReliableEvent;
use hightick_engine::mode::HostedGame;
use hightick_engine::replication::ReplicationSource;
use hightick_engine::{EntityId, FieldGroups, InputPayload};
use hightick_example_tag::{HALF_FIELD, Runner, RunnerState, Stick, Tag, TagEvent, TagSettings};
use hightick_proto::message::{read_entity_id, write_entity_id};
use hightick_proto::{BitReader, BitWriter, ProtoError};

/// The bytes `write` writes.
fn bytes(write: impl FnOnce(&mut BitWriter) -> Result<(), ProtoError>) -> Vec<u8> {
    let mut buf = [0u8; 64];
    let mut w = BitWriter::new(&mut buf);
    write(&mut w).unwrap();
    let len = w.finish();
    buf[..len].to_vec()
}

// The hand-written codecs tag had before the derives.

fn stick_by_hand(s: &Stick, w: &mut BitWriter) -> Result<(), ProtoError> {
    w.write_u8(s.x as u8)?;
    w.write_u8(s.z as u8)
}

fn event_by_hand(e: &TagEvent, w: &mut BitWriter) -> Result<(), ProtoError> {
    w.write_bits(e.kind() as u32, 1)?;
    match *e {
        TagEvent::Tagged { by, now_it } => {
            write_entity_id(w, by)?;
            write_entity_id(w, now_it)
        }
        TagEvent::Over => Ok(()),
    }
}

fn event_read_by_hand(r: &mut BitReader) -> Result<TagEvent, ProtoError> {
    Ok(match r.read_bits(1)? {
        0 => TagEvent::Tagged {
            by: read_entity_id(r)?,
            now_it: read_entity_id(r)?,
        },
        _ => TagEvent::Over,
    })
}

fn group_by_hand(s: &RunnerState, group: u8, w: &mut BitWriter) -> Result<(), ProtoError> {
    match group {
        0 => {
            w.write_signed_varint(s.position[0])?;
            w.write_signed_varint(s.position[1])
        }
        _ => w.write_bool(s.it),
    }
}

#[test]
fn every_stick_is_the_same_two_bytes() {
    for x in i8::MIN..=i8::MAX {
        for z in [i8::MIN, -1, 0, 1, 64, i8::MAX, x] {
            let s = Stick { x, z };
            let derived = bytes(|w| s.encode(w));
            assert_eq!(derived, bytes(|w| stick_by_hand(&s, w)), "{s:?}");
            assert_eq!(Stick::decode(&mut BitReader::new(&derived)), Ok(s));
        }
    }
}

#[test]
fn events_are_the_same_bytes_and_read_both_ways() {
    let ids = [0u16, 1, 63, 64, 1023, 1024, u16::MAX];
    let mut events = vec![TagEvent::Over];
    for a in ids {
        for b in ids {
            events.push(TagEvent::Tagged {
                by: EntityId(a),
                now_it: EntityId(b),
            });
        }
    }
    for e in events {
        let derived = bytes(|w| e.encode(w));
        assert_eq!(derived, bytes(|w| event_by_hand(&e, w)), "{e:?}");
        assert_eq!(event_read_by_hand(&mut BitReader::new(&derived)), Ok(e));
    }
    assert_eq!(TagEvent::KINDS, &["tagged", "over"]);
    assert!(TagEvent::decode(&mut BitReader::new(&[])).is_err());
    assert!(TagEvent::decode(&mut BitReader::new(&[0])).is_err(), "cut");
}

#[test]
fn the_flag_is_the_same_bit_and_positions_are_fewer_bits() {
    let bits = |write: &dyn Fn(&mut BitWriter) -> Result<(), ProtoError>| {
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        write(&mut w).unwrap();
        w.bits_written()
    };
    for it in [false, true] {
        let state = RunnerState {
            position: [0, 0],
            it,
        };
        let derived = bytes(|w| state.write_group(1, w));
        assert_eq!(derived, bytes(|w| group_by_hand(&state, 1, w)));
        let mut seen = RunnerState::default();
        FieldGroups::read_group(&mut seen, 1, &mut BitReader::new(&derived)).unwrap();
        assert_eq!(seen.it, it);
    }
    // Positions: varints by hand (5, 10 or 19 bits an axis by magnitude),
    // derived a range over the field (12 bits an axis). Over every value an
    // axis can take, the range is about a third smaller; only within
    // 1.28 m of the centre line is a varint shorter (5 or 10 bits).
    let (mut by_hand, mut derived, mut worse) = (0, 0, 0);
    for x in -HALF_FIELD..=HALF_FIELD {
        let state = RunnerState {
            position: [x, x],
            it: false,
        };
        let hand = bits(&|w| group_by_hand(&state, 0, w));
        let ours = bits(&|w| state.write_group(0, w));
        let mut seen = RunnerState::default();
        FieldGroups::read_group(
            &mut seen,
            0,
            &mut BitReader::new(&bytes(|w| state.write_group(0, w))),
        )
        .unwrap();
        assert_eq!(seen.position, state.position);
        by_hand += hand / 2;
        derived += ours / 2;
        worse += usize::from(ours > hand);
    }
    assert_eq!((by_hand, derived), (73_635, 48_012));
    assert_eq!(worse, 256, "|x| < 128 cm");
    // The worst case of a position: 38 bits by hand, 24 derived.
    let far = RunnerState {
        position: [HALF_FIELD, -HALF_FIELD],
        it: false,
    };
    assert_eq!(bits(&|w| group_by_hand(&far, 0, w)), 38);
    assert_eq!(bits(&|w| far.write_group(0, w)), 24);
    // The game writes its runners through the same declaration, and the
    // field's edge bounds what a client accepts.
    let (_, tag) = Tag::create(&Tag::MODES[0], &TagSettings::default(), 128, 0).unwrap();
    assert_eq!(
        bytes(|w| tag.write_group(EntityId(0), Runner, 0, w)),
        bytes(|w| RunnerState::default().write_group(0, w))
    );
    let off_field = RunnerState {
        position: [HALF_FIELD + 1, 0],
        it: false,
    };
    let mut buf = [0u8; 8];
    assert_eq!(
        off_field.write_group(0, &mut BitWriter::new(&mut buf)),
        Err(ProtoError::invalid("RunnerState.position"))
    );
}
