//! The history report's charts: one line per target (tick and subsystems) across
//! commits, for the mean or the p99.

use plotters::prelude::*;

use crate::chart::{PALETTE, failed, legend, line, svg_string, value_range_with_room};
use crate::compare::Stat;
use crate::error::LabError;
use crate::history_report::{CommitPoint, charted_targets};

/// Lines of `stat` per target across `points` (x: commits in recording order).
pub(crate) fn across_commits(points: &[CommitPoint], stat: Stat) -> Result<String, LabError> {
    const NAME: &str = "history across commits";
    svg_string(NAME, |root| {
        let names = charted_targets(points);
        let y = value_range_with_room(
            points
                .iter()
                .flat_map(|p| names.iter().filter_map(|n| p.value(n, stat))),
            1.5,
        );
        let n = points.len().max(1) as f64;
        let commits: Vec<String> = points.iter().map(|p| p.commit.clone()).collect();
        let label_of = move |x: &f64| {
            let k = x.round();
            if (x - k).abs() < 1e-6 && k >= 0.0 {
                commits.get(k as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..n - 0.5, y)
            .map_err(failed(NAME))?;
        chart
            .configure_mesh()
            .x_labels(points.len().clamp(2, 12))
            .x_label_formatter(&label_of)
            .x_desc("commit (oldest first)")
            .y_desc(format!("{stat} per match tick (us)"))
            .draw()
            .map_err(failed(NAME))?;
        for (i, name) in names.iter().enumerate() {
            let series = points
                .iter()
                .enumerate()
                .filter_map(|(k, p)| p.value(name, stat).map(|v| (k as f64, v)));
            let color = PALETTE[i % PALETTE.len()];
            line(&mut chart, NAME, series, color, name)?;
            chart
                .draw_series(
                    points
                        .iter()
                        .enumerate()
                        .filter_map(|(k, p)| p.value(name, stat).map(|v| (k as f64, v)))
                        .filter(|(_, v)| v.is_finite())
                        .map(|c| Circle::new(c, 3, color.filled())),
                )
                .map_err(failed(NAME))?;
        }
        legend(&mut chart, NAME, SeriesLabelPosition::UpperLeft)
    })
}
