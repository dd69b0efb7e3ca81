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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_logins_in_one_batch_create_accounts_once_and_sessions_each() {
    use hightick_store::GuestLogin;
    for (backend, store) in common::stores("guest_batch").await {
        let expiry = i64::MAX / 2;
        let login = |device: &str, token: &str| GuestLogin {
            device_id: device.into(),
            token_id: token.into(),
            expires_at_ms: expiry,
        };
        let known = store.guest_account("dev-known").await.unwrap();
        let batch = [
            login("dev-b", "t1"),
            login("dev-known", "t2"),
            login("dev-a", "t3"),
            login("dev-b", "t4"),
        ];
        let sessions = store.guest_logins(&batch).await.unwrap();
        assert_eq!(sessions.len(), 4, "{backend}");
        assert_eq!(sessions[1].account_id, known.id, "{backend}");
        assert_eq!(sessions[0].account_id, sessions[3].account_id, "{backend}");
        assert_ne!(sessions[0].account_id, sessions[2].account_id, "{backend}");
        for (s, l) in sessions.iter().zip(&batch) {
            assert_eq!(s.token_id, l.token_id);
            let stored = store.session(&l.token_id).await.unwrap();
            assert_eq!(stored.account_id, s.account_id, "{backend}");
            assert!(stored.is_valid_at(0));
        }
        let b = store.guest_account("dev-b").await.unwrap();
        assert_eq!(b.id, sessions[0].account_id, "{backend}");
        assert!(store.profile(b.id).await.is_ok(), "{backend}");
        // All or nothing: a reused token id fails the whole batch.
        let bad = [login("dev-c", "t5"), login("dev-d", "t1")];
        assert!(store.guest_logins(&bad).await.is_err(), "{backend}");
        assert!(store.session("t5").await.is_err(), "{backend}");
        // Bad input is refused before the database.
        let bad = [login("", "t6")];
        assert!(matches!(
            store.guest_logins(&bad).await,
            Err(hightick_store::StoreError::InvalidInput {
                field: "device_id",
                ..
            })
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_player_card_is_account_profile_and_stats_in_one_read() {
    for (backend, store) in common::stores("acct_card").await {
        let id = store.guest_account("card-device").await.unwrap().id;
        store.grant_currency(id, 40, "welcome").await.unwrap();
        store.set_display_name(id, "Carded").await.unwrap();
        store.add_progress(id, 7).await.unwrap();
        let card = store.player_card(id).await.unwrap();
        assert_eq!(card.account, store.account(id).await.unwrap(), "{backend}");
        assert_eq!(card.profile, store.profile(id).await.unwrap(), "{backend}");
        assert_eq!(
            card.stats,
            store.player_stats(id).await.unwrap(),
            "{backend}"
        );
        assert_eq!(card.account.balance, 40, "{backend}");
        assert_eq!(card.profile.xp, 7, "{backend}");
        assert!(
            matches!(
                store.player_card(id + 1000).await,
                Err(StoreError::NotFound { what: "account" })
            ),
            "{backend}"
        );
    }
}
