//! Proptest strategies for every message, shared by the integration tests.

#![allow(dead_code)]

use hightick_proto::message::{
    Buttons, EntityId, EntityRecordHeader, GameEvent, InputBatch, InputCommand, LeaveReason,
    MAX_DAMAGE, MAX_MONEY, MAX_REDUNDANCY, MAX_ROUND, MessageKind, ResyncReason, ResyncRequest,
    RoundEndReason, RoundPhase, SnapshotHeader, SnapshotKind, Team, WEAPON_SLOTS,
};
use proptest::prelude::*;

pub fn entity_id() -> impl Strategy<Value = EntityId> {
    prop_oneof![0u16..64, 0u16..1024, any::<u16>()].prop_map(EntityId)
}

pub fn input_command() -> impl Strategy<Value = InputCommand> {
    (
        any::<u32>(),
        -127i8..=127,
        -127i8..=127,
        -10f32..10.0,
        -1.6f32..1.6,
        any::<u16>(),
        0..WEAPON_SLOTS,
        prop_oneof![0u32..64, any::<u32>()],
    )
        .prop_map(
            |(tick, move_x, move_y, yaw, pitch, buttons, weapon_slot, lag)| InputCommand {
                tick,
                move_x,
                move_y,
                yaw,
                pitch,
                buttons: Buttons::from_bits_truncate(buttons),
                weapon_slot,
                aim_tick: tick.wrapping_sub(lag),
            },
        )
}

/// A batch whose older commands often repeat fields of the newer one and
/// usually sit one tick apart, as a real client's do.
pub fn input_batch() -> impl Strategy<Value = InputBatch> {
    let older = (
        prop_oneof![3 => Just(1u32), 1 => 2u32..10, 1 => 1u32..=u32::MAX],
        input_command(),
        any::<[bool; 6]>(),
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
                let pick = |k: bool| if k { newer } else { fresh };
                let c = InputCommand {
                    tick,
                    move_x: pick(keep[0]).move_x,
                    move_y: pick(keep[0]).move_y,
                    yaw: pick(keep[1]).yaw,
                    pitch: pick(keep[2]).pitch,
                    buttons: pick(keep[3]).buttons,
                    weapon_slot: pick(keep[4]).weapon_slot,
                    aim_tick: if keep[5] {
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

pub fn snapshot_header() -> impl Strategy<Value = SnapshotHeader> {
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

pub fn entity_record_header() -> impl Strategy<Value = EntityRecordHeader> {
    prop_oneof![
        (entity_id(), 1u8..=255).prop_map(|(e, m)| EntityRecordHeader::update(e, m)),
        (entity_id(), any::<u8>(), any::<u8>())
            .prop_map(|(e, a, m)| EntityRecordHeader::enter(e, a, m)),
        entity_id().prop_map(EntityRecordHeader::leave),
    ]
}

fn team() -> impl Strategy<Value = Team> {
    prop::sample::select(Team::ALL)
}

fn round() -> impl Strategy<Value = u16> {
    0..=MAX_ROUND
}

pub fn game_event() -> impl Strategy<Value = GameEvent> {
    prop_oneof![
        (round(), prop::sample::select(RoundPhase::ALL), any::<u32>()).prop_map(
            |(round, phase, phase_end_tick)| GameEvent::RoundStart {
                round,
                phase,
                phase_end_tick
            }
        ),
        (
            round(),
            team(),
            prop::sample::select(RoundEndReason::ALL),
            [round(), round()]
        )
            .prop_map(|(round, winner, reason, score)| GameEvent::RoundEnd {
                round,
                winner,
                reason,
                score
            }),
        (entity_id(), entity_id(), 0..=MAX_DAMAGE, any::<bool>()).prop_map(
            |(shooter, target, damage, headshot)| GameEvent::ShotHit {
                shooter,
                target,
                damage,
                headshot
            }
        ),
        (entity_id(), entity_id(), any::<u8>(), any::<bool>()).prop_map(
            |(killer, victim, weapon, headshot)| GameEvent::Kill {
                killer,
                victim,
                weapon,
                headshot
            }
        ),
        (entity_id(), any::<u8>(), 0..=MAX_MONEY, 0..=MAX_MONEY).prop_map(
            |(player, item, cost, balance)| GameEvent::Purchase {
                player,
                item,
                cost,
                balance
            }
        ),
        (entity_id(), team()).prop_map(|(player, team)| GameEvent::PlayerJoined { player, team }),
        (entity_id(), prop::sample::select(LeaveReason::ALL))
            .prop_map(|(player, reason)| GameEvent::PlayerLeft { player, reason }),
        ([round(), round()], proptest::option::of(team()))
            .prop_map(|(score, winner)| GameEvent::MatchEnd { score, winner }),
        (entity_id(), team()).prop_map(|(player, team)| GameEvent::Welcome { player, team }),
    ]
}

pub fn resync_request() -> impl Strategy<Value = ResyncRequest> {
    (
        prop::sample::select(ResyncReason::ALL),
        proptest::option::of(any::<u32>()),
    )
        .prop_map(|(reason, last_server_tick)| ResyncRequest {
            reason,
            last_server_tick,
        })
}

pub fn message_kind() -> impl Strategy<Value = MessageKind> {
    prop::sample::select(MessageKind::ALL.to_vec())
}

/// One record of a test snapshot: its header and one payload value per
/// group in its mask (each written in `payload_bits(group)` bits).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub header: EntityRecordHeader,
    pub groups: [u32; 8],
}

/// The bits a test game writes for field group `g`.
pub fn payload_bits(group: u32) -> u32 {
    [3, 9, 17, 1, 32, 5, 12, 7][group as usize]
}

pub fn record() -> impl Strategy<Value = Record> {
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
pub fn write_snapshot(
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
pub fn read_snapshot(
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
