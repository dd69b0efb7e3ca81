//! The TOML map format: parsing, and validation that names file, line and field.
//!
//! ```toml
//! name = "tiny"
//! players_per_team = 1
//!
//! [bounds]                      # the playable volume; its bottom is the floor
//! min = [0, 0, 0]
//! max = [20, 10, 20]
//!
//! [[boxes]]                     # min/max corners ...
//! min = [9, 0, 5]
//! max = [11, 3, 15]
//! kind = "wall"                 # wall (default), crate or platform
//!
//! [[boxes]]                     # ... or centre and size
//! center = [4, 0.5, 4]
//! size = [1, 1, 1]
//! kind = "crate"
//!
//! [[spawns]]                    # feet stand at min.y
//! team = "attackers"
//! min = [1, 0, 8]
//! max = [4, 0, 12]
//! yaw_deg = 90                  # facing; 0 looks along +z, 90 along +x
//!
//! [[spawns]]
//! team = "defenders"
//! min = [16, 0, 8]
//! max = [19, 0, 12]
//!
//! [[buy_zones]]                 # optional, at most one per team; holds its spawns
//! team = "attackers"
//! min = [0, 0, 6]
//! max = [6, 10, 14]
//! ```

use hightick_config::text_position::line_column;
use std::ops::Range;

use glam::Vec3;
use serde::Deserialize;
use toml::Spanned;

use crate::error::MapError;
use crate::team::Team;
use crate::world::aabb::Aabb;
use crate::world::map::{BoxKind, Map, MapParts, SpawnZone};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMap {
    name: Spanned<String>,
    players_per_team: Spanned<u32>,
    bounds: Spanned<RawBounds>,
    #[serde(default)]
    boxes: Vec<Spanned<RawBox>>,
    #[serde(default)]
    spawns: Vec<Spanned<RawZone>>,
    #[serde(default)]
    buy_zones: Vec<Spanned<RawZone>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBounds {
    min: Spanned<[f32; 3]>,
    max: Spanned<[f32; 3]>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBox {
    min: Option<Spanned<[f32; 3]>>,
    max: Option<Spanned<[f32; 3]>>,
    center: Option<Spanned<[f32; 3]>>,
    size: Option<Spanned<[f32; 3]>>,
    #[serde(default)]
    kind: Option<BoxKind>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawZone {
    team: Spanned<Team>,
    min: Spanned<[f32; 3]>,
    max: Spanned<[f32; 3]>,
    yaw_deg: Option<Spanned<f32>>,
}

/// Builds [`MapError::Invalid`] values for one source text.
struct Reporter<'a> {
    file: &'a str,
    text: &'a str,
}

impl Reporter<'_> {
    fn at(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> MapError {
        let (line, column) = line_column(self.text, span.start);
        MapError::Invalid {
            file: self.file.to_owned(),
            line,
            column,
            field: field.into(),
            message: message.into(),
        }
    }

    /// Turns a TOML or shape error into a [`MapError`], recovering the field
    /// path from the text around the error's span.
    fn toml_error(&self, err: &toml::de::Error) -> MapError {
        let start = err.span().map_or(0, |s| s.start);
        let message = err.message().trim().to_owned();
        let mut field = field_at(self.text, start);
        if let Some(missing) = quoted_after(&message, "missing field `") {
            field = join(&table_at(self.text, start), missing);
        } else if let Some(unknown) = quoted_after(&message, "unknown field `") {
            field = join(&table_at(self.text, start), unknown);
        }
        if field.is_empty() {
            field = "(document)".to_owned();
        }
        self.at(start..start, field, message)
    }
}

fn quoted_after<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    Some(&rest[..rest.find('`')?])
}

fn join(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_owned()
    } else {
        format!("{table}.{key}")
    }
}

/// The table path (`bounds`, `boxes[2]`) in force at byte `offset`.
fn table_at(text: &str, offset: usize) -> String {
    let mut table = String::new();
    let mut counters: Vec<(String, usize)> = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        if line_start > offset {
            break;
        }
        let header = line.split('#').next().unwrap_or("").trim();
        if let Some(name) = header.strip_prefix("[[").and_then(|h| h.strip_suffix("]]")) {
            let name = name.trim().to_owned();
            let index = match counters.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => {
                    *count += 1;
                    *count - 1
                }
                None => {
                    counters.push((name.clone(), 1));
                    0
                }
            };
            table = format!("{name}[{index}]");
        } else if let Some(name) = header.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            table = name.trim().to_owned();
        }
        line_start += line.len();
    }
    table
}

/// The dotted field path of the value at byte `offset`: the table in force
/// plus the key on that line.
fn field_at(text: &str, offset: usize) -> String {
    let table = table_at(text, offset);
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    match line.find('=') {
        Some(eq) if !line.trim_start().starts_with('[') => {
            let key = line[..eq].trim().trim_matches('"');
            join(&table, key)
        }
        _ => table,
    }
}

/// Parses and validates a map. `file` names the source in errors.
pub(crate) fn parse(file: &str, text: &str) -> Result<Map, MapError> {
    let report = Reporter { file, text };
    let raw: RawMap = toml::from_str(text).map_err(|e| report.toml_error(&e))?;

    let name = raw.name.get_ref().trim();
    if name.is_empty() {
        return Err(report.at(raw.name.span(), "name", "must not be empty"));
    }
    let players = *raw.players_per_team.get_ref();
    if !(1..=64).contains(&players) {
        return Err(report.at(
            raw.players_per_team.span(),
            "players_per_team",
            format!("{players} is out of range 1..=64"),
        ));
    }

    let raw_bounds = raw.bounds.get_ref();
    let bounds = corners(&report, "bounds", &raw_bounds.min, &raw_bounds.max)?;

    let mut boxes = Vec::with_capacity(raw.boxes.len());
    let mut kinds = Vec::with_capacity(raw.boxes.len());
    for (i, b) in raw.boxes.iter().enumerate() {
        let field = format!("boxes[{i}]");
        let aabb = box_shape(&report, &field, b)?;
        if !bounds.contains_box(&aabb) {
            return Err(report.at(
                b.span(),
                field,
                format!(
                    "box {:?}..{:?} lies outside the world bounds {:?}..{:?}",
                    aabb.min.to_array(),
                    aabb.max.to_array(),
                    bounds.min.to_array(),
                    bounds.max.to_array()
                ),
            ));
        }
        boxes.push(aabb);
        kinds.push(b.get_ref().kind.unwrap_or_default());
    }

    let buy_zones = buy_zones(&report, &raw.buy_zones, &bounds)?;

    let mut spawn_zones = Vec::with_capacity(raw.spawns.len());
    for (j, z) in raw.spawns.iter().enumerate() {
        let field = format!("spawns[{j}]");
        let zone = zone_shape(&report, &field, z.get_ref(), &bounds)?;
        let team = *z.get_ref().team.get_ref();
        let yaw = match &z.get_ref().yaw_deg {
            Some(y) if !y.get_ref().is_finite() => {
                return Err(report.at(y.span(), format!("{field}.yaw_deg"), "must be finite"));
            }
            Some(y) => y.get_ref().to_radians(),
            None => {
                // Face the middle of the map.
                let to_mid = bounds.center() - zone.center();
                to_mid.x.atan2(to_mid.z)
            }
        };
        spawn_zones.push(SpawnZone {
            team,
            area: zone,
            yaw: crate::world::pose::wrap_angle(yaw),
        });
    }
    for team in Team::ALL {
        if !spawn_zones.iter().any(|z| z.team == team) {
            let span = raw.spawns.first().map_or(0..0, Spanned::span);
            return Err(report.at(
                span,
                "spawns",
                format!("no spawn zone for team `{}`", team.name()),
            ));
        }
    }

    for (j, (z, raw_zone)) in spawn_zones.iter().zip(&raw.spawns).enumerate() {
        if let Some(buy) = buy_zones[z.team.index()]
            && !buy.contains_box(&z.area)
        {
            return Err(report.at(
                raw_zone.span(),
                format!("spawns[{j}]"),
                format!("spawn zone lies outside the {} buy zone", z.team.name()),
            ));
        }
    }

    let map = Map::from_parts(MapParts {
        name: name.to_owned(),
        source: file.to_owned(),
        players_per_team: players,
        bounds,
        boxes,
        kinds,
        spawn_zones,
        buy_zones,
    });
    for team in Team::ALL {
        let free = map.spawn_points(team).len();
        if free < players as usize {
            return Err(report.at(
                raw.players_per_team.span(),
                "players_per_team",
                format!(
                    "the {} spawn zones hold {free} free spawn points, fewer than the {players} players per team",
                    team.name()
                ),
            ));
        }
    }
    Ok(map)
}

fn vec3(v: &Spanned<[f32; 3]>) -> Vec3 {
    Vec3::from_array(*v.get_ref())
}

fn finite(report: &Reporter<'_>, field: &str, v: &Spanned<[f32; 3]>) -> Result<Vec3, MapError> {
    let p = vec3(v);
    if p.is_finite() {
        Ok(p)
    } else {
        Err(report.at(v.span(), field, "every coordinate must be finite"))
    }
}

/// A box from `min`/`max` values, checking `min < max` on every axis.
fn corners(
    report: &Reporter<'_>,
    table: &str,
    min: &Spanned<[f32; 3]>,
    max: &Spanned<[f32; 3]>,
) -> Result<Aabb, MapError> {
    let lo = finite(report, &format!("{table}.min"), min)?;
    let hi = finite(report, &format!("{table}.max"), max)?;
    for (axis, name) in ["x", "y", "z"].into_iter().enumerate() {
        if lo[axis] >= hi[axis] {
            return Err(report.at(
                max.span(),
                format!("{table}.max"),
                format!(
                    "max.{name} = {} must be greater than min.{name} = {}",
                    hi[axis], lo[axis]
                ),
            ));
        }
    }
    Ok(Aabb::new(lo, hi))
}

fn box_shape(report: &Reporter<'_>, field: &str, b: &Spanned<RawBox>) -> Result<Aabb, MapError> {
    let raw = b.get_ref();
    match (&raw.min, &raw.max, &raw.center, &raw.size) {
        (Some(min), Some(max), None, None) => corners(report, field, min, max),
        (None, None, Some(center), Some(size)) => {
            let c = finite(report, &format!("{field}.center"), center)?;
            let s = finite(report, &format!("{field}.size"), size)?;
            if s.cmple(Vec3::ZERO).any() {
                return Err(report.at(
                    size.span(),
                    format!("{field}.size"),
                    "every size component must be greater than zero",
                ));
            }
            Ok(Aabb::from_center_size(c, s))
        }
        _ => Err(report.at(
            b.span(),
            field,
            "a box needs either `min` and `max`, or `center` and `size`",
        )),
    }
}

/// A zone's volume: `min <= max` (flat in y is allowed), inside the bounds.
fn zone_shape(
    report: &Reporter<'_>,
    field: &str,
    z: &RawZone,
    bounds: &Aabb,
) -> Result<Aabb, MapError> {
    let lo = finite(report, &format!("{field}.min"), &z.min)?;
    let hi = finite(report, &format!("{field}.max"), &z.max)?;
    for (axis, name) in ["x", "y", "z"].into_iter().enumerate() {
        let flat_ok = axis == 1;
        if lo[axis] > hi[axis] || (!flat_ok && lo[axis] == hi[axis]) {
            return Err(report.at(
                z.max.span(),
                format!("{field}.max"),
                format!(
                    "max.{name} = {} must be greater than min.{name} = {}",
                    hi[axis], lo[axis]
                ),
            ));
        }
    }
    if !bounds.contains(lo) {
        return Err(report.at(
            z.min.span(),
            format!("{field}.min"),
            format!("{:?} lies outside the world bounds", lo.to_array()),
        ));
    }
    if !bounds.contains(hi) {
        return Err(report.at(
            z.max.span(),
            format!("{field}.max"),
            format!("{:?} lies outside the world bounds", hi.to_array()),
        ));
    }
    Ok(Aabb::new(lo, hi))
}

fn buy_zones(
    report: &Reporter<'_>,
    raw: &[Spanned<RawZone>],
    bounds: &Aabb,
) -> Result<[Option<Aabb>; 2], MapError> {
    let mut zones = [None; 2];
    for (k, z) in raw.iter().enumerate() {
        let field = format!("buy_zones[{k}]");
        let zone = zone_shape(report, &field, z.get_ref(), bounds)?;
        if let Some(yaw) = &z.get_ref().yaw_deg {
            return Err(report.at(
                yaw.span(),
                format!("{field}.yaw_deg"),
                "a buy zone has no facing",
            ));
        }
        let team = z.get_ref().team.get_ref();
        if zones[team.index()].replace(zone).is_some() {
            return Err(report.at(
                z.get_ref().team.span(),
                format!("{field}.team"),
                format!("a second buy zone for team `{}`", team.name()),
            ));
        }
    }
    Ok(zones)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\n[bounds]\nmin = [0, 0, 0]\n\n[[boxes]]\nmin = 1\n[[boxes]] # two\nkind = \"crate\"\n";

    #[test]
    fn line_and_column_are_one_based() {
        assert_eq!(line_column(TEXT, 0), (1, 1));
        assert_eq!(line_column(TEXT, TEXT.find("min").unwrap()), (3, 1));
    }

    #[test]
    fn field_path_follows_tables_and_arrays_of_tables() {
        assert_eq!(field_at(TEXT, 3), "name");
        assert_eq!(field_at(TEXT, TEXT.find("[0, 0").unwrap()), "bounds.min");
        assert_eq!(field_at(TEXT, TEXT.find("= 1").unwrap()), "boxes[0].min");
        assert_eq!(
            field_at(TEXT, TEXT.find("\"crate").unwrap()),
            "boxes[1].kind"
        );
        assert_eq!(table_at(TEXT, TEXT.find("# two").unwrap()), "boxes[1]");
    }
}
