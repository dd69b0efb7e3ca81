//! [`ArenaEvent`]: the arena's one-off happenings, sent on the engine's
//! reliable ordered channel.

use hightick_engine::events::ReliableEvent;
use hightick_proto::message::{read_entity_id, write_entity_id};
use hightick_proto::{BitReader, BitWriter, EntityId, ProtoError, wire_enum};

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

/// A one-off happening of the match, delivered reliably and in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArenaEvent {
    /// A round (or one of its phases) begins.
    RoundStart {
        /// Round number, `0..=MAX_ROUND`.
        round: u16,
        /// The phase that begins.
        phase: RoundPhase,
        /// The server tick at which the phase ends.
        phase_end_tick: u32,
    },
    /// A round is decided.
    RoundEnd {
        /// Round number, `0..=MAX_ROUND`.
        round: u16,
        /// The team that won it.
        winner: Team,
        /// How.
        reason: RoundEndReason,
        /// Rounds won by team A and team B so far, each `0..=MAX_ROUND`.
        score: [u16; 2],
    },
    /// A shot hit a player.
    ShotHit {
        /// Who fired.
        shooter: EntityId,
        /// Who was hit.
        target: EntityId,
        /// Damage dealt, `0..=MAX_DAMAGE`.
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
        cost: u32,
        /// Money left, `0..=MAX_MONEY`.
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

const EVENT_TAG_BITS: u32 = 4;

fn write_team(w: &mut BitWriter, team: Team) -> Result<(), ProtoError> {
    w.write_bool(team == Team::Defenders)
}

fn read_team(r: &mut BitReader) -> Result<Team, ProtoError> {
    Ok(if r.read_bool()? {
        Team::Defenders
    } else {
        Team::Attackers
    })
}

fn write_bounded(
    w: &mut BitWriter,
    v: u32,
    max: u32,
    field: &'static str,
) -> Result<(), ProtoError> {
    w.write_ranged(v, 0, max).map_err(|e| e.in_field(field))
}

fn read_bounded(r: &mut BitReader, max: u32, field: &'static str) -> Result<u32, ProtoError> {
    r.read_ranged(0, max).map_err(|e| e.in_field(field))
}

fn write_round(w: &mut BitWriter, round: u16, field: &'static str) -> Result<(), ProtoError> {
    write_bounded(w, u32::from(round), u32::from(MAX_ROUND), field)
}

fn read_round(r: &mut BitReader, field: &'static str) -> Result<u16, ProtoError> {
    Ok(read_bounded(r, u32::from(MAX_ROUND), field)? as u16)
}

fn write_score(w: &mut BitWriter, score: [u16; 2]) -> Result<(), ProtoError> {
    write_round(w, score[0], "score")?;
    write_round(w, score[1], "score")
}

fn read_score(r: &mut BitReader) -> Result<[u16; 2], ProtoError> {
    Ok([read_round(r, "score")?, read_round(r, "score")?])
}

impl ArenaEvent {
    /// The 4-bit tag of the event's kind.
    pub const fn tag(&self) -> u32 {
        match self {
            Self::RoundStart { .. } => 0,
            Self::RoundEnd { .. } => 1,
            Self::ShotHit { .. } => 2,
            Self::Kill { .. } => 3,
            Self::Purchase { .. } => 4,
            Self::PlayerJoined { .. } => 5,
            Self::PlayerLeft { .. } => 6,
            Self::MatchEnd { .. } => 7,
            Self::Welcome { .. } => 8,
        }
    }

    /// Writes the event: a 4-bit tag, then its fields. A field out of its
    /// bounds is [`ProtoError::InvalidValue`] naming it.
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.all_or_nothing(|w| {
            w.write_bits(self.tag(), EVENT_TAG_BITS)?;
            self.encode_fields(w)
        })
    }

    fn encode_fields(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        match *self {
            Self::RoundStart {
                round,
                phase,
                phase_end_tick,
            } => {
                write_round(w, round, "round")?;
                phase.write(w)?;
                w.write_u32(phase_end_tick)
            }
            Self::RoundEnd {
                round,
                winner,
                reason,
                score,
            } => {
                write_round(w, round, "round")?;
                write_team(w, winner)?;
                reason.write(w)?;
                write_score(w, score)
            }
            Self::ShotHit {
                shooter,
                target,
                damage,
                headshot,
            } => {
                write_entity_id(w, shooter)?;
                write_entity_id(w, target)?;
                write_bounded(w, u32::from(damage), u32::from(MAX_DAMAGE), "damage")?;
                w.write_bool(headshot)
            }
            Self::Kill {
                killer,
                victim,
                weapon,
                headshot,
            } => {
                write_entity_id(w, killer)?;
                write_entity_id(w, victim)?;
                w.write_u8(weapon)?;
                w.write_bool(headshot)
            }
            Self::Purchase {
                player,
                item,
                cost,
                balance,
            } => {
                write_entity_id(w, player)?;
                w.write_u8(item)?;
                write_bounded(w, cost, MAX_MONEY, "cost")?;
                write_bounded(w, balance, MAX_MONEY, "balance")
            }
            Self::PlayerJoined { player, team } | Self::Welcome { player, team } => {
                write_entity_id(w, player)?;
                write_team(w, team)
            }
            Self::PlayerLeft { player, reason } => {
                write_entity_id(w, player)?;
                reason.write(w)
            }
            Self::MatchEnd { score, winner } => {
                write_score(w, score)?;
                w.write_bool(winner.is_some())?;
                match winner {
                    Some(team) => write_team(w, team),
                    None => Ok(()),
                }
            }
        }
    }

    /// Reads an event written by [`encode`](Self::encode); an unknown tag or
    /// a field out of bounds is [`ProtoError::InvalidValue`].
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(match r.read_bits(EVENT_TAG_BITS)? {
            0 => Self::RoundStart {
                round: read_round(r, "round")?,
                phase: RoundPhase::read(r)?,
                phase_end_tick: r.read_u32()?,
            },
            1 => Self::RoundEnd {
                round: read_round(r, "round")?,
                winner: read_team(r)?,
                reason: RoundEndReason::read(r)?,
                score: read_score(r)?,
            },
            2 => Self::ShotHit {
                shooter: read_entity_id(r)?,
                target: read_entity_id(r)?,
                damage: read_bounded(r, u32::from(MAX_DAMAGE), "damage")? as u16,
                headshot: r.read_bool()?,
            },
            3 => Self::Kill {
                killer: read_entity_id(r)?,
                victim: read_entity_id(r)?,
                weapon: r.read_u8()?,
                headshot: r.read_bool()?,
            },
            4 => Self::Purchase {
                player: read_entity_id(r)?,
                item: r.read_u8()?,
                cost: read_bounded(r, MAX_MONEY, "cost")?,
                balance: read_bounded(r, MAX_MONEY, "balance")?,
            },
            5 => Self::PlayerJoined {
                player: read_entity_id(r)?,
                team: read_team(r)?,
            },
            6 => Self::PlayerLeft {
                player: read_entity_id(r)?,
                reason: LeaveReason::read(r)?,
            },
            7 => Self::MatchEnd {
                score: read_score(r)?,
                winner: if r.read_bool()? {
                    Some(read_team(r)?)
                } else {
                    None
                },
            },
            8 => Self::Welcome {
                player: read_entity_id(r)?,
                team: read_team(r)?,
            },
            _ => return Err(ProtoError::invalid("event kind")),
        })
    }
}

impl ReliableEvent for ArenaEvent {
    fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        ArenaEvent::encode(self, w)
    }

    fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        ArenaEvent::decode(r)
    }

    const KINDS: &'static [&'static str] = &[
        "round_start",
        "round_end",
        "shot_hit",
        "kill",
        "purchase",
        "player_joined",
        "player_left",
        "match_end",
        "welcome",
    ];

    fn kind(&self) -> usize {
        self.tag() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(encode(&e), Err(ProtoError::invalid("damage")));
        let e = ArenaEvent::Purchase {
            player: EntityId(1),
            item: 4,
            cost: 100,
            balance: MAX_MONEY + 1,
        };
        assert_eq!(encode(&e), Err(ProtoError::invalid("balance")));
        let e = ArenaEvent::MatchEnd {
            score: [13, MAX_ROUND + 1],
            winner: None,
        };
        assert_eq!(encode(&e), Err(ProtoError::invalid("score")));
        let e = ArenaEvent::RoundStart {
            round: MAX_ROUND + 1,
            phase: RoundPhase::Buy,
            phase_end_tick: 0,
        };
        assert_eq!(encode(&e), Err(ProtoError::invalid("round")));
    }

    #[test]
    fn unknown_tags_are_refused() {
        for tag in 9..16u8 {
            assert_eq!(
                ArenaEvent::decode(&mut BitReader::new(&[tag, 0, 0, 0])),
                Err(ProtoError::invalid("event kind"))
            );
        }
        // PlayerLeft (6), entity 0 (7 bits), reason 3.
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(6, EVENT_TAG_BITS).unwrap();
        write_entity_id(&mut w, EntityId(0)).unwrap();
        w.write_bits(3, 2).unwrap();
        assert_eq!(
            ArenaEvent::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("leave reason"))
        );
        // RoundEnd (1), round 1, team A, reason 7.
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(1, EVENT_TAG_BITS).unwrap();
        w.write_ranged(1, 0, u32::from(MAX_ROUND)).unwrap();
        write_team(&mut w, Team::Attackers).unwrap();
        w.write_bits(7, 3).unwrap();
        assert_eq!(
            ArenaEvent::decode(&mut BitReader::new(&buf)),
            Err(ProtoError::invalid("round end reason"))
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
}
