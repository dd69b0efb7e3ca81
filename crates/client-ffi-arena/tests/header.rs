//! The checked-in header is what cbindgen makes of the code today
//! (`hightick_bindgen::header`). `HIGHTICK_BLESS=1` rewrites the header
//! instead of comparing.

use std::path::Path;

#[test]
fn the_checked_in_header_is_what_cbindgen_generates() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated = hightick_bindgen::header::generate(crate_dir);
    let bless = "HIGHTICK_BLESS=1 cargo test -p hightick-client-ffi-arena --test header";
    let header = crate_dir.join("include/hightick_arena_client.h");
    if let Err(stale) = hightick_bindgen::check(&header, &generated, bless) {
        panic!("{stale}\n--- generated ---\n{generated}");
    }
}
