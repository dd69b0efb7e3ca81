//! The arena's reliable events: every one round-trips, encoders are
//! all-or-nothing, and any bytes decode to an error or a value, never a panic.

use hightick_arena::Team;
use hightick_arena::event::{
    ArenaEvent, LeaveReason, MAX_DAMAGE, MAX_MONEY, MAX_ROUND, RoundEndReason, RoundPhase,
};
use hightick_proto::{BitReader, BitWriter, EntityId};
use proptest::prelude::*;

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
