//! Match results: idempotent by match id, stats and rating in the same transaction,
//! history and leaderboard.

mod common;

use std::sync::Arc;

use hightick_store::{MatchPlayer, MatchRecorded, MatchResult, Outcome, StoreError};

fn result(match_id: &str, winners: &[i64], losers: &[i64], reward: i64) -> MatchResult {
    let line = |account_id: i64, team: i64, outcome| MatchPlayer {
        account_id,
        team,
        score: if outcome == Outcome::Win { 10 } else { 3 },
        outcome,
        reward,
    };
    let mut players: Vec<_> = winners.iter().map(|&a| line(a, 0, Outcome::Win)).collect();
    players.extend(losers.iter().map(|&a| line(a, 1, Outcome::Loss)));
    MatchResult {
        match_id: match_id.into(),
        mode: "5v5".into(),
        players,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_posted_twice_credits_once() {
    for (backend, store) in common::stores("match_twice").await {
        let ids = common::guests(&store, "twice", 10).await;
        let m = result("match-0001", &ids[..5], &ids[5..], 25);
        assert_eq!(
            store.record_match(&m).await.unwrap(),
            MatchRecorded::Recorded,
            "{backend}"
        );
        assert_eq!(
            store.record_match(&m).await.unwrap(),
            MatchRecorded::AlreadyRecorded,
            "{backend}"
        );
        for &id in &ids {
            assert_eq!(
                store.balance(id).await.unwrap(),
                25,
                "{backend}: credited once"
            );
            let stats = store.player_stats(id).await.unwrap();
            assert_eq!(stats.matches_played, 1, "{backend}");
            assert_eq!(
                store.match_history(id, 10).await.unwrap().len(),
                1,
                "{backend}"
            );
        }
        let ledger = store.ledger(ids[3], 10).await.unwrap();
        assert_eq!(ledger.len(), 1, "{backend}");
        assert_eq!(
            (ledger[0].reason.as_str(), ledger[0].reference.as_str()),
            ("match_reward", "match-0001")
        );
        let winner = store.player_stats(ids[0]).await.unwrap();
        let loser = store.player_stats(ids[9]).await.unwrap();
        assert_eq!(
            (winner.wins, winner.losses, winner.score_total),
            (1, 0, 10),
            "{backend}"
        );
        assert_eq!(
            (loser.wins, loser.losses, loser.score_total),
            (0, 1, 3),
            "{backend}"
        );
        assert_eq!(winner.rating, 1016.0, "{backend}");
        assert_eq!(loser.rating, 984.0, "{backend}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_duplicate_posts_credit_once() {
    for (backend, store) in common::stores("match_race").await {
        let ids = common::guests(&store, "race", 4).await;
        let m = Arc::new(result("match-race", &ids[..2], &ids[2..], 7));
        let store = Arc::new(store);
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let (store, m) = (store.clone(), m.clone());
                tokio::spawn(async move { store.record_match(&m).await })
            })
            .collect();
        let mut recorded = 0;
        for t in tasks {
            if t.await.unwrap().unwrap() == MatchRecorded::Recorded {
                recorded += 1;
            }
        }
        assert_eq!(recorded, 1, "{backend}");
        for &id in &ids {
            assert_eq!(store.balance(id).await.unwrap(), 7, "{backend}");
            assert_eq!(
                store.player_stats(id).await.unwrap().matches_played,
                1,
                "{backend}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_naming_an_unknown_player_stores_nothing() {
    for (backend, store) in common::stores("match_unknown").await {
        let ids = common::guests(&store, "unknown", 2).await;
        let m = result("match-bad", &[ids[0]], &[ids[1] + 1000], 5);
        assert!(
            matches!(
                store.record_match(&m).await,
                Err(StoreError::NotFound { .. })
            ),
            "{backend}"
        );
        assert_eq!(store.balance(ids[0]).await.unwrap(), 0, "{backend}");
        assert_eq!(
            store.player_stats(ids[0]).await.unwrap().matches_played,
            0,
            "{backend}"
        );
        // The id was not burnt: a corrected result records.
        let fixed = result("match-bad", &[ids[0]], &[ids[1]], 5);
        assert_eq!(
            store.record_match(&fixed).await.unwrap(),
            MatchRecorded::Recorded,
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaderboard_orders_by_rating_and_ranks_ties_together() {
    for (backend, store) in common::stores("match_board").await {
        let ids = common::guests(&store, "board", 5).await;
        // ids[0] wins twice, ids[1] and ids[2] split, ids[3] loses twice, ids[4] never plays.
        store
            .record_match(&result("b1", &[ids[0]], &[ids[3]], 0))
            .await
            .unwrap();
        store
            .record_match(&result("b2", &[ids[0]], &[ids[3]], 0))
            .await
            .unwrap();
        store
            .record_match(&result("b3", &[ids[1]], &[ids[2]], 0))
            .await
            .unwrap();
        store
            .record_match(&result("b4", &[ids[2]], &[ids[1]], 0))
            .await
            .unwrap();
        let board = store.leaderboard(100).await.unwrap();
        assert_eq!(
            board.len(),
            4,
            "{backend}: players without a match are not ranked"
        );
        assert_eq!(board[0].account_id, ids[0], "{backend}");
        assert_eq!(board[0].rank, 1, "{backend}");
        assert_eq!(board[3].account_id, ids[3], "{backend}");
        assert_eq!(board[3].rank, 4, "{backend}");
        for w in board.windows(2) {
            assert!(w[0].rating >= w[1].rating, "{backend}");
        }
        let top = store.leaderboard(2).await.unwrap();
        assert_eq!(top.len(), 2, "{backend}");
        for e in &board {
            let mine = store.rank(e.account_id).await.unwrap().unwrap();
            assert_eq!(mine.rank, e.rank, "{backend}: rank agrees with the board");
            assert_eq!(
                mine.display_name,
                format!("Guest{}", e.account_id),
                "{backend}"
            );
        }
        assert_eq!(store.rank(ids[4]).await.unwrap(), None, "{backend}");
        assert!(
            matches!(
                store.leaderboard(0).await,
                Err(StoreError::InvalidInput { field: "limit", .. })
            ),
            "{backend}"
        );
        let history = store.match_history(ids[0], 10).await.unwrap();
        assert_eq!(history.len(), 2, "{backend}");
        assert!(
            history.iter().all(|h| h.outcome == Outcome::Win),
            "{backend}"
        );
        assert!(
            history[0].rating_after > history[0].rating_before,
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_matches_sharing_players_all_apply() {
    for (backend, store) in common::stores("match_overlap").await {
        let ids = common::guests(&store, "overlap", 6).await;
        let store = Arc::new(store);
        let tasks: Vec<_> = (0..12)
            .map(|i| {
                let store = store.clone();
                // Players listed in different orders so lock order matters.
                let mut order = ids.clone();
                order.rotate_left(i % 6);
                let m = result(&format!("overlap-{i}"), &order[..3], &order[3..], 1);
                tokio::spawn(async move { store.record_match(&m).await })
            })
            .collect();
        for t in tasks {
            assert_eq!(
                t.await.unwrap().unwrap(),
                MatchRecorded::Recorded,
                "{backend}"
            );
        }
        let mut rating_sum = 0.0;
        for &id in &ids {
            let stats = store.player_stats(id).await.unwrap();
            assert_eq!(stats.matches_played, 12, "{backend}");
            assert_eq!(stats.wins + stats.losses, 12, "{backend}");
            assert_eq!(store.balance(id).await.unwrap(), 12, "{backend}");
            rating_sum += stats.rating;
        }
        // Team Elo between equal-sized teams is zero-sum: no update was lost.
        assert!(
            (rating_sum - 6000.0).abs() < 1e-6,
            "{backend}: {rating_sum}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_balances_grants_rewards_and_purchases() {
    for (backend, store) in common::stores("match_audit").await {
        let ids = common::guests(&store, "audit", 3).await;
        let empty = store.audit().await.unwrap();
        assert!(empty.balanced(), "{backend}: {empty:?}");
        store.grant_currency(ids[0], 500, "welcome").await.unwrap();
        store
            .record_match(&result("m-audit", &ids[..1], &ids[1..], 30))
            .await
            .unwrap();
        store
            .record_match(&result("m-audit", &ids[..1], &ids[1..], 30))
            .await
            .unwrap();
        let audit = store.audit().await.unwrap();
        assert_eq!(audit.accounts, 3, "{backend}");
        assert_eq!(audit.matches_recorded, 1, "{backend}: idempotent");
        assert_eq!(audit.balance_total, 500 + 3 * 30, "{backend}");
        assert_eq!(audit.ledger_by_reason.get("grant"), Some(&500), "{backend}");
        assert!(audit.balanced(), "{backend}: {audit:?}");
    }
}
