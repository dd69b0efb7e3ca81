//! The checked-in `csharp/HightickArena.cs` (the ABI's records, the
//! P/Invoke declarations with the prediction calls, `ArenaClient`) is what
//! hightick-bindgen generates for the arena today, sized against the
//! arena's records; only `csharp/ArenaRecords.cs` is written by hand.
//! `HIGHTICK_BLESS=1 cargo test -p hightick-client-ffi-arena --test
//! csharp_abi` rewrites it.

use std::mem::size_of;
use std::path::Path;

use hightick_arena_client::{HightickArenaEntity, HightickArenaEvent, HightickArenaInput};
use hightick_bindgen::{CsharpAbi, check};

#[test]
fn the_checked_in_csharp_abi_is_what_bindgen_generates() {
    let abi = CsharpAbi {
        game: "arena".into(),
        namespace: "Hightick".into(),
        library: "hightick_arena_client".into(),
        client: "ArenaClient".into(),
        records: [
            ("ArenaInput".into(), size_of::<HightickArenaInput>()),
            ("ArenaEvent".into(), size_of::<HightickArenaEvent>()),
            ("ArenaEntity".into(), size_of::<HightickArenaEntity>()),
        ],
        predict: true,
        schema_hash: None,
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("csharp/HightickArena.cs");
    let bless = "HIGHTICK_BLESS=1 cargo test -p hightick-client-ffi-arena --test csharp_abi";
    if let Err(stale) = check(&path, &abi.file(), bless) {
        panic!("{stale}");
    }
}
