//! Migrations: applied on open, a no-op when run again; the embedded default is a
//! file created on first run.

mod common;

use hightick_store::{BackendKind, SQLITE_FILE_NAME, Store, StoreError, StoreOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_run_twice_are_a_no_op() {
    for (backend, store) in common::stores("migrate_twice").await {
        let applied = store.applied_migrations().await.unwrap();
        assert!(applied >= 1, "{backend}");
        let p = store.guest_account("keep-me").await.unwrap();
        store.grant_currency(p.id, 9, "x").await.unwrap();
        store.migrate().await.unwrap();
        store.migrate().await.unwrap();
        assert_eq!(
            store.applied_migrations().await.unwrap(),
            applied,
            "{backend}"
        );
        assert_eq!(
            store.balance(p.id).await.unwrap(),
            9,
            "{backend}: data kept"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_dir_database_is_created_on_first_run_and_kept() {
    let dir = common::temp_dir("data_dir").join("nested").join("data");
    let store = Store::open_in_data_dir(&dir).await.unwrap();
    assert_eq!(store.backend(), BackendKind::Sqlite);
    assert!(dir.join(SQLITE_FILE_NAME).exists());
    let id = store.guest_account("persisted").await.unwrap().id;
    store.close().await;
    let reopened = Store::open_in_data_dir(&dir).await.unwrap();
    assert_eq!(reopened.guest_account("persisted").await.unwrap().id, id);
    // The same file through a URL.
    let url = format!("sqlite://{}", dir.join(SQLITE_FILE_NAME).display());
    reopened.close().await;
    let by_url = Store::open(&url).await.unwrap();
    assert_eq!(
        by_url.account(id).await.unwrap().device_id.as_deref(),
        Some("persisted")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_postgres_schema_opened_twice_migrates_once() {
    let Some(options) = common::pg_options("migrate_pg_reopen") else {
        return;
    };
    let first = Store::open_with(&options).await.unwrap();
    assert_eq!(first.backend(), BackendKind::Postgres);
    let id = first.guest_account("pg-keep").await.unwrap().id;
    let applied = first.applied_migrations().await.unwrap();
    let second = Store::open_with(&options).await.unwrap();
    assert_eq!(second.applied_migrations().await.unwrap(), applied);
    assert_eq!(second.guest_account("pg-keep").await.unwrap().id, id);
}

#[tokio::test]
async fn unsupported_urls_and_schemas_are_refused() {
    assert!(matches!(
        Store::open("mysql://x/y").await,
        Err(StoreError::UnsupportedUrl)
    ));
    assert!(matches!(
        Store::open("").await,
        Err(StoreError::UnsupportedUrl)
    ));
    let mut options = StoreOptions::new("postgres://u:p@127.0.0.1:1/db");
    options.postgres_schema = Some("x\"; DROP SCHEMA public; --".into());
    assert!(matches!(
        Store::open_with(&options).await,
        Err(StoreError::InvalidInput {
            field: "postgres_schema",
            ..
        })
    ));
}
