//! A C ABI crate's header as cbindgen writes it today (the `header`
//! feature), for the tests that compare it with the checked-in one.
//!
//! The C functions are emitted by `hightick_client_ffi::export!`, so
//! cbindgen reads the crate after macro expansion (`rustc
//! -Zunpretty=expanded`, allowed on a stable toolchain by
//! `RUSTC_BOOTSTRAP=1` for that one nested `cargo rustc`; it checks the
//! crate into `<target>/cbindgen-expand`).

use std::path::{Path, PathBuf};

/// The target directory of the running test binary
/// (`target/<profile>/deps/<binary>`).
fn workspace_target() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
        .expect("the test binary lives in target/<profile>/deps")
}

/// The header cbindgen makes of the crate at `crate_dir` with its
/// `cbindgen.toml`.
///
/// Call it from a test binary with one test: it sets environment variables
/// that the nested cargo inherits.
pub fn generate(crate_dir: &Path) -> String {
    // SAFETY: the caller's test binary runs this one test, so no other
    // thread reads the environment meanwhile.
    unsafe {
        std::env::set_var("RUSTC_BOOTSTRAP", "1");
        std::env::set_var(
            "CARGO_EXPAND_TARGET_DIR",
            workspace_target().join("cbindgen-expand"),
        );
    }
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .unwrap_or_else(|e| panic!("{}/cbindgen.toml: {e}", crate_dir.display()));
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    String::from_utf8(generated).expect("the header is UTF-8")
}
