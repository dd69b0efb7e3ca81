//! [`HightickArenaEvent`]: an arena event as a C caller reads it.
//!
//! One flat record for every kind, not a tagged union: each field says which
//! kinds set it, the others are zero. It is 32 bytes, the same layout in C,
//! C# (`LayoutKind.Sequential`, blittable) and Python's ctypes, with no
//! union to mirror in each binding.

use hightick_arena::Team;
use hightick_arena::event::{ArenaEvent, LeaveReason, RoundEndReason, RoundPhase};

/// A round (or one of its phases) begins (`HightickArenaEvent::kind`).
pub const HIGHTICK_ARENA_EVENT_ROUND_START: u8 = 0;
/// A round is decided.
pub const HIGHTICK_ARENA_EVENT_ROUND_END: u8 = 1;
/// A shot hit a player.
pub const HIGHTICK_ARENA_EVENT_SHOT_HIT: u8 = 2;
/// A player died.
pub const HIGHTICK_ARENA_EVENT_KILL: u8 = 3;
/// A player bought an item.
pub const HIGHTICK_ARENA_EVENT_PURCHASE: u8 = 4;
/// A player joined the match.
pub const HIGHTICK_ARENA_EVENT_PLAYER_JOINED: u8 = 5;
/// A player left the match.
pub const HIGHTICK_ARENA_EVENT_PLAYER_LEFT: u8 = 6;
/// The match is over.
pub const HIGHTICK_ARENA_EVENT_MATCH_END: u8 = 7;
/// "You are this entity, on this team": sent when this client joins,
/// reconnects or resyncs.
pub const HIGHTICK_ARENA_EVENT_WELCOME: u8 = 8;

/// The attacking side (`team` fields).
pub const HIGHTICK_ARENA_TEAM_ATTACKERS: u8 = 0;
/// The defending side.
pub const HIGHTICK_ARENA_TEAM_DEFENDERS: u8 = 1;
/// No team: a draw (`MATCH_END`'s winner).
pub const HIGHTICK_ARENA_TEAM_NONE: u8 = 255;

/// Before the match starts (`ROUND_START`'s phase).
pub const HIGHTICK_ARENA_PHASE_WARMUP: u8 = 0;
/// Buying; nobody moves or shoots.
pub const HIGHTICK_ARENA_PHASE_BUY: u8 = 1;
/// The round is played.
pub const HIGHTICK_ARENA_PHASE_LIVE: u8 = 2;
/// The round is decided; the next starts soon.
pub const HIGHTICK_ARENA_PHASE_OVER: u8 = 3;

/// Every player of the losing team is dead (`ROUND_END`'s reason).
pub const HIGHTICK_ARENA_ROUND_END_ELIMINATION: u8 = 0;
/// The round timer ran out.
pub const HIGHTICK_ARENA_ROUND_END_TIME_EXPIRED: u8 = 1;
/// The attackers completed the objective.
pub const HIGHTICK_ARENA_ROUND_END_OBJECTIVE_COMPLETED: u8 = 2;
/// The defenders prevented the objective.
pub const HIGHTICK_ARENA_ROUND_END_OBJECTIVE_DEFENDED: u8 = 3;
/// The losing team surrendered.
pub const HIGHTICK_ARENA_ROUND_END_SURRENDER: u8 = 4;

/// The client disconnected (`PLAYER_LEFT`'s reason).
pub const HIGHTICK_ARENA_LEAVE_DISCONNECTED: u8 = 0;
/// The connection timed out.
pub const HIGHTICK_ARENA_LEAVE_TIMED_OUT: u8 = 1;
/// The server removed the player.
pub const HIGHTICK_ARENA_LEAVE_KICKED: u8 = 2;

/// One arena event.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HightickArenaEvent {
    /// `HIGHTICK_ARENA_EVENT_*`.
    pub kind: u8,
    /// PLAYER_JOINED, WELCOME: the player's team; ROUND_END, MATCH_END: the
    /// winner (`HIGHTICK_ARENA_TEAM_NONE` for a draw).
    pub team: u8,
    /// ROUND_START: the phase that begins (`HIGHTICK_ARENA_PHASE_*`).
    pub phase: u8,
    /// ROUND_END: `HIGHTICK_ARENA_ROUND_END_*`; PLAYER_LEFT:
    /// `HIGHTICK_ARENA_LEAVE_*`.
    pub reason: u8,
    /// SHOT_HIT, KILL: 1 for a headshot.
    pub headshot: u8,
    /// KILL: the weapon id.
    pub weapon: u8,
    /// PURCHASE: the item id.
    pub item: u8,
    /// Zero.
    pub reserved: u8,
    /// ROUND_START, ROUND_END: the round number.
    pub round: u16,
    /// SHOT_HIT: damage dealt.
    pub damage: u16,
    /// SHOT_HIT: the shooter; KILL: the killer; PURCHASE, PLAYER_JOINED,
    /// PLAYER_LEFT, WELCOME: the player's entity id.
    pub player: u16,
    /// SHOT_HIT: the player hit; KILL: the victim.
    pub target: u16,
    /// ROUND_END, MATCH_END: rounds won by attackers and defenders.
    pub score: [u16; 2],
    /// ROUND_START: the server tick at which the phase ends.
    pub tick: u32,
    /// PURCHASE: what it cost.
    pub cost: u32,
    /// PURCHASE: money left.
    pub balance: u32,
}

/// A team's code in `team` fields.
pub(crate) fn team_code(team: Team) -> u8 {
    match team {
        Team::Attackers => HIGHTICK_ARENA_TEAM_ATTACKERS,
        Team::Defenders => HIGHTICK_ARENA_TEAM_DEFENDERS,
    }
}

fn phase_code(phase: RoundPhase) -> u8 {
    match phase {
        RoundPhase::Warmup => HIGHTICK_ARENA_PHASE_WARMUP,
        RoundPhase::Buy => HIGHTICK_ARENA_PHASE_BUY,
        RoundPhase::Live => HIGHTICK_ARENA_PHASE_LIVE,
        RoundPhase::Over => HIGHTICK_ARENA_PHASE_OVER,
    }
}

fn round_end_code(reason: RoundEndReason) -> u8 {
    match reason {
        RoundEndReason::Elimination => HIGHTICK_ARENA_ROUND_END_ELIMINATION,
        RoundEndReason::TimeExpired => HIGHTICK_ARENA_ROUND_END_TIME_EXPIRED,
        RoundEndReason::ObjectiveCompleted => HIGHTICK_ARENA_ROUND_END_OBJECTIVE_COMPLETED,
        RoundEndReason::ObjectiveDefended => HIGHTICK_ARENA_ROUND_END_OBJECTIVE_DEFENDED,
        RoundEndReason::Surrender => HIGHTICK_ARENA_ROUND_END_SURRENDER,
    }
}

fn leave_code(reason: LeaveReason) -> u8 {
    match reason {
        LeaveReason::Disconnected => HIGHTICK_ARENA_LEAVE_DISCONNECTED,
        LeaveReason::TimedOut => HIGHTICK_ARENA_LEAVE_TIMED_OUT,
        LeaveReason::Kicked => HIGHTICK_ARENA_LEAVE_KICKED,
    }
}

impl From<&ArenaEvent> for HightickArenaEvent {
    fn from(event: &ArenaEvent) -> Self {
        let none = Self::default();
        match *event {
            ArenaEvent::RoundStart {
                round,
                phase,
                phase_end_tick,
            } => Self {
                kind: HIGHTICK_ARENA_EVENT_ROUND_START,
                round,
                phase: phase_code(phase),
                tick: phase_end_tick,
                ..none
            },
            ArenaEvent::RoundEnd {
                round,
                winner,
                reason,
                score,
            } => Self {
                kind: HIGHTICK_ARENA_EVENT_ROUND_END,
                round,
                team: team_code(winner),
                reason: round_end_code(reason),
                score,
                ..none
            },
            ArenaEvent::ShotHit {
                shooter,
                target,
                damage,
                headshot,
            } => Self {
                kind: HIGHTICK_ARENA_EVENT_SHOT_HIT,
                player: shooter.0,
                target: target.0,
                damage,
                headshot: u8::from(headshot),
                ..none
            },
            ArenaEvent::Kill {
                killer,
                victim,
                weapon,
                headshot,
            } => Self {
                kind: HIGHTICK_ARENA_EVENT_KILL,
                player: killer.0,
                target: victim.0,
                weapon,
                headshot: u8::from(headshot),
                ..none
            },
            ArenaEvent::Purchase {
                player,
                item,
                cost,
                balance,
            } => Self {
                kind: HIGHTICK_ARENA_EVENT_PURCHASE,
                player: player.0,
                item,
                cost,
                balance,
                ..none
            },
            ArenaEvent::PlayerJoined { player, team } => Self {
                kind: HIGHTICK_ARENA_EVENT_PLAYER_JOINED,
                player: player.0,
                team: team_code(team),
                ..none
            },
            ArenaEvent::PlayerLeft { player, reason } => Self {
                kind: HIGHTICK_ARENA_EVENT_PLAYER_LEFT,
                player: player.0,
                reason: leave_code(reason),
                ..none
            },
            ArenaEvent::MatchEnd { score, winner } => Self {
                kind: HIGHTICK_ARENA_EVENT_MATCH_END,
                score,
                team: winner.map_or(HIGHTICK_ARENA_TEAM_NONE, team_code),
                ..none
            },
            ArenaEvent::Welcome { player, team } => Self {
                kind: HIGHTICK_ARENA_EVENT_WELCOME,
                player: player.0,
                team: team_code(team),
                ..none
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use hightick_engine::EntityId;
    use hightick_engine::events::ReliableEvent;

    use super::*;

    #[test]
    fn kinds_follow_the_arenas_order_and_fields_land_where_documented() {
        let kill = ArenaEvent::Kill {
            killer: EntityId(3),
            victim: EntityId(4),
            weapon: 2,
            headshot: true,
        };
        let c = HightickArenaEvent::from(&kill);
        assert_eq!(usize::from(c.kind), kill.kind());
        assert_eq!((c.player, c.target, c.weapon, c.headshot), (3, 4, 2, 1));
        let end = ArenaEvent::MatchEnd {
            score: [13, 7],
            winner: None,
        };
        let c = HightickArenaEvent::from(&end);
        assert_eq!(usize::from(c.kind), end.kind());
        assert_eq!((c.score, c.team), ([13, 7], HIGHTICK_ARENA_TEAM_NONE));
        let welcome = ArenaEvent::Welcome {
            player: EntityId(9),
            team: Team::Defenders,
        };
        let c = HightickArenaEvent::from(&welcome);
        assert_eq!(usize::from(c.kind), welcome.kind());
        assert_eq!((c.player, c.team), (9, HIGHTICK_ARENA_TEAM_DEFENDERS));
        assert_eq!(std::mem::size_of::<HightickArenaEvent>(), 32);
    }
}
