//! The shared matchmaking queue's records: tickets (a solo player or a party),
//! the matches formed from them, and parties. The operations are
//! [`crate::store::Store`]'s `queue_*`, `party_*` and `live_match` methods; the
//! matching rules themselves are the gateway's.

use crate::error::StoreError;
use crate::model::invalid;

/// Most members a ticket (a party) may carry.
pub const MAX_TICKET_MEMBERS: usize = 64;

/// Where a ticket stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketState {
    /// Waiting in its mode's queue.
    Queued,
    /// Claimed by a gateway's matchmaker pass, being allocated.
    Forming,
    /// In a match.
    Matched,
}

impl TicketState {
    pub(crate) fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "queued" => Ok(Self::Queued),
            "forming" => Ok(Self::Forming),
            "matched" => Ok(Self::Matched),
            _ => Err(invalid("mm_tickets.state", "unknown state")),
        }
    }
}

/// A ticket to queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTicket {
    /// Its id (the caller's, random).
    pub ticket: String,
    /// The mode's queue.
    pub mode: String,
    /// The players on it: one, or a party's members (who land on one team).
    pub members: Vec<i64>,
    /// The rating matched on (a party's mean).
    pub rating: i64,
    /// Preferred host region ("" for any).
    pub region: String,
}

/// A ticket as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueTicket {
    /// Its id.
    pub ticket: String,
    /// The mode's queue.
    pub mode: String,
    /// The players on it.
    pub members: Vec<i64>,
    /// The rating matched on.
    pub rating: i64,
    /// Preferred host region ("" for any).
    pub region: String,
    /// When it joined, unix ms.
    pub joined_ms: i64,
    /// Where it stands.
    pub state: TicketState,
    /// Its match, once matched.
    pub match_id: Option<String>,
    /// Its team in that match.
    pub team: Option<i64>,
    /// When it was matched, unix ms.
    pub settled_ms: Option<i64>,
}

/// One seat of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seat {
    /// The player.
    pub account_id: i64,
    /// Its team (0-based).
    pub team: i64,
}

/// A match formed from the queue, to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMatch {
    /// The match id (the gateway's, which the host takes as its own).
    pub match_id: String,
    /// Mode.
    pub mode: String,
    /// The game address players connect to.
    pub address: String,
    /// The host's region tag.
    pub region: String,
    /// Seats in seat order.
    pub seats: Vec<Seat>,
    /// The tickets it took, each with its team.
    pub tickets: Vec<(String, i64)>,
}

/// A match as stored (for polls and rejoins at any gateway).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveMatch {
    /// The match id.
    pub match_id: String,
    /// Mode.
    pub mode: String,
    /// The game address.
    pub address: String,
    /// The host's region tag.
    pub region: String,
    /// Seats in seat order.
    pub seats: Vec<Seat>,
    /// When it was formed, unix ms.
    pub formed_ms: i64,
    /// When its result came in, unix ms.
    pub over_ms: Option<i64>,
}

/// A party: players who queue together and land on one team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    /// Its id.
    pub party_id: String,
    /// The code others join it by.
    pub code: String,
    /// Who may queue it.
    pub leader: i64,
    /// Members in joining order (the leader among them).
    pub members: Vec<i64>,
}

pub(crate) fn join_ids(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

pub(crate) fn parse_ids(field: &'static str, s: &str) -> Result<Vec<i64>, StoreError> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().map_err(|_| invalid(field, "not a list of ids")))
        .collect()
}

pub(crate) fn join_seats(seats: &[Seat]) -> String {
    seats
        .iter()
        .map(|s| format!("{}:{}", s.account_id, s.team))
        .collect::<Vec<_>>()
        .join(",")
}

pub(crate) fn parse_seats(s: &str) -> Result<Vec<Seat>, StoreError> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (a, t) = p
                .split_once(':')
                .ok_or(invalid("mm_matches.seats", "not account:team"))?;
            Ok(Seat {
                account_id: a
                    .parse()
                    .map_err(|_| invalid("mm_matches.seats", "bad account id"))?,
                team: t
                    .parse()
                    .map_err(|_| invalid("mm_matches.seats", "bad team"))?,
            })
        })
        .collect()
}

pub(crate) fn check_ticket(t: &NewTicket) -> Result<(), StoreError> {
    crate::model::check_id("ticket", &t.ticket)?;
    crate::model::check_id("mode", &t.mode)?;
    if t.members.is_empty() || t.members.len() > MAX_TICKET_MEMBERS {
        return Err(invalid("members", "must be 1..=64 accounts"));
    }
    if t.region.len() > crate::model::MAX_ID_LEN {
        return Err(invalid("region", "must be at most 128 bytes"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_seats_round_trip() {
        assert_eq!(parse_ids("m", &join_ids(&[3, 1, 2])).unwrap(), [3, 1, 2]);
        let seats = [
            Seat {
                account_id: 7,
                team: 0,
            },
            Seat {
                account_id: 9,
                team: 1,
            },
        ];
        assert_eq!(parse_seats(&join_seats(&seats)).unwrap(), seats);
        assert!(parse_ids("m", "1,x").is_err());
        assert!(parse_seats("1").is_err());
    }
}
