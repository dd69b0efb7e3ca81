//! End-to-end checks of the run report: HTML well-formed enough and self-contained,
//! JSON round trips for arbitrary summaries.

use hightick_lab::{
    BotRow, DropRow, HostFacts, NetworkRow, RunSummary, TargetStats, TickRow, TimelinePoint,
    games_per_core, render_html,
};
use proptest::prelude::*;

const SUBSYSTEMS: [&str; 10] = [
    "replication",
    "fow",
    "network",
    "animation",
    "gameplay",
    "movement",
    "equippable",
    "character",
    "physics",
    "other",
];

fn synthetic() -> RunSummary {
    let subsystems: Vec<TargetStats> = SUBSYSTEMS
        .iter()
        .enumerate()
        .map(|(i, name)| TargetStats {
            name: (*name).to_string(),
            mean_us: 1.0 + i as f64,
            p50_us: 0.9 + i as f64,
            p99_us: 3.0 + 2.0 * i as f64,
            max_us: 10.0 + 3.0 * i as f64,
            budget_mean_us: Some(8.0),
            budget_p99_us: if i == 0 { None } else { Some(15.0) },
            violations: if i > 6 { 12 } else { 0 },
        })
        .collect();
    let timeline = (0..30u32)
        .map(|t| TimelinePoint {
            t_s: f64::from(t),
            tick_mean_us: 40.0 + f64::from(t % 5),
            tick_p99_us: 90.0 + f64::from(t % 7) * 3.0,
            cpu_cores: 0.05 + f64::from(t % 3) * 0.01,
            // The checked-in fixture predates per-point match counts.
            matches: 0,
            players: (t as usize * 10).min(80),
            subsystem_mean_us: subsystems.iter().map(|s| s.mean_us).collect(),
        })
        .collect();
    RunSummary {
        title: "hightick demo <&> \"quoted\"".into(),
        mode: "5v5".into(),
        tick_rate_hz: 128,
        matches: 8,
        players_per_match: 10,
        duration_s: 25.0,
        warmup_s: 5.0,
        host: HostFacts {
            cores: 2,
            cpu_model: "Test CPU @ 3.0GHz".into(),
            os: "Linux 6.8".into(),
            git_commit: Some("0123abcd".into()),
        },
        tick: TickRow {
            ticks: 25_600,
            late_ticks: 2,
            mean_us: 42.0,
            p50_us: 40.0,
            p99_us: 101.0,
            max_us: 400.0,
            budget_p99_us: Some(250.0),
        },
        subsystems,
        network: NetworkRow {
            clients: 80,
            packets_in: 204_800,
            packets_out: 204_800,
            bytes_in: 12_000_000,
            bytes_out: 60_000_000,
            client_bytes_out_per_s: 30_000.0,
            client_packets_out_per_s: 128.0,
            client_bytes_in_per_s: 6_000.0,
            drops: vec![DropRow {
                reason: "bad_token".into(),
                count: 3,
            }],
            ..NetworkRow::default()
        },
        server_cpu_cores: 0.06,
        gpc: games_per_core(8, 0.06),
        within_budget: true,
        bots: BotRow {
            bots: 80,
            connected: 80,
            snapshots: 204_000,
            decode_errors: 0,
            desyncs: 0,
            events: vec![("kill".to_owned(), 321), ("round_end".to_owned(), 24)],
            snapshot_interval_p50_ms: 7.8,
            snapshot_interval_p99_ms: 9.1,
            cpu_cores: 0.0,
            with_avatar: 0,
        },
        timeline,
        // The checked-in fixture predates per-match figures, quality and
        // links: it must still read.
        match_tick_p99_us: Vec::new(),
        quality: None,
        link: None,
        samples: Vec::new(),
    }
}

#[test]
fn html_is_self_contained_with_charts_and_every_subsystem() {
    let run = synthetic();
    let html = render_html(&run).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("<svg").count(), 3, "three charts");
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    assert_eq!(
        html.matches("<table").count(),
        html.matches("</table>").count()
    );
    assert!(html.contains("<polyline"), "line charts draw lines");
    assert!(html.contains("stroke-dasharray") || html.matches("<line").count() > 0);
    for name in SUBSYSTEMS {
        // In the chart's axis labels and in the table.
        assert!(html.matches(name).count() >= 2, "{name} missing");
    }
    for external in [
        "http://", "https://", "src=", "href=", "<script", "@import", "url(",
    ] {
        assert!(!html.contains(external), "found {external}");
    }
    assert!(html.contains("hightick demo &lt;&amp;&gt; &quot;quoted&quot;"));
    assert!(!html.contains("<&>"));
    for line in run.figures() {
        assert!(html.contains(&line), "{line}");
    }
    assert!(html.contains("class=\"n over\""), "violations are marked");
}

#[test]
fn budget_line_is_dashed_in_frame_time_chart() {
    let html = render_html(&synthetic()).unwrap();
    let first_svg_end = html.find("</svg>").unwrap();
    let frame_chart = &html[..first_svg_end];
    assert!(frame_chart.contains("p99 budget"));
    let mut no_budget = synthetic();
    no_budget.tick.budget_p99_us = None;
    let html = render_html(&no_budget).unwrap();
    assert!(!html[..html.find("</svg>").unwrap()].contains("p99 budget"));
}

#[test]
fn json_round_trips_a_full_summary() {
    let run = synthetic();
    let json = run.to_json().unwrap();
    assert_eq!(RunSummary::from_json(&json).unwrap(), run);
    assert!(json.contains("\"client_bytes_out_per_s\""));
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), 0.0..1e9f64, -1e3..1e3f64]
}

prop_compose! {
    fn subsystem()(name in "[a-z_]{1,12}", mean in finite(), p99 in finite(),
                   budget in proptest::option::of(finite()), violations in any::<u64>())
                   -> TargetStats {
        TargetStats { name, mean_us: mean, p50_us: mean, p99_us: p99, max_us: p99,
                       budget_mean_us: budget, budget_p99_us: budget, violations }
    }
}

prop_compose! {
    fn summary()(title in ".{0,20}", mode in "[a-z0-9]{1,8}", rate in any::<u32>(),
                 matches in any::<u32>(), cpu in finite(), commit in proptest::option::of("[0-9a-f]{8}"),
                 ticks in any::<u64>(), p99 in finite(),
                 subsystems in proptest::collection::vec(subsystem(), 0..6),
                 drops in proptest::collection::vec(("[a-z_]{1,10}", any::<u64>()), 0..4),
                 points in proptest::collection::vec((prop_oneof![finite(), -1e15..1e15f64], finite(), any::<u32>()), 0..8))
                 -> RunSummary {
        let n = subsystems.len();
        RunSummary {
            title, mode, tick_rate_hz: rate, matches,
            host: HostFacts { cores: 2, cpu_model: "cpu".into(), os: "os".into(), git_commit: commit },
            tick: TickRow { ticks, p99_us: p99, budget_p99_us: Some(p99), ..Default::default() },
            subsystems,
            network: NetworkRow {
                drops: drops.into_iter().map(|(reason, count)| DropRow { reason, count }).collect(),
                ..Default::default()
            },
            server_cpu_cores: cpu,
            gpc: games_per_core(matches, cpu),
            timeline: points.into_iter().map(|(t, v, players)| TimelinePoint {
                t_s: t, tick_mean_us: v, tick_p99_us: v, cpu_cores: v, matches: 0,
                players: players as usize, subsystem_mean_us: vec![v; n],
            }).collect(),
            ..Default::default()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn json_round_trips(run in summary()) {
        let json = run.to_json().unwrap();
        prop_assert_eq!(RunSummary::from_json(&json).unwrap(), run);
    }

    #[test]
    fn html_renders_any_summary(run in summary()) {
        let html = render_html(&run).unwrap();
        prop_assert_eq!(html.matches("<svg").count(), 3);
        for s in &run.subsystems {
            prop_assert!(html.contains(&s.name));
        }
    }

    #[test]
    fn malformed_json_is_an_error_not_a_panic(text in ".{0,64}") {
        let _ = RunSummary::from_json(&text);
    }
}

#[test]
fn checked_in_summary_still_reads() {
    let text = include_str!("fixtures/summary.json");
    assert_eq!(RunSummary::from_json(text).unwrap(), synthetic());
}
