//! The self-contained HTML report of one run: inline CSS, inline SVG charts, the tables,
//! and the FIGURE lines. Nothing is fetched from anywhere and no script runs.

use std::fmt::Write as _;

use crate::chart;
use crate::error::LabError;
use crate::summary::RunSummary;

pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:960px;color:#222}\
h1{margin-bottom:0.2em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:0.6em 0}th,td{padding:3px 10px;border-bottom:1px solid #eee}\
th{text-align:left;background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}\
td.over{color:#d62728;font-weight:bold}.muted{color:#666}\
.headline{display:flex;gap:2em;margin:1em 0}.headline div{padding:0.6em 1em;background:#f4f4f4}\
.headline b{display:block;font-size:1.6em}.ok{color:#2ca02c}.bad{color:#d62728}\
svg{display:block;max-width:100%;height:auto}pre{background:#f4f4f4;padding:0.6em}";

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// One table cell: text, whether it is a number (right-aligned), whether it is over budget.
pub(crate) struct Cell {
    text: String,
    numeric: bool,
    over: bool,
}

pub(crate) fn text(t: impl Into<String>) -> Cell {
    Cell {
        text: t.into(),
        numeric: false,
        over: false,
    }
}

pub(crate) fn num(v: f64, decimals: usize) -> Cell {
    Cell {
        text: format!("{v:.decimals$}"),
        numeric: true,
        over: false,
    }
}

/// Text in a number column (right-aligned), e.g. `12.0 / 30.5`.
pub(crate) fn numeric_text(t: impl Into<String>) -> Cell {
    Cell {
        text: t.into(),
        numeric: true,
        over: false,
    }
}

pub(crate) fn over(mut cell: Cell, over: bool) -> Cell {
    cell.over = over;
    cell
}

pub(crate) fn opt(v: Option<f64>) -> Cell {
    v.map_or_else(|| text("-"), |v| num(v, 1))
}

pub(crate) fn table(out: &mut String, headers: &[&str], rows: Vec<Vec<Cell>>) {
    out.push_str("<table><tr>");
    for h in headers {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let class = match (cell.numeric, cell.over) {
                (true, true) => " class=\"n over\"",
                (true, false) => " class=\"n\"",
                (false, true) => " class=\"over\"",
                (false, false) => "",
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(&cell.text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// Renders the report as one self-contained HTML document.
pub fn render_html(run: &RunSummary) -> Result<String, LabError> {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n\
         <p>{}</p>\n<p class=\"muted\">{}</p>\n",
        escape(&run.title),
        escape(&run.title),
        escape(&run.headline()),
        escape(&run.host_line()),
    );
    headline(&mut out, run);

    out.push_str("<h2>Frame time over time</h2>\n");
    out.push_str(&chart::frame_time(run)?);
    out.push_str("<h2>Per-subsystem breakdown</h2>\n");
    out.push_str(&chart::subsystem_breakdown(run)?);
    subsystem_table(&mut out, run);
    violations(&mut out, run);
    out.push_str("<h2>Server CPU and players over time</h2>\n");
    out.push_str(&chart::cpu_and_players(run)?);
    network_table(&mut out, run);
    bot_table(&mut out, run);

    out.push_str("<h2>Figures</h2>\n<pre>");
    for line in run.figures() {
        out.push_str(&escape(&line));
        out.push('\n');
    }
    out.push_str("</pre>\n</body></html>\n");
    Ok(out)
}

fn headline(out: &mut String, run: &RunSummary) {
    let (class, verdict) = if run.within_budget {
        ("ok", "within budget")
    } else {
        ("bad", "over budget")
    };
    let _ = writeln!(
        out,
        "<div class=\"headline\"><div><b>{:.1}</b>games per core</div>\
         <div><b>{:.3}</b>server CPU cores</div><div><b>{:.1} us</b>p99 match tick</div>\
         <div><b class=\"{class}\">{verdict}</b>p99 tick</div></div>",
        run.gpc, run.server_cpu_cores, run.tick.p99_us
    );
}

fn subsystem_table(out: &mut String, run: &RunSummary) {
    let mut rows: Vec<Vec<Cell>> = run
        .subsystems
        .iter()
        .map(|s| {
            vec![
                text(s.name.clone()),
                over(num(s.mean_us, 1), s.mean_over_budget()),
                num(s.p50_us, 1),
                over(num(s.p99_us, 1), s.p99_over_budget()),
                num(s.max_us, 1),
                opt(s.budget_mean_us),
                opt(s.budget_p99_us),
                over(num(s.violations as f64, 0), s.violations > 0),
            ]
        })
        .collect();
    let t = &run.tick;
    rows.push(vec![
        text("tick (match)"),
        num(t.mean_us, 1),
        num(t.p50_us, 1),
        over(
            num(t.p99_us, 1),
            t.budget_p99_us.is_some_and(|b| t.p99_us > b),
        ),
        num(t.max_us, 1),
        text("-"),
        opt(t.budget_p99_us),
        over(num(t.late_ticks as f64, 0), t.late_ticks > 0),
    ]);
    table(
        out,
        &[
            "subsystem",
            "mean us",
            "p50 us",
            "p99 us",
            "max us",
            "budget mean",
            "budget p99",
            "violations / late",
        ],
        rows,
    );
    let _ = writeln!(
        out,
        "<p class=\"muted\">{} match ticks, {} late. Red: over budget.</p>",
        t.ticks, t.late_ticks
    );
}

/// The run's budget violations as a list (or a line saying there are none).
pub(crate) fn violations(out: &mut String, run: &RunSummary) {
    let found = run.violations();
    if found.is_empty() {
        out.push_str("<p class=\"ok\">Budget violations: none.</p>\n");
        return;
    }
    let _ = writeln!(
        out,
        "<p class=\"bad\">Budget violations ({}):</p><ul>",
        found.len()
    );
    for v in found {
        let _ = writeln!(out, "<li>{}</li>", escape(&v.to_string()));
    }
    out.push_str("</ul>\n");
}

fn network_table(out: &mut String, run: &RunSummary) {
    let n = &run.network;
    out.push_str("<h2>Network</h2>\n");
    let mut rows = vec![
        vec![text("clients"), num(f64::from(n.clients), 0)],
        vec![
            text("bytes/s to each client"),
            num(n.client_bytes_out_per_s, 0),
        ],
        vec![
            text("packets/s to each client"),
            num(n.client_packets_out_per_s, 1),
        ],
        vec![
            text("bytes/s from each client"),
            num(n.client_bytes_in_per_s, 0),
        ],
        vec![text("packets in"), num(n.packets_in as f64, 0)],
        vec![text("packets out"), num(n.packets_out as f64, 0)],
        vec![text("bytes in"), num(n.bytes_in as f64, 0)],
        vec![text("bytes out"), num(n.bytes_out as f64, 0)],
    ];
    for d in &n.drops {
        rows.push(vec![
            text(format!("dropped: {}", d.reason)),
            num(d.count as f64, 0),
        ]);
    }
    table(out, &["network", "value"], rows);
}

fn bot_table(out: &mut String, run: &RunSummary) {
    let b = &run.bots;
    out.push_str("<h2>Bots</h2>\n");
    let mut rows = vec![
        vec![text("bots"), num(f64::from(b.bots), 0)],
        vec![
            text("connected"),
            over(num(f64::from(b.connected), 0), b.connected < b.bots),
        ],
        vec![text("snapshots"), num(b.snapshots as f64, 0)],
        vec![
            text("decode errors"),
            over(num(b.decode_errors as f64, 0), b.decode_errors > 0),
        ],
        vec![
            text("desyncs"),
            over(num(b.desyncs as f64, 0), b.desyncs > 0),
        ],
    ];
    for (kind, n) in &b.events {
        rows.push(vec![text(format!("events: {kind}")), num(*n as f64, 0)]);
    }
    rows.extend([
        vec![
            text("snapshot interval p50 ms"),
            num(b.snapshot_interval_p50_ms, 2),
        ],
        vec![
            text("snapshot interval p99 ms"),
            num(b.snapshot_interval_p99_ms, 2),
        ],
    ]);
    table(out, &["bots", "value"], rows);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_characters() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn empty_summary_still_renders() {
        let html = render_html(&RunSummary::default()).unwrap();
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(html.ends_with("</html>\n"));
    }
}
