//! [`ArenaEvent`]: the arena's one-off happenings, sent on the engine's
//! reliable ordered channel. Its codec is derived (`#[derive(Wire)]`): a
//! 4-bit kind, then the variant's fields; a field out of its bounds is
//! refused by name (`ArenaEvent::ShotHit.damage`).

use hightick_engine::{ReliableEvent, Wire};
use hightick_proto::{EntityId, wire_enum};

use crate::Team;

/// The highest round number (and team score) an event may carry (10 bits).
pub const MAX_ROUND: u16 = 1023;
/// The most damage one hit may deal (10 bits).
pub const MAX_DAMAGE: u16 = 1023;
/// The most money a cost or balance may be (20 bits).
pub const MAX_MONEY: u32 = (1 << 20) - 1;

wire_enum! {
    /// The phase a round is in.
    pub enum RoundPhase: 2 bits, "round phase" {
        /// Before the match starts: free play, nothing counts.
        Warmup = 0,
        /// Players may buy and cannot move or shoot.
        Buy = 1,
        /// The round is being played.
        Live = 2,
        /// The round is decided; the next starts soon.
        Over = 3,
    }
}

wire_enum! {
    /// How a round was won.
    pub enum RoundEndReason: 3 bits, "round end reason" {
        /// Every player of the losing team is dead.
        Elimination = 0,
        /// The round timer ran out.
        TimeExpired = 1,
        /// The attackers completed the objective.
        ObjectiveCompleted = 2,
        /// The defenders prevented the objective.
        ObjectiveDefended = 3,
        /// The losing team surrendered.
        Surrender = 4,
    }
}

wire_enum! {
    /// Why a player left the match.
    pub enum LeaveReason: 2 bits, "leave reason" {
        /// The client disconnected.
        Disconnected = 0,
        /// The connection timed out.
        TimedOut = 1,
        /// The server removed the player.
        Kicked = 2,
    }
}

/// A one-off happening of the match, delivered reliably and in order. Its
/// kinds (`ReliableEvent::KINDS`) are the variants' names in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, ReliableEvent)]
pub enum ArenaEvent {
    /// A round (or one of its phases) begins.
    RoundStart {
        /// Round number, `0..=MAX_ROUND`.
        #[wire(range = 0..=MAX_ROUND)]
        round: u16,
        /// The phase that begins.
        phase: RoundPhase,
        /// The server tick at which the phase ends.
        phase_end_tick: u32,
    },
    /// A round is decided.
    RoundEnd {
        /// Round number, `0..=MAX_ROUND`.
        #[wire(range = 0..=MAX_ROUND)]
        round: u16,
        /// The team that won it.
        winner: Team,
        /// How.
        reason: RoundEndReason,
        /// Rounds won by team A and team B so far, each `0..=MAX_ROUND`.
        #[wire(range = 0..=MAX_ROUND)]
        score: [u16; 2],
    },
    /// A shot hit a player.
    ShotHit {
        /// Who fired.
        shooter: EntityId,
        /// Who was hit.
        target: EntityId,
        /// Damage dealt, `0..=MAX_DAMAGE`.
        #[wire(range = 0..=MAX_DAMAGE)]
        damage: u16,
        /// Whether it hit the head.
        headshot: bool,
    },
    /// A player died.
    Kill {
        /// Who killed (the victim itself for a suicide or world death).
        killer: EntityId,
        /// Who died.
        victim: EntityId,
        /// The game's weapon id.
        weapon: u8,
        /// Whether the killing hit was a headshot.
        headshot: bool,
    },
    /// A player bought an item.
    Purchase {
        /// Who bought.
        player: EntityId,
        /// The game's item id.
        item: u8,
        /// What it cost, `0..=MAX_MONEY`.
        #[wire(range = 0..=MAX_MONEY)]
        cost: u32,
        /// Money left, `0..=MAX_MONEY`.
        #[wire(range = 0..=MAX_MONEY)]
        balance: u32,
    },
    /// A player joined the match.
    PlayerJoined {
        /// The player's entity.
        player: EntityId,
        /// The team it joined.
        team: Team,
    },
    /// A player left the match.
    PlayerLeft {
        /// The player's entity.
        player: EntityId,
        /// Why.
        reason: LeaveReason,
    },
    /// The match is over.
    MatchEnd {
        /// Rounds won by team A and team B, each `0..=MAX_ROUND`.
        #[wire(range = 0..=MAX_ROUND)]
        score: [u16; 2],
        /// The winner, or `None` for a draw.
        winner: Option<Team>,
    },
    /// Sent to one player when it joins, reconnects or resyncs: "you are this
    /// entity, on this team". Clients learn who they are from it.
    Welcome {
        /// The receiving player's own entity.
        player: EntityId,
        /// The receiving player's team.
        team: Team,
    },
}

impl ArenaEvent {
    /// The event's kind: an index into `ReliableEvent::KINDS`, written in
    /// 4 bits.
    pub fn tag(&self) -> u32 {
        self.kind() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hightick_proto::message::write_entity_id;
    use hightick_proto::{BitReader, BitWriter, ProtoError};

    fn encode(event: &ArenaEvent) -> Result<(), ProtoError> {
        let mut buf = [0u8; 32];
        event.encode(&mut BitWriter::new(&mut buf))
    }

    #[test]
    fn out_of_bounds_fields_are_refused_by_name() {
        let e = ArenaEvent::ShotHit {
            shooter: EntityId(1),
            target: EntityId(2),
            damage: MAX_DAMAGE + 1,
            headshot: false,
        };
        assert_eq!(
            encode(&e),
            Err(ProtoError::invalid("ArenaEvent::ShotHit.damage"))
        );
        let e = ArenaEvent::Purchase {
            player: EntityId(1),
            item: 4,
            cost: 100,
            balance: MAX_MONEY + 1,
        };
        assert_eq!(
            encode(&e),
            Err(ProtoError::invalid("ArenaEvent::Purchase.balance"))
        );
        let e = ArenaEvent::MatchEnd {
            score: [13, MAX_ROUND + 1],
            winner: None,
        };
        assert_eq!(
            encode(&e),
            Err(ProtoError::invalid("ArenaEvent::MatchEnd.score"))
        );
        let e = ArenaEvent::RoundStart {
            round: MAX_ROUND + 1,
            phase: RoundPhase::Buy,
            phase_end_tick: 0,
        };
        assert_eq!(
            encode(&e),
            Err(ProtoError::invalid("ArenaEvent::RoundStart.round"))
        );
    }

    #[test]
    fn unknown_tags_are_refused() {
        for tag in 9..16u8 {
            assert_eq!(
                ArenaEvent::decode(&mut BitReader::new(&[tag, 0, 0, 0])),
                Err(ProtoError::invalid("ArenaEvent kind"))
            );
        }
        // PlayerLeft (6), entity 0 (7 bits), reason 3.
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(6, 4).unwrap();
        write_entity_id(&mut w, EntityId(0)).unwrap();
        w.write_bits(3, 2).unwrap();
        assert_eq!(
            ArenaEvent::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("ArenaEvent::PlayerLeft.reason"))
        );
        // RoundEnd (1), round 1, team A, reason 7.
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(1, 4).unwrap();
        w.write_ranged(1, 0, u32::from(MAX_ROUND)).unwrap();
        Team::Attackers.write(&mut w).unwrap();
        w.write_bits(7, 3).unwrap();
        assert_eq!(
            ArenaEvent::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("ArenaEvent::RoundEnd.reason"))
        );
    }

    #[test]
    fn a_welcome_round_trips_and_differs_from_a_join() {
        let welcome = ArenaEvent::Welcome {
            player: EntityId(5),
            team: Team::Defenders,
        };
        let joined = ArenaEvent::PlayerJoined {
            player: EntityId(5),
            team: Team::Defenders,
        };
        let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
        welcome.encode(&mut BitWriter::new(&mut a)).unwrap();
        joined.encode(&mut BitWriter::new(&mut b)).unwrap();
        assert_ne!(a, b);
        assert_eq!(ArenaEvent::decode(&mut BitReader::new(&a)), Ok(welcome));
        assert_eq!(ArenaEvent::decode(&mut BitReader::new(&b)), Ok(joined));
    }

    #[test]
    fn a_kill_fits_in_six_bytes() {
        let e = ArenaEvent::Kill {
            killer: EntityId(3),
            victim: EntityId(8),
            weapon: 12,
            headshot: true,
        };
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        e.encode(&mut w).unwrap();
        assert_eq!(w.bits_written(), 4 + 7 + 7 + 8 + 1);
    }

    #[test]
    fn the_kinds_are_the_variants() {
        assert_eq!(ArenaEvent::KINDS.len(), 9);
        assert_eq!(ArenaEvent::KINDS[2], "shot_hit");
        assert_eq!(ArenaEvent::KINDS[8], "welcome");
    }
}
