//! A SQLite store killed with SIGKILL while purchases are in flight loses no
//! purchase it acknowledged and leaves its books balanced: the writer answers a
//! write only after the group transaction holding it has committed.
//!
//! The buyers run in a child process: this test binary re-executes itself to run
//! `child_buyers`, which buys until it is killed and prints each acknowledged
//! purchase. (A process kill, not a power cut: the commit's fsync is what the
//! latter would test, and `synchronous=FULL` is set for it.)

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hightick_store::{PurchaseRequest, Store};

const CHILD_ENV: &str = "HIGHTICK_TEST_CHILD_STORE_DIR";
const DEVICE: &str = "crash-buyer";
const BUYERS: usize = 8;
/// Acknowledged purchases to see before the kill.
const KILL_AFTER: usize = 300;
const GRANT: i64 = 1_000_000;

fn buy(account_id: i64, key: &str) -> PurchaseRequest {
    PurchaseRequest {
        account_id,
        idempotency_key: key.into(),
        item_id: "crate".into(),
        quantity: 1,
        unit_price: 3,
    }
}

/// Runs only inside the child process: buyers on the store in the directory the
/// parent names, each printing `ACK <key> <balance_after>` per acknowledged
/// purchase, until killed (or, should the parent vanish, for at most a minute).
#[test]
fn child_buyers() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open_in_data_dir(Path::new(&dir)).await.unwrap();
        let account = store.guest_account(DEVICE).await.unwrap().id;
        let stop = Instant::now() + Duration::from_secs(60);
        let buyers: Vec<_> = (0..BUYERS)
            .map(|b| {
                let store = store.clone();
                tokio::spawn(async move {
                    for i in 0.. {
                        if Instant::now() > stop {
                            break;
                        }
                        let key = format!("k-{b}-{i}");
                        let receipt = store.purchase(&buy(account, &key)).await.unwrap();
                        // One line per write: println! takes the stdout lock.
                        println!("ACK {key} {}", receipt.balance_after);
                    }
                })
            })
            .collect();
        for b in buyers {
            b.await.unwrap();
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_purchases_survive_a_sigkill() {
    let dir = common::temp_dir("store_crash");
    let store = Store::open_in_data_dir(&dir).await.unwrap();
    let account = store.guest_account(DEVICE).await.unwrap().id;
    store
        .grant_currency(account, GRANT, "welcome")
        .await
        .unwrap();
    store.close().await;

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_buyers", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acked: Vec<(String, i64)> = Vec::with_capacity(KILL_AFTER);
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines {
        let line = line.unwrap();
        // The harness may print "test child_buyers ... " before the first line.
        let Some((_, ack)) = line.split_once("ACK ") else {
            continue;
        };
        let (key, balance) = ack.split_once(' ').unwrap();
        acked.push((key.to_owned(), balance.trim().parse().unwrap()));
        if acked.len() >= KILL_AFTER {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL, with purchases still in flight
    child.wait().unwrap();
    assert_eq!(acked.len(), KILL_AFTER, "the child stopped early");

    let store = Store::open_in_data_dir(&dir).await.unwrap();
    for (key, balance_after) in &acked {
        let again = store.purchase(&buy(account, key)).await.unwrap();
        assert!(again.replayed, "{key} was acknowledged but is not stored");
        assert_eq!(again.balance_after, *balance_after, "{key}");
    }
    let audit = store.audit().await.unwrap();
    assert!(audit.balanced(), "{audit:?}");
    let spent = -audit.ledger_by_reason.get("purchase").copied().unwrap_or(0);
    assert!(
        spent >= 3 * KILL_AFTER as i64,
        "every acknowledged purchase is charged: {audit:?}"
    );
    assert_eq!(store.balance(account).await.unwrap(), GRANT - spent);
}
