//! `netem`: the impairment proxy (crate `hightick-netem`) as a command.
//! Clients send to `--listen`; their datagrams reach `--upstream` through a
//! link (`--link lan|wifi|mobile|bad` or `--profile FILE`), each client as
//! a distinct source. Runs until SIGINT / SIGTERM or `--duration`, printing
//! a line every few seconds, then the report and its `FIGURE` lines.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use hightick_netem::{Limits, Proxy, ProxyConfig, ProxyReport};

/// Flags of `hightick netem`.
#[derive(Debug, Args)]
pub(crate) struct NetemArgs {
    /// Where clients send (port 0: any free port, printed at start).
    #[arg(long, value_name = "ADDR")]
    listen: SocketAddr,
    /// The server their datagrams go on to.
    #[arg(long, value_name = "ADDR")]
    upstream: SocketAddr,
    /// A built-in link: lan, wifi, mobile or bad.
    #[arg(long, value_name = "PROFILE", conflicts_with = "profile")]
    link: Option<String>,
    /// A link profile file (TOML; see `hightick_netem::profile_file`).
    #[arg(long, value_name = "FILE", required_unless_present = "link")]
    profile: Option<std::path::PathBuf>,
    /// Seed of the proxy's decisions: the same seed, the same decisions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Clients at once.
    #[arg(long, default_value_t = 1024)]
    max_flows: usize,
    /// A client silent this long either way is forgotten.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    idle_timeout: Duration,
    /// Stop after this long (default: at SIGINT / SIGTERM).
    #[arg(long, value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// How often a progress line is printed.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    every: Duration,
}

/// Runs the proxy until a signal or `--duration`.
pub(crate) fn run(args: &NetemArgs) -> Result<()> {
    let profile = match (&args.link, &args.profile) {
        (Some(name), _) => hightick_netem::LinkProfile::builtin(name)?,
        (None, Some(path)) => hightick_netem::profile_file::load(path)?,
        (None, None) => anyhow::bail!("give --link or --profile"),
    };
    let proxy = Proxy::start(ProxyConfig {
        limits: Limits {
            max_flows: args.max_flows,
            idle_timeout: args.idle_timeout,
            ..Limits::default()
        },
        ..ProxyConfig::new(args.listen, args.upstream, profile.clone(), args.seed)
    })
    .context("starting the proxy")?;
    println!(
        "hightick netem: {} link, seed {}, listening on {}, forwarding to {}",
        profile.name,
        args.seed,
        proxy.local_addr(),
        args.upstream
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the signal runtime")?;
    runtime.block_on(wait(&proxy, args.duration, args.every));
    let report = proxy.stop()?;
    print_report(&report);
    Ok(())
}

/// Waits for SIGINT, SIGTERM or `duration`, printing a line every `every`.
async fn wait(proxy: &Proxy, duration: Option<Duration>, every: Duration) {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let end = duration.map(|d| tokio::time::Instant::now() + d);
    let mut ticker = tokio::time::interval(every.max(Duration::from_millis(100)));
    ticker.tick().await;
    loop {
        let until_end = async {
            match end {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let terminated = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return,
            () = terminated => return,
            () = until_end => return,
            _ = ticker.tick() => eprintln!("{}", progress_line(&proxy.report())),
        }
    }
}

fn progress_line(r: &ProxyReport) -> String {
    let e = &r.emulator;
    format!(
        "{:.0} s: {} flows open; up {} in, {} delivered; down {} in, {} delivered; {:.3} cores",
        r.wall_s,
        e.flows_open,
        e.up.datagrams,
        e.up.delivered,
        e.down.datagrams,
        e.down.delivered,
        r.cpu_cores()
    )
}

fn print_report(r: &ProxyReport) {
    let e = &r.emulator;
    println!(
        "flows opened {}, refused {}, expired {}",
        e.flows_opened, e.flows_refused, e.flows_expired
    );
    for (name, d) in [("up", &e.up), ("down", &e.down)] {
        let drops: Vec<String> = d
            .dropped
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(why, n)| format!("{why} {n}"))
            .collect();
        println!(
            "{name}: {} datagrams, {} delivered ({} twice), dropped {} ({}), \
             delay min / p50 / p99 / max {:.1} / {:.1} / {:.1} / {:.1} ms",
            d.datagrams,
            d.delivered,
            d.duplicated,
            d.dropped_total(),
            if drops.is_empty() {
                "none".to_owned()
            } else {
                drops.join(", ")
            },
            d.delay_min_us / 1000.0,
            d.delay_p50_us / 1000.0,
            d.delay_p99_us / 1000.0,
            d.delay_max_us / 1000.0,
        );
    }
    use hightick_telemetry::bench::figure_line;
    println!("{}", figure_line("netem_cpu_cores", r.cpu_cores(), "cores"));
    println!(
        "{}",
        figure_line("netem_ns_per_datagram", r.ns_per_datagram, "ns")
    );
}
