//! [`Store`]'s shared matchmaking queue and parties (the records are in
//! `queue.rs`, the statements in `backend/ops/queue.rs` and `parties.rs`).

use super::{Backend, Store, postgres, sqlite};
use crate::error::StoreError;
use crate::queue::{LiveMatch, NewMatch, NewTicket, Party, QueueTicket};

impl Store {
    /// Queues `ticket`: `(id, true)` when it is new; a solo player already
    /// waiting gets its live ticket back (`false`); a party with a member
    /// waiting is [`StoreError::Conflict`].
    pub async fn queue_join(&self, ticket: &NewTicket) -> Result<(String, bool), StoreError> {
        let ticket = ticket.clone();
        on_backend_write!(self, in_transaction, queue_join(&ticket))
    }

    /// Takes `ticket` out of the queue if `account_id` is on it:
    /// `Some(members)`; `None`: no such ticket of that account. A ticket being
    /// matched or matched is [`StoreError::Conflict`].
    pub async fn queue_cancel(
        &self,
        account_id: i64,
        ticket: &str,
    ) -> Result<Option<Vec<i64>>, StoreError> {
        let ticket = ticket.to_owned();
        on_backend_write!(self, in_transaction, queue_cancel(account_id, &ticket))
    }

    /// Claims up to `limit` of `mode`'s oldest waiting tickets for matchmaker
    /// pass `claim_id` (claims older than `stale_before_ms`, whose gateway
    /// died, are waiting again first). Concurrent passes claim disjoint
    /// tickets. Oldest first.
    pub async fn queue_claim(
        &self,
        mode: &str,
        limit: i64,
        stale_before_ms: i64,
        claim_id: &str,
    ) -> Result<Vec<QueueTicket>, StoreError> {
        let (mode, claim_id) = (mode.to_owned(), claim_id.to_owned());
        on_backend_write!(
            self,
            in_transaction,
            queue_claim(&mode, limit, stale_before_ms, &claim_id)
        )
    }

    /// Puts pass `claim_id`'s tickets that formed no match back (their join
    /// time, and so their place, kept); returns how many.
    pub async fn queue_release(&self, claim_id: &str) -> Result<u64, StoreError> {
        let claim_id = claim_id.to_owned();
        on_backend_write!(self, autocommit, queue_release(&claim_id))
    }

    /// Records allocated matches and marks their tickets matched, in one
    /// transaction.
    pub async fn queue_record(&self, matches: &[NewMatch]) -> Result<(), StoreError> {
        let matches = matches.to_vec();
        on_backend_write!(self, in_transaction, queue_record(&matches))
    }

    /// The ticket `ticket`.
    pub async fn queue_ticket(&self, ticket: &str) -> Result<Option<QueueTicket>, StoreError> {
        on_backend!(self, queue_ticket(ticket))
    }

    /// The latest ticket of `account_id` (live, or its last match's).
    pub async fn queue_ticket_of(
        &self,
        account_id: i64,
    ) -> Result<Option<QueueTicket>, StoreError> {
        on_backend!(self, queue_ticket_of(account_id))
    }

    /// Every waiting ticket by mode and join time (one read for all positions).
    pub async fn queue_waiting(&self) -> Result<Vec<QueueTicket>, StoreError> {
        on_backend!(self, queue_waiting())
    }

    /// Tickets matched at or after `since_ms`.
    pub async fn queue_matched_since(&self, since_ms: i64) -> Result<Vec<QueueTicket>, StoreError> {
        on_backend!(self, queue_matched_since(since_ms))
    }

    /// Match `match_id` as formed (over or not).
    pub async fn live_match(&self, match_id: &str) -> Result<Option<LiveMatch>, StoreError> {
        on_backend!(self, live_match(match_id))
    }

    /// Match `match_id`'s result is in; `false` if it was already over or unknown.
    pub async fn match_over(&self, match_id: &str) -> Result<bool, StoreError> {
        let match_id = match_id.to_owned();
        on_backend_write!(self, autocommit, match_over(&match_id))
    }

    /// Forgets tickets matched before `tickets_before_ms` and matches formed
    /// before `matches_before_ms`.
    pub async fn queue_sweep(
        &self,
        tickets_before_ms: i64,
        matches_before_ms: i64,
    ) -> Result<u64, StoreError> {
        on_backend_write!(
            self,
            in_transaction,
            queue_sweep(tickets_before_ms, matches_before_ms)
        )
    }

    /// Creates party `party_id` with join code `code`, led by `account_id`
    /// (in no party yet, else [`StoreError::Conflict`]).
    pub async fn party_create(
        &self,
        account_id: i64,
        party_id: &str,
        code: &str,
    ) -> Result<Party, StoreError> {
        let (party_id, code) = (party_id.to_owned(), code.to_owned());
        on_backend_write!(
            self,
            in_transaction,
            party_create(account_id, &party_id, &code)
        )
    }

    /// Adds `account_id` to the party with `code`, of at most `max_size`.
    pub async fn party_join(
        &self,
        account_id: i64,
        code: &str,
        max_size: i64,
    ) -> Result<Party, StoreError> {
        let code = code.to_owned();
        on_backend_write!(
            self,
            in_transaction,
            party_join(account_id, &code, max_size)
        )
    }

    /// Takes `account_id` out of its party; `false` if it was in none.
    pub async fn party_leave(&self, account_id: i64) -> Result<bool, StoreError> {
        on_backend_write!(self, in_transaction, party_leave(account_id))
    }

    /// The party `account_id` is in.
    pub async fn party(&self, account_id: i64) -> Result<Option<Party>, StoreError> {
        on_backend!(self, party(account_id))
    }
}
