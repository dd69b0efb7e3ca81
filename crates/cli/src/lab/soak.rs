//! `hightick lab soak`: a long load run sampled every interval, judged for
//! leaks and drift, with a chart. By default each match that ends is
//! replaced by a new one (`--churn on`), with the game's short rules, so the
//! run covers match set-up and teardown as well as steady play. Each sample
//! is printed and appended to a JSON-lines file as it is taken, so a run
//! cut short keeps what it measured.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use hightick_engine::BotGame;
use hightick_engine::mode::HostedGame;
use hightick_lab::{
    LoadSpec, judge, matches_started, render_soak_html, render_soak_line, render_soak_table,
    render_verdict, run_load,
};

use crate::demo::budget_book;
use crate::demo::progress::RunBar;

/// Flags of `hightick lab soak`.
#[derive(Debug, Args)]
pub(super) struct SoakArgs {
    /// Matches at once: the machine's measured capacity (the games per core
    /// of `hightick lab sweep` times the cores the server may use).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=512))]
    matches: u32,
    /// The game's mode (default: its first, `5v5` for the arena).
    #[arg(long)]
    mode: Option<String>,
    /// Measured length of the soak.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Time between samples.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    interval: Duration,
    /// Warm-up, not measured.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Replace each match that ends with a new one (its bots join it), so
    /// the matches hosted stay at --matches: on or off.
    #[arg(
        long,
        value_name = "on|off",
        value_parser = crate::serve::on_off,
        default_value = "on",
        action = clap::ArgAction::Set
    )]
    churn: bool,
    /// The matches' settings as JSON, the game's (default: its short rules
    /// with --churn on, a match of a minute or two; the mode's own with
    /// --churn off). Without churn a soak needs matches that last its
    /// length: for the arena e.g. '{"rounds_to_win": 200}' (30 rounds lasted
    /// 16 to 26 minutes).
    #[arg(long, value_name = "JSON")]
    settings: Option<String>,
    /// Worker threads of the server (0: one per CPU it may use).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Frame-time budgets file (default: the shipped budgets).
    #[arg(long, value_name = "FILE")]
    budgets: Option<PathBuf>,
    /// Where the JSON result (the run with its samples and the verdict) goes;
    /// beside it, each sample as it is taken: PATH with the extension
    /// `.samples.jsonl` (one JSON object a line).
    #[arg(long, value_name = "PATH", default_value = "lab-soak.json")]
    json: PathBuf,
    /// Where the HTML report (verdict and charts) goes.
    #[arg(long, value_name = "PATH", default_value = "lab-soak.html")]
    report: PathBuf,
}

pub(super) fn soak<G: BotGame>(args: &SoakArgs) -> Result<()> {
    if args.interval.is_zero() || args.interval > args.duration {
        bail!(
            "--interval {} must be above 0 and at most --duration {}",
            humantime::format_duration(args.interval),
            humantime::format_duration(args.duration)
        );
    }
    let budgets = budget_book(args.budgets.as_deref())?;
    let exe = std::env::current_exe().context("locating this binary")?;
    let mode = crate::demo::mode_name::<G>(args.mode.as_deref());
    let settings = match &args.settings {
        Some(text) => {
            serde_json::from_str(text).with_context(|| format!("--settings is not JSON: {text}"))?
        }
        None if args.churn => short_settings::<G>(&mode)?,
        None => serde_json::Value::Null,
    };
    let spec = LoadSpec {
        title: format!("soak {mode} x {}", args.matches),
        settings,
        warmup: args.warmup,
        duration: args.duration,
        workers: args.workers,
        sample_every: Some(args.interval),
        churn: args.churn,
        ..LoadSpec::new(exe, &mode, args.matches)
    };
    eprintln!(
        "soak: {} x {mode} for {} after {} of warm-up, a sample every {}, {}; settings {}",
        args.matches,
        humantime::format_duration(args.duration),
        humantime::format_duration(args.warmup),
        humantime::format_duration(args.interval),
        if args.churn {
            "ended matches replaced"
        } else {
            "no churn"
        },
        spec.settings,
    );
    let samples_path = samples_path(&args.json);
    let mut samples_file = File::create(&samples_path)
        .with_context(|| format!("creating {}", samples_path.display()))?;
    eprintln!("samples, as they come: {}", samples_path.display());
    let bar = RunBar::new("soak");
    let mut write_error = None;
    let run = run_load::<G>(&spec, &budgets, &mut |p| {
        bar.update(p);
        if let Some(sample) = &p.sample {
            bar.print_above(&render_soak_line(sample));
            let line = serde_json::to_string(sample).map_err(std::io::Error::from);
            let written = line.and_then(|l| writeln!(samples_file, "{l}"));
            if write_error.is_none() {
                write_error = written.err();
            }
        }
    });
    bar.finish();
    let run = run?;
    if let Some(e) = write_error {
        eprintln!(
            "warning: writing {} failed ({e}); the JSON result has every sample",
            samples_path.display()
        );
    }
    let verdict = judge(&run.samples);
    print!("{}", render_soak_table(&run.samples));
    print!("{}", render_verdict(&verdict));
    for s in &run.samples {
        println!(
            "FIGURE soak_rss_mib_t{:.0} {:.1}",
            s.t_s / 60.0,
            s.rss_bytes as f64 / (1024.0 * 1024.0)
        );
    }
    println!(
        "FIGURE soak_matches_started {} matches",
        matches_started(&run.samples)
    );
    println!("FIGURE soak_held {}", u8::from(verdict.held));
    let json = serde_json::json!({ "run": run, "verdict": verdict });
    std::fs::write(&args.json, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("writing {}", args.json.display()))?;
    std::fs::write(&args.report, render_soak_html(&run, &verdict)?)
        .with_context(|| format!("writing {}", args.report.display()))?;
    println!(
        "JSON: {}\nreport: {}",
        args.json.display(),
        args.report.display()
    );
    if !verdict.held {
        bail!("the soak did not hold its bounds (see above)");
    }
    Ok(())
}

/// Where the samples go as they come: `json` with the extension
/// `.samples.jsonl` (`lab-soak.json` -> `lab-soak.samples.jsonl`).
fn samples_path(json: &Path) -> PathBuf {
    json.with_extension("samples.jsonl")
}

/// The game's short rules for `mode`, as the JSON settings a match is
/// created with.
fn short_settings<G: HostedGame>(mode: &str) -> Result<serde_json::Value> {
    let mode = G::mode(mode).with_context(|| format!("unknown mode `{mode}` of {}", G::NAME))?;
    serde_json::to_value(G::short_settings(mode)).context("encoding the game's short rules")
}
