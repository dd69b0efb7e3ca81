//! `hightick store backup` copies the embedded database while a store (the
//! gateway's) has it open and writes; `hightick store restore` puts the copy in
//! place and refuses to go over a database in use. The backup's consistency
//! under write load is tested in crates/store/tests/backup.rs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use hightick_store::Store;

fn hightick(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args(args)
        .output()
        .expect("the hightick binary runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_of_a_live_store_restores_as_a_data_dir() {
    tokio::time::timeout(Duration::from_secs(120), async {
        let root = temp("store");
        let live = root.join("live");
        let store = Store::open_in_data_dir(&live).await.unwrap();
        let mut ids = Vec::new();
        for i in 0..5 {
            let id = store.guest_account(&format!("dev-{i}")).await.unwrap().id;
            store.grant_currency(id, 10 + i, "welcome").await.unwrap();
            ids.push(id);
        }
        // The store stays open and writing, as a gateway's would.
        let writing = {
            let store = store.clone();
            let id = ids[0];
            tokio::spawn(async move {
                for n in 0..200 {
                    store
                        .grant_currency(id, 1, &format!("tick-{n}"))
                        .await
                        .unwrap();
                }
            })
        };
        let file = root.join("backup.db");
        let args = [
            "store",
            "backup",
            "--data-dir",
            path(&live),
            "--to",
            path(&file),
        ];
        let out = tokio::task::spawn_blocking({
            let args = args.map(str::to_owned);
            move || {
                Command::new(env!("CARGO_BIN_EXE_hightick"))
                    .args(&args)
                    .output()
            }
        })
        .await
        .unwrap()
        .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("backed up"), "{}", text(&out));
        // Never over a file.
        let again = hightick(&args);
        assert_eq!(again.status.code(), Some(1));
        assert!(text(&again).contains("already exists"), "{}", text(&again));

        // Not over the live database, with or without --replace.
        let over = hightick(&[
            "store",
            "restore",
            "--from",
            path(&file),
            "--data-dir",
            path(&live),
        ]);
        assert!(text(&over).contains("already exists"), "{}", text(&over));
        let replace = [
            "store",
            "restore",
            "--from",
            path(&file),
            "--data-dir",
            path(&live),
            "--replace",
        ];
        let busy = hightick(&replace);
        assert!(text(&busy).contains("stop the gateway"), "{}", text(&busy));
        writing.await.unwrap();

        let fresh = root.join("restored");
        let out = hightick(&[
            "store",
            "restore",
            "--from",
            path(&file),
            "--data-dir",
            path(&fresh),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        let restored = Store::open_in_data_dir(&fresh).await.unwrap();
        let audit = restored.audit().await.unwrap();
        assert!(audit.balanced(), "{audit:?}");
        assert_eq!(audit.accounts, 5);
        for (i, &id) in ids.iter().enumerate().skip(1) {
            assert_eq!(restored.balance(id).await.unwrap(), 10 + i as i64);
        }
        let first = restored.balance(ids[0]).await.unwrap();
        assert!((10..=210).contains(&first), "{first}");
        restored.close().await;

        // With the store closed (the gateway stopped), --replace goes over it.
        store.close().await;
        let out = hightick(&replace);
        assert!(out.status.success(), "{}", text(&out));
        let back = Store::open_in_data_dir(&live).await.unwrap();
        assert_eq!(back.balance(ids[0]).await.unwrap(), first);
        back.close().await;
        let _ = std::fs::remove_dir_all(&root);
    })
    .await
    .expect("the test ends in time");
}

#[test]
fn postgres_is_sent_to_pg_dump() {
    let to = temp("pg").join("x.db");
    let out = hightick(&[
        "store",
        "backup",
        "--database-url",
        "postgres://u:p@127.0.0.1:1/db",
        "--to",
        path(&to),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("pg_dump --format=custom"),
        "{}",
        text(&out)
    );
    let out = hightick(&[
        "store",
        "backup",
        "--data-dir",
        path(&temp("none")),
        "--to",
        path(&to),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("no database there"), "{}", text(&out));
}
