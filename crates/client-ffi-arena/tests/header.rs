//! The checked-in header is what cbindgen makes of the code today.
//!
//! The C functions are emitted by `hightick_client_ffi::export!`, so
//! cbindgen reads the crate after macro expansion (`rustc
//! -Zunpretty=expanded`, allowed on a stable toolchain by
//! `RUSTC_BOOTSTRAP=1` for that one nested `cargo rustc`; it checks the
//! crate into `target/cbindgen-expand`). `HIGHTICK_BLESS=1` rewrites the
//! header instead of comparing.

use std::path::{Path, PathBuf};

fn workspace_target() -> PathBuf {
    // tests run from target/<profile>/deps/<test binary>
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
        .expect("the test binary lives in target/<profile>/deps")
}

#[test]
fn the_checked_in_header_is_what_cbindgen_generates() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("include/hightick_arena_client.h");
    // SAFETY: set before any other thread of this test binary runs (it has
    // one test); cbindgen's nested cargo inherits them.
    unsafe {
        std::env::set_var("RUSTC_BOOTSTRAP", "1");
        std::env::set_var(
            "CARGO_EXPAND_TARGET_DIR",
            workspace_target().join("cbindgen-expand"),
        );
    }
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    if std::env::var_os("HIGHTICK_BLESS").is_some() {
        std::fs::write(&header, &generated).expect("header written");
        return;
    }
    let checked_in = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is stale: regenerate it with \
         HIGHTICK_BLESS=1 cargo test -p hightick-client-ffi-arena --test header\n\
         --- generated ---\n{generated}",
        header.display()
    );
}
