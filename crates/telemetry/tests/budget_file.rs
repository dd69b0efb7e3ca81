//! Budget files on disk: the shipped one loads, and every kind of bad file
//! gets an error naming the file, the line and the field.

use std::path::PathBuf;

use hightick_telemetry::{BudgetTarget, Budgets, Subsystem, TelemetryError};
use proptest::prelude::*;

/// Writes `text` to a fresh file in the temp dir and returns its path.
fn write_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-telemetry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

struct Fault {
    file: String,
    line: usize,
    field: String,
    message: String,
    display: String,
}

fn load_fault(name: &str, text: &str) -> Fault {
    let path = write_file(name, text);
    match Budgets::load(&path) {
        Err(e @ TelemetryError::Budget { .. }) => {
            let display = e.to_string();
            let TelemetryError::Budget {
                file,
                line,
                field,
                message,
                ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!(file, path.display().to_string());
            Fault {
                file,
                line,
                field,
                message,
                display,
            }
        }
        other => panic!("expected a budget error for {name}, got {other:?}"),
    }
}

fn assert_names(fault: &Fault, line: usize, field: &str) {
    assert_eq!(fault.line, line, "{}", fault.display);
    assert_eq!(fault.field, field, "{}", fault.display);
    // The one-line message a person reads carries all three.
    assert!(fault.display.contains(&fault.file), "{}", fault.display);
    assert!(
        fault.display.contains(&format!(":{line}:")),
        "{}",
        fault.display
    );
    assert!(fault.display.contains(field), "{}", fault.display);
}

#[test]
fn the_shipped_file_loads() {
    let b = Budgets::load(concat!(env!("CARGO_MANIFEST_DIR"), "/budgets.toml")).unwrap();
    let mode = b.mode("5v5").unwrap();
    for s in Subsystem::ALL {
        assert!(mode.get(BudgetTarget::Subsystem(s)).is_limited(), "{s}");
    }
}

#[test]
fn an_unknown_field_is_named() {
    let text = "[5v5]\nwindow_ticks = 128\n\n[5v5.movement]\nmean_us = 4.0\nmax_us = 9.0\n";
    let fault = load_fault("unknown_field.toml", text);
    assert_names(&fault, 6, "5v5.movement.max_us");
    assert!(fault.message.contains("max_us"), "{}", fault.message);
}

#[test]
fn an_unknown_subsystem_table_is_named() {
    let text = "[5v5]\n[5v5.movment]\nmean_us = 4.0\n";
    let fault = load_fault("unknown_table.toml", text);
    assert_eq!(fault.line, 2, "{}", fault.display);
    assert!(fault.field.starts_with("5v5.movment"), "{}", fault.display);
    assert!(fault.message.contains("movment"), "{}", fault.message);
}

#[test]
fn a_wrong_type_is_named() {
    let text = "[plaza100]\n[plaza100.tick]\nmean_us = \"fast\"\n";
    let fault = load_fault("wrong_type.toml", text);
    assert_names(&fault, 3, "plaza100.tick.mean_us");
    assert!(fault.message.contains("string"), "{}", fault.message);
}

#[test]
fn a_negative_value_is_named() {
    let text = "[5v5]\n[5v5.tick]\nmean_us = 40.0\np99_us = -1.0\n";
    let fault = load_fault("negative.toml", text);
    assert_names(&fault, 4, "5v5.tick.p99_us");
    assert!(fault.message.contains("-1"), "{}", fault.message);
}

#[test]
fn a_non_finite_value_is_named() {
    let text = "[5v5]\n[5v5.fow]\np99_us = nan\n";
    let fault = load_fault("nan.toml", text);
    assert_names(&fault, 3, "5v5.fow.p99_us");
}

#[test]
fn a_mode_that_is_not_a_table_is_named() {
    let text = "# comment\nplaza100 = 3\n";
    let fault = load_fault("not_a_table.toml", text);
    assert_names(&fault, 2, "plaza100");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any edit of a good file either parses or gives an error whose line is
    /// inside the file; parsing never panics.
    #[test]
    fn edited_files_never_panic_and_errors_point_inside(
        at in 0usize..400,
        cut in 0usize..20,
        insert in "[a-z0-9_=.\\[\\]\"\n -]{0,12}",
    ) {
        let good = include_str!("../budgets.toml");
        let mut at = at.min(good.len());
        while !good.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + cut).min(good.len());
        while !good.is_char_boundary(end) {
            end -= 1;
        }
        let text = format!("{}{}{}", &good[..at], insert, &good[end..]);
        match Budgets::parse(&text, "edited.toml") {
            Ok(_) => {}
            Err(TelemetryError::Budget { file, line, column, field, .. }) => {
                prop_assert_eq!(file, "edited.toml");
                prop_assert!(line >= 1 && line <= text.lines().count() + 1);
                prop_assert!(column >= 1);
                prop_assert!(!field.is_empty());
            }
            Err(other) => prop_assert!(false, "unexpected error kind {other:?}"),
        }
    }
}
