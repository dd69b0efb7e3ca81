//! Many writers at once: on SQLite they share group transactions on the one writer
//! connection (on PostgreSQL each has its own transaction). Every write commits
//! exactly once, the books balance, and a write that fails fails alone.

mod common;

use std::collections::BTreeMap;

use hightick_store::{
    BatchWriter, MatchPlayer, MatchRecorded, MatchResult, Outcome, PurchaseRequest, Store,
    StoreError, Write, WriteAck, WriterConfig,
};

const PLAYERS: usize = 8;
const TASKS: usize = 16;
const ROUNDS: usize = 12;
const GRANT: i64 = 10_000;
const PRICE: i64 = 7;
const WIN: i64 = 5;
const LOSS: i64 = 3;

fn buy(account_id: i64, key: String, unit_price: i64) -> PurchaseRequest {
    PurchaseRequest {
        account_id,
        idempotency_key: key,
        item_id: "crate".into(),
        quantity: 1,
        unit_price,
    }
}

fn duel(match_id: String, winner: i64, loser: i64) -> MatchResult {
    let line = |account_id, team, outcome, reward| MatchPlayer {
        account_id,
        team,
        score: 1,
        outcome,
        reward,
    };
    MatchResult {
        match_id,
        mode: "duel".into(),
        players: vec![
            line(winner, 0, Outcome::Win, WIN),
            line(loser, 1, Outcome::Loss, LOSS),
        ],
    }
}

/// What one task did, for the expected balances.
#[derive(Default)]
struct Done {
    /// account -> coins it should have gained (rewards) or lost (purchases).
    delta: BTreeMap<i64, i64>,
    purchases: usize,
    matches: usize,
}

/// Task `t`: purchases (each retried, sometimes twice at once), match results
/// (each posted twice, one of them through the batching writer).
async fn task(store: Store, results: hightick_store::WriteSender, ids: Vec<i64>, t: usize) -> Done {
    let mut done = Done::default();
    for r in 0..ROUNDS {
        let buyer = ids[(t + r) % PLAYERS];
        let req = buy(buyer, format!("order-{t}-{r}"), PRICE);
        let (first, twin) = tokio::join!(store.purchase(&req), store.purchase(&req));
        let (first, twin) = (first.unwrap(), twin.unwrap());
        assert_ne!(
            first.replayed, twin.replayed,
            "exactly one of the twins charged"
        );
        assert_eq!(first.balance_after, twin.balance_after);
        let retry = store.purchase(&req).await.unwrap();
        assert!(retry.replayed);
        *done.delta.entry(buyer).or_default() -= PRICE;
        done.purchases += 1;

        let (winner, loser) = (ids[(t + 2 * r) % PLAYERS], ids[(t + 2 * r + 1) % PLAYERS]);
        let m = duel(format!("match-{t}-{r}"), winner, loser);
        let (direct, batched) = tokio::join!(
            store.record_match(&m),
            results.submit(Write::MatchResult(m.clone()))
        );
        let batched = match batched.unwrap() {
            WriteAck::Match(recorded) => recorded,
            other => panic!("a match result acknowledged as {other:?}"),
        };
        let outcomes = [direct.unwrap(), batched];
        assert_eq!(
            outcomes
                .iter()
                .filter(|o| **o == MatchRecorded::Recorded)
                .count(),
            1,
            "{outcomes:?}: recorded exactly once"
        );
        *done.delta.entry(winner).or_default() += WIN;
        *done.delta.entry(loser).or_default() += LOSS;
        done.matches += 1;
    }
    done
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_purchases_and_results_commit_exactly_once() {
    for (backend, store) in common::stores("group_commit_once").await {
        let ids = common::guests(&store, "gc", PLAYERS).await;
        for &id in &ids {
            store.grant_currency(id, GRANT, "welcome").await.unwrap();
        }
        let writer = BatchWriter::spawn(store.clone(), WriterConfig::default());
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| tokio::spawn(task(store.clone(), writer.sender(), ids.clone(), t)))
            .collect();
        let mut expected: BTreeMap<i64, i64> = ids.iter().map(|&id| (id, GRANT)).collect();
        let (mut purchases, mut matches) = (0, 0);
        for t in tasks {
            let done = t.await.unwrap();
            for (id, d) in done.delta {
                *expected.entry(id).or_default() += d;
            }
            purchases += done.purchases;
            matches += done.matches;
        }
        writer.shutdown().await;

        for (&id, &balance) in &expected {
            assert_eq!(store.balance(id).await.unwrap(), balance, "{backend}: {id}");
            let ledger = store.ledger(id, 1000).await.unwrap();
            let mut keys: Vec<&str> = ledger
                .iter()
                .filter(|e| e.reason == "purchase")
                .map(|e| e.reference.as_str())
                .collect();
            let charged = keys.len();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), charged, "{backend}: a key charged twice");
        }
        let audit = store.audit().await.unwrap();
        assert!(audit.balanced(), "{backend}: {audit:?}");
        assert_eq!(audit.matches_recorded, matches as i64, "{backend}");
        assert_eq!(
            audit.ledger_by_reason.get("purchase").copied(),
            Some(-(purchases as i64) * PRICE),
            "{backend}"
        );
        assert_eq!(
            audit.ledger_by_reason.get("match_reward").copied(),
            Some(matches as i64 * (WIN + LOSS)),
            "{backend}"
        );
        let played: i64 = {
            let mut sum = 0;
            for &id in &ids {
                sum += store.player_stats(id).await.unwrap().matches_played;
            }
            sum
        };
        assert_eq!(played, 2 * matches as i64, "{backend}: stats counted once");
    }
}

/// Good and bad writes submitted together (on SQLite they share group
/// transactions): each bad one gets its own error and leaves no trace, and
/// every good one commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_write_does_not_fail_its_group_mates() {
    for (backend, store) in common::stores("group_commit_isolation").await {
        let ids = common::guests(&store, "iso", 2).await;
        let (rich, broke) = (ids[0], ids[1]);
        store.grant_currency(rich, 1_000, "welcome").await.unwrap();
        store
            .create_named_account("taken", "$argon2id$x")
            .await
            .unwrap();
        let mut good = Vec::new();
        let mut bad = Vec::new();
        for i in 0..30 {
            let s = store.clone();
            good.push(tokio::spawn(async move {
                s.purchase(&buy(rich, format!("ok-{i}"), 10))
                    .await
                    .map(drop)
            }));
            let s = store.clone();
            bad.push(tokio::spawn(async move {
                // Out of coins: the claimed key must be rolled back with the spend.
                let r = s.purchase(&buy(broke, format!("no-{i}"), 10)).await;
                assert!(
                    matches!(r, Err(StoreError::InsufficientFunds { .. })),
                    "{r:?}"
                );
            }));
            let s = store.clone();
            bad.push(tokio::spawn(async move {
                // A unique violation inside the write.
                let r = s.create_named_account("taken", "$argon2id$y").await;
                assert!(matches!(r, Err(StoreError::Conflict { .. })), "{r:?}");
            }));
            let s = store.clone();
            bad.push(tokio::spawn(async move {
                // A player that does not exist: the match is not recorded.
                let r = s
                    .record_match(&duel(format!("ghost-{i}"), rich, 999_999))
                    .await;
                assert!(matches!(r, Err(StoreError::NotFound { .. })), "{r:?}");
            }));
            let s = store.clone();
            good.push(tokio::spawn(async move {
                s.add_progress(rich, 1).await.map(drop)
            }));
        }
        for g in good {
            g.await.unwrap().unwrap();
        }
        for b in bad {
            b.await.unwrap();
        }
        assert_eq!(
            store.balance(rich).await.unwrap(),
            1_000 - 30 * 10,
            "{backend}"
        );
        assert_eq!(store.balance(broke).await.unwrap(), 0, "{backend}");
        assert_eq!(store.profile(rich).await.unwrap().xp, 30, "{backend}");
        assert_eq!(store.inventory(broke).await.unwrap(), vec![], "{backend}");
        // The refused keys were not kept: with coins, the same key now buys.
        store.grant_currency(broke, 10, "later").await.unwrap();
        let later = store
            .purchase(&buy(broke, "no-0".into(), 10))
            .await
            .unwrap();
        assert!(!later.replayed, "{backend}");
        let audit = store.audit().await.unwrap();
        assert!(audit.balanced(), "{backend}: {audit:?}");
        assert_eq!(audit.matches_recorded, 0, "{backend}");
    }
}
