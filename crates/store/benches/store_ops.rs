//! Store operations per second on SQLite (a file, the embedded default) and on
//! PostgreSQL (when `HIGHTICK_BENCH_DATABASE_URL` or `HIGHTICK_TEST_DATABASE_URL` is
//! set; a fresh schema is used), plus argon2id hashes per second.
//!
//! `cargo bench -p hightick-store` prints `FIGURE store_<backend>_<op> <value> ops/s`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hightick_store::{
    BatchWriter, MatchPlayer, MatchResult, Outcome, PurchaseRequest, Store, StoreOptions, Write,
    WriterConfig, password,
};
use hightick_telemetry::bench::{figure, measure};
use tokio::runtime::Runtime;

const PLAYERS: usize = 200;
const CONCURRENCY: usize = 16;
/// Buyers at once in the many-buyers case.
const MANY_BUYERS: usize = 256;

static SEQ: AtomicU64 = AtomicU64::new(0);

fn next() -> u64 {
    SEQ.fetch_add(1, Ordering::Relaxed)
}

fn per_second(ns_per_op: f64) -> f64 {
    1e9 / ns_per_op
}

fn a_match(ids: &[i64]) -> MatchResult {
    let n = next() as usize;
    let players = (0..10)
        .map(|i| MatchPlayer {
            account_id: ids[(n * 10 + i) % ids.len()],
            team: (i % 2) as i64,
            score: i as i64,
            outcome: if i % 2 == 0 {
                Outcome::Win
            } else {
                Outcome::Loss
            },
            reward: 10,
        })
        .collect();
    MatchResult {
        match_id: format!("bench-{}-{n}", std::process::id()),
        mode: "5v5".into(),
        players,
    }
}

fn a_purchase(account_id: i64) -> PurchaseRequest {
    PurchaseRequest {
        account_id,
        idempotency_key: format!("bench-{}", next()),
        item_id: "bench.item".into(),
        quantity: 1,
        unit_price: 1,
    }
}

fn bench_backend(rt: &Runtime, name: &str, store: Store) {
    let ids: Vec<i64> = rt.block_on(async {
        let mut ids = Vec::new();
        for i in 0..PLAYERS {
            let id = store
                .guest_account(&format!("bench-{name}-{i}"))
                .await
                .unwrap()
                .id;
            store
                .grant_currency(id, 1_000_000_000, "bench")
                .await
                .unwrap();
            ids.push(id);
        }
        ids
    });
    let ids = Arc::new(ids);
    let mut rows = Vec::new();
    let mut report = |op: &str, ops_per_s: f64| {
        figure(&format!("store_{name}_{op}"), ops_per_s, "ops/s");
        rows.push((op.to_owned(), ops_per_s));
    };

    let s = measure(
        || rt.block_on(store.purchase(&a_purchase(ids[0]))).unwrap(),
        50,
        5,
    );
    report("purchase_sequential", per_second(s.median_ns()));

    // Many buyers at once (the gateway's case): on SQLite they share group
    // commits on the one writer, on PostgreSQL they run side by side.
    for buyers in [CONCURRENCY, MANY_BUYERS] {
        let concurrent_purchases = || {
            rt.block_on(async {
                let tasks: Vec<_> = (0..buyers)
                    .map(|t| {
                        let (store, ids) = (store.clone(), ids.clone());
                        tokio::spawn(async move {
                            for _ in 0..4 {
                                store
                                    .purchase(&a_purchase(ids[t % ids.len()]))
                                    .await
                                    .unwrap();
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            })
        };
        let s = measure(concurrent_purchases, 3, 5);
        report(
            &format!("purchase_concurrent{buyers}"),
            per_second(s.median_ns() / (buyers * 4) as f64),
        );
    }

    let s = measure(
        || rt.block_on(store.record_match(&a_match(&ids))).unwrap(),
        20,
        5,
    );
    report("match_result_direct", per_second(s.median_ns()));

    let writer = rt.block_on(async {
        BatchWriter::spawn(
            store.clone(),
            WriterConfig {
                max_batch: 256,
                max_delay: Duration::from_millis(5),
                queue_capacity: 4096,
            },
        )
    });
    const BATCHED: usize = 256;
    let batched = || {
        rt.block_on(async {
            let tasks: Vec<_> = (0..BATCHED)
                .map(|_| {
                    let (sender, m) = (writer.sender(), a_match(&ids));
                    tokio::spawn(async move { sender.submit(Write::MatchResult(m)).await.unwrap() })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        })
    };
    let s = measure(batched, 2, 5);
    report(
        "match_result_batched",
        per_second(s.median_ns() / BATCHED as f64),
    );
    let stats = writer.stats();
    rt.block_on(writer.shutdown());

    let meta_read = || {
        rt.block_on(async {
            let id = ids[(next() as usize) % ids.len()];
            store.profile(id).await.unwrap();
            store.inventory(id).await.unwrap();
            store.balance(id).await.unwrap();
        })
    };
    let s = measure(meta_read, 100, 5);
    report(
        "meta_read_profile_inventory_balance",
        per_second(s.median_ns()),
    );

    let s = measure(|| rt.block_on(store.leaderboard(100)).unwrap(), 50, 5);
    report("leaderboard_top100", per_second(s.median_ns()));
    let s = measure(|| rt.block_on(store.rank(ids[3])).unwrap(), 50, 5);
    report("rank", per_second(s.median_ns()));

    println!(
        "\n{name}: writes per batch (mean) {:.1}",
        stats.committed as f64 / stats.batches.max(1) as f64
    );
    println!("{:<40} {:>12}", "operation", "ops/s");
    for (op, v) in rows {
        println!("{op:<40} {v:>12.0}");
    }
    rt.block_on(store.close());
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let dir = std::env::temp_dir().join(format!("hightick-store-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sqlite = rt.block_on(Store::open_in_data_dir(&dir)).unwrap();
    bench_backend(&rt, "sqlite", sqlite);
    let _ = std::fs::remove_dir_all(&dir);

    let url = std::env::var("HIGHTICK_BENCH_DATABASE_URL")
        .or_else(|_| std::env::var("HIGHTICK_TEST_DATABASE_URL"))
        .unwrap_or_default();
    if url.is_empty() {
        println!(
            "PostgreSQL skipped: set HIGHTICK_BENCH_DATABASE_URL or HIGHTICK_TEST_DATABASE_URL"
        );
    } else {
        let mut options = StoreOptions::new(url);
        options.postgres_schema = Some(format!("bench_{}", std::process::id()));
        options.max_connections = 16;
        let pg = rt.block_on(Store::open_with(&options)).unwrap();
        bench_backend(&rt, "postgres", pg);
    }

    let s = measure(
        || password::hash_password("correct horse battery staple").unwrap(),
        4,
        5,
    );
    figure(
        "argon2id_hashes_per_s_one_core",
        per_second(s.median_ns()),
        "hashes/s",
    );
    let phc = password::hash_password("correct horse battery staple").unwrap();
    let s = measure(
        || password::verify_password("correct horse battery staple", &phc).unwrap(),
        4,
        5,
    );
    figure(
        "argon2id_verifies_per_s_one_core",
        per_second(s.median_ns()),
        "verifies/s",
    );
    println!(
        "argon2id parameters: m={} KiB, t={}, p={}",
        password::MEMORY_KIB,
        password::ITERATIONS,
        password::PARALLELISM
    );
}
