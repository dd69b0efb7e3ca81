//! The Grafana dashboards in deploy/grafana name only metrics we export:
//! every metric name in every panel's PromQL is a series of a family found
//! in the real `/metrics` bodies of `hightick serve`, `hightick gateway` and
//! `hightick swarm run --metrics`, running on loopback. (The Prometheus test
//! also has a real Prometheus parse every expression.)

mod support;

use std::time::Duration;

use support::{Running, dashboard_expressions, metric_names_in, series_names, temp_dir};

#[test]
fn the_promql_reader_finds_metric_names_only() {
    let names = |e: &str| metric_names_in(e);
    assert_eq!(
        names(
            r#"histogram_quantile(0.99, sum by (le, mode) (rate(hightick_tick_duration_seconds_bucket{job="a b",x=~"{y}"}[$__rate_interval])))"#
        ),
        ["hightick_tick_duration_seconds_bucket"]
    );
    assert_eq!(
        names("sum(a_total) / ignoring(x) group_left sum(rate(b_seconds_sum[1m])) or vector(0)"),
        ["a_total", "b_seconds_sum"]
    );
    assert_eq!(
        names("count(hightick_draining == 1) offset 5m"),
        ["hightick_draining"]
    );
    assert!(names("vector(1.5e3)").is_empty());
}

#[test]
fn every_dashboard_expression_names_exported_metrics() {
    let dir = temp_dir("dashboards");
    let running = Running::start(&dir, Duration::from_secs(60));
    let exported = series_names(&running.bodies());
    let exprs = dashboard_expressions();
    let mut unknown = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for (file, expr) in &exprs {
        let names = metric_names_in(expr);
        assert!(!names.is_empty(), "{file}: `{expr}` names no metric");
        for name in names {
            if exported.contains_key(&name) {
                used.insert(name);
            } else {
                unknown.push(format!("{file}: `{name}` in `{expr}`"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "dashboards name metrics no process exports:\n{}\nexported: {:?}",
        unknown.join("\n"),
        exported.keys().collect::<Vec<_>>()
    );
    // Each of the three dashboards reads its own process.
    for job in ["hightick-server", "hightick-gateway", "hightick-swarm"] {
        assert!(
            used.iter().any(|n| exported[n] == job),
            "no dashboard reads anything {job} exports"
        );
    }
}
