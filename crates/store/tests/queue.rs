//! The shared matchmaking queue and parties, on every backend; and two stores
//! (two gateways' worth) on one PostgreSQL database claiming disjoint tickets.

mod common;

use hightick_store::{NewMatch, NewTicket, QueueTicket, Seat, Store, StoreError, TicketState};

fn solo(ticket: &str, account: i64, rating: i64) -> NewTicket {
    NewTicket {
        ticket: ticket.to_owned(),
        mode: "duel".to_owned(),
        members: vec![account],
        rating,
        region: String::new(),
    }
}

fn one_match(id: &str, claimed: &[QueueTicket]) -> NewMatch {
    NewMatch {
        match_id: id.to_owned(),
        mode: "duel".to_owned(),
        address: "127.0.0.1:7777".to_owned(),
        region: "eu".to_owned(),
        seats: claimed
            .iter()
            .enumerate()
            .flat_map(|(team, t)| {
                t.members.iter().map(move |&a| Seat {
                    account_id: a,
                    team: team as i64,
                })
            })
            .collect(),
        tickets: claimed
            .iter()
            .enumerate()
            .map(|(team, t)| (t.ticket.clone(), team as i64))
            .collect(),
    }
}

async fn queue_round_trip(label: &str, store: &Store) {
    assert_eq!(
        store.queue_join(&solo("t1", 1, 1000)).await.unwrap(),
        ("t1".to_owned(), true),
        "{label}"
    );
    // Joining again hands back the live ticket.
    assert_eq!(
        store.queue_join(&solo("t1b", 1, 1000)).await.unwrap(),
        ("t1".to_owned(), false)
    );
    store.queue_join(&solo("t2", 2, 1100)).await.unwrap();
    store.queue_join(&solo("t3", 3, 1200)).await.unwrap();
    // A party with a queued member is refused.
    let party = NewTicket {
        members: vec![4, 3],
        ..solo("p", 4, 1000)
    };
    assert!(matches!(
        store.queue_join(&party).await,
        Err(StoreError::Conflict { .. })
    ));
    // Cancel: only the owner, only while queued.
    assert_eq!(store.queue_cancel(2, "t3").await.unwrap(), None);
    assert_eq!(store.queue_cancel(3, "t3").await.unwrap(), Some(vec![3]));
    let waiting = store.queue_waiting().await.unwrap();
    assert_eq!(
        waiting
            .iter()
            .map(|t| t.ticket.as_str())
            .collect::<Vec<_>>(),
        ["t1", "t2"]
    );

    let claimed = store.queue_claim("duel", 10, 0, "pass").await.unwrap();
    assert_eq!(claimed.len(), 2, "{label}");
    assert!(claimed.iter().all(|t| t.state == TicketState::Forming));
    // A second pass finds nothing to claim.
    assert!(
        store
            .queue_claim("duel", 10, 0, "pass")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store.queue_cancel(1, "t1").await,
        Err(StoreError::Conflict { .. })
    ));
    store
        .queue_record(&[one_match("m1", &claimed)])
        .await
        .unwrap();
    let t2 = store.queue_ticket("t2").await.unwrap().unwrap();
    assert_eq!(t2.state, TicketState::Matched);
    assert_eq!((t2.match_id.as_deref(), t2.team), (Some("m1"), Some(1)));
    assert_eq!(
        store.queue_ticket_of(1).await.unwrap().unwrap().ticket,
        "t1"
    );
    assert_eq!(store.queue_matched_since(0).await.unwrap().len(), 2);
    let m = store.live_match("m1").await.unwrap().unwrap();
    assert_eq!(m.seats.len(), 2);
    assert_eq!(m.over_ms, None);
    assert!(store.match_over("m1").await.unwrap());
    assert!(!store.match_over("m1").await.unwrap());
    assert!(
        store
            .live_match("m1")
            .await
            .unwrap()
            .unwrap()
            .over_ms
            .is_some()
    );
    // A matched player may queue again with a new ticket.
    assert_eq!(
        store.queue_join(&solo("t4", 1, 1000)).await.unwrap(),
        ("t4".to_owned(), true)
    );
    // A claim that formed nothing goes back, and a stale claim is waiting again.
    let claimed = store.queue_claim("duel", 10, 0, "pass").await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(store.queue_release("pass").await.unwrap(), 1);
    assert_eq!(
        store
            .queue_claim("duel", 10, 0, "pass")
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .queue_claim("duel", 10, i64::MAX, "pass2")
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(store.queue_sweep(i64::MAX, i64::MAX).await.unwrap() >= 3);
    assert_eq!(store.queue_ticket("t2").await.unwrap(), None);
}

async fn parties(label: &str, store: &Store) {
    let p = store.party_create(10, "party-a", "ABC123").await.unwrap();
    assert_eq!((p.leader, p.members.clone()), (10, vec![10]), "{label}");
    assert!(matches!(
        store.party_create(10, "party-b", "XYZ").await,
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        store.party_create(11, "party-c", "ABC123").await,
        Err(StoreError::Conflict { .. })
    ));
    store.party_join(11, "ABC123", 3).await.unwrap();
    let p = store.party_join(12, "ABC123", 3).await.unwrap();
    assert_eq!(p.members, [10, 11, 12]);
    // Joining twice is a no-op; a fourth member finds it full.
    assert_eq!(
        store
            .party_join(12, "ABC123", 3)
            .await
            .unwrap()
            .members
            .len(),
        3
    );
    assert!(matches!(
        store.party_join(13, "ABC123", 3).await,
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        store.party_join(13, "NOPE", 3).await,
        Err(StoreError::NotFound { .. })
    ));
    // The leader leaves: the next member leads; the last one out ends it.
    assert!(store.party_leave(10).await.unwrap());
    let p = store.party(11).await.unwrap().unwrap();
    assert_eq!((p.leader, p.members), (11, vec![11, 12]));
    assert!(store.party_leave(11).await.unwrap());
    assert!(store.party_leave(12).await.unwrap());
    assert!(!store.party_leave(12).await.unwrap());
    assert_eq!(store.party(12).await.unwrap(), None);
    // Its code is free again.
    store.party_create(13, "party-d", "ABC123").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_and_parties_on_every_backend() {
    for (label, store) in common::stores("queue").await {
        queue_round_trip(label, &store).await;
        parties(label, &store).await;
    }
}

/// Two stores on one PostgreSQL schema (two gateways) claim at once: every
/// ticket is claimed exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_postgres_claim_disjoint_tickets() {
    let Some(options) = common::pg_options_or_fail_in_ci("queue_two") else {
        return;
    };
    let a = Store::open_with(&options).await.unwrap();
    let b = Store::open_with(&options).await.unwrap();
    for i in 0..400 {
        let store = if i % 2 == 0 { &a } else { &b };
        store
            .queue_join(&solo(&format!("t{i}"), i, 1000))
            .await
            .unwrap();
    }
    let claim = |s: Store| {
        tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let batch = s.queue_claim("duel", 16, 0, "pass").await.unwrap();
                if batch.is_empty() {
                    return got;
                }
                got.extend(batch.into_iter().map(|t| t.ticket));
            }
        })
    };
    let (x, y) = (claim(a.clone()), claim(b.clone()));
    let (mut x, y) = (x.await.unwrap(), y.await.unwrap());
    x.extend(y);
    let n = x.len();
    x.sort();
    x.dedup();
    assert_eq!((n, x.len()), (400, 400));
}
