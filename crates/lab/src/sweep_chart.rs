//! The sweep report's charts: p99 (and mean) match-tick time against matches with the
//! budget, and per-subsystem mean time stacked per step.

use plotters::prelude::*;

use crate::chart::{
    BUDGET_COLOR, MEAN_COLOR, OVER_COLOR, P99_COLOR, PALETTE, box_key, category_labels, failed,
    legend, line, line_key, svg_string, value_range, value_range_with_room,
};
use crate::error::LabError;
use crate::summary::TargetStats;
use crate::sweep::{SweepReport, matches_text};

const PASS_COLOR: RGBColor = RGBColor(44, 160, 44);

/// Match-tick p99 and mean against the number of matches; each step's point green when
/// it passed (budget and CPU headroom), red when not; the p99 budget dashed.
pub(crate) fn tick_vs_matches(report: &SweepReport) -> Result<String, LabError> {
    const NAME: &str = "p99 tick time against matches";
    svg_string(NAME, |root| {
        let steps = &report.steps;
        let top = steps
            .iter()
            .map(|s| f64::from(s.matches))
            .fold(1.0, f64::max);
        let budget = steps.iter().find_map(|s| s.summary.tick.budget_p99_us);
        let y = value_range(
            steps
                .iter()
                .flat_map(|s| [s.summary.tick.p99_us, s.summary.tick.mean_us])
                .chain(budget),
        );
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..top * 1.08, y)
            .map_err(failed(NAME))?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() < 1e-6 {
                    format!("{x:.0}")
                } else {
                    String::new()
                }
            })
            .x_desc("matches at once")
            .y_desc("match tick (us)")
            .draw()
            .map_err(failed(NAME))?;
        let p99 = steps
            .iter()
            .map(|s| (f64::from(s.matches), s.summary.tick.p99_us));
        line(&mut chart, NAME, p99, P99_COLOR, "p99")?;
        let mean = steps
            .iter()
            .map(|s| (f64::from(s.matches), s.summary.tick.mean_us));
        line(&mut chart, NAME, mean, MEAN_COLOR, "mean")?;
        chart
            .draw_series(
                steps
                    .iter()
                    .filter(|s| s.summary.tick.p99_us.is_finite())
                    .map(|s| {
                        let color = if s.passed() { PASS_COLOR } else { OVER_COLOR };
                        Circle::new(
                            (f64::from(s.matches), s.summary.tick.p99_us),
                            5,
                            color.filled(),
                        )
                    }),
            )
            .map_err(failed(NAME))?
            .label("step passed")
            .legend(box_key(PASS_COLOR));
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(failed(NAME))?
            .label("step failed")
            .legend(box_key(OVER_COLOR));
        if let Some(b) = budget.filter(|b| b.is_finite()) {
            chart
                .draw_series(DashedLineSeries::new(
                    [(0.0, b), (top * 1.08, b)],
                    8,
                    5,
                    BUDGET_COLOR.stroke_width(2),
                ))
                .map_err(failed(NAME))?
                .label("p99 budget")
                .legend(line_key(BUDGET_COLOR));
        }
        legend(&mut chart, NAME, SeriesLabelPosition::UpperLeft)
    })
}

/// A subsystem's height in a stack: its mean, never negative or non-finite.
fn stacked_us(row: &TargetStats) -> f64 {
    if row.mean_us.is_finite() {
        row.mean_us.max(0.0)
    } else {
        0.0
    }
}

/// Per step, the subsystems' mean times stacked into one bar (subsystem times are
/// exclusive, so the stack is at most the tick mean).
pub(crate) fn subsystem_stacks(report: &SweepReport) -> Result<String, LabError> {
    const NAME: &str = "per-subsystem stacks";
    svg_string(NAME, |root| {
        let steps = &report.steps;
        let names: Vec<String> = steps
            .first()
            .map(|s| {
                s.summary
                    .subsystems
                    .iter()
                    .map(|r| r.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        // Subsystems that took no time anywhere get no legend entry.
        let shown = |i: usize| {
            steps
                .iter()
                .any(|s| s.summary.subsystems.get(i).is_some_and(|r| r.mean_us > 0.0))
        };
        let stack_of =
            |k: usize| -> f64 { steps[k].summary.subsystems.iter().map(stacked_us).sum() };
        let y = value_range_with_room((0..steps.len()).map(stack_of), 2.0);
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..steps.len().max(1) as f64, y)
            .map_err(failed(NAME))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("mean time per match tick (us)")
            .draw()
            .map_err(failed(NAME))?;
        for (i, name) in names.iter().enumerate().filter(|(i, _)| shown(*i)) {
            let color = PALETTE[i % PALETTE.len()];
            let bars = steps.iter().enumerate().map(|(k, step)| {
                let below: f64 = step.summary.subsystems[..i.min(step.summary.subsystems.len())]
                    .iter()
                    .map(stacked_us)
                    .sum();
                let own = step.summary.subsystems.get(i).map_or(0.0, stacked_us);
                let x = k as f64;
                Rectangle::new([(x + 0.2, below), (x + 0.8, below + own)], color.filled())
            });
            chart
                .draw_series(bars)
                .map_err(failed(NAME))?
                .label(name.clone())
                .legend(box_key(color));
        }
        legend(&mut chart, NAME, SeriesLabelPosition::UpperLeft)?;
        let labels: Vec<String> = steps.iter().map(|s| matches_text(s.matches)).collect();
        category_labels(root, &chart, NAME, &labels)
    })
}
