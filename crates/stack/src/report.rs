//! [`JourneyReport`]: what a stack run shows. The players' side (login and
//! match-found times, what the bots saw of their matches), the hosts' side
//! (matches finished, results left in an outbox) and the gateway's books
//! (results recorded, the ledger audit), with the checks that must hold:
//! every finished match recorded once, nothing left undelivered, the books
//! balanced, no desync.

use std::fmt::Write as _;

use hightick_report::{Cell, Mark, Page, Table, Tile};

use hightick_store::Audit;

use crate::drill::DrillReport;
use crate::launch::Launch;
use hightick_swarm::result::MatchSummary;
use serde::Serialize;

/// Milliseconds at two quantiles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Quantiles {
    /// Median, milliseconds.
    pub p50_ms: f64,
    /// 99th percentile, milliseconds.
    pub p99_ms: f64,
    /// Mean, milliseconds.
    pub mean_ms: f64,
}

/// A stack run's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JourneyReport {
    /// The game.
    pub game: String,
    /// The mode played.
    pub mode: String,
    /// `short` or `full`.
    pub rules: String,
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// Virtual players.
    pub players: u64,
    /// Server hosts.
    pub hosts: usize,
    /// Gateways on the store.
    pub gateways: usize,
    /// The players' run, seconds.
    pub elapsed_s: f64,
    /// Login, request to session (through the login queue).
    pub login: Quantiles,
    /// Queueing for a match, ticket to match found.
    pub match_found: Quantiles,
    /// Requests the players made, and how many failed.
    pub requests: u64,
    /// Failed requests.
    pub failed_requests: u64,
    /// What the bots saw of their matches.
    pub bots: Option<MatchSummary>,
    /// Matches the hosts finished (their results files), abandoned ones
    /// (ended by the drain) among them.
    pub matches_finished: u64,
    /// Of those, ended by the drain before their end.
    pub matches_abandoned: u64,
    /// Results still waiting in a host's outbox after the drain.
    pub outbox_left: u64,
    /// Results the gateway refused (in a host's `rejected/`).
    pub outbox_rejected: u64,
    /// The gateway's books after the run.
    pub audit: Audit,
    /// The failure drill, if one ran: what was done when, and its checks
    /// (they count toward [`JourneyReport::passed`]).
    pub drill: Option<DrillReport>,
    /// With the hosts behind port mappings: the datagrams the mappings
    /// carried to them (players had no other way in).
    pub mapped_datagrams: Option<u64>,
    /// The run over time, and the figures a capacity plan is checked against.
    pub launch: Launch,
}

impl JourneyReport {
    /// The checks that must hold, each with whether it did.
    pub fn checks(&self) -> Vec<(String, bool)> {
        let desyncs = self.bots.as_ref().map_or(0, |b| b.desyncs);
        vec![
            (
                format!(
                    "matches finished {} = results recorded {}",
                    self.matches_finished, self.audit.matches_recorded
                ),
                self.matches_finished == self.audit.matches_recorded as u64,
            ),
            (
                format!(
                    "results left in outboxes: {} (refused: {})",
                    self.outbox_left, self.outbox_rejected
                ),
                self.outbox_left == 0 && self.outbox_rejected == 0,
            ),
            (
                format!(
                    "ledger: balances {} = ledger {} ({} accounts off their ledger)",
                    self.audit.balance_total,
                    self.audit.ledger_total,
                    self.audit.accounts_off_ledger
                ),
                self.audit.balanced(),
            ),
            (format!("desyncs: {desyncs}"), desyncs == 0),
        ]
        .into_iter()
        .chain(self.mapped_datagrams.map(|n| {
            (
                format!("players reached the hosts through their port mappings: {n} datagrams"),
                n > 0,
            )
        }))
        .chain(self.scenario_checks())
        .chain(self.drill.iter().flat_map(|d| {
            d.checks
                .iter()
                .map(move |c| (format!("{}: {}", d.drill, c.check), c.held))
        }))
        .collect()
    }

    /// A scenario's run (the launch rehearsal) must also have logged every
    /// player in, played matches to their end, granted the rejoins its
    /// players asked for, and read the service every second.
    fn scenario_checks(&self) -> Vec<(String, bool)> {
        let l = &self.launch;
        if l.scenario.is_none() {
            return Vec::new();
        }
        let played = self.bots.as_ref().map_or(0, |b| b.finished);
        let asked = l.rejoins_asked;
        vec![
            (
                format!("players logged in: {} of {}", l.logins, self.players),
                l.logins == self.players,
            ),
            (
                format!("matches played to their end by the players: {played}"),
                played > 0,
            ),
            (
                format!("rejoins granted: {} (asked: {asked})", l.rejoins),
                asked == 0 || l.rejoins > 0,
            ),
            (
                format!(
                    "the service read over time: {} readings, hosts answering",
                    l.service.len()
                ),
                !l.service.is_empty() && l.service.iter().any(|s| s.hosts_up > 0),
            ),
        ]
    }

    /// The run's shape: players, hosts, gateways and the store's backend.
    fn shape(&self) -> String {
        format!(
            "{} players, {} host(s), {} gateway(s) on {}",
            self.players, self.hosts, self.gateways, self.backend
        )
    }

    /// Whether every check held.
    pub fn passed(&self) -> bool {
        self.checks().iter().all(|(_, ok)| *ok)
    }

    /// The report as text, with `FIGURE` lines.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "hightick stack: {} {} ({} rules), {}, {:.0} s",
            self.game,
            self.mode,
            self.rules,
            self.shape(),
            self.elapsed_s
        );
        let _ = writeln!(
            out,
            "  login        p50 {:>9.1} ms   p99 {:>9.1} ms",
            self.login.p50_ms, self.login.p99_ms
        );
        let _ = writeln!(
            out,
            "  match found  p50 {:>9.1} ms   p99 {:>9.1} ms",
            self.match_found.p50_ms, self.match_found.p99_ms
        );
        let _ = writeln!(
            out,
            "  requests {} ({} failed)",
            self.requests, self.failed_requests
        );
        if let Some(b) = &self.bots {
            let _ = writeln!(
                out,
                "  bots: {} matches begun, {} played to the end; snapshots every {:.1} ms p50 / {:.1} ms p99; RTT p99 {:.2} ms; loss {:.3} %; {} desyncs, {} decode errors",
                b.started,
                b.finished,
                b.interarrival_p50_us as f64 / 1000.0,
                b.interarrival_p99_us as f64 / 1000.0,
                b.rtt_p99_us as f64 / 1000.0,
                b.packet_loss * 100.0,
                b.desyncs,
                b.decode_errors
            );
        }
        let _ = writeln!(
            out,
            "  matches: {} finished on the hosts ({} ended by the drain), {} recorded by the gateway",
            self.matches_finished, self.matches_abandoned, self.audit.matches_recorded
        );
        let reasons: Vec<String> = self
            .audit
            .ledger_by_reason
            .iter()
            .map(|(r, v)| format!("{r} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "  books: {} accounts, balances {} = ledger {} ({})",
            self.audit.accounts,
            self.audit.balance_total,
            self.audit.ledger_total,
            reasons.join(", ")
        );
        self.launch.render_text(&mut out);
        if let Some(d) = &self.drill {
            let _ = writeln!(out, "  drill {}:", d.drill);
            for e in &d.events {
                let _ = writeln!(out, "    +{:>6.1} s  {}", e.at_s, e.what);
            }
        }
        for (check, ok) in self.checks() {
            let _ = writeln!(out, "  [{}] {check}", if ok { "ok" } else { "FAILED" });
        }
        let _ = writeln!(out, "FIGURE stack_login_p99_ms {:.1} ms", self.login.p99_ms);
        let _ = writeln!(
            out,
            "FIGURE stack_match_found_p99_ms {:.1} ms",
            self.match_found.p99_ms
        );
        let _ = writeln!(
            out,
            "FIGURE stack_matches_finished {} matches",
            self.matches_finished
        );
        let _ = writeln!(
            out,
            "FIGURE stack_results_recorded {} matches",
            self.audit.matches_recorded
        );
        let _ = writeln!(
            out,
            "FIGURE stack_ledger_mismatches {} accounts",
            self.audit.accounts_off_ledger
        );
        out
    }

    /// The report as one self-contained HTML page.
    pub fn render_html(&self) -> String {
        let mut page = Page::new(&format!("hightick stack: {} {}", self.game, self.mode));
        page.paragraph(&format!(
            "{}, {} rules, {:.0} s",
            self.shape(),
            self.rules,
            self.elapsed_s
        ));
        page.verdict(
            if self.passed() {
                "every check held"
            } else {
                "a check failed"
            },
            self.passed(),
        );
        page.tiles(&[
            Tile::new(format!("{:.0} ms", self.login.p99_ms), "login p99"),
            Tile::new(
                format!("{:.0} ms", self.match_found.p99_ms),
                "match found p99",
            ),
            Tile::new(self.matches_finished.to_string(), "matches finished"),
            Tile::new(self.audit.matches_recorded.to_string(), "results recorded"),
        ]);
        page.section("Checks");
        let checks =
            Table::new(["check", "held"]).rows(self.checks().into_iter().map(|(c, ok)| {
                vec![
                    Cell::text(c),
                    Cell::text(if ok { "ok" } else { "FAILED" }).mark(Mark::verdict(ok)),
                ]
            }));
        page.table(&checks);
        self.drill_section(&mut page);
        self.journey_section(&mut page);
        self.bots_section(&mut page);
        self.books_section(&mut page);
        if let Err(e) = self.launch.charts(&mut page) {
            page.note(&format!("the charts over time could not be drawn: {e}"));
        }
        page.finish()
    }

    /// The drill's timeline, if a drill ran.
    fn drill_section(&self, page: &mut Page) {
        if let Some(d) = &self.drill {
            page.section(&format!("Drill: {}", d.drill));
            let events = Table::new(["at, s", "what was done or seen"]).rows(
                d.events
                    .iter()
                    .map(|e| vec![Cell::num(e.at_s, 1), Cell::text(e.what.clone())]),
            );
            page.table(&events);
        }
    }

    /// Login and matchmaking times, and the requests.
    fn journey_section(&self, page: &mut Page) {
        page.section("The players' journey");
        let times = Table::new(["step", "p50 ms", "p99 ms"]).rows([
            vec![
                Cell::text("login (through the login queue)"),
                Cell::num(self.login.p50_ms, 1),
                Cell::num(self.login.p99_ms, 1),
            ],
            vec![
                Cell::text("match found (ticket to match)"),
                Cell::num(self.match_found.p50_ms, 1),
                Cell::num(self.match_found.p99_ms, 1),
            ],
        ]);
        page.table(&times);
        page.paragraph(&format!(
            "{} requests, {} failed",
            self.requests, self.failed_requests
        ));
    }

    /// What the bots saw of their matches.
    fn bots_section(&self, page: &mut Page) {
        if let Some(b) = &self.bots {
            page.section("Match quality (the bots)");
            let rows = [
                ("matches begun", b.started as f64, 0),
                ("played to their end", b.finished as f64, 0),
                (
                    "snapshot inter-arrival p50, ms",
                    b.interarrival_p50_us as f64 / 1000.0,
                    1,
                ),
                (
                    "snapshot inter-arrival p99, ms",
                    b.interarrival_p99_us as f64 / 1000.0,
                    1,
                ),
                ("RTT p99, ms", b.rtt_p99_us as f64 / 1000.0, 2),
                ("packet loss, %", b.packet_loss * 100.0, 3),
                ("desyncs", b.desyncs as f64, 0),
                ("decode errors", b.decode_errors as f64, 0),
            ];
            page.table(
                &Table::new(["figure", "value"]).rows(
                    rows.iter()
                        .map(|&(name, v, d)| vec![Cell::text(name), Cell::num(v, d)]),
                ),
            );
        }
    }

    /// Results posted and recorded, and the ledger's sums.
    fn books_section(&self, page: &mut Page) {
        page.section("Results and the books");
        let books = [
            (
                "matches finished on the hosts",
                self.matches_finished as f64,
            ),
            ("of them ended by the drain", self.matches_abandoned as f64),
            (
                "results recorded by the gateway",
                self.audit.matches_recorded as f64,
            ),
            ("results left in outboxes", self.outbox_left as f64),
            ("results refused", self.outbox_rejected as f64),
            ("accounts", self.audit.accounts as f64),
            ("balances, summed", self.audit.balance_total as f64),
            ("ledger, summed", self.audit.ledger_total as f64),
            (
                "accounts off their ledger",
                self.audit.accounts_off_ledger as f64,
            ),
        ];
        let mut table = Table::new(["figure", "value"]).rows(
            books
                .iter()
                .map(|&(name, v)| vec![Cell::text(name), Cell::num(v, 0)]),
        );
        for (reason, sum) in &self.audit.ledger_by_reason {
            table.row(vec![
                Cell::text(format!("ledger: {reason}")),
                Cell::num(*sum as f64, 0),
            ]);
        }
        page.table(&table);
    }
}
