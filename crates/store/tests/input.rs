//! Caller input: SQL-looking strings are plain data; malformed values name their field.

mod common;

use hightick_store::{MatchPlayer, MatchResult, Outcome, PurchaseRequest, StoreError};

const NASTY: &[&str] = &[
    "'; DROP TABLE accounts; --",
    "Robert'); DELETE FROM ledger WHERE ('1'='1",
    "\" OR \"\"=\"",
    "1 OR 1=1",
    "$1",
    "?1",
    "%s%s%n",
    "' UNION SELECT password_hash FROM accounts --",
    "名前 🎮 \\x00",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_looking_strings_round_trip_as_data() {
    for (backend, store) in common::stores("input_sql").await {
        for (i, s) in NASTY.iter().enumerate() {
            let guest = store.guest_account(s).await.unwrap();
            assert_eq!(guest.device_id.as_deref(), Some(*s), "{backend}");
            assert_eq!(
                store.guest_account(s).await.unwrap().id,
                guest.id,
                "{backend}"
            );
            let named = store.create_named_account(s, s).await.unwrap();
            assert_eq!(
                store
                    .account_by_name(s)
                    .await
                    .unwrap()
                    .password_hash
                    .as_deref(),
                Some(*s)
            );
            let profile = store.set_display_name(guest.id, s).await.unwrap();
            assert_eq!(profile.display_name, *s, "{backend}");
            store.grant_currency(guest.id, 10, s).await.unwrap();
            let receipt = store
                .purchase(&PurchaseRequest {
                    account_id: guest.id,
                    idempotency_key: (*s).into(),
                    item_id: (*s).into(),
                    quantity: 1,
                    unit_price: 4,
                })
                .await
                .unwrap();
            assert_eq!(receipt.item_id, *s, "{backend}");
            assert_eq!(
                store.inventory(guest.id).await.unwrap()[0].item_id,
                *s,
                "{backend}"
            );
            let token = format!("{s}-{i}");
            store
                .create_session(&token, named.id, i64::MAX)
                .await
                .unwrap();
            assert_eq!(
                store.session(&token).await.unwrap().account_id,
                named.id,
                "{backend}"
            );
            let m = MatchResult {
                match_id: (*s).into(),
                mode: (*s).into(),
                players: vec![MatchPlayer {
                    account_id: guest.id,
                    team: 0,
                    score: 1,
                    outcome: Outcome::Draw,
                    reward: 0,
                }],
            };
            store.record_match(&m).await.unwrap();
            let history = store.match_history(guest.id, 10).await.unwrap();
            assert_eq!(history[0].match_id, *s, "{backend}");
            assert_eq!(history[0].mode, *s, "{backend}");
            assert_eq!(
                store
                    .ledger(guest.id, 10)
                    .await
                    .unwrap()
                    .last()
                    .unwrap()
                    .reference,
                *s
            );
        }
        // Every table is still there and holds what was written.
        assert_eq!(
            store.leaderboard(1000).await.unwrap().len(),
            NASTY.len(),
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_values_name_their_field() {
    for (backend, store) in common::stores("input_bad").await {
        let long = "x".repeat(200);
        let field = |r: Result<_, StoreError>| match r {
            Err(StoreError::InvalidInput { field, .. }) => field,
            other => panic!("{backend}: expected InvalidInput, got {other:?}"),
        };
        assert_eq!(
            field(store.guest_account("").await.map(|_| ())),
            "device_id"
        );
        assert_eq!(
            field(store.guest_account(&long).await.map(|_| ())),
            "device_id"
        );
        assert_eq!(
            field(store.guest_account("a\0b").await.map(|_| ())),
            "device_id"
        );
        assert_eq!(
            field(store.create_named_account("", "h").await.map(|_| ())),
            "name"
        );
        assert_eq!(
            field(store.create_named_account("n", "").await.map(|_| ())),
            "password_hash"
        );
        let p = store.guest_account("ok").await.unwrap();
        assert_eq!(
            field(store.set_display_name(p.id, &long).await.map(|_| ())),
            "display_name"
        );
        assert_eq!(field(store.ledger(p.id, -1).await.map(|_| ())), "limit");
        assert_eq!(
            field(store.match_history(p.id, 100_000).await.map(|_| ())),
            "limit"
        );
        assert_eq!(
            field(store.create_session("t", p.id, 0).await.map(|_| ())),
            "expires_at_ms"
        );
        assert_eq!(field(store.add_progress(p.id, 0).await.map(|_| ())), "xp");
        let empty = MatchResult {
            match_id: "m".into(),
            mode: "x".into(),
            players: vec![],
        };
        assert_eq!(
            field(store.record_match(&empty).await.map(|_| ())),
            "players"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any text either comes back byte-for-byte or is refused naming its field;
    /// it never reaches the database as SQL and never panics.
    #[test]
    fn any_text_round_trips_or_is_refused(text in "\\PC{0,40}|[\\x00-\\x7f]{0,200}") {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let store = hightick_store::Store::open("sqlite::memory:").await.unwrap();
            match store.guest_account(&text).await {
                Ok(account) => {
                    assert_eq!(account.device_id.as_deref(), Some(text.as_str()));
                    assert_eq!(store.guest_account(&text).await.unwrap().id, account.id);
                    match store.set_display_name(account.id, &text).await {
                        Ok(p) => assert_eq!(p.display_name, text),
                        Err(StoreError::InvalidInput { field, .. }) => assert_eq!(field, "display_name"),
                        Err(e) => panic!("{e}"),
                    }
                }
                Err(StoreError::InvalidInput { field, .. }) => assert_eq!(field, "device_id"),
                Err(e) => panic!("{e}"),
            }
        });
    }
}
