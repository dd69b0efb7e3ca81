//! What the generator makes of the workspace's games: racing's quantized
//! floats and arrays, and the arena's refusal (its codecs are written by
//! hand, so its schema describes nothing). Tag's output is compiled and
//! played in examples/tag/ffi.

use hightick_arena::game::Arena;
use hightick_bindgen::{BindgenError, Bindings};
use hightick_example_racing::Race;

#[test]
fn racing_gets_records_with_its_floats_checked_against_their_range() {
    let b = Bindings::of::<Race>().expect("racing is derived");
    assert_eq!(b.csharp_file, "HightickRacing.cs");
    // The car's position, 2 floats in -90..=90: an array in the record,
    // an element each in C#; a caller's value is checked as the wire
    // would carry it.
    assert!(b.rust.contains("pub position: [f32; 2],"), "{}", b.rust);
    assert!(
        b.csharp.contains("public float Position0, Position1;"),
        "{}",
        b.csharp
    );
    assert!(
        b.rust.contains("Encoding::Plain, \"input.throttle\""),
        "{}",
        b.rust
    );
    assert!(
        b.rust
            .contains("pub const HIGHTICK_RACING_EVENT_FINISHED: u8 = 1;"),
        "{}",
        b.rust
    );
    assert!(
        b.rust.contains("record.lap_laps = v1.to_record();"),
        "{}",
        b.rust
    );
    assert!(
        b.csharp
            .contains("public sealed class RacingClient : IDisposable"),
        "{}",
        b.csharp
    );
    assert!(
        b.csharp
            .contains("public const string Library = \"hightick_racing_client\";")
    );
}

#[test]
fn the_arena_is_refused_with_the_part_written_by_hand() {
    let e = Bindings::of::<Arena>().unwrap_err();
    assert!(
        matches!(e, BindgenError::HandWritten { game: "arena", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("hand-written codec"), "{e}");
}
