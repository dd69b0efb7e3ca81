//! The arena's reliable events: every one round-trips, encoders are
//! all-or-nothing, and any bytes decode to an error or a value, never a panic.

use hightick_arena::Team;
use hightick_arena::event::{
    ArenaEvent, LeaveReason, MAX_DAMAGE, MAX_MONEY, MAX_ROUND, RoundEndReason, RoundPhase,
};
use hightick_engine::events::ReliableEvent;
use hightick_proto::message::write_entity_id;
use hightick_proto::{BitReader, BitWriter, EntityId, ProtoError};
use proptest::prelude::*;

/// The hand-written encoder the derived codec replaced, kept to show the
/// bytes did not change.
fn encode_by_hand(e: &ArenaEvent, w: &mut BitWriter) -> Result<(), ProtoError> {
    let round = |w: &mut BitWriter, v: u16| w.write_ranged(u32::from(v), 0, u32::from(MAX_ROUND));
    let team = |w: &mut BitWriter, t: Team| w.write_bool(t == Team::Defenders);
    let id = write_entity_id;
    w.write_bits(e.tag(), 4)?;
    match *e {
        ArenaEvent::RoundStart {
            round: r,
            phase,
            phase_end_tick,
        } => {
            round(w, r)?;
            w.write_bits(phase as u32, 2)?;
            w.write_u32(phase_end_tick)
        }
        ArenaEvent::RoundEnd {
            round: r,
            winner,
            reason,
            score,
        } => {
            round(w, r)?;
            team(w, winner)?;
            w.write_bits(reason as u32, 3)?;
            round(w, score[0])?;
            round(w, score[1])
        }
        ArenaEvent::ShotHit {
            shooter,
            target,
            damage,
            headshot,
        } => {
            id(w, shooter)?;
            id(w, target)?;
            w.write_ranged(u32::from(damage), 0, u32::from(MAX_DAMAGE))?;
            w.write_bool(headshot)
        }
        ArenaEvent::Kill {
            killer,
            victim,
            weapon,
            headshot,
        } => {
            id(w, killer)?;
            id(w, victim)?;
            w.write_u8(weapon)?;
            w.write_bool(headshot)
        }
        ArenaEvent::Purchase {
            player,
            item,
            cost,
            balance,
        } => {
            id(w, player)?;
            w.write_u8(item)?;
            w.write_ranged(cost, 0, MAX_MONEY)?;
            w.write_ranged(balance, 0, MAX_MONEY)
        }
        ArenaEvent::PlayerJoined { player, team: t } | ArenaEvent::Welcome { player, team: t } => {
            id(w, player)?;
            team(w, t)
        }
        ArenaEvent::PlayerLeft { player, reason } => {
            id(w, player)?;
            w.write_bits(reason as u32, 2)
        }
        ArenaEvent::MatchEnd { score, winner } => {
            round(w, score[0])?;
            round(w, score[1])?;
            w.write_bool(winner.is_some())?;
            winner.map_or(Ok(()), |t| team(w, t))
        }
    }
}

fn entity_id() -> impl Strategy<Value = EntityId> {
    prop_oneof![0u16..64, 0u16..1024, any::<u16>()].prop_map(EntityId)
}

fn team() -> impl Strategy<Value = Team> {
    prop::sample::select(Team::ALL.to_vec())
}

fn round() -> impl Strategy<Value = u16> {
    0..=MAX_ROUND
}

fn arena_event() -> impl Strategy<Value = ArenaEvent> {
    prop_oneof![
        (round(), prop::sample::select(RoundPhase::ALL), any::<u32>()).prop_map(
            |(round, phase, phase_end_tick)| ArenaEvent::RoundStart {
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
            .prop_map(|(round, winner, reason, score)| ArenaEvent::RoundEnd {
                round,
                winner,
                reason,
                score
            }),
        (entity_id(), entity_id(), 0..=MAX_DAMAGE, any::<bool>()).prop_map(
            |(shooter, target, damage, headshot)| ArenaEvent::ShotHit {
                shooter,
                target,
                damage,
                headshot
            }
        ),
        (entity_id(), entity_id(), any::<u8>(), any::<bool>()).prop_map(
            |(killer, victim, weapon, headshot)| ArenaEvent::Kill {
                killer,
                victim,
                weapon,
                headshot
            }
        ),
        (entity_id(), any::<u8>(), 0..=MAX_MONEY, 0..=MAX_MONEY).prop_map(
            |(player, item, cost, balance)| ArenaEvent::Purchase {
                player,
                item,
                cost,
                balance
            }
        ),
        (entity_id(), team()).prop_map(|(player, team)| ArenaEvent::PlayerJoined { player, team }),
        (entity_id(), prop::sample::select(LeaveReason::ALL))
            .prop_map(|(player, reason)| ArenaEvent::PlayerLeft { player, reason }),
        ([round(), round()], proptest::option::of(team()))
            .prop_map(|(score, winner)| ArenaEvent::MatchEnd { score, winner }),
        (entity_id(), team()).prop_map(|(player, team)| ArenaEvent::Welcome { player, team }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_event_round_trips(event in arena_event()) {
        let mut buf = [0u8; 32];
        let mut w = BitWriter::new(&mut buf);
        event.encode(&mut w).unwrap();
        let len = w.finish();
        let mut r = BitReader::new(&buf[..len]);
        prop_assert_eq!(ArenaEvent::decode(&mut r).unwrap(), event);
        prop_assert!(r.remaining_bits() < 8);
    }

    #[test]
    fn the_derived_codec_writes_the_hand_written_bytes(event in arena_event()) {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        let mut w = BitWriter::new(&mut a);
        event.encode(&mut w).unwrap();
        let derived = w.bits_written();
        let mut w = BitWriter::new(&mut b);
        encode_by_hand(&event, &mut w).unwrap();
        prop_assert_eq!(derived, w.bits_written());
        prop_assert_eq!(a, b);
    }

    #[test]
    fn encoding_is_all_or_nothing(event in arena_event(), cap in 0usize..12) {
        let mut buf = vec![0u8; cap];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0b101, 3).unwrap_or(());
        let before = w.bits_written();
        if event.encode(&mut w).is_err() {
            prop_assert_eq!(w.bits_written(), before);
        }
    }

    #[test]
    fn any_bytes_decode_to_an_error_or_an_event_that_encodes_again(
        bytes in proptest::collection::vec(any::<u8>(), 0..24)
    ) {
        if let Ok(event) = ArenaEvent::decode(&mut BitReader::new(&bytes)) {
            let mut buf = [0u8; 32];
            let mut w = BitWriter::new(&mut buf);
            event.encode(&mut w).unwrap();
            let len = w.finish();
            prop_assert_eq!(ArenaEvent::decode(&mut BitReader::new(&buf[..len])).unwrap(), event);
        }
    }
}
