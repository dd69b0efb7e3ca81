//! Figures recorded from any command's output: the `FIGURE <name> <value> <unit>`
//! lines every benchmark and lab command prints, kept in the run history (kind
//! `figures`) with the command that printed them, the commit, the machine and the
//! date, so the capacity plan can name where each of its numbers came from.
//! `hightick lab record` parses and stores them; this module needs no database.

use serde::{Deserialize, Serialize};

use crate::error::LabError;
use crate::summary::HostFacts;

/// One `FIGURE <name> <value> <unit>` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// e.g. `ws_held_sockets`.
    pub name: String,
    /// The value.
    pub value: f64,
    /// The unit and whatever followed it on the line, e.g. `sockets`.
    pub unit: String,
}

/// The figures of `text`, in order: every line that starts with `FIGURE ` (other
/// lines are ignored). A `FIGURE` line without a name or a finite number is an
/// error naming its line.
pub fn parse_figures(text: &str) -> Result<Vec<Figure>, LabError> {
    let mut figures = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("FIGURE ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            return Err(bad_line(i, "needs a name and a value"));
        };
        let value: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| bad_line(i, &format!("`{value}` is not a number")))?;
        figures.push(Figure {
            name: name.to_string(),
            value,
            unit: words.collect::<Vec<_>>().join(" "),
        });
    }
    Ok(figures)
}

fn bad_line(index: usize, what: &str) -> LabError {
    LabError::History(format!("line {}: a FIGURE line {what}", index + 1))
}

/// What a figures record stores as its summary: the command and its figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureRecord {
    /// The command that printed the figures, as a person would rerun it.
    pub command: String,
    /// Its figures.
    pub figures: Vec<Figure>,
}

impl FigureRecord {
    /// The record as JSON.
    pub fn to_json(&self) -> Result<String, LabError> {
        serde_json::to_string(self).map_err(LabError::EncodeJson)
    }

    /// A record from its JSON.
    pub fn from_json(text: &str) -> Result<Self, LabError> {
        serde_json::from_str(text).map_err(|e| LabError::decode(&e))
    }
}

/// A figures record read back from the history.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedFigures {
    /// Run id.
    pub id: i64,
    /// When it was recorded, ms since the Unix epoch.
    pub recorded_at_ms: i64,
    /// The commit the measured build came from, when known.
    pub git_commit: Option<String>,
    /// The machine it ran on.
    pub host: HostFacts,
    /// The command and its figures.
    pub record: FigureRecord,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_lines_are_picked_out_of_a_benchs_output() {
        let out = "running 3 benches\nFIGURE ws_held_sockets 19000.0 sockets\n\
                   table row\n  FIGURE agones_start_to_ready_ms 12.3 ms (median of 5)\n";
        let figures = parse_figures(out).unwrap();
        assert_eq!(figures.len(), 2);
        assert_eq!(figures[0].name, "ws_held_sockets");
        assert_eq!(figures[0].value, 19000.0);
        assert_eq!(figures[1].unit, "ms (median of 5)");
        let record = FigureRecord {
            command: "cargo bench".into(),
            figures,
        };
        assert_eq!(
            FigureRecord::from_json(&record.to_json().unwrap()).unwrap(),
            record
        );
    }

    #[test]
    fn a_malformed_figure_line_names_its_line() {
        let e = parse_figures("ok\nFIGURE x fast us\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("`fast`"), "{e}");
        let e = parse_figures("FIGURE lonely\n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse_figures("FIGURE x NaN us").is_err());
    }
}
