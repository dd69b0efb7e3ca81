//! A peer's figures for rooms of the growth run's shapes, read from a CSV
//! (`players,us_per_tick,bytes_per_client_s`, one row per room size; the
//! side-by-side harness in ../shared/peers prints them), so the report
//! charts the peer beside hightick. A bad line is an error naming the
//! file, the line and the field.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::LabError;

/// One room size of the peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerRow {
    /// Players in the room.
    pub players: u16,
    /// CPU per room tick, microseconds.
    pub tick_us: f64,
    /// Bytes a client receives per second.
    pub bytes_per_client_s: f64,
}

impl PeerRow {
    /// A row.
    pub fn new(players: u16, tick_us: f64, bytes_per_client_s: f64) -> Self {
        Self {
            players,
            tick_us,
            bytes_per_client_s,
        }
    }
}

/// The header a peer CSV starts with.
const HEADER: &str = "players,us_per_tick,bytes_per_client_s";

/// The rows of the CSV at `path`.
pub fn read_peer_csv(path: &Path) -> Result<Vec<PeerRow>, LabError> {
    let text = std::fs::read_to_string(path)
        .map_err(LabError::io(format!("reading {}", path.display())))?;
    parse(&text).map_err(|(line, message)| LabError::Config {
        field: "--peer",
        message: format!("{}:{line}: {message}", path.display()),
    })
}

/// The rows of a peer CSV's text; an error is its 1-based line and what
/// is wrong there.
fn parse(text: &str) -> Result<Vec<PeerRow>, (usize, String)> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    match lines.next() {
        Some((_, header)) if header.trim() == HEADER => {}
        Some((i, header)) => {
            return Err((i + 1, format!("the header is `{header}`, not `{HEADER}`")));
        }
        None => return Err((1, format!("empty: the first line is `{HEADER}`"))),
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [players, tick, bytes] = fields[..] else {
            return Err((i + 1, format!("{} fields, not 3", fields.len())));
        };
        let number = |name: &str, text: &str| {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| (i + 1, format!("{name} `{text}` is not a positive number")))
        };
        let players = players
            .parse::<u16>()
            .map_err(|_| (i + 1, format!("players `{players}` is not a count")))?;
        rows.push(PeerRow::new(
            players,
            number("us_per_tick", tick)?,
            number("bytes_per_client_s", bytes)?,
        ));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_and_a_bad_field_is_named_with_its_line() {
        let text = "players,us_per_tick,bytes_per_client_s\n50,1364,191132\n\n100,1734,261881\n";
        let rows = parse(text).unwrap();
        assert_eq!(
            rows,
            [
                PeerRow::new(50, 1364.0, 191_132.0),
                PeerRow::new(100, 1734.0, 261_881.0)
            ]
        );
        let bad = "players,us_per_tick,bytes_per_client_s\n50,fast,1\n";
        assert_eq!(
            parse(bad).unwrap_err(),
            (2, "us_per_tick `fast` is not a positive number".into())
        );
        assert_eq!(parse("a,b\n").unwrap_err().0, 1);
        assert_eq!(
            parse("players,us_per_tick,bytes_per_client_s\n1,2\n")
                .unwrap_err()
                .0,
            2
        );
    }
}
