//! The checked-in source, C# binding and header are what the generator
//! and cbindgen make of tag today: a change to tag's wire types without
//! regenerating fails here, not in a player's game.
//! `HIGHTICK_BLESS=1 cargo test -p hightick-example-tag-ffi --test generated`
//! rewrites them.

use std::path::Path;

use hightick_bindgen::{Bindings, check};
use hightick_example_tag::Tag;

const BLESS: &str = "HIGHTICK_BLESS=1 cargo test -p hightick-example-tag-ffi --test generated";

#[test]
fn the_checked_in_bindings_and_header_are_what_is_generated_today() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bindings = Bindings::of::<Tag>().expect("tag's schema describes every part");
    let mut stale = Vec::new();
    for (file, generated) in bindings.files() {
        stale.extend(check(&crate_dir.join(file), generated, BLESS).err());
    }
    // The header last: cbindgen reads the source just checked (or written).
    let header = hightick_bindgen::header::generate(crate_dir);
    let path = crate_dir.join("include/hightick_tag_client.h");
    stale.extend(check(&path, &header, BLESS).err());
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}
