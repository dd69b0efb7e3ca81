//! Accounts, profiles and sessions.

mod common;

use std::sync::Arc;

use hightick_store::{StoreError, password};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_login_is_get_or_create_even_when_raced() {
    for (backend, store) in common::stores("acct_guest").await {
        let store = Arc::new(store);
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { store.guest_account("same-device").await })
            })
            .collect();
        let mut ids = Vec::new();
        for t in tasks {
            ids.push(t.await.unwrap().unwrap().id);
        }
        ids.dedup();
        assert_eq!(ids.len(), 1, "{backend}: one account per device");
        let profile = store.profile(ids[0]).await.unwrap();
        assert_eq!(
            profile.display_name,
            format!("Guest{}", ids[0]),
            "{backend}"
        );
        assert_eq!(profile.xp, 0, "{backend}");
        assert_eq!(
            store.player_stats(ids[0]).await.unwrap().rating,
            1000.0,
            "{backend}"
        );
        assert_ne!(
            store.guest_account("other").await.unwrap().id,
            ids[0],
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_accounts_keep_the_hash_and_refuse_taken_names() {
    let phc = password::hash_password("hunter2hunter2").unwrap();
    for (backend, store) in common::stores("acct_named").await {
        let a = store.create_named_account("alice", &phc).await.unwrap();
        let found = store.account_by_name("alice").await.unwrap();
        assert_eq!(found.id, a.id, "{backend}");
        let stored = found.password_hash.unwrap();
        assert!(
            password::verify_password("hunter2hunter2", &stored).unwrap(),
            "{backend}"
        );
        assert!(
            !password::verify_password("hunter3", &stored).unwrap(),
            "{backend}"
        );
        assert!(
            matches!(
                store.create_named_account("alice", &phc).await,
                Err(StoreError::Conflict { .. })
            ),
            "{backend}"
        );
        assert!(
            matches!(
                store.account_by_name("bob").await,
                Err(StoreError::NotFound { .. })
            ),
            "{backend}"
        );
        assert_eq!(
            store.profile(a.id).await.unwrap().display_name,
            "alice",
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_expire_and_revoke() {
    for (backend, store) in common::stores("acct_sessions").await {
        let a = store.guest_account("sess").await.unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let s = store
            .create_session("tok-1", a.id, now + 60_000)
            .await
            .unwrap();
        store
            .create_session("tok-2", a.id, now + 60_000)
            .await
            .unwrap();
        assert!(s.is_valid_at(now), "{backend}");
        assert!(
            !s.is_valid_at(now + 60_000),
            "{backend}: expired at its expiry"
        );
        let read = store.session("tok-1").await.unwrap();
        assert_eq!(read, s, "{backend}");
        assert!(
            matches!(
                store.create_session("tok-1", a.id, now + 1000).await,
                Err(StoreError::Conflict { .. })
            ),
            "{backend}"
        );
        assert!(
            matches!(
                store.create_session("tok-3", a.id + 99, now + 1000).await,
                Err(StoreError::NotFound { .. })
            ),
            "{backend}"
        );
        store.revoke_session("tok-1").await.unwrap();
        assert!(
            !store.session("tok-1").await.unwrap().is_valid_at(now),
            "{backend}"
        );
        assert!(
            store.session("tok-2").await.unwrap().is_valid_at(now),
            "{backend}"
        );
        assert_eq!(
            store.revoke_sessions_of(a.id).await.unwrap(),
            1,
            "{backend}"
        );
        assert!(
            !store.session("tok-2").await.unwrap().is_valid_at(now),
            "{backend}"
        );
        assert!(
            matches!(
                store.revoke_session("nope").await,
                Err(StoreError::NotFound { .. })
            ),
            "{backend}"
        );
        assert!(
            matches!(
                store.session("nope").await,
                Err(StoreError::NotFound { .. })
            ),
            "{backend}"
        );
    }
}
