//! What players saw in a run ([`QualityRow`]: snapshot age, interpolation
//! error, resyncs and drops, bytes per client) and, when some bots played
//! behind the impairment proxy, the link and the proxy's own cost
//! ([`LinkRow`]). Parts of a [`RunSummary`](crate::RunSummary).

use hightick_netem::ProxyReport;
use hightick_swarm::FleetReport;
use serde::{Deserialize, Serialize};

use hightick_report::{Align, TextTable};

/// What a group of bots saw over the whole run (warm-up included).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QualityRow {
    /// Bots in the group.
    pub bots: u32,
    /// Bots that connected.
    pub connected: u32,
    /// Median age of the newest snapshot at a bot's frame, in server ticks
    /// behind the server (see `hightick_client::quality`: measured beyond
    /// the fastest path, plus that path's one-way delay).
    pub snapshot_age_p50_ticks: f64,
    /// 99th percentile of the same.
    pub snapshot_age_p99_ticks: f64,
    /// 99th percentile distance between where a bot would draw an entity
    /// (two ticks of interpolation delay) and where the server had it,
    /// millimetres.
    pub position_error_p99_mm: f64,
    /// Drawn positions checked against the server's.
    pub positions_checked: u64,
    /// Drawn positions that could not be checked (a snapshot never came).
    pub positions_unchecked: u64,
    /// Messages that failed to decode.
    pub decode_errors: u64,
    /// Inconsistencies the bots found.
    pub desyncs: u64,
    /// Full resyncs the bots asked for.
    pub resyncs_requested: u64,
    /// Full-resync snapshots applied.
    pub full_resyncs: u64,
    /// Snapshots dropped whole at the client (too old, or waiting for a
    /// resync).
    pub snapshots_dropped: u64,
    /// Reliable events the clients dropped (their queue was full).
    pub client_events_dropped: u64,
    /// Bots that learnt their match was over.
    pub matches_over: u64,
    /// Bytes each client received per second.
    pub client_bytes_in_per_s: f64,
    /// Bytes each client sent per second.
    pub client_bytes_out_per_s: f64,
}

impl QualityRow {
    /// The row of `report` for matches at `tick_rate_hz`, adding
    /// `fastest_path_us` (the fastest one-way delay to these bots) to the
    /// snapshot ages.
    pub fn from_fleet(report: &FleetReport, tick_rate_hz: u32, fastest_path_us: f64) -> Self {
        let c = &report.counters;
        let q = &report.quality;
        let tick_us = 1e6 / f64::from(tick_rate_hz.max(1));
        let age = |quantile: f64| {
            if q.snapshot_age_us.is_empty() {
                0.0
            } else {
                (q.snapshot_age_us.value_at_quantile(quantile) as f64 + fastest_path_us) / tick_us
            }
        };
        let per_client_s = |bytes: u64| {
            let seconds = report.elapsed.as_secs_f64() * report.bots.max(1) as f64;
            if seconds > 0.0 {
                bytes as f64 / seconds
            } else {
                0.0
            }
        };
        QualityRow {
            bots: u32::try_from(report.bots).unwrap_or(u32::MAX),
            connected: u32::try_from(c.connected).unwrap_or(u32::MAX),
            snapshot_age_p50_ticks: age(0.5),
            snapshot_age_p99_ticks: age(0.99),
            position_error_p99_mm: if q.position_error_mm.is_empty() {
                0.0
            } else {
                q.position_error_mm.value_at_quantile(0.99) as f64
            },
            positions_checked: q.position_error_mm.len(),
            positions_unchecked: q.positions_unchecked,
            decode_errors: c.decode_errors,
            desyncs: c.desyncs,
            resyncs_requested: c.resyncs_requested,
            full_resyncs: c.full_resyncs,
            snapshots_dropped: c.snapshots_dropped,
            client_events_dropped: c.events_dropped,
            matches_over: c.matches_over,
            client_bytes_in_per_s: per_client_s(c.bytes_in),
            client_bytes_out_per_s: per_client_s(c.bytes_out),
        }
    }
}

/// The bots behind the impairment proxy, and the proxy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkRow {
    /// The link (`mobile`, or a profile file's name).
    pub link: String,
    /// Share of the bots behind it.
    pub share: f64,
    /// The seed of its decisions.
    pub seed: u64,
    /// What the bots behind it saw.
    pub behind: QualityRow,
    /// CPU cores the proxy's thread used over the measured window (not
    /// counted in the server's CPU).
    pub proxy_cpu_cores: f64,
    /// The proxy over the whole run: datagrams, drops by reason, decided
    /// delays, its CPU time and cost per datagram.
    pub proxy: ProxyReport,
}

impl LinkRow {
    /// The table the run's text summary shows.
    pub(crate) fn table(&self, direct: Option<&QualityRow>) -> TextTable {
        let mut header = vec![
            ("quality".to_string(), Align::Left),
            (format!("behind {}", self.link), Align::Right),
        ];
        if direct.is_some() {
            header.push(("direct".to_string(), Align::Right));
        }
        let header: Vec<(&str, Align)> = header.iter().map(|(h, a)| (h.as_str(), *a)).collect();
        let mut t = TextTable::new(&header);
        for (name, value) in quality_lines(&self.behind) {
            let mut row = vec![name.to_string(), value];
            if let Some(d) = direct {
                row.push(
                    quality_lines(d)
                        .into_iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, v)| v)
                        .unwrap_or_default(),
                );
            }
            t.row(row);
        }
        t
    }

    /// One line on the proxy: what it did and what it cost.
    pub(crate) fn proxy_line(&self) -> String {
        let p = &self.proxy;
        let e = &p.emulator;
        format!(
            "netem proxy ({} link, seed {}, share {:.2}): {} flows; up {} datagrams, {:.1}% lost, \
             delay p50 {:.1} ms; down {} datagrams, {:.1}% lost, delay p50 {:.1} ms, p99 {:.1} ms; \
             CPU {:.3} cores in the window, {:.0} ns per datagram (not in the server's CPU)\n",
            self.link,
            self.seed,
            self.share,
            e.flows_opened,
            e.up.datagrams,
            100.0 * e.up.loss(),
            e.up.delay_p50_us / 1000.0,
            e.down.datagrams,
            100.0 * e.down.loss(),
            e.down.delay_p50_us / 1000.0,
            e.down.delay_p99_us / 1000.0,
            self.proxy_cpu_cores,
            p.ns_per_datagram,
        )
    }
}

/// A quality row as name and value, in table order.
pub(crate) fn quality_lines(q: &QualityRow) -> Vec<(&'static str, String)> {
    vec![
        ("bots connected", format!("{} of {}", q.connected, q.bots)),
        (
            "snapshot age p50 / p99 ticks",
            format!(
                "{:.1} / {:.1}",
                q.snapshot_age_p50_ticks, q.snapshot_age_p99_ticks
            ),
        ),
        (
            "position error p99 mm",
            format!("{:.0}", q.position_error_p99_mm),
        ),
        (
            "positions checked / not",
            format!("{} / {}", q.positions_checked, q.positions_unchecked),
        ),
        ("desyncs", q.desyncs.to_string()),
        ("decode errors", q.decode_errors.to_string()),
        (
            "resyncs asked / applied",
            format!("{} / {}", q.resyncs_requested, q.full_resyncs),
        ),
        ("snapshots dropped", q.snapshots_dropped.to_string()),
        ("client events dropped", q.client_events_dropped.to_string()),
        ("matches over", q.matches_over.to_string()),
        (
            "bytes in / out per client per s",
            format!(
                "{:.0} / {:.0}",
                q.client_bytes_in_per_s, q.client_bytes_out_per_s
            ),
        ),
    ]
}
