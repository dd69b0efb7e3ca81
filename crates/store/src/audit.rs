//! [`Audit`]: the store's books checked against themselves after a run. A
//! balance changes only with a ledger entry in the same transaction, so the
//! sum of every balance equals the sum of every ledger entry (grants plus
//! match rewards minus purchases), account by account.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Totals of the whole store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Audit {
    /// Accounts.
    pub accounts: i64,
    /// Match results recorded (distinct match ids).
    pub matches_recorded: i64,
    /// Every account's balance, summed.
    pub balance_total: i64,
    /// Every ledger entry, summed.
    pub ledger_total: i64,
    /// Ledger sums by reason (`grant`, `purchase`, `match_reward`).
    pub ledger_by_reason: BTreeMap<String, i64>,
    /// Accounts whose balance is not the sum of their own ledger entries.
    pub accounts_off_ledger: i64,
}

impl Audit {
    /// Whether the books balance: in total and for every account.
    pub fn balanced(&self) -> bool {
        self.balance_total == self.ledger_total && self.accounts_off_ledger == 0
    }
}
