//! The batching writer: acknowledged means committed; shutdown flushes.

mod common;

use std::time::Duration;

use hightick_store::{
    BatchWriter, MatchPlayer, MatchRecorded, MatchResult, Outcome, Store, StoreError, Write,
    WriteAck, WriterConfig,
};

fn duel(match_id: String, a: i64, b: i64) -> Write {
    let line = |account_id, team, outcome| MatchPlayer {
        account_id,
        team,
        score: 1,
        outcome,
        reward: 3,
    };
    Write::MatchResult(MatchResult {
        match_id,
        mode: "duel".into(),
        players: vec![line(a, 0, Outcome::Win), line(b, 1, Outcome::Loss)],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_writer_commits_everything_it_acknowledged() {
    const WRITERS: usize = 8;
    const EACH: usize = 40;
    for (backend, store) in common::stores("writer_all").await {
        let a = store.guest_account("w-a").await.unwrap().id;
        let b = store.guest_account("w-b").await.unwrap().id;
        let config = WriterConfig {
            max_batch: 32,
            max_delay: Duration::from_millis(2),
            queue_capacity: 16,
        };
        let writer = BatchWriter::spawn(store.clone(), config);
        let tasks: Vec<_> = (0..WRITERS)
            .map(|w| {
                let sender = writer.sender();
                tokio::spawn(async move {
                    let mut acked = 0;
                    for i in 0..EACH {
                        let ack = sender
                            .submit(duel(format!("m-{w}-{i}"), a, b))
                            .await
                            .unwrap();
                        assert_eq!(ack, WriteAck::Match(MatchRecorded::Recorded));
                        let ack = sender
                            .submit(Write::Progress {
                                account_id: a,
                                xp: 2,
                            })
                            .await
                            .unwrap();
                        assert!(matches!(ack, WriteAck::Progress { .. }));
                        acked += 1;
                    }
                    acked
                })
            })
            .collect();
        let mut acked = 0;
        for t in tasks {
            acked += t.await.unwrap();
        }
        // Before shutdown: every acknowledged write is already visible.
        let n = (WRITERS * EACH) as i64;
        assert_eq!(acked as i64, n, "{backend}");
        assert_eq!(
            store.player_stats(a).await.unwrap().matches_played,
            n,
            "{backend}"
        );
        assert_eq!(store.balance(b).await.unwrap(), 3 * n, "{backend}");
        assert_eq!(store.profile(a).await.unwrap().xp, 2 * n, "{backend}");
        let rating_sum = store.player_stats(a).await.unwrap().rating
            + store.player_stats(b).await.unwrap().rating;
        assert!(
            (rating_sum - 2000.0).abs() < 1e-6,
            "{backend}: no rating update lost"
        );
        // Resubmitting is idempotent.
        let again = writer.submit(duel("m-0-0".into(), a, b)).await.unwrap();
        assert_eq!(
            again,
            WriteAck::Match(MatchRecorded::AlreadyRecorded),
            "{backend}"
        );
        let stats = writer.stats();
        assert_eq!(stats.committed, 2 * n as u64 + 1, "{backend}");
        assert!(stats.batches <= stats.committed, "{backend}");
        assert_eq!(stats.aborted, 0, "{backend}");
        writer.shutdown().await;
        assert_eq!(store.balance(a).await.unwrap(), 3 * n, "{backend}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_flushes_queued_writes_then_refuses_more() {
    for (backend, store) in common::stores("writer_shutdown").await {
        let a = store.guest_account("s-a").await.unwrap().id;
        // A long delay: writes would sit in the batch if shutdown did not flush.
        let config = WriterConfig {
            max_batch: 1000,
            max_delay: Duration::from_secs(30),
            queue_capacity: 1000,
        };
        let writer = BatchWriter::spawn(store.clone(), config);
        let sender = writer.sender();
        let pending: Vec<_> = (0..50)
            .map(|_| {
                let sender = sender.clone();
                tokio::spawn(async move {
                    sender
                        .submit(Write::Progress {
                            account_id: a,
                            xp: 1,
                        })
                        .await
                })
            })
            .collect();
        // Wait until all 50 sit in the open batch, then stop: they must be committed.
        while writer.stats().received < 50 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(
            writer.stats().committed,
            0,
            "{backend}: still inside the 30 s window"
        );
        writer.shutdown().await;
        let mut acked = 0;
        for p in pending {
            if p.await.unwrap().is_ok() {
                acked += 1;
            }
        }
        assert_eq!(acked, 50, "{backend}");
        assert_eq!(store.profile(a).await.unwrap().xp, 50, "{backend}");
        assert!(
            matches!(
                sender
                    .submit(Write::Progress {
                        account_id: a,
                        xp: 1
                    })
                    .await,
                Err(StoreError::WriterClosed)
            ),
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_bad_write_fails_alone() {
    for (backend, store) in common::stores("writer_bad").await {
        let a = store.guest_account("bad-a").await.unwrap().id;
        let b = store.guest_account("bad-b").await.unwrap().id;
        let config = WriterConfig {
            max_batch: 64,
            max_delay: Duration::from_millis(50),
            queue_capacity: 64,
        };
        let writer = BatchWriter::spawn(store.clone(), config);
        let s = writer.sender();
        let (good, bad, good2, invalid) = tokio::join!(
            s.submit(duel("ok-1".into(), a, b)),
            s.submit(duel("unknown-player".into(), a, b + 1000)),
            s.submit(Write::Progress {
                account_id: b,
                xp: 5
            }),
            s.submit(Write::Progress {
                account_id: b,
                xp: -5
            }),
        );
        assert_eq!(
            good.unwrap(),
            WriteAck::Match(MatchRecorded::Recorded),
            "{backend}"
        );
        assert!(matches!(bad, Err(StoreError::NotFound { .. })), "{backend}");
        assert_eq!(good2.unwrap(), WriteAck::Progress { xp: 5 }, "{backend}");
        assert!(
            matches!(invalid, Err(StoreError::InvalidInput { field: "xp", .. })),
            "{backend}"
        );
        writer.shutdown().await;
        assert_eq!(
            store.player_stats(a).await.unwrap().matches_played,
            1,
            "{backend}"
        );
        assert!(
            store
                .match_history(a, 10)
                .await
                .unwrap()
                .iter()
                .all(|h| h.match_id == "ok-1")
        );
        check_untouched(&store, b + 1000).await;
    }
}

async fn check_untouched(store: &Store, missing: i64) {
    assert!(matches!(
        store.player_stats(missing).await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_and_repeat_players_inside_one_batch() {
    for (backend, store) in common::stores("writer_dup").await {
        let a = store.guest_account("dup-a").await.unwrap().id;
        let b = store.guest_account("dup-b").await.unwrap().id;
        let config = WriterConfig {
            max_batch: 64,
            max_delay: Duration::from_millis(200),
            queue_capacity: 64,
        };
        let writer = BatchWriter::spawn(store.clone(), config);
        let s = writer.sender();
        let (first, again, second, third) = tokio::join!(
            s.submit(duel("d-1".into(), a, b)),
            s.submit(duel("d-1".into(), a, b)),
            s.submit(duel("d-2".into(), a, b)),
            s.submit(duel("d-3".into(), b, a)),
        );
        let mut firsts = [first.unwrap(), again.unwrap()];
        firsts.sort_by_key(|ack| *ack == WriteAck::Match(MatchRecorded::AlreadyRecorded));
        assert_eq!(
            firsts,
            [
                WriteAck::Match(MatchRecorded::Recorded),
                WriteAck::Match(MatchRecorded::AlreadyRecorded)
            ],
            "{backend}"
        );
        assert_eq!(
            second.unwrap(),
            WriteAck::Match(MatchRecorded::Recorded),
            "{backend}"
        );
        assert_eq!(
            third.unwrap(),
            WriteAck::Match(MatchRecorded::Recorded),
            "{backend}"
        );
        writer.shutdown().await;
        let (sa, sb) = (
            store.player_stats(a).await.unwrap(),
            store.player_stats(b).await.unwrap(),
        );
        assert_eq!(
            (sa.matches_played, sa.wins, sa.losses),
            (3, 2, 1),
            "{backend}"
        );
        assert_eq!(
            (sb.matches_played, sb.wins, sb.losses),
            (3, 1, 2),
            "{backend}"
        );
        assert!(
            (sa.rating + sb.rating - 2000.0).abs() < 1e-9,
            "{backend}: zero-sum"
        );
        assert!(sa.rating > sb.rating, "{backend}");
        assert_eq!(
            store.balance(a).await.unwrap(),
            9,
            "{backend}: three rewards of 3"
        );
        // History ratings chain: each match starts where the previous one ended.
        let mut history = store.match_history(a, 10).await.unwrap();
        history.sort_by(|x, y| x.rating_before.total_cmp(&y.rating_before));
        assert_eq!(history.len(), 3, "{backend}");
        assert_eq!(
            history.iter().filter(|h| h.rating_before == 1000.0).count(),
            1,
            "{backend}"
        );
        let last = store.ledger(a, 10).await.unwrap();
        assert_eq!(last.len(), 3, "{backend}");
    }
}
