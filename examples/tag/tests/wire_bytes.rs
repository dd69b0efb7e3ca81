//! Tag's derived codecs against the hand-written ones they replaced (kept
//! here, verbatim in effect): the same values give the same bytes, and
//! each side reads what the other wrote.

use hightick_engine::events::ReliableEvent;
use hightick_engine::replication::ReplicationSource;
use hightick_engine::{EntityId, FieldGroups, InputPayload};
use hightick_example_tag::{Runner, RunnerState, Stick, Tag, TagEvent};
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
    w.write_bits(e.kind() as u32, 2)?;
    match *e {
        TagEvent::You { runner } => write_entity_id(w, runner),
        TagEvent::Tagged { by, now_it } => {
            write_entity_id(w, by)?;
            write_entity_id(w, now_it)
        }
        TagEvent::Over => Ok(()),
    }
}

fn event_read_by_hand(r: &mut BitReader) -> Result<TagEvent, ProtoError> {
    Ok(match r.read_bits(2)? {
        0 => TagEvent::You {
            runner: read_entity_id(r)?,
        },
        1 => TagEvent::Tagged {
            by: read_entity_id(r)?,
            now_it: read_entity_id(r)?,
        },
        2 => TagEvent::Over,
        _ => return Err(ProtoError::invalid("tag event kind")),
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
        events.push(TagEvent::You {
            runner: EntityId(a),
        });
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
    assert_eq!(TagEvent::KINDS, &["you", "tagged", "over"]);
    assert!(TagEvent::decode(&mut BitReader::new(&[3])).is_err());
}

#[test]
fn field_groups_are_the_same_bytes() {
    let values = [
        i32::MIN,
        -2_000,
        -16,
        -1,
        0,
        7,
        8,
        300,
        2_000,
        70_000,
        i32::MAX,
    ];
    for (i, &x) in values.iter().enumerate() {
        let state = RunnerState {
            position: [x, values[values.len() - 1 - i]],
            it: i % 2 == 0,
        };
        for group in 0..2 {
            let derived = bytes(|w| state.write_group(group, w));
            assert_eq!(derived, bytes(|w| group_by_hand(&state, group, w)));
            let mut seen = RunnerState::default();
            FieldGroups::read_group(&mut seen, group, &mut BitReader::new(&derived)).unwrap();
        }
    }
    // The game writes its runners through the same declaration.
    let tag = Tag::new(1, 1, 100);
    assert_eq!(
        bytes(|w| tag.write_group(EntityId(0), Runner, 0, w)),
        bytes(|w| group_by_hand(&RunnerState::default(), 0, w))
    );
}
