//! A capacity plan for people and scripts: a text table, FIGURE lines, JSON, and a
//! self-contained HTML report on the report kit's page. Every number shows the
//! figures it came from; the measurements table says where each figure was taken:
//! command, commit, machine and date.

use hightick_report::{Align, Cell, Mark, Page, Table, TextTable, Tile};
use hightick_telemetry::bench::figure_line;

use crate::error::LabError;
use crate::plan::agreement::{Agreement, TOLERANCE};
use crate::plan::arithmetic::{CapacityPlan, Number};
use crate::plan::inputs::{Measured, Need};

/// `YYYY-MM-DD HH:MM UTC` of a time in ms since the Unix epoch.
pub fn utc_text(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// A number as the report shows it: whole counts without decimals.
fn value_text(n: &Number) -> String {
    match n.value {
        None => "missing".into(),
        Some(v) if n.unit == "of capacity" => format!("{:.1}%", v * 100.0),
        Some(v) if v.fract() == 0.0 || v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// Where a number came from, in full (the HTML report and JSON name every
/// rehearsal field).
fn from_text(n: &Number) -> String {
    if !n.rehearsal.is_empty() {
        format!("rehearsal: {}", n.rehearsal.join(", "))
    } else {
        from_short(n)
    }
}

/// The same for the text table: a rehearsal's fields are listed once below it.
fn from_short(n: &Number) -> String {
    if !n.rehearsal.is_empty() {
        format!("rehearsal ({} of its figures)", n.rehearsal.len())
    } else if n.from.is_empty() {
        "target".into()
    } else {
        n.from
            .iter()
            .map(|f| f.key())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The plan's side of a row against the rehearsal: a value, or a range.
fn plan_text(a: &Agreement) -> String {
    if a.plan_low == a.plan_high {
        format!("{:.2}", a.plan_low)
    } else {
        format!("{:.2}..{:.2}", a.plan_low, a.plan_high)
    }
}

/// Whether a row of the plan against the rehearsal agrees, or why it cannot.
fn verdict_text(a: &Agreement) -> String {
    match (&a.why_not, a.agrees) {
        (Some(why), true) => format!("agrees, but {why}"),
        (Some(why), false) => format!("cannot agree: {why}"),
        (None, true) => "agrees".into(),
        (None, false) => format!("DISAGREES (over {:.0}%)", TOLERANCE * 100.0),
    }
}

fn commit_text(m: &Measured) -> String {
    m.source
        .commit
        .as_deref()
        .map_or_else(|| "unknown".into(), |c| c.chars().take(12).collect())
}

impl CapacityPlan {
    /// One line: what the plan is for.
    pub fn headline(&self) -> String {
        let t = &self.inputs.target;
        format!(
            "capacity plan: {} CCU of {} at {} Hz, {} logins/s at peak, {} requests ({} purchases) per player per minute, {} min matches, {} store",
            t.ccu,
            t.mode,
            t.tick_rate_hz,
            t.login_rate_per_s,
            t.requests_per_player_min,
            t.purchases_per_player_min,
            t.match_minutes,
            t.store.as_str()
        )
    }

    /// The headline `FIGURE plan_<name> <value> <unit>` lines (numbers that have a value).
    pub fn figures(&self) -> Vec<String> {
        [
            "host_cores",
            "gameservers",
            "gateway_replicas",
            "store_busy",
            "swarm_agents",
            "fleet_buffer_matches",
        ]
        .iter()
        .filter_map(|key| {
            let n = self.numbers.iter().find(|n| n.key == *key)?;
            Some(figure_line(&format!("plan_{key}"), n.value?, n.unit))
        })
        .collect()
    }

    /// The plan as a text table, then its measurements, notes and warnings.
    pub fn render_table(&self) -> String {
        let mut out = format!("{}\n", self.headline());
        let mut t = TextTable::new(&[
            ("section", Align::Left),
            ("number", Align::Left),
            ("value", Align::Right),
            ("unit", Align::Left),
            ("from", Align::Left),
        ]);
        for n in &self.numbers {
            t.row([
                n.section.title().to_string(),
                n.key.to_string(),
                value_text(n),
                n.unit.to_string(),
                from_short(n),
            ]);
        }
        out.push_str(&t.render());
        out.push_str("\nmeasurements\n");
        let mut m = TextTable::new(&[
            ("figure", Align::Left),
            ("value", Align::Right),
            ("unit", Align::Left),
            ("run", Align::Right),
            ("commit", Align::Left),
            ("machine", Align::Left),
            ("date", Align::Left),
            ("command", Align::Left),
        ]);
        for need in Need::ALL {
            match self.inputs.figures.get(need) {
                Some(f) => m.row([
                    need.key().to_string(),
                    format!("{:.1}", f.value),
                    f.unit.clone(),
                    f.source
                        .run_id
                        .map_or_else(|| "-".into(), |i| format!("#{i}")),
                    commit_text(f),
                    f.source.machine.to_string(),
                    utc_text(f.source.recorded_at_ms),
                    f.source.command.clone(),
                ]),
                None => m.row([
                    need.key().to_string(),
                    "missing".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    need.command(&self.inputs.target),
                ]),
            }
        }
        out.push_str(&m.render());
        if let Some(r) = &self.inputs.rehearsal {
            let mut fields: Vec<&str> = self
                .numbers
                .iter()
                .flat_map(|n| n.rehearsal.iter().copied())
                .collect();
            fields.sort_unstable();
            fields.dedup();
            out.push_str(&format!(
                "rehearsal: {} ({}); its figures: {}\n",
                r.file,
                r.command,
                fields.join(", ")
            ));
            out.push_str(&self.agreement_table());
        }
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {}\n", w.message));
        }
        out
    }

    /// The plan against the rehearsal it was built from, as a text table.
    fn agreement_table(&self) -> String {
        let mut t = TextTable::new(&[
            ("number", Align::Left),
            ("plan", Align::Right),
            ("run", Align::Right),
            ("off", Align::Right),
            ("run's figure", Align::Left),
            ("verdict", Align::Left),
        ]);
        for a in &self.agreement {
            t.row([
                a.key.to_string(),
                plan_text(a),
                format!("{:.2}", a.run),
                format!("{:+.0}%", a.off * 100.0),
                a.run_figure.to_string(),
                verdict_text(a),
            ]);
        }
        format!(
            "\nplan against the rehearsal (agree: within {:.0}% of the run, or of a range's nearer end; a wait within one matchmaking pass)\n{}",
            TOLERANCE * 100.0,
            t.render()
        )
    }

    /// The plan as JSON (inputs with every figure's source, numbers, warnings, notes).
    pub fn to_json(&self) -> Result<String, LabError> {
        serde_json::to_string_pretty(self).map_err(LabError::EncodeJson)
    }

    /// The plan as one self-contained HTML document.
    pub fn render_html(&self) -> Result<String, LabError> {
        let mut page = Page::new("hightick capacity plan");
        page.paragraph(&self.headline()).note(&format!(
            "for {} at commit {}; deployment: {} cores per GameServer, {} per gateway replica, {} per swarm agent, {:.0}% CPU headroom, FleetAutoscaler sync {} s",
            self.inputs.machine,
            self.inputs.commit.as_deref().unwrap_or("unknown"),
            self.inputs.deployment.gameserver_cores,
            self.inputs.deployment.gateway_cores,
            self.inputs.deployment.agent_cores,
            self.inputs.deployment.cpu_headroom * 100.0,
            self.inputs.deployment.autoscaler_sync_s,
        ));
        let tile = |key: &str, label: &str| {
            let n = self.numbers.iter().find(|n| n.key == key);
            let text = n.map_or_else(|| "missing".into(), value_text);
            let t = Tile::new(text, label);
            if n.is_some_and(|n| n.value.is_none()) {
                t.mark(Mark::Over)
            } else {
                t
            }
        };
        page.tiles(&[
            tile("host_cores", "game-server cores"),
            tile("gameservers", "GameServers"),
            tile("gateway_replicas", "gateway replicas"),
            tile("store_busy", "of the store busy"),
            tile("swarm_agents", "swarm agents to rehearse"),
        ]);
        if !self.warnings.is_empty() {
            page.section("Warnings")
                .list(self.warnings.iter().map(|w| w.message.as_str()));
        }
        page.section("The plan").table(
            &Table::new(["section", "number", "value", "unit", "how", "from"]).rows(
                self.numbers.iter().map(|n| {
                    vec![
                        Cell::text(n.section.title()),
                        Cell::text(n.key),
                        Cell::numeric(value_text(n)).over(n.value.is_none()),
                        Cell::text(n.unit),
                        Cell::text(n.formula),
                        Cell::text(from_text(n)),
                    ]
                }),
            ),
        );
        page.section("Measurements").table(
            &Table::new([
                "figure", "value", "unit", "FIGURE", "run", "commit", "machine", "date", "command",
            ])
            .rows(
                Need::ALL
                    .iter()
                    .map(|need| match self.inputs.figures.get(*need) {
                        Some(f) => vec![
                            Cell::text(need.key()),
                            Cell::num(f.value, 1),
                            Cell::text(f.unit.clone()),
                            Cell::text(f.source.figure.clone()),
                            Cell::text(
                                f.source
                                    .run_id
                                    .map_or_else(|| "-".into(), |i| format!("#{i}")),
                            ),
                            Cell::text(commit_text(f)),
                            Cell::text(f.source.machine.to_string()),
                            Cell::text(utc_text(f.source.recorded_at_ms)),
                            Cell::text(f.source.command.clone()),
                        ],
                        None => vec![
                            Cell::text(need.key()),
                            Cell::numeric("missing").over(true),
                            Cell::text("-"),
                            Cell::text(need.figure(&self.inputs.target)),
                            Cell::text("-"),
                            Cell::text("-"),
                            Cell::text("-"),
                            Cell::text("-"),
                            Cell::text(need.command(&self.inputs.target)),
                        ],
                    }),
            ),
        );
        if !self.agreement.is_empty() {
            page.section("Against the rehearsal").table(
                &Table::new(["number", "plan", "run", "off", "run's figure", "verdict"]).rows(
                    self.agreement.iter().map(|a| {
                        vec![
                            Cell::text(a.key),
                            Cell::numeric(plan_text(a)),
                            Cell::num(a.run, 2),
                            Cell::numeric(format!("{:+.0}%", a.off * 100.0)),
                            Cell::text(a.run_figure),
                            Cell::text(verdict_text(a)).over(a.why_not.is_none() && !a.agrees),
                        ]
                    }),
                ),
            );
        }
        page.section("Notes").list(&self.notes);
        page.section("Figures").preformatted(self.figures());
        Ok(page.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::arithmetic::plan;
    use crate::plan::fixtures::inputs;

    #[test]
    fn every_form_names_the_figures_and_what_is_missing() {
        let p = plan(inputs(&[(Need::GamesPerCore, 80.0)]));
        let text = p.render_table();
        assert!(
            text.starts_with("capacity plan: 200000 CCU of 5v5 at 128 Hz"),
            "{text}"
        );
        assert!(text.contains("gameservers"), "{text}");
        assert!(text.contains("games_per_core"));
        assert!(text.contains("abcdef0"), "the figure's commit: {text}");
        assert!(text.contains("warning: missing: websockets_per_replica"));
        assert_eq!(
            p.figures(),
            vec![
                "FIGURE plan_host_cores 250.0 cores",
                "FIGURE plan_gameservers 125.0 GameServers"
            ],
            "only numbers that have a value"
        );
        let html = p.render_html().unwrap();
        assert!(html.contains("Measurements"));
        assert!(html.contains("cargo bench -p hightick-gateway --bench ws_hold"));
        let json: serde_json::Value = serde_json::from_str(&p.to_json().unwrap()).unwrap();
        let gpc = &json["inputs"]["figures"]["games_per_core"];
        assert_eq!(gpc["source"]["commit"], "abcdef0");
        assert_eq!(json["warnings"][0]["concern"], "missing");
        assert_eq!(json["numbers"][0]["key"], "matches");
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(utc_text(0), "1970-01-01 00:00 UTC");
        // 2026-11-27 21:54:00 UTC
        assert_eq!(utc_text(1_795_816_440_000), "2026-11-27 21:54 UTC");
        assert_eq!(utc_text(951_782_400_000), "2000-02-29 00:00 UTC");
    }
}
