//! `hightick lab history`: per-subsystem mean and p99 across recorded commits, as a
//! table and a self-contained HTML report with one chart per statistic.

use hightick_report::{
    Align, Cell, Color, Line, LineChart, Page, ReportError, Svg, Table, TextTable, XAxis,
};

use crate::compare::Stat;
use crate::error::LabError;
use crate::history::{RecordedRun, short_commit};

/// One commit's runs, averaged.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitPoint {
    /// Short commit, or `unknown`.
    pub commit: String,
    /// Runs averaged.
    pub runs: usize,
    /// Run ids.
    pub ids: Vec<i64>,
    /// `(target, mean us, p99 us)`: `tick` first, then subsystems in report order.
    pub targets: Vec<(String, f64, f64)>,
}

impl CommitPoint {
    /// The value of `target`'s statistic, if the commit has it.
    pub fn value(&self, target: &str, stat: Stat) -> Option<f64> {
        self.targets
            .iter()
            .find(|(t, _, _)| t == target)
            .map(|(_, mean, p99)| match stat {
                Stat::Mean => *mean,
                Stat::P99 => *p99,
            })
    }
}

/// The runs grouped by commit in the order each commit was first recorded; each
/// target's mean and p99 are averaged over the commit's runs.
pub fn commit_points(runs: &[RecordedRun]) -> Vec<CommitPoint> {
    let mut points: Vec<(CommitPoint, Vec<(f64, f64)>)> = Vec::new();
    for run in runs {
        let commit = short_commit(run.git_commit.as_deref());
        let s = &run.summary;
        let values: Vec<(String, f64, f64)> =
            std::iter::once(("tick".to_string(), s.tick.mean_us, s.tick.p99_us))
                .chain(
                    s.subsystems
                        .iter()
                        .map(|r| (r.name.clone(), r.mean_us, r.p99_us)),
                )
                .collect();
        let slot = match points.iter().position(|(p, _)| p.commit == commit) {
            Some(i) => i,
            None => {
                points.push((
                    CommitPoint {
                        commit,
                        runs: 0,
                        ids: Vec::new(),
                        targets: values
                            .iter()
                            .map(|(t, _, _)| (t.clone(), 0.0, 0.0))
                            .collect(),
                    },
                    vec![(0.0, 0.0); values.len()],
                ));
                points.len() - 1
            }
        };
        let (point, sums) = &mut points[slot];
        point.runs += 1;
        point.ids.push(run.id);
        for (target, mean, p99) in values {
            if let Some(k) = point.targets.iter().position(|(t, _, _)| *t == target) {
                sums[k].0 += mean;
                sums[k].1 += p99;
            }
        }
    }
    points
        .into_iter()
        .map(|(mut point, sums)| {
            let n = point.runs.max(1) as f64;
            for ((_, mean, p99), (sm, sp)) in point.targets.iter_mut().zip(sums) {
                *mean = sm / n;
                *p99 = sp / n;
            }
            point
        })
        .collect()
}

/// Targets worth charting: those above 0.05 us somewhere.
pub(crate) fn charted_targets(points: &[CommitPoint]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in points {
        for (t, mean, p99) in &p.targets {
            if (*mean > 0.05 || *p99 > 0.05) && !names.contains(t) {
                names.push(t.clone());
            }
        }
    }
    names
}

/// The history as a text table: one row per commit, mean (p99) per target.
pub fn render_history_table(points: &[CommitPoint]) -> String {
    let names = charted_targets(points);
    let mut columns: Vec<(&str, Align)> = vec![("commit", Align::Left), ("runs", Align::Right)];
    columns.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
    let mut t = TextTable::new(&columns);
    for p in points {
        let mut row = vec![p.commit.clone(), p.runs.to_string()];
        for name in &names {
            row.push(
                match (p.value(name, Stat::Mean), p.value(name, Stat::P99)) {
                    (Some(m), Some(q)) => format!("{m:.1} ({q:.1})"),
                    _ => "-".to_string(),
                },
            );
        }
        t.row(row);
    }
    let mut out = String::from("mean us (p99 us) per commit, oldest first\n");
    out.push_str(&t.render());
    out
}

/// The history as one HTML document: per-target mean and p99 charts across commits
/// and the table.
pub fn render_history_html(title: &str, points: &[CommitPoint]) -> Result<String, LabError> {
    let mut page = Page::new(title);
    page.paragraph(&format!(
        "{} commits, {} runs. Values are averages over each commit's runs.",
        points.len(),
        points.iter().map(|p| p.runs).sum::<usize>(),
    ));
    page.section("Mean time per match tick across commits")
        .chart(&across_commits(points, Stat::Mean)?);
    page.section("p99 time per match tick across commits")
        .chart(&across_commits(points, Stat::P99)?);
    let names = charted_targets(points);
    let headers = ["commit", "runs", "run ids"]
        .into_iter()
        .chain(names.iter().map(String::as_str));
    let rows = points.iter().map(|p| {
        let ids: Vec<String> = p.ids.iter().map(|i| format!("#{i}")).collect();
        let mut row = vec![
            Cell::text(p.commit.clone()),
            Cell::num(p.runs as f64, 0),
            Cell::text(ids.join(" ")),
        ];
        for name in &names {
            row.push(Cell::numeric(
                match (p.value(name, Stat::Mean), p.value(name, Stat::P99)) {
                    (Some(m), Some(q)) => format!("{m:.1} / {q:.1}"),
                    _ => "-".to_string(),
                },
            ));
        }
        row
    });
    page.section("Per commit (mean / p99 us)")
        .table(&Table::new(headers).rows(rows));
    Ok(page.finish())
}

/// Lines of `stat` per target across `points` (x: commits in recording order), a dot
/// on each commit.
fn across_commits(points: &[CommitPoint], stat: Stat) -> Result<Svg, ReportError> {
    let commits = points.iter().map(|p| p.commit.clone()).collect();
    let mut chart = LineChart::new(
        "history across commits",
        "commit (oldest first)",
        format!("{stat} per match tick (us)"),
    )
    .x_axis(XAxis::Categories(commits));
    for (i, name) in charted_targets(points).iter().enumerate() {
        let series = points
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p.value(name, stat).map(|v| (k as f64, v)));
        chart = chart.line(Line::new(name.as_str(), Color::nth(i), series).with_dots(3));
    }
    chart.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{RunSummary, TargetStats, TickRow};

    fn recorded(id: i64, commit: Option<&str>, fow: f64) -> RecordedRun {
        RecordedRun {
            id,
            recorded_at_ms: id,
            kind: "demo".into(),
            git_commit: commit.map(Into::into),
            build_profile: "release".into(),
            summary: RunSummary {
                tick: TickRow {
                    mean_us: fow * 2.0,
                    p99_us: fow * 4.0,
                    ..TickRow::default()
                },
                subsystems: vec![
                    TargetStats {
                        name: "fow".into(),
                        mean_us: fow,
                        p99_us: fow * 3.0,
                        ..TargetStats::default()
                    },
                    TargetStats {
                        name: "physics".into(),
                        ..TargetStats::default()
                    },
                ],
                ..RunSummary::default()
            },
            sweep: None,
        }
    }

    #[test]
    fn runs_average_per_commit_in_recording_order() {
        let runs = [
            recorded(1, Some("bbbbbbbbbbbbbbbb"), 10.0),
            recorded(2, Some("aaaa"), 20.0),
            recorded(3, Some("bbbbbbbbbbbbbbbb"), 12.0),
            recorded(4, None, 5.0),
        ];
        let points = commit_points(&runs);
        let commits: Vec<&str> = points.iter().map(|p| p.commit.as_str()).collect();
        assert_eq!(commits, vec!["bbbbbbbbbbbb", "aaaa", "unknown"]);
        assert_eq!(points[0].runs, 2);
        assert_eq!(points[0].ids, vec![1, 3]);
        assert_eq!(points[0].value("fow", Stat::Mean), Some(11.0));
        assert_eq!(points[0].value("fow", Stat::P99), Some(33.0));
        assert_eq!(points[0].value("tick", Stat::Mean), Some(22.0));
        assert_eq!(points[1].value("fow", Stat::Mean), Some(20.0));
        assert_eq!(
            charted_targets(&points),
            vec!["tick", "fow"],
            "physics is all zero"
        );
        let text = render_history_table(&points);
        assert!(text.contains("11.0 (33.0)"), "{text}");
        let html = render_history_html("history", &points).unwrap();
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("#1 #3"));
    }

    #[test]
    fn an_empty_history_still_renders() {
        let html = render_history_html("history", &[]).unwrap();
        assert!(html.contains("0 commits, 0 runs"));
    }
}
