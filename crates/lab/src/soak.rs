//! A soak: a long load run sampled every interval for what leaks or drifts
//! (memory, open files, threads, CPU per match tick, late ticks), with the
//! bound each must stay within and whether it held.
//!
//! The run itself is [`run_load`](crate::run_load) with
//! [`LoadSpec::sample_every`](crate::LoadSpec::sample_every) set (and
//! [`LoadSpec::churn`](crate::LoadSpec::churn), so ended matches are
//! replaced and the run covers match set-up and teardown); this module
//! holds the samples' shape, the verdict and the report.

use serde::{Deserialize, Serialize};

use hightick_report::{Cell, Color, Line, LineChart, Page, Table, TextTable, Tile};

use crate::error::LabError;
use crate::summary::{RunSummary, SoakSample};

/// The cumulative figures a sample is the difference of.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SoakCounters {
    pub ticks: u64,
    pub late_starts: u64,
    pub overruns: u64,
    pub cpu_s: f64,
    /// Matches started in place of ended ones.
    pub matches_started: u64,
}

/// What the servers host at a sample's time, all instances together.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Hosted {
    pub matches: usize,
    pub players: usize,
}

impl SoakSample {
    /// The sample of the interval from `before` to `now`.
    pub(crate) fn between(
        t_s: f64,
        before: &SoakCounters,
        now: &SoakCounters,
        facts: hightick_process::ProcessFacts,
        tick_mean_us: f64,
        hosted: Hosted,
    ) -> Self {
        let ticks = now.ticks.saturating_sub(before.ticks);
        let cpu_s = (now.cpu_s - before.cpu_s).max(0.0);
        SoakSample {
            t_s,
            rss_bytes: facts.rss_bytes,
            open_files: facts.open_files,
            threads: facts.threads,
            ticks,
            cpu_per_tick_us: if ticks == 0 {
                0.0
            } else {
                cpu_s * 1e6 / ticks as f64
            },
            tick_mean_us,
            late_starts: now.late_starts.saturating_sub(before.late_starts),
            overruns: now.overruns.saturating_sub(before.overruns),
            players: hosted.players,
            matches: hosted.matches,
            matches_started: now.matches_started.saturating_sub(before.matches_started),
        }
    }

    fn late_share(&self) -> f64 {
        if self.ticks == 0 {
            0.0
        } else {
            self.late_starts as f64 / self.ticks as f64
        }
    }
}

/// One figure's bound: its median over the first third of the samples
/// against its median over the last third.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakBound {
    /// What is bounded.
    pub figure: String,
    /// The bound, in words.
    pub rule: String,
    /// Median of the first third.
    pub first: f64,
    /// Median of the last third.
    pub last: f64,
    /// The highest `last` allowed.
    pub limit: f64,
    /// `last <= limit`.
    pub held: bool,
}

/// Whether a soak held every bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakVerdict {
    /// Each figure's bound.
    pub bounds: Vec<SoakBound>,
    /// Every bound held (and there were samples enough to judge).
    pub held: bool,
    /// Why there is no judgement, when there is none.
    pub note: Option<String>,
}

/// Samples needed to judge: a first and a last third of at least one each.
pub const MIN_SAMPLES: usize = 3;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Judges `samples`: no growth beyond noise from the first third of the run
/// to the last. The bounds:
/// - resident memory: at most 10% + 16 MiB more (allocator caches settle);
/// - open files: at most 4 more (a log rotated, a socket mid-close);
/// - threads: none more;
/// - CPU per match tick: at most 15% more (the shared machine's noise);
/// - late ticks: a share of ticks at most twice the first third's, or 0.1%.
pub fn judge(samples: &[SoakSample]) -> SoakVerdict {
    if samples.len() < MIN_SAMPLES {
        return SoakVerdict {
            bounds: Vec::new(),
            held: false,
            note: Some(format!(
                "{} samples: a verdict needs at least {MIN_SAMPLES} (a longer --duration or a shorter --interval)",
                samples.len()
            )),
        };
    }
    if let Some(idle) = samples.iter().find(|s| s.ticks == 0 || s.players == 0) {
        return SoakVerdict {
            bounds: Vec::new(),
            held: false,
            note: Some(format!(
                "no match ran (or no player was connected) in the interval ending at minute {:.0}: \
                 the matches ended before the soak did; replace them as they end (--churn on) \
                 or give settings that keep them running for its length \
                 (the arena: --settings '{{\"rounds_to_win\": 200}}')",
                idle.t_s / 60.0
            )),
        };
    }
    let third = (samples.len() / 3).max(1);
    let (head, tail) = (&samples[..third], &samples[samples.len() - third..]);
    let medians = |f: fn(&SoakSample) -> f64| {
        (
            median(head.iter().map(f).collect()),
            median(tail.iter().map(f).collect()),
        )
    };
    let bound = |figure: &str, rule: &str, (first, last): (f64, f64), limit: f64| SoakBound {
        figure: figure.to_string(),
        rule: rule.to_string(),
        first,
        last,
        limit,
        held: last <= limit,
    };
    let rss = medians(|s| s.rss_bytes as f64 / (1024.0 * 1024.0));
    let files = medians(|s| s.open_files as f64);
    let threads = medians(|s| s.threads as f64);
    let cpu = medians(|s| s.cpu_per_tick_us);
    let late = medians(|s| s.late_share() * 100.0);
    let bounds = vec![
        bound(
            "resident memory (MiB)",
            "+10% + 16 MiB",
            rss,
            rss.0 * 1.10 + 16.0,
        ),
        bound("open files", "+4", files, files.0 + 4.0),
        bound("threads", "+0", threads, threads.0),
        bound("CPU per match tick (us)", "+15%", cpu, cpu.0 * 1.15),
        bound(
            "late ticks (% of ticks)",
            "x2 or 0.1%",
            late,
            (late.0 * 2.0).max(0.1),
        ),
    ];
    SoakVerdict {
        held: bounds.iter().all(|b| b.held),
        bounds,
        note: None,
    }
}

/// The samples as a terminal table.
pub fn render_soak_table(samples: &[SoakSample]) -> String {
    let mut t = TextTable::new(&SAMPLE_COLUMNS);
    for s in samples {
        t.row(sample_row(s));
    }
    t.render()
}

const SAMPLE_COLUMNS: [(&str, hightick_report::Align); 10] = {
    use hightick_report::Align::{Left, Right};
    [
        ("t (min)", Left),
        ("RSS MiB", Right),
        ("files", Right),
        ("threads", Right),
        ("CPU/tick us", Right),
        ("tick mean us", Right),
        ("late", Right),
        ("players", Right),
        ("matches", Right),
        ("started", Right),
    ]
};

fn sample_row(s: &SoakSample) -> [String; 10] {
    [
        format!("{:.1}", s.t_s / 60.0),
        format!("{:.1}", s.rss_bytes as f64 / (1024.0 * 1024.0)),
        s.open_files.to_string(),
        s.threads.to_string(),
        format!("{:.1}", s.cpu_per_tick_us),
        format!("{:.1}", s.tick_mean_us),
        s.late_starts.to_string(),
        s.players.to_string(),
        s.matches.to_string(),
        s.matches_started.to_string(),
    ]
}

/// One sample as a line, for progress while a soak runs: the table's
/// columns with their names.
pub fn render_soak_line(s: &SoakSample) -> String {
    let cells = sample_row(s);
    let mut line = format!("t {} min:", cells[0]);
    for ((name, _), value) in SAMPLE_COLUMNS.iter().zip(&cells).skip(1) {
        line.push_str(&format!(" {name} {value},"));
    }
    line.pop();
    line
}

/// Matches started in place of ended ones over `samples`.
pub fn matches_started(samples: &[SoakSample]) -> u64 {
    samples.iter().map(|s| s.matches_started).sum()
}

/// The verdict as terminal lines.
pub fn render_verdict(verdict: &SoakVerdict) -> String {
    if let Some(note) = &verdict.note {
        return format!("no verdict: {note}\n");
    }
    let mut t = TextTable::new(&[
        ("figure", hightick_report::Align::Left),
        ("first third", hightick_report::Align::Right),
        ("last third", hightick_report::Align::Right),
        ("bound", hightick_report::Align::Left),
        ("limit", hightick_report::Align::Right),
        ("", hightick_report::Align::Left),
    ]);
    for b in &verdict.bounds {
        t.row([
            b.figure.clone(),
            format!("{:.2}", b.first),
            format!("{:.2}", b.last),
            b.rule.clone(),
            format!("{:.2}", b.limit),
            if b.held { "held" } else { "BROKEN" }.to_string(),
        ]);
    }
    let word = if verdict.held {
        "every bound held"
    } else {
        "a bound broke"
    };
    format!("{}soak: {word}\n", t.render())
}

/// The soak report: verdict, figures over time, the bounds and the samples.
pub fn render_soak_html(run: &RunSummary, verdict: &SoakVerdict) -> Result<String, LabError> {
    let samples = &run.samples;
    let minutes = |f: fn(&SoakSample) -> f64| -> Vec<(f64, f64)> {
        samples.iter().map(|s| (s.t_s / 60.0, f(s))).collect()
    };
    let mut page = Page::new(&format!("soak: {}", run.title));
    page.paragraph(&format!(
        "{} x {} at {} Hz for {:.0} min after {:.0} s of warm-up, sampled {} times, \
         {} matches started in place of ended ones; commit {}",
        run.matches,
        run.mode,
        run.tick_rate_hz,
        run.duration_s / 60.0,
        run.warmup_s,
        samples.len(),
        matches_started(samples),
        run.host.git_commit.as_deref().unwrap_or("unknown"),
    ));
    match &verdict.note {
        Some(note) => page.verdict(&format!("no verdict: {note}"), false),
        None if verdict.held => page.verdict("every bound held", true),
        None => page.verdict("a bound broke", false),
    };
    page.tiles(&[
        Tile::new(format!("{:.1}", run.gpc), "games per core"),
        Tile::new(format!("{:.1}", run.tick.p99_us), "tick p99 (us)"),
        Tile::new(run.tick.late_ticks.to_string(), "late ticks"),
    ]);
    let memory = LineChart::new("memory and files", "minutes", "resident memory (MiB)")
        .line(Line::new(
            "RSS",
            Color::BLUE,
            minutes(|s| s.rss_bytes as f64 / (1024.0 * 1024.0)),
        ))
        .right_axis(
            "open files / threads",
            vec![
                Line::new(
                    "open files",
                    Color::ORANGE,
                    minutes(|s| s.open_files as f64),
                ),
                Line::new("threads", Color::GREY, minutes(|s| s.threads as f64)),
            ],
        )
        .render()?;
    let cost = LineChart::new("cost per tick", "minutes", "microseconds")
        .line(Line::new(
            "CPU per match tick",
            Color::BLUE,
            minutes(|s| s.cpu_per_tick_us),
        ))
        .line(Line::new(
            "mean match tick",
            Color::ORANGE,
            minutes(|s| s.tick_mean_us),
        ))
        .right_axis(
            "late ticks per interval",
            vec![Line::new(
                "late ticks",
                Color::RED,
                minutes(|s| s.late_starts as f64),
            )],
        )
        .render()?;
    let churn = LineChart::new("matches", "minutes", "matches")
        .line(Line::new(
            "matches hosted",
            Color::BLUE,
            minutes(|s| s.matches as f64),
        ))
        .line(Line::new(
            "matches started",
            Color::ORANGE,
            minutes(|s| s.matches_started as f64),
        ))
        .render()?;
    page.section("Over time")
        .chart(&memory)
        .chart(&cost)
        .chart(&churn);
    page.section("Bounds").table(
        &Table::new(["figure", "first third", "last third", "bound", "limit", ""]).rows(
            verdict.bounds.iter().map(|b| {
                vec![
                    Cell::text(&b.figure),
                    Cell::num(b.first, 2),
                    Cell::num(b.last, 2),
                    Cell::text(&b.rule),
                    Cell::num(b.limit, 2),
                    Cell::text(if b.held { "held" } else { "BROKEN" }),
                ]
            }),
        ),
    );
    page.section("Samples").table(
        &Table::new(SAMPLE_COLUMNS.map(|(name, _)| name)).rows(
            samples
                .iter()
                .map(|s| sample_row(s).map(Cell::text).to_vec()),
        ),
    );
    Ok(page.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(minute: u32, rss_mib: u64, files: u64, cpu: f64, late: u64) -> SoakSample {
        SoakSample {
            t_s: f64::from(minute) * 60.0,
            rss_bytes: rss_mib * 1024 * 1024,
            open_files: files,
            threads: 6,
            ticks: 7680,
            cpu_per_tick_us: cpu,
            tick_mean_us: cpu * 0.8,
            late_starts: late,
            overruns: 0,
            players: 80,
            matches: 8,
            matches_started: 1,
        }
    }

    #[test]
    fn a_steady_run_holds_and_a_leak_breaks_its_bound() {
        let steady: Vec<_> = (1..=9).map(|m| sample(m, 40, 120, 45.0, 1)).collect();
        let v = judge(&steady);
        assert!(v.held, "{v:?}");
        assert_eq!(v.bounds.len(), 5);

        let leaking: Vec<_> = (1..=9)
            .map(|m| sample(m, 40 + u64::from(m) * 10, 120 + u64::from(m), 45.0, 1))
            .collect();
        let v = judge(&leaking);
        assert!(!v.held);
        let broken: Vec<_> = v
            .bounds
            .iter()
            .filter(|b| !b.held)
            .map(|b| b.figure.as_str())
            .collect();
        assert_eq!(broken, ["resident memory (MiB)", "open files"]);
    }

    #[test]
    fn matches_that_ended_early_give_no_verdict() {
        let mut run: Vec<_> = (1..=9).map(|m| sample(m, 40, 120, 45.0, 1)).collect();
        run[5].ticks = 0;
        let v = judge(&run);
        assert!(!v.held && v.bounds.is_empty());
        assert!(v.note.unwrap().contains("minute 6"));
    }

    #[test]
    fn samples_recorded_before_churn_still_read() {
        let old = r#"{"t_s": 60.0, "rss_bytes": 1, "open_files": 15, "threads": 5,
            "ticks": 7680, "cpu_per_tick_us": 70.0, "tick_mean_us": 50.0,
            "late_starts": 0, "overruns": 0, "players": 400}"#;
        let s: SoakSample = serde_json::from_str(old).unwrap();
        assert_eq!((s.players, s.matches, s.matches_started), (400, 0, 0));
        assert_eq!(matches_started(&[s, sample(2, 40, 15, 70.0, 0)]), 1);
    }

    #[test]
    fn too_few_samples_give_no_verdict() {
        let v = judge(&[sample(1, 40, 120, 45.0, 0)]);
        assert!(!v.held && v.note.is_some());
        assert!(render_verdict(&v).starts_with("no verdict"));
    }
}
