//! Map files: the shipped maps load, and every kind of mistake in a map file
//! is reported with the file, the line and the field at fault.

use hightick_arena::{Map, MapError, Team};

const GOOD: &str = r#"name = "tiny"
players_per_team = 2

[bounds]
min = [0, 0, 0]
max = [20, 10, 20]

[[boxes]]
min = [9, 0, 5]
max = [11, 3, 15]

[[boxes]]
center = [4, 0.5, 4]
size = [1, 1, 1]
kind = "crate"

[[spawns]]
team = "attackers"
min = [1, 0, 8]
max = [5, 0, 12]
yaw_deg = 90

[[spawns]]
team = "defenders"
min = [15, 0, 8]
max = [19, 0, 12]

[[buy_zones]]
team = "attackers"
min = [0, 0, 6]
max = [7, 10, 14]
"#;

/// The 1-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

/// Loads `text` and returns (file, line, field, message) of the error.
fn error_of(text: &str) -> (String, usize, String, String) {
    match Map::from_toml_str("maps/bad.toml", text) {
        Ok(_) => panic!("map should be rejected:\n{text}"),
        Err(MapError::Invalid {
            file,
            line,
            field,
            message,
            ..
        }) => (file, line, field, message),
        Err(other) => panic!("unexpected error kind: {other}"),
    }
}

fn assert_error(text: &str, needle: &str, field: &str, message_part: &str) {
    let (file, line, got_field, message) = error_of(text);
    assert_eq!(file, "maps/bad.toml");
    assert_eq!(got_field, field, "message: {message}");
    assert_eq!(line, line_of(text, needle), "field {field}: {message}");
    assert!(
        message.contains(message_part),
        "`{message}` lacks `{message_part}`"
    );
}

#[test]
fn the_reference_map_is_valid() {
    let map = Map::from_toml_str("tiny.toml", GOOD).unwrap();
    assert_eq!(map.name(), "tiny");
    assert_eq!(map.boxes().len(), 2);
    assert!(map.buy_zone(Team::Attackers).is_some());
    assert!(map.buy_zone(Team::Defenders).is_none());
    assert!(map.spawn_points(Team::Attackers).len() >= 2);
    let yaw = map.spawn_point(Team::Attackers, 0, 0).yaw;
    assert!((yaw - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
}

#[test]
fn box_with_min_above_max_names_its_max() {
    let text = GOOD.replace("max = [11, 3, 15]", "max = [8, 3, 15]");
    assert_error(&text, "max = [8, 3, 15]", "boxes[0].max", "max.x = 8");
}

#[test]
fn box_with_zero_size_names_its_size() {
    let text = GOOD.replace("size = [1, 1, 1]", "size = [1, 0, 1]");
    assert_error(
        &text,
        "size = [1, 0, 1]",
        "boxes[1].size",
        "greater than zero",
    );
}

#[test]
fn box_with_mixed_forms_is_rejected() {
    let text = GOOD.replace("size = [1, 1, 1]", "size = [1, 1, 1]\nmax = [5, 1, 5]");
    let (_, line, field, message) = error_of(&text);
    assert_eq!(field, "boxes[1]");
    // The table's span starts at its header or its first key.
    assert!(
        (line_of(&text, "center = [4")..=line_of(&text, "max = [5, 1, 5]")).contains(&line)
            || line == 12
    );
    assert!(message.contains("either"));
}

#[test]
fn box_outside_the_bounds_is_rejected() {
    let text = GOOD.replace("max = [11, 3, 15]", "max = [11, 3, 25]");
    let (_, line, field, message) = error_of(&text);
    assert_eq!(field, "boxes[0]");
    // A table's span starts at its `[[boxes]]` header.
    assert_eq!(line, line_of(&text, "[[boxes]]"), "line {line}");
    assert!(message.contains("outside the world bounds"));
}

#[test]
fn spawn_zone_outside_the_bounds_names_the_corner() {
    let text = GOOD.replace("max = [19, 0, 12]", "max = [21, 0, 12]");
    assert_error(
        &text,
        "max = [21, 0, 12]",
        "spawns[1].max",
        "outside the world bounds",
    );
    let text = GOOD.replace("min = [1, 0, 8]", "min = [-1, 0, 8]");
    assert_error(
        &text,
        "min = [-1, 0, 8]",
        "spawns[0].min",
        "outside the world bounds",
    );
}

#[test]
fn missing_team_spawn_names_the_spawns() {
    let text = GOOD.replace("team = \"defenders\"", "team = \"attackers\"");
    let (_, _, field, message) = error_of(&text);
    assert_eq!(field, "spawns");
    assert!(message.contains("defenders"), "{message}");
}

#[test]
fn spawns_outside_their_buy_zone_are_rejected() {
    let text = GOOD.replace("max = [7, 10, 14]", "max = [4, 10, 14]");
    let (_, _, field, message) = error_of(&text);
    assert_eq!(field, "spawns[0]");
    assert!(message.contains("buy zone"), "{message}");
}

#[test]
fn second_buy_zone_for_a_team_names_its_team() {
    let text =
        format!("{GOOD}\n[[buy_zones]]\nteam = \"attackers\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\n");
    let (_, line, field, _) = error_of(&text);
    assert_eq!(field, "buy_zones[1].team");
    assert_eq!(line, text.lines().count() - 2);
}

#[test]
fn too_few_spawn_points_for_the_team_size() {
    let text = GOOD.replace("players_per_team = 2", "players_per_team = 40");
    assert_error(
        &text,
        "players_per_team = 40",
        "players_per_team",
        "free spawn points",
    );
}

#[test]
fn wrong_value_type_names_the_field() {
    let text = GOOD.replace("players_per_team = 2", "players_per_team = \"two\"");
    assert_error(&text, "players_per_team = \"two\"", "players_per_team", "");
    let text = GOOD.replace("min = [9, 0, 5]", "min = [9, 0]");
    assert_error(&text, "min = [9, 0]", "boxes[0].min", "");
}

#[test]
fn unknown_team_and_unknown_field_are_named() {
    let text = GOOD.replace("team = \"defenders\"", "team = \"spectators\"");
    assert_error(
        &text,
        "team = \"spectators\"",
        "spawns[1].team",
        "spectators",
    );
    let text = GOOD.replace("kind = \"crate\"", "kind = \"crate\"\ncolour = \"red\"");
    let (_, _, field, message) = error_of(&text);
    assert_eq!(field, "boxes[1].colour", "{message}");
}

#[test]
fn missing_field_names_its_table() {
    let text = GOOD.replace("max = [20, 10, 20]\n", "");
    let (_, _, field, message) = error_of(&text);
    assert_eq!(field, "bounds.max", "{message}");
    assert!(message.contains("missing field"));
}

#[test]
fn toml_syntax_error_points_at_the_line() {
    let text = GOOD.replace("kind = \"crate\"", "kind = crate\"");
    assert_error(&text, "kind = crate\"", "boxes[1].kind", "");
}

#[test]
fn the_message_reads_file_line_column_field() {
    let text = GOOD.replace("max = [11, 3, 15]", "max = [11, -3, 15]");
    let err = Map::from_toml_str("maps/bad.toml", &text)
        .unwrap_err()
        .to_string();
    let line = line_of(&text, "max = [11, -3, 15]");
    assert!(err.starts_with(&format!("maps/bad.toml:{line}:")), "{err}");
    assert!(err.contains("field `boxes[0].max`"), "{err}");
}

#[test]
fn load_names_the_path_for_read_and_content_errors() {
    let dir = std::env::temp_dir().join(format!("hightick-arena-maps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("nowhere.toml");
    let err = Map::load(&missing).unwrap_err();
    assert!(matches!(err, MapError::Read { .. }));
    assert!(err.to_string().contains("nowhere.toml"));

    let bad = dir.join("bad_bounds.toml");
    std::fs::write(
        &bad,
        GOOD.replace("max = [20, 10, 20]", "max = [20, 0, 20]"),
    )
    .unwrap();
    match Map::load(&bad).unwrap_err() {
        MapError::Invalid {
            file, line, field, ..
        } => {
            assert!(file.ends_with("bad_bounds.toml"));
            assert_eq!(line, 6);
            assert_eq!(field, "bounds.max");
        }
        other => panic!("{other}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shipped_maps_load_from_disk_and_as_builtins_alike() {
    for name in ["dust_corners", "plaza"] {
        let builtin = Map::builtin(name).unwrap();
        let path = format!("{}/maps/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let loaded = Map::load(&path).unwrap();
        assert_eq!(builtin.name(), name);
        assert_eq!(builtin.boxes(), loaded.boxes());
        assert_eq!(
            builtin.spawn_points(Team::Defenders),
            loaded.spawn_points(Team::Defenders)
        );
        for team in Team::ALL {
            assert!(builtin.spawn_points(team).len() >= builtin.players_per_team() as usize);
        }
    }
    assert!(matches!(
        Map::builtin("de_nowhere"),
        Err(MapError::UnknownBuiltin { .. })
    ));
}

#[test]
fn shipped_maps_have_the_sizes_the_scenarios_need() {
    let dust = Map::builtin("dust_corners").unwrap();
    assert_eq!(dust.players_per_team(), 5);
    assert!(dust.bounds().size().x >= 100.0 && dust.bounds().size().z >= 100.0);
    assert!(dust.buy_zone(Team::Attackers).is_some() && dust.buy_zone(Team::Defenders).is_some());
    let plaza = Map::builtin("plaza").unwrap();
    assert_eq!(plaza.players_per_team(), 50);
}

#[test]
fn spawn_points_are_deterministic_distinct_and_free() {
    let map = Map::builtin("dust_corners").unwrap();
    let again = Map::builtin("dust_corners").unwrap();
    for team in Team::ALL {
        for seed in [0u64, 1, 99] {
            let points: Vec<_> = (0..5)
                .map(|slot| map.spawn_point(team, slot, seed))
                .collect();
            let same: Vec<_> = (0..5)
                .map(|slot| again.spawn_point(team, slot, seed))
                .collect();
            assert_eq!(points, same);
            for (i, a) in points.iter().enumerate() {
                assert!(map.capsule_fits(a.position, hightick_arena::STANDING_CAPSULE));
                assert!(map.buy_zone(team).unwrap().contains(a.position));
                for b in &points[i + 1..] {
                    assert!(a.position.distance(b.position) >= 2.0 * hightick_arena::PLAYER_RADIUS);
                }
            }
        }
        // A different seed rotates the assignment.
        assert_ne!(map.spawn_point(team, 0, 1), map.spawn_point(team, 0, 2));
    }
}

#[test]
fn a_shared_builtin_map_is_parsed_once_and_is_the_builtin() {
    let a = Map::builtin_shared("dust_corners").unwrap();
    let b = Map::builtin_shared("dust_corners").unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    let own = Map::builtin("dust_corners").unwrap();
    assert_eq!(a.name(), own.name());
    assert_eq!(a.boxes(), own.boxes());
    assert!(!std::sync::Arc::ptr_eq(
        &a,
        &Map::builtin_shared("plaza").unwrap()
    ));
    assert!(matches!(
        Map::builtin_shared("no_such_map"),
        Err(MapError::UnknownBuiltin { .. })
    ));
}
