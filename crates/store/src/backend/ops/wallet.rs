//! The wallet: balance, the currency ledger, inventory and idempotent purchases. A
//! balance never goes negative nor past `MAX_BALANCE`.

use sqlx::Row as _;

use super::{Conn, Pool};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::{
    InventoryItem, LedgerEntry, MAX_BALANCE, PurchaseReceipt, PurchaseRequest, check_amount,
    check_id, check_limit,
};

pub(crate) async fn balance(pool: &Pool, account_id: i64) -> Result<i64, StoreError> {
    let row = sqlx::query("SELECT balance FROM accounts WHERE id = $1")
        .bind(account_id)
        .fetch_optional(pool)
        .await?
        .ok_or(StoreError::NotFound { what: "account" })?;
    Ok(row.try_get(0)?)
}

/// Adds `amount` to the balance and writes the ledger entry, inside the caller's transaction.
async fn credit(
    conn: &mut Conn,
    account_id: i64,
    amount: i64,
    reason: &str,
    reference: &str,
    now: i64,
) -> Result<i64, StoreError> {
    let row = sqlx::query(
        "UPDATE accounts SET balance = balance + $1 WHERE id = $2 AND balance <= $3 RETURNING balance",
    )
    .bind(amount)
    .bind(account_id)
    .bind(MAX_BALANCE - amount)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else {
        let exists = sqlx::query("SELECT 1 FROM accounts WHERE id = $1")
            .bind(account_id)
            .fetch_optional(&mut *conn)
            .await?;
        return Err(match exists {
            Some(_) => StoreError::Conflict {
                what: "balance would exceed its maximum",
            },
            None => StoreError::NotFound { what: "account" },
        });
    };
    sqlx::query(
        "INSERT INTO ledger (account_id, delta, reason, reference, created_at_ms) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(account_id)
    .bind(amount)
    .bind(reason)
    .bind(reference)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(row.try_get(0)?)
}

pub(crate) async fn grant_currency(
    conn: &mut Conn,
    account_id: i64,
    amount: i64,
    reference: &str,
) -> Result<i64, StoreError> {
    check_amount("amount", amount)?;
    check_id("reference", reference)?;
    credit(conn, account_id, amount, "grant", reference, now_ms()).await
}

pub(crate) async fn ledger(
    pool: &Pool,
    account_id: i64,
    limit: i64,
) -> Result<Vec<LedgerEntry>, StoreError> {
    check_limit(limit)?;
    let rows = sqlx::query(
        "SELECT id, delta, reason, reference, created_at_ms FROM ledger WHERE account_id = $1 \
         ORDER BY id DESC LIMIT $2",
    )
    .bind(account_id)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LedgerEntry {
                id: r.try_get(0)?,
                delta: r.try_get(1)?,
                reason: r.try_get(2)?,
                reference: r.try_get(3)?,
                created_at_ms: r.try_get(4)?,
            })
        })
        .collect()
}

pub(crate) async fn inventory(
    pool: &Pool,
    account_id: i64,
) -> Result<Vec<InventoryItem>, StoreError> {
    let rows = sqlx::query(
        "SELECT item_id, quantity FROM inventory WHERE account_id = $1 AND quantity > 0 ORDER BY item_id",
    )
    .bind(account_id)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(InventoryItem {
                item_id: r.try_get(0)?,
                quantity: r.try_get(1)?,
            })
        })
        .collect()
}

/// Claims the idempotency key, spends and grants the item. A key seen before
/// answers with its first receipt and changes nothing; a spend larger than the
/// balance is `Err` (the caller's rollback undoes the claim).
pub(crate) async fn purchase(
    conn: &mut Conn,
    req: &PurchaseRequest,
) -> Result<PurchaseReceipt, StoreError> {
    let cost = req.validate()?;
    let now = now_ms();
    // Claim the idempotency key first: a concurrent retry waits here for our commit
    // (PostgreSQL), or runs after this write on the one writer (SQLite), then finds
    // the claimed row.
    let claimed = sqlx::query(
        "INSERT INTO purchases (account_id, idempotency_key, item_id, quantity, unit_price, cost, \
         balance_after, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, 0, $7) \
         ON CONFLICT (account_id, idempotency_key) DO NOTHING",
    )
    .bind(req.account_id)
    .bind(&req.idempotency_key)
    .bind(&req.item_id)
    .bind(req.quantity)
    .bind(req.unit_price)
    .bind(cost)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(|e| StoreError::foreign_key_as_not_found(e, "account"))?
    .rows_affected()
        == 1;
    if !claimed {
        let row = sqlx::query(
            "SELECT item_id, quantity, unit_price, cost, balance_after FROM purchases \
             WHERE account_id = $1 AND idempotency_key = $2",
        )
        .bind(req.account_id)
        .bind(&req.idempotency_key)
        .fetch_one(&mut *conn)
        .await?;
        let item_id: String = row.try_get(0)?;
        let quantity: i64 = row.try_get(1)?;
        let unit_price: i64 = row.try_get(2)?;
        if item_id != req.item_id || quantity != req.quantity || unit_price != req.unit_price {
            return Err(StoreError::Conflict {
                what: "idempotency key reused for a different purchase",
            });
        }
        return Ok(PurchaseReceipt {
            account_id: req.account_id,
            idempotency_key: req.idempotency_key.clone(),
            item_id,
            quantity,
            cost: row.try_get(3)?,
            balance_after: row.try_get(4)?,
            replayed: true,
        });
    }
    // The guarded spend: the row lock (PostgreSQL) or the one writer (SQLite) makes
    // the check and the subtraction one step, so concurrent spends cannot overdraw.
    let charged = sqlx::query(
        "UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance >= $1 RETURNING balance",
    )
    .bind(cost)
    .bind(req.account_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(charged) = charged else {
        let row = sqlx::query("SELECT balance FROM accounts WHERE id = $1")
            .bind(req.account_id)
            .fetch_optional(&mut *conn)
            .await?;
        return Err(match row {
            Some(row) => StoreError::InsufficientFunds {
                balance: row.try_get(0)?,
                cost,
            },
            None => StoreError::NotFound { what: "account" },
        });
    };
    let balance_after: i64 = charged.try_get(0)?;
    sqlx::query(
        "INSERT INTO ledger (account_id, delta, reason, reference, created_at_ms) VALUES ($1, $2, 'purchase', $3, $4)",
    )
    .bind(req.account_id)
    .bind(-cost)
    .bind(&req.idempotency_key)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO inventory (account_id, item_id, quantity) VALUES ($1, $2, $3) \
         ON CONFLICT (account_id, item_id) DO UPDATE SET quantity = inventory.quantity + excluded.quantity",
    )
    .bind(req.account_id)
    .bind(&req.item_id)
    .bind(req.quantity)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE purchases SET balance_after = $1 WHERE account_id = $2 AND idempotency_key = $3",
    )
    .bind(balance_after)
    .bind(req.account_id)
    .bind(&req.idempotency_key)
    .execute(&mut *conn)
    .await?;
    Ok(PurchaseReceipt {
        account_id: req.account_id,
        idempotency_key: req.idempotency_key.clone(),
        item_id: req.item_id.clone(),
        quantity: req.quantity,
        cost,
        balance_after,
        replayed: false,
    })
}
