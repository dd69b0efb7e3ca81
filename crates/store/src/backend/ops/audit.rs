//! The audit's totals of the whole store (reads only). SUM over BIGINT is NUMERIC
//! on PostgreSQL: each sum is cast back.

use super::Pool;
use crate::error::StoreError;
/// Totals of the whole store (reads only).
pub(crate) async fn audit(pool: &Pool) -> Result<crate::audit::Audit, StoreError> {
    use sqlx::Row as _;
    let accounts =
        sqlx::query("SELECT COUNT(*), CAST(COALESCE(SUM(balance), 0) AS BIGINT) FROM accounts")
            .fetch_one(pool)
            .await?;
    let matches = sqlx::query("SELECT COUNT(*) FROM match_results")
        .fetch_one(pool)
        .await?;
    let reasons = sqlx::query(
        "SELECT reason, CAST(COALESCE(SUM(delta), 0) AS BIGINT) FROM ledger GROUP BY reason",
    )
    .fetch_all(pool)
    .await?;
    let off = sqlx::query(
        "SELECT COUNT(*) FROM accounts a WHERE a.balance <> \
         (SELECT CAST(COALESCE(SUM(l.delta), 0) AS BIGINT) FROM ledger l WHERE l.account_id = a.id)",
    )
    .fetch_one(pool)
    .await?;
    let mut ledger_by_reason = std::collections::BTreeMap::new();
    for row in &reasons {
        ledger_by_reason.insert(row.try_get::<String, _>(0)?, row.try_get::<i64, _>(1)?);
    }
    Ok(crate::audit::Audit {
        accounts: accounts.try_get(0)?,
        matches_recorded: matches.try_get(0)?,
        balance_total: accounts.try_get(1)?,
        ledger_total: ledger_by_reason.values().sum(),
        ledger_by_reason,
        accounts_off_ledger: off.try_get(0)?,
    })
}
