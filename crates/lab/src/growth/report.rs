//! A growth run as people and tools read it: FIGURE lines, a text table,
//! JSON, and an HTML page whose charts show the tick time, the time per
//! player and the bytes per client against players, hightick beside the
//! peer, with the `players^1.2` line the crowd issue aims at.

use hightick_report::{Align, Cell, Color, Line, LineChart, Page, Svg, Table, TextTable, Tile};

use super::{GrowthReport, GrowthRow, PeerRow};
use crate::error::LabError;

/// The growth the crowd issue aims at (`tick ~ players^1.2`), drawn from
/// the first fitted size.
pub const TARGET_EXPONENT: f64 = 1.2;

impl GrowthReport {
    /// The peer's row of `players`, if it has one.
    fn peer_of(&self, players: u16) -> Option<&PeerRow> {
        self.peer.iter().find(|p| p.players == players)
    }

    /// FIGURE lines: each mode's tick and bytes, the exponents, and the
    /// peer's CPU over hightick's at each size both have.
    pub fn figures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.rows {
            out.push(format!(
                "FIGURE lab_growth_{}_tick_us {:.1} us",
                r.mode, r.tick_us
            ));
            out.push(format!(
                "FIGURE lab_growth_{}_bytes_per_client_s {:.0} B/s",
                r.mode, r.bytes_per_client_s
            ));
            if let Some(p) = self.peer_of(r.players) {
                out.push(format!(
                    "FIGURE lab_growth_{}_peer_over_hightick {:.2} x",
                    r.mode,
                    p.tick_us / r.tick_us
                ));
            }
        }
        if let Some(k) = self.exponent {
            out.push(format!("FIGURE lab_growth_exponent {k:.2}"));
        }
        if let Some(k) = self.peer_exponent {
            out.push(format!("FIGURE lab_growth_peer_exponent {k:.2}"));
        }
        out
    }

    /// The table printed after the run.
    pub fn render_table(&self) -> String {
        let peer = self.peer_name.as_deref().unwrap_or("peer");
        let (peer_us, ratio) = (format!("{peer} us/tick"), format!("{peer} / hightick"));
        let mut t = TextTable::new(&[
            ("mode", Align::Left),
            ("players", Align::Right),
            ("us/tick", Align::Right),
            ("us/tick/player", Align::Right),
            ("B/s per client", Align::Right),
            (&peer_us, Align::Right),
            (&ratio, Align::Right),
        ]);
        for r in &self.rows {
            let p = self.peer_of(r.players);
            t.row([
                r.mode.clone(),
                r.players.to_string(),
                format!("{:.1}", r.tick_us),
                format!("{:.2}", r.us_per_player),
                format!("{:.0}", r.bytes_per_client_s),
                p.map_or("-".into(), |p| format!("{:.0}", p.tick_us)),
                p.map_or("-".into(), |p| format!("{:.2}x", p.tick_us / r.tick_us)),
            ]);
        }
        let mut out = t.render();
        out.push_str(&format!("\n{}\n", self.exponent_line()));
        out
    }

    fn exponent_line(&self) -> String {
        let k = |k: Option<f64>| {
            k.map_or("not fitted (fewer than two sizes)".into(), |k| {
                format!("{k:.2}")
            })
        };
        let mut line = format!(
            "growth exponent of the tick over players >= {}: {} (target <= {TARGET_EXPONENT})",
            self.fit_from,
            k(self.exponent)
        );
        if let Some(name) = &self.peer_name {
            line.push_str(&format!("; {name}'s: {}", k(self.peer_exponent)));
        }
        line
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Result<String, LabError> {
        serde_json::to_string_pretty(self).map_err(LabError::EncodeJson)
    }

    /// The report as one self-contained HTML document.
    pub fn render_html(&self) -> Result<String, LabError> {
        let mut page = Page::new(&format!("{}: tick cost against players", self.game));
        page.paragraph(
            "One sans-IO match per mode: the game's own bots through the secure layer, \
             in memory, on a virtual clock (no kernel, no sockets). Tick time is the \
             server's work per tick, median of the rounds.",
        );
        let k = |k: Option<f64>| k.map_or("-".into(), |k| format!("{k:.2}"));
        let mut tiles = vec![Tile::new(k(self.exponent), "growth exponent (hightick)")];
        if let Some(name) = &self.peer_name {
            tiles.push(Tile::new(
                k(self.peer_exponent),
                format!("growth exponent ({name})"),
            ));
        }
        tiles.push(Tile::new(format!("{TARGET_EXPONENT}"), "target exponent"));
        page.tiles(&tiles).paragraph(&self.exponent_line());
        if let Some(name) = &self.peer_name {
            page.note(&format!(
                "{name}'s figures are its CSV's, as measured there (a live room includes the \
                 kernel's sends and receives, which hightick's sans-IO figures leave out): \
                 compare their growth, not their levels."
            ));
        }
        page.section("Tick time against players").chart(&self.chart(
            "tick time against players",
            "server tick (us)",
            |r| r.tick_us,
            |p| p.tick_us,
            true,
        )?);
        page.section("Time per player against players")
            .note("Flat is linear growth; a line rising in proportion is every player paying for every other.")
            .chart(&self.chart(
                "tick time per player",
                "us per tick per player",
                |r| r.us_per_player,
                |p| p.tick_us / f64::from(p.players.max(1)),
                false,
            )?);
        page.section("Bytes per client against players")
            .chart(&self.chart(
                "bytes per client",
                "bytes per client per second",
                |r| r.bytes_per_client_s,
                |p| p.bytes_per_client_s,
                false,
            )?);
        page.section("Modes").table(&self.table());
        page.section("Figures").preformatted(self.figures());
        Ok(page.finish())
    }

    fn table(&self) -> Table {
        let peer = self.peer_name.as_deref().unwrap_or("peer");
        Table::new([
            "mode".to_string(),
            "players".into(),
            "us/tick".into(),
            "us/tick/player".into(),
            "B/s per client".into(),
            format!("{peer} us/tick"),
            format!("{peer} B/s per client"),
        ])
        .rows(self.rows.iter().map(|r| {
            let p = self.peer_of(r.players);
            vec![
                Cell::text(&r.mode),
                Cell::num(f64::from(r.players), 0),
                Cell::num(r.tick_us, 1),
                Cell::num(r.us_per_player, 2),
                Cell::num(r.bytes_per_client_s, 0),
                Cell::num_or_dash(p.map(|p| p.tick_us), 0),
                Cell::num_or_dash(p.map(|p| p.bytes_per_client_s), 0),
            ]
        }))
    }

    /// One chart of a figure against players: hightick's line, the peer's,
    /// and with `target` the `players^1.2` line from the first fitted size.
    fn chart(
        &self,
        name: &str,
        y: &str,
        ours: fn(&GrowthRow) -> f64,
        theirs: fn(&PeerRow) -> f64,
        target: bool,
    ) -> Result<Svg, LabError> {
        let mut chart = LineChart::new(name, "players", y).line(
            Line::new(
                "hightick",
                Color::BLUE,
                self.rows.iter().map(|r| (f64::from(r.players), ours(r))),
            )
            .with_dots(3),
        );
        if let Some(name) = &self.peer_name {
            chart = chart.line(
                Line::new(
                    name.as_str(),
                    Color::ORANGE,
                    self.peer.iter().map(|p| (f64::from(p.players), theirs(p))),
                )
                .with_dots(3),
            );
        }
        let first = self.rows.iter().find(|r| r.players >= self.fit_from);
        if let (true, Some(first)) = (target, first) {
            let n0 = f64::from(first.players);
            let line = self
                .rows
                .iter()
                .filter(|r| r.players >= first.players)
                .map(|r| {
                    let n = f64::from(r.players);
                    (n, first.tick_us * (n / n0).powf(TARGET_EXPONENT))
                });
            chart = chart.line(Line::new(
                format!("players^{TARGET_EXPONENT} (the target)"),
                Color::GREY,
                line,
            ));
        }
        Ok(chart.render()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> GrowthReport {
        let row = |mode: &str, players: u16, tick_us: f64| GrowthRow {
            mode: mode.into(),
            players,
            tick_rate_hz: 128,
            tick_us,
            us_per_player: tick_us / f64::from(players),
            bytes_per_client_s: 1000.0 * f64::from(players),
        };
        GrowthReport {
            game: "arena".into(),
            rows: vec![row("plaza50", 50, 130.0), row("plaza100", 100, 420.0)],
            fit_from: 50,
            exponent: Some(1.69),
            peer_name: Some("colyseus".into()),
            peer: vec![PeerRow::new(100, 1734.0, 261_881.0)],
            peer_exponent: None,
        }
    }

    #[test]
    fn figures_table_and_page_carry_both_sides() {
        let r = report();
        let figures = r.figures();
        assert!(
            figures.contains(&"FIGURE lab_growth_exponent 1.69".to_string()),
            "{figures:?}"
        );
        assert!(
            figures.contains(&"FIGURE lab_growth_plaza100_peer_over_hightick 4.13 x".to_string())
        );
        assert!(
            !figures
                .iter()
                .any(|f| f.starts_with("FIGURE lab_growth_peer_exponent"))
        );
        let table = r.render_table();
        assert!(table.contains("colyseus / hightick"), "{table}");
        assert!(table.contains("colyseus's: not fitted"), "{table}");
        let html = r.render_html().unwrap();
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(html.contains("players^1.2 (the target)"));
        let back: GrowthReport = serde_json::from_str(&r.to_json().unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
