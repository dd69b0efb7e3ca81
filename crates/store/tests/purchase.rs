//! Purchases: idempotency keys, the never-negative balance, the ledger.

mod common;

use std::sync::Arc;

use hightick_store::{PurchaseRequest, StoreError};

fn buy(account_id: i64, key: &str, item: &str, quantity: i64, unit_price: i64) -> PurchaseRequest {
    PurchaseRequest {
        account_id,
        idempotency_key: key.into(),
        item_id: item.into(),
        quantity,
        unit_price,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_purchase_charges_once() {
    for (backend, store) in common::stores("purchase_retry").await {
        let p = store.guest_account("dev-retry").await.unwrap();
        store.grant_currency(p.id, 500, "welcome").await.unwrap();
        let req = buy(p.id, "order-1", "skin.red", 2, 60);
        let first = store.purchase(&req).await.unwrap();
        assert!(!first.replayed, "{backend}");
        assert_eq!(first.cost, 120, "{backend}");
        assert_eq!(first.balance_after, 380, "{backend}");
        for _ in 0..3 {
            let again = store.purchase(&req).await.unwrap();
            assert!(again.replayed, "{backend}");
            assert_eq!(again.balance_after, 380, "{backend}");
            assert_eq!(again.cost, 120, "{backend}");
        }
        assert_eq!(store.balance(p.id).await.unwrap(), 380, "{backend}");
        let inv = store.inventory(p.id).await.unwrap();
        assert_eq!(inv.len(), 1, "{backend}");
        assert_eq!(inv[0].quantity, 2, "{backend}: granted once");
        let ledger = store.ledger(p.id, 100).await.unwrap();
        assert_eq!(ledger.len(), 2, "{backend}: one grant, one purchase");
        assert_eq!(
            ledger.iter().map(|e| e.delta).sum::<i64>(),
            380,
            "{backend}"
        );
        // Same key, different request: refused, nothing charged.
        let other = buy(p.id, "order-1", "skin.blue", 1, 10);
        assert!(
            matches!(
                store.purchase(&other).await,
                Err(StoreError::Conflict { .. })
            ),
            "{backend}"
        );
        assert_eq!(store.balance(p.id).await.unwrap(), 380, "{backend}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_retries_of_one_key_charge_once() {
    for (backend, store) in common::stores("purchase_race_key").await {
        let p = store.guest_account("dev-race-key").await.unwrap();
        store.grant_currency(p.id, 1000, "welcome").await.unwrap();
        let store = Arc::new(store);
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(
                    async move { store.purchase(&buy(p.id, "same", "crate", 1, 100)).await },
                )
            })
            .collect();
        let mut fresh = 0;
        for t in tasks {
            let receipt = t.await.unwrap().unwrap();
            assert_eq!(receipt.balance_after, 900, "{backend}");
            fresh += usize::from(!receipt.replayed);
        }
        assert_eq!(fresh, 1, "{backend}: exactly one call charged");
        assert_eq!(store.balance(p.id).await.unwrap(), 900, "{backend}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_purchases_never_overdraw() {
    const START: i64 = 1000;
    const PRICE: i64 = 70;
    for (backend, store) in common::stores("purchase_fifty").await {
        let p = store.guest_account("dev-fifty").await.unwrap();
        store.grant_currency(p.id, START, "welcome").await.unwrap();
        let store = Arc::new(store);
        let tasks: Vec<_> = (0..50)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .purchase(&buy(p.id, &format!("k{i}"), "gem", 1, PRICE))
                        .await
                })
            })
            .collect();
        let (mut ok, mut broke) = (0, 0);
        for t in tasks {
            match t.await.unwrap() {
                Ok(r) => {
                    assert!(r.balance_after >= 0, "{backend}");
                    ok += 1;
                }
                Err(StoreError::InsufficientFunds { balance, cost }) => {
                    assert!(balance < cost, "{backend}");
                    broke += 1;
                }
                Err(e) => panic!("{backend}: unexpected {e}"),
            }
        }
        assert_eq!(
            ok,
            START / PRICE,
            "{backend}: exactly floor(balance/price) succeed"
        );
        assert_eq!(broke, 50 - START / PRICE, "{backend}");
        let balance = store.balance(p.id).await.unwrap();
        assert_eq!(balance, START - ok * PRICE, "{backend}");
        let ledger = store.ledger(p.id, 1000).await.unwrap();
        assert_eq!(
            ledger.iter().map(|e| e.delta).sum::<i64>(),
            balance,
            "{backend}"
        );
        assert_eq!(
            store.inventory(p.id).await.unwrap()[0].quantity,
            ok,
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_purchase_leaves_no_trace_and_can_be_retried() {
    for (backend, store) in common::stores("purchase_fail").await {
        let p = store.guest_account("dev-poor").await.unwrap();
        let req = buy(p.id, "k", "sword", 1, 50);
        assert!(
            matches!(
                store.purchase(&req).await,
                Err(StoreError::InsufficientFunds {
                    balance: 0,
                    cost: 50
                })
            ),
            "{backend}"
        );
        assert!(store.inventory(p.id).await.unwrap().is_empty(), "{backend}");
        assert!(
            store.ledger(p.id, 10).await.unwrap().is_empty(),
            "{backend}"
        );
        store.grant_currency(p.id, 50, "topup").await.unwrap();
        let r = store.purchase(&req).await.unwrap();
        assert!(!r.replayed, "{backend}");
        assert_eq!(r.balance_after, 0, "{backend}");
        // Unknown account.
        assert!(
            matches!(
                store.purchase(&buy(p.id + 999, "k", "sword", 1, 1)).await,
                Err(StoreError::NotFound { what: "account" })
            ),
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negative_or_huge_amounts_are_refused_before_the_database() {
    for (backend, store) in common::stores("purchase_bounds").await {
        let p = store.guest_account("dev-bounds").await.unwrap();
        for (q, price, field) in [
            (0, 1, "quantity"),
            (-5, 1, "quantity"),
            (1, -1, "unit_price"),
            (i64::MAX, 2, "quantity"),
            (1_000_000, 1_000_000_000_000, "quantity"),
        ] {
            match store.purchase(&buy(p.id, "k", "x", q, price)).await {
                Err(StoreError::InvalidInput { field: f, .. }) => assert_eq!(f, field, "{backend}"),
                other => panic!("{backend}: {q} x {price}: {other:?}"),
            }
        }
        for amount in [0, -1, i64::MIN, i64::MAX] {
            assert!(
                matches!(
                    store.grant_currency(p.id, amount, "x").await,
                    Err(StoreError::InvalidInput {
                        field: "amount",
                        ..
                    })
                ),
                "{backend}: {amount}"
            );
        }
        assert_eq!(store.balance(p.id).await.unwrap(), 0, "{backend}");
    }
}
