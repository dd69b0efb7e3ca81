//! The shared host registry, on every backend: a heartbeat replaces its
//! host's row, a silent host drops out of the reads and is forgotten, a
//! matchmaker pass's tally lands only on the heartbeat it read; and two stores
//! (two gateways' worth) on one PostgreSQL database see each other's hosts.

mod common;

use hightick_store::{HostBeat, HostTally, Store, StoreError};

fn beat(host_id: &str, port: u16, active: i64) -> HostBeat {
    HostBeat {
        host_id: host_id.to_owned(),
        admin: format!("127.0.0.1:{port}"),
        capacity: 4,
        active,
        draining: false,
        region: "eu".to_owned(),
        game: "arena".to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeat_replaces_its_hosts_row_and_resets_the_tally() {
    for (backend, store) in common::stores("registry_beat").await {
        store
            .host_heartbeat(&beat("h-1", 7001, 1), 1_000)
            .await
            .unwrap();
        store
            .host_heartbeat(&beat("h-2", 7002, 0), 1_000)
            .await
            .unwrap();
        let hosts = store.hosts_registered(0).await.unwrap();
        assert_eq!(hosts.len(), 2, "{backend}");
        assert_eq!(hosts[0].beat, beat("h-1", 7001, 1), "{backend}");
        assert_eq!((hosts[0].seen_ms, hosts[0].allocated), (1_000, 0));
        assert_eq!(hosts[0].full_until_ms, None, "{backend}");

        // A pass that read the heartbeat at 1000 adds its allocations and a
        // full mark; one that read an older heartbeat adds nothing.
        let tallies = [
            HostTally {
                host_id: "h-1".to_owned(),
                seen_ms: 1_000,
                allocated: 2,
                full_until_ms: Some(6_000),
            },
            HostTally {
                host_id: "h-2".to_owned(),
                seen_ms: 500,
                allocated: 3,
                full_until_ms: None,
            },
        ];
        assert_eq!(store.hosts_tally(&tallies).await.unwrap(), 1, "{backend}");
        store.hosts_tally(&tallies[..1]).await.unwrap();
        let hosts = store.hosts_registered(0).await.unwrap();
        assert_eq!(hosts[0].allocated, 4, "{backend}");
        assert_eq!(hosts[0].full_until_ms, Some(6_000), "{backend}");
        assert_eq!(hosts[1].allocated, 0, "{backend}");

        // The next heartbeat says what the host runs: the tally goes.
        let mut draining = beat("h-1", 7001, 3);
        draining.draining = true;
        store.host_heartbeat(&draining, 2_000).await.unwrap();
        let hosts = store.hosts_registered(0).await.unwrap();
        assert_eq!(hosts[0].beat, draining, "{backend}");
        assert_eq!((hosts[0].seen_ms, hosts[0].allocated), (2_000, 0));
        assert_eq!(hosts[0].full_until_ms, None, "{backend}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_host_drops_out_and_is_forgotten() {
    for (backend, store) in common::stores("registry_silent").await {
        store
            .host_heartbeat(&beat("old", 7001, 0), 1_000)
            .await
            .unwrap();
        store
            .host_heartbeat(&beat("new", 7002, 0), 9_000)
            .await
            .unwrap();
        let fresh = store.hosts_registered(5_000).await.unwrap();
        let ids: Vec<&str> = fresh.iter().map(|h| h.beat.host_id.as_str()).collect();
        assert_eq!(ids, ["new"], "{backend}");
        assert_eq!(store.hosts_registered(0).await.unwrap().len(), 2);
        assert_eq!(store.hosts_forget(5_000).await.unwrap(), 1, "{backend}");
        assert_eq!(store.hosts_registered(0).await.unwrap().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_back_under_a_new_id_on_its_address_replaces_the_old_entry() {
    for (backend, store) in common::stores("registry_restart").await {
        store
            .host_heartbeat(&beat("before", 7001, 2), 1_000)
            .await
            .unwrap();
        store
            .host_heartbeat(&beat("after", 7001, 0), 2_000)
            .await
            .unwrap();
        // The same id may move to another address.
        store
            .host_heartbeat(&beat("other", 7002, 0), 2_000)
            .await
            .unwrap();
        store
            .host_heartbeat(&beat("other", 7003, 0), 3_000)
            .await
            .unwrap();
        let hosts = store.hosts_registered(0).await.unwrap();
        let seen: Vec<(&str, &str)> = hosts
            .iter()
            .map(|h| (h.beat.host_id.as_str(), h.beat.admin.as_str()))
            .collect();
        assert_eq!(
            seen,
            [("after", "127.0.0.1:7001"), ("other", "127.0.0.1:7003")],
            "{backend}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_heartbeat_names_its_field() {
    for (backend, store) in common::stores("registry_bad").await {
        let mut b = beat("h", 7001, 0);
        b.active = -1;
        let err = store.host_heartbeat(&b, 1).await.unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::InvalidInput {
                    field: "active",
                    ..
                }
            ),
            "{backend}: {err}"
        );
        let err = store
            .host_heartbeat(&beat("", 7001, 0), 1)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::InvalidInput {
                    field: "host_id",
                    ..
                }
            ),
            "{backend}: {err}"
        );
        assert!(store.hosts_registered(0).await.unwrap().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_postgres_schema_share_the_registry() {
    let Some(options) = common::pg_options("registry_shared") else {
        return;
    };
    let a = Store::open_with(&options).await.unwrap();
    let b = Store::open_with(&options).await.unwrap();
    a.host_heartbeat(&beat("h-1", 7001, 1), 1_000)
        .await
        .unwrap();
    let seen = b.hosts_registered(0).await.unwrap();
    assert_eq!(seen.len(), 1);
    b.hosts_tally(&[HostTally {
        host_id: "h-1".to_owned(),
        seen_ms: 1_000,
        allocated: 1,
        full_until_ms: None,
    }])
    .await
    .unwrap();
    assert_eq!(a.hosts_registered(0).await.unwrap()[0].allocated, 1);
}
