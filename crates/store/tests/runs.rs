//! The lab's run history: recorded runs read back whole, listings filter and keep
//! recording order, bad input is refused before the database, and the history shares
//! a database with the rest of the store.

mod common;

use hightick_store::{NewRun, RunFilter, RunHistory, Store, StoreError};

async fn histories(test: &str) -> Vec<(&'static str, RunHistory)> {
    let mut out = vec![(
        "sqlite-memory",
        RunHistory::open("sqlite::memory:").await.unwrap(),
    )];
    let dir = common::temp_dir(test);
    out.push((
        "sqlite-file",
        RunHistory::open_in_data_dir(&dir).await.unwrap(),
    ));
    if let Some(options) = common::pg_options(test) {
        out.push(("postgres", RunHistory::open_with(&options).await.unwrap()));
    }
    out
}

fn run(kind: &str, mode: &str, commit: Option<&str>, matches: i64) -> NewRun {
    NewRun {
        kind: kind.into(),
        mode: mode.into(),
        matches,
        git_commit: commit.map(Into::into),
        build_profile: "release".into(),
        host_json: r#"{"cores":2}"#.into(),
        config_json: r#"{"step_duration_s":20}"#.into(),
        summary_json: format!(r#"{{"matches":{matches},"quote":"it's \"fine\"; DROP TABLE x"}}"#),
        report_json: (kind == "sweep").then(|| r#"{"steps":[]}"#.into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_read_back_whole_and_listed_in_order() {
    for (backend, history) in histories("runs_round_trip").await {
        let a = run("demo", "5v5", Some("aaaa"), 4);
        let b = run("sweep", "5v5", Some("bbbb"), 8);
        let c = run("sweep", "plaza100", None, 1);
        let ia = history.record(&a).await.unwrap();
        let ib = history.record(&b).await.unwrap();
        let ic = history.record(&c).await.unwrap();
        assert!(ia < ib && ib < ic, "{backend}: ids increase");

        let got = history.run(ib).await.unwrap();
        assert_eq!(got.run, b, "{backend}");
        assert!(got.recorded_at_ms > 0);
        assert_eq!(history.run(ic).await.unwrap().git_commit, None);

        let all = history.runs(&RunFilter::default(), 100).await.unwrap();
        let ids: Vec<i64> = all.iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![ia, ib, ic], "{backend}: oldest first");

        let newest_two = history.runs(&RunFilter::default(), 2).await.unwrap();
        let ids: Vec<i64> = newest_two.iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![ib, ic], "{backend}: the newest, oldest first");

        let sweeps = RunFilter {
            kind: Some("sweep".into()),
            ..RunFilter::default()
        };
        assert_eq!(history.runs(&sweeps, 100).await.unwrap().len(), 2);
        let five = RunFilter {
            kind: Some("sweep".into()),
            mode: Some("5v5".into()),
            git_commit: None,
        };
        let found = history.runs(&five, 100).await.unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, ib);
        let by_commit = RunFilter {
            git_commit: Some("aaaa".into()),
            ..RunFilter::default()
        };
        assert_eq!(history.runs(&by_commit, 100).await.unwrap()[0].id, ia);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_runs_and_unknown_ids_are_errors() {
    for (backend, history) in histories("runs_bad").await {
        let mut bad = run("demo", "5v5", None, 1);
        bad.kind = String::new();
        assert!(
            matches!(
                history.record(&bad).await,
                Err(StoreError::InvalidInput { field: "kind", .. })
            ),
            "{backend}"
        );
        let mut bad = run("demo", "5v5", None, -1);
        bad.matches = -1;
        assert!(matches!(
            history.record(&bad).await,
            Err(StoreError::InvalidInput {
                field: "matches",
                ..
            })
        ));
        let mut bad = run("demo", "5v5", None, 1);
        bad.summary_json = String::new();
        assert!(matches!(
            history.record(&bad).await,
            Err(StoreError::InvalidInput {
                field: "summary_json",
                ..
            })
        ));
        let mut bad = run("demo", "5v5", None, 1);
        bad.git_commit = Some("x\u{7}".into());
        assert!(history.record(&bad).await.is_err());
        assert!(matches!(
            history.run(987_654).await,
            Err(StoreError::NotFound { what: "run" })
        ));
        assert!(history.runs(&RunFilter::default(), 0).await.is_err());
        assert!(
            history
                .runs(&RunFilter::default(), 100)
                .await
                .unwrap()
                .is_empty(),
            "{backend}: nothing was stored"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_shares_the_data_dir_database_with_the_store() {
    let dir = common::temp_dir("runs_shared");
    let store = Store::open_in_data_dir(&dir).await.unwrap();
    let player = store.guest_account("lab-neighbour").await.unwrap();
    let history = RunHistory::open_in_data_dir(&dir).await.unwrap();
    let id = history
        .record(&run("demo", "5v5", Some("cccc"), 2))
        .await
        .unwrap();
    history.close().await;
    // Reopened: the run is kept and the store's data untouched.
    let again = RunHistory::open_in_data_dir(&dir).await.unwrap();
    assert_eq!(again.run(id).await.unwrap().mode, "5v5");
    assert_eq!(
        store.account(player.id).await.unwrap().device_id.as_deref(),
        Some("lab-neighbour")
    );
    assert!(store.applied_migrations().await.unwrap() >= 2);
    assert!(matches!(
        RunHistory::open("mysql://x/y").await,
        Err(StoreError::UnsupportedUrl)
    ));
}
