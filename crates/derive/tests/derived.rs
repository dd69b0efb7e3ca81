//! Derived codecs against the properties every codec must have: what is
//! written reads back (exactly, or within the quantizer's stated error);
//! a value the reader would refuse is refused on write, naming the field;
//! garbage never panics, it reads as an error or as a value that writes
//! again.

use hightick_engine::replication::Replica;
use hightick_engine::world::GroupMask;
use hightick_engine::{
    Archetype, EntityId, FieldGroups, InputPayload, ReliableEvent, Replicated, ReplicationSource,
    Wire,
};
use hightick_proto::quantize::{ANGLE_MAX_ERROR, UnitVectorQuantizer, angle_distance};
use hightick_proto::{BitReader, BitWriter, ProtoError};
use proptest::prelude::*;

/// An input with every encoding.
#[derive(Debug, Clone, Copy, PartialEq, Default, Wire, InputPayload)]
struct Pad {
    #[wire(bits = 4)]
    buttons: u8,
    #[wire(range = -100..=100)]
    x: i16,
    #[wire(varint)]
    seq: u32,
    #[wire(varint)]
    drift: i32,
    #[wire(float(range = -10.0..=10.0, step = 0.01))]
    throttle: f32,
    #[wire(float(range = 0.0..=1.0, bits = 8))]
    trigger: f32,
    #[wire(angle)]
    yaw: f32,
    #[wire(unit_vector(bits = 11))]
    aim: [f32; 3],
    #[wire(bits = 3)]
    slots: [u8; 4],
    #[wire(entity)]
    target: EntityId,
    focus: Option<EntityId>,
    raw: i64,
    ok: bool,
}

/// Events of every shape.
#[derive(Debug, Clone, Copy, PartialEq, Wire, ReliableEvent)]
enum Happening {
    Spawned {
        at: EntityId,
        #[wire(range = 0..=3)]
        team: u8,
    },
    Scored(#[wire(varint)] u32, bool),
    #[event(ends_match)]
    RoundEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Archetype)]
#[archetype(groups = ShipState)]
struct Ship;

/// Replicated state in three groups.
#[derive(Debug, Default, Clone, PartialEq, Replicated)]
#[replicated(archetype = Ship)]
struct ShipState {
    #[group(0)]
    #[wire(float(range = -500.0..=500.0, step = 0.05))]
    pos: [f32; 2],
    #[group(0)]
    #[wire(angle)]
    heading: f32,
    #[group(2)]
    pilot: Option<EntityId>,
    #[group(1)]
    #[wire(range = 0..=100)]
    hull: u8,
}

fn encode(v: &impl Wire) -> Result<Vec<u8>, ProtoError> {
    encode_with(|w| v.write(w))
}

/// The bytes `write` writes (at most 128).
fn encode_with(
    write: impl FnOnce(&mut BitWriter) -> Result<(), ProtoError>,
) -> Result<Vec<u8>, ProtoError> {
    let mut buf = [0u8; 128];
    let mut w = BitWriter::new(&mut buf);
    write(&mut w)?;
    let len = w.finish();
    Ok(buf[..len].to_vec())
}

fn pad() -> impl Strategy<Value = Pad> {
    (
        (0u8..16, -100i16..=100, any::<u32>(), any::<i32>()),
        (-10f32..=10.0, 0f32..=1.0, -10f32..10.0),
        (
            proptest::array::uniform3(-1f32..1.0),
            proptest::array::uniform4(0u8..8),
        ),
        (
            any::<u16>(),
            proptest::option::of(any::<u16>()),
            any::<i64>(),
            any::<bool>(),
        ),
    )
        .prop_filter("a direction", |(_, _, (aim, _), _)| {
            aim.iter().map(|c| c.abs()).sum::<f32>() > 1e-3
        })
        .prop_map(
            |(
                (buttons, x, seq, drift),
                (throttle, trigger, yaw),
                (aim, slots),
                (target, focus, raw, ok),
            )| Pad {
                buttons,
                x,
                seq,
                drift,
                throttle,
                trigger,
                yaw,
                aim,
                slots,
                target: EntityId(target),
                focus: focus.map(EntityId),
                raw,
                ok,
            },
        )
}

fn happening() -> impl Strategy<Value = Happening> {
    prop_oneof![
        (any::<u16>(), 0u8..=3).prop_map(|(at, team)| Happening::Spawned {
            at: EntityId(at),
            team
        }),
        (any::<u32>(), any::<bool>()).prop_map(|(n, b)| Happening::Scored(n, b)),
        Just(Happening::RoundEnd),
    ]
}

fn angle_between(a: [f32; 3], b: [f32; 3]) -> f32 {
    let len = |v: [f32; 3]| v.iter().map(|c| c * c).sum::<f32>().sqrt();
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    (dot / (len(a) * len(b))).clamp(-1.0, 1.0).acos()
}

proptest! {
    #[test]
    fn inputs_round_trip(p in pad()) {
        let bytes = encode(&p).unwrap();
        let back = Pad::decode(&mut BitReader::new(&bytes)).unwrap();
        prop_assert_eq!(
            (back.buttons, back.x, back.seq, back.drift, back.slots, back.target, back.focus, back.raw, back.ok),
            (p.buttons, p.x, p.seq, p.drift, p.slots, p.target, p.focus, p.raw, p.ok)
        );
        prop_assert!((back.throttle - p.throttle).abs() <= 0.005 + 1e-5);
        prop_assert!((back.trigger - p.trigger).abs() <= 0.5 / 255.0 + 1e-6);
        prop_assert!(angle_distance(back.yaw, p.yaw) <= ANGLE_MAX_ERROR);
        // acos loses precision near 0: allow a little more than the bound.
        let uv = UnitVectorQuantizer::new(11).unwrap();
        prop_assert!(angle_between(back.aim, p.aim) <= uv.max_error() + 1e-3);
        // What reads back is written again bit for bit (a client predicting
        // with the quantized input sees what the server sees).
        prop_assert_eq!(encode(&back).unwrap(), encode(&back.quantized().unwrap()).unwrap());
    }

    #[test]
    fn events_round_trip(e in happening()) {
        let mut buf = [0u8; 32];
        let n = e.write_message(&mut buf).unwrap();
        let mut r = BitReader::new(&buf[1..n]);
        prop_assert_eq!(Happening::decode(&mut r).unwrap(), e);
        prop_assert!(Happening::KINDS[e.kind()] == ["spawned", "scored", "round_end"][e.kind()]);
    }

    #[test]
    fn groups_round_trip(
        pos in proptest::array::uniform2(-500f32..=500.0),
        heading in -3f32..3.0,
        hull in 0u8..=100,
        pilot in proptest::option::of(any::<u16>()),
    ) {
        let ship = ShipState { pos, heading, pilot: pilot.map(EntityId), hull };
        let mut seen = ShipState::default();
        for group in [0u8, 1, 2] {
            let mut buf = [0u8; 32];
            let mut w = BitWriter::new(&mut buf);
            ship.write_group(group, &mut w).unwrap();
            let len = w.finish();
            let mut r = BitReader::new(&buf[..len]);
            Replica::read_group(&mut seen, Ship, group, &mut r).unwrap();
        }
        prop_assert_eq!((seen.hull, seen.pilot), (ship.hull, ship.pilot));
        for i in 0..2 {
            prop_assert!((seen.pos[i] - ship.pos[i]).abs() <= 0.025 + 1e-4);
        }
        prop_assert!(angle_distance(seen.heading, ship.heading) <= ANGLE_MAX_ERROR);
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        // Whatever reads is a value that writes again.
        if let Ok(p) = Pad::read(&mut BitReader::new(&bytes)) {
            prop_assert!(encode(&p).is_ok());
        }
        if let Ok(e) = Happening::read(&mut BitReader::new(&bytes)) {
            prop_assert!(encode(&e).is_ok());
        }
        let mut ship = ShipState::default();
        for group in 0..8 {
            let before = ship.clone();
            if FieldGroups::read_group(&mut ship, group, &mut BitReader::new(&bytes)).is_err() {
                prop_assert_eq!(&ship, &before, "a failed read changes nothing");
            }
        }
    }
}

#[test]
fn refused_values_name_the_field_and_write_nothing() {
    let mut buf = [0u8; 128];
    let mut w = BitWriter::new(&mut buf);
    w.write_bool(true).unwrap();
    let fine = Pad {
        aim: [0.0, 0.0, 1.0],
        ..Pad::default()
    };
    for (bad, field) in [
        (Pad { x: 101, ..fine }, "Pad.x"),
        (
            Pad {
                buttons: 16,
                ..fine
            },
            "Pad.buttons",
        ),
        (
            Pad {
                slots: [0, 0, 8, 0],
                ..fine
            },
            "Pad.slots",
        ),
        (Pad::default(), "Pad.aim"), // a zero vector has no direction
    ] {
        assert_eq!(bad.write(&mut w), Err(ProtoError::invalid(field)));
        assert_eq!(w.bits_written(), 1, "all or nothing");
    }
    let bad = Happening::Spawned {
        at: EntityId(1),
        team: 4,
    };
    assert_eq!(
        encode(&bad),
        Err(ProtoError::invalid("Happening::Spawned.team"))
    );
    let mut w = BitWriter::new(&mut buf);
    let bad = ShipState {
        hull: 101,
        ..ShipState::default()
    };
    assert_eq!(
        bad.write_group(1, &mut w),
        Err(ProtoError::invalid("ShipState.hull"))
    );
    assert_eq!(
        bad.write_group(3, &mut w),
        Err(ProtoError::invalid("ShipState group"))
    );
    assert_eq!(w.bits_written(), 0);
}

#[test]
fn bad_reads_name_the_field() {
    // Variant index 3 of 3 variants, in 2 bits.
    assert_eq!(
        Happening::read(&mut BitReader::new(&[0b11])),
        Err(ProtoError::invalid("Happening kind"))
    );
    // A range of 0..=100 is 7 bits; 127 is out of it.
    let mut ship = ShipState::default();
    assert_eq!(
        FieldGroups::read_group(&mut ship, 1, &mut BitReader::new(&[0x7F])),
        Err(ProtoError::invalid("ShipState.hull"))
    );
    assert_eq!(
        FieldGroups::read_group(&mut ship, 5, &mut BitReader::new(&[0])),
        Err(ProtoError::invalid("ShipState group"))
    );
    assert_eq!(ShipState::GROUPS, GroupMask(0b111));
}

#[test]
fn the_sizes_are_the_attributes() {
    let mut buf = [0u8; 64];
    let mut w = BitWriter::new(&mut buf);
    Pad {
        aim: [0.0, 0.0, 1.0],
        ..Pad::default()
    }
    .write(&mut w)
    .unwrap();
    // 4 + 8 + 5 + 5 + 11 (20 / 0.01 = 2000 steps) + 8 + 16 + 22 + 12 + 7 + 1 + 64 + 1
    assert_eq!(
        w.bits_written(),
        4 + 8 + 5 + 5 + 11 + 8 + 16 + 22 + 12 + 7 + 1 + 64 + 1
    );
}

#[test]
fn setters_stamp_the_fields_group_only_on_a_change() {
    use hightick_engine::world::ReplicationWorld;
    let mut world = ReplicationWorld::new(4, 0);
    world.begin_tick(1);
    let e = world.spawn(Ship).unwrap();
    let mut ship = ShipState::default();
    world.begin_tick(5);
    assert!(ship.set_hull(&mut world, e, 40));
    assert!(!ship.set_heading(&mut world, e, 0.0), "unchanged");
    assert_eq!(ship.hull, 40);
    assert_eq!(world.changed_tick(e, 1), 5);
    assert_eq!(world.changed_tick(e, 0), 1);
}

const MAX_SCORE: u16 = 999;

/// A range bounded by a constant.
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
struct Score(#[wire(range = 1..=MAX_SCORE)] u16);

#[test]
fn ranges_may_name_constants() {
    let bytes = encode(&Score(MAX_SCORE)).unwrap();
    assert_eq!(bytes.len(), 2, "10 bits for 1..=999");
    assert_eq!(
        Score::read(&mut BitReader::new(&bytes)),
        Ok(Score(MAX_SCORE))
    );
    assert_eq!(encode(&Score(0)), Err(ProtoError::invalid("Score.0")));
    assert_eq!(
        Score::read(&mut BitReader::new(&[0xFF, 0x03])),
        Err(ProtoError::invalid("Score.0"))
    );
}

/// A generic message: `Wire` whenever its fields are.
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
struct Pair<T> {
    first: T,
    second: Option<T>,
    #[wire(bits = 3)]
    flags: u8,
}

#[test]
fn generic_types_are_wire_when_their_fields_are() {
    let p = Pair {
        first: EntityId(2),
        second: Some(EntityId(900)),
        flags: 5,
    };
    let bytes = encode(&p).unwrap();
    assert_eq!(Pair::<EntityId>::read(&mut BitReader::new(&bytes)), Ok(p));
    let q = Pair {
        first: -1i16,
        second: None,
        flags: 0,
    };
    assert_eq!(encode(&q).unwrap().len(), 3, "16 + 1 + 3 bits");
}

/// Attributes on nested arrays apply to each element (`unit_vector` to
/// each `[f32; 3]`).
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
struct Nested {
    #[wire(unit_vector(bits = 8))]
    dirs: [[f32; 3]; 2],
    #[wire(bits = 2)]
    grid: [[u8; 2]; 2],
}

#[test]
fn attributes_reach_nested_elements() {
    let n = Nested {
        dirs: [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0]],
        grid: [[0, 1], [2, 3]],
    };
    let mut buf = [0u8; 16];
    let mut w = BitWriter::new(&mut buf);
    n.write(&mut w).unwrap();
    assert_eq!(w.bits_written(), 2 * 16 + 4 * 2);
    let len = w.finish();
    let back = Nested::read(&mut BitReader::new(&buf[..len])).unwrap();
    assert_eq!(back.grid, n.grid);
    assert_eq!(
        back.dirs.map(|d| d.map(|c| c + 0.0)),
        n.dirs.map(|d| d.map(|c| c + 0.0))
    );
}

/// A struct is an event of one kind, named after it.
#[derive(Debug, Clone, Copy, PartialEq, Wire, ReliableEvent)]
struct RoundOver {
    #[wire(range = 0..=30)]
    round: u8,
}

#[test]
fn a_struct_event_has_one_kind() {
    assert_eq!(RoundOver::KINDS, &["round_over"]);
    assert_eq!(RoundOver { round: 3 }.kind(), 0);
    let mut buf = [0u8; 4];
    let n = RoundOver { round: 30 }.write_message(&mut buf).unwrap();
    assert_eq!(n, 2, "the message tag, then 5 bits");
}

/// Two archetypes in one enum, each with its own state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Archetype)]
enum Thing {
    #[archetype(groups = ShipState)]
    Ship,
    #[archetype(groups = Door)]
    Door,
}

#[derive(Debug, Default, Clone, PartialEq, Replicated)]
struct Door {
    #[group(3)]
    open: bool,
}

#[test]
fn derived_archetypes_number_their_variants_and_carry_their_groups() {
    assert_eq!((Ship.wire_id(), Ship::from_wire_id(0)), (0, Some(Ship)));
    assert_eq!(Ship::from_wire_id(1), None);
    assert_eq!(Ship.groups(), ShipState::GROUPS);
    assert_eq!((Thing::Ship.wire_id(), Thing::Door.wire_id()), (0, 1));
    assert_eq!(Thing::from_wire_id(1), Some(Thing::Door));
    assert_eq!(Thing::from_wire_id(2), None);
    assert_eq!(Thing::Door.groups(), GroupMask(0b1000));
}

#[test]
fn only_the_marked_variants_end_the_match() {
    assert!(Happening::RoundEnd.ends_match());
    assert!(!Happening::Scored(1, true).ends_match());
    assert!(!RoundOver { round: 1 }.ends_match());
}

/// A game's state whose writer reads the marked table.
#[derive(Debug, ReplicationSource)]
struct Fleet {
    #[replicas]
    ships: Vec<ShipState>,
    #[allow(dead_code)]
    name: &'static str,
}

#[test]
fn a_derived_source_writes_the_entitys_groups_and_refuses_an_unknown_one() {
    let ship = ShipState {
        hull: 42,
        ..ShipState::default()
    };
    let fleet = Fleet {
        ships: vec![ShipState::default(), ship.clone()],
        name: "fleet",
    };
    assert_eq!(
        encode_with(|w| fleet.write_group(EntityId(1), Ship, 1, w)).unwrap(),
        encode_with(|w| ship.write_group(1, w)).unwrap()
    );
    let mut buf = [0u8; 8];
    assert_eq!(
        fleet.write_group(EntityId(2), Ship, 1, &mut BitWriter::new(&mut buf)),
        Err(ProtoError::invalid("Fleet entity"))
    );
}

/// An input whose redundant copies are written field by field.
#[derive(Debug, Default, Clone, Copy, PartialEq, Wire, InputPayload)]
#[input(delta = fields)]
struct Sticks {
    #[wire(range = -100..=100)]
    x: i16,
    y: i8,
    fire: bool,
}

proptest! {
    #[test]
    fn a_field_delta_reads_back_and_costs_a_bit_per_unchanged_field(
        a in (-100i16..=100, any::<i8>(), any::<bool>()),
        b in (-100i16..=100, any::<i8>(), any::<bool>()),
    ) {
        let older = Sticks { x: a.0, y: a.1, fire: a.2 };
        let newer = Sticks { x: b.0, y: b.1, fire: b.2 };
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        older.encode_delta(&newer, &mut w).unwrap();
        let changed = [(older.x != newer.x, 8), (older.y != newer.y, 8), (older.fire != newer.fire, 1)];
        let expected: usize = changed.iter().map(|&(c, bits)| 1 + if c { bits } else { 0 }).sum();
        prop_assert_eq!(w.bits_written(), expected);
        let len = w.finish();
        let back = Sticks::decode_delta(&newer, &mut BitReader::new(&buf[..len])).unwrap();
        prop_assert_eq!(back, older);
    }
}
