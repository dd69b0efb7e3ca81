//! hightick-bindgen: a game's client library for other languages,
//! generated from the wire schema its derives describe.
//!
//! What it is for: a game written with the engine's derives (`Wire`,
//! `InputPayload`, `ReliableEvent`, `Archetype`, `Replicated`) gets, with
//! no binding code written by hand:
//! - the whole `src/lib.rs` of its C ABI crate: `#[repr(C)]` records for
//!   its input, its events (one flat record, `kind` says which) and one
//!   entity's state, their conversions to and from the game's types (a
//!   caller's value its encoding cannot carry is refused by name), the
//!   `FfiGame` marker and the `export!` call;
//! - its C# binding: the records, P/Invoke declarations and a wrapper
//!   class, for Unity or any .NET.
//!
//! The C header is cbindgen's, as for the arena (the `header` feature
//! regenerates one in a test). `<game> bindings --out DIR` (every game
//! binary has it) writes `DIR/src/lib.rs` and `DIR/csharp/Hightick<Game>.cs`;
//! a game's C ABI crate checks in both, and a test compares them with what
//! the generator makes today ([`check`]).
//!
//! What it is not: the ABI itself (`hightick-client-ffi`), nor bindings for
//! hand-written codecs, which describe nothing (the arena's library is
//! written by hand: `hightick-client-ffi-arena`).
//!
//! ```
//! # use hightick_bindgen::Names;
//! let names = Names::of("tag");
//! assert_eq!((names.pascal.as_str(), names.library.as_str()), ("Tag", "hightick_tag_client"));
//! ```

mod csharp;
mod ctype;
#[cfg(feature = "header")]
pub mod header;
mod model;
mod rust;

use std::any::type_name;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hightick_engine::Game;
use hightick_engine::mode::HostedGame;
use hightick_engine::schema::GameSchema;

pub use csharp::CsharpAbi;
pub use model::{Model, Names, Paths};

/// Why no bindings were made.
#[derive(Debug, thiserror::Error)]
pub enum BindgenError {
    /// A part of the game has a hand-written codec, which has no schema.
    #[error(
        "{game}'s {part} has a hand-written codec, which describes nothing: derive it (`#[derive(Wire, ...)]`) to generate bindings"
    )]
    HandWritten {
        /// The game.
        game: &'static str,
        /// `input`, `event`, `archetypes` or `replica`.
        part: &'static str,
    },
    /// A field's type has no plain C form.
    #[error(
        "field `{field}` of `{owner}` is a `{ty}`: a C record holds integers, f32, f64, bool, EntityId and fixed-size arrays of them"
    )]
    Unsupported {
        /// The type holding it.
        owner: String,
        /// The field.
        field: String,
        /// Its Rust type.
        ty: String,
    },
    /// The input or the replica is an enum.
    #[error("the {part} `{name}` is an enum: its C record is made from a struct's fields")]
    NotAStruct {
        /// `input` or `replica`.
        part: &'static str,
        /// The type.
        name: &'static str,
    },
    /// The events are not an enum.
    #[error("the events `{name}` are a struct: their C record is made from an enum's variants")]
    NotAnEnum {
        /// The type.
        name: &'static str,
    },
    /// More than 256 event kinds.
    #[error("`{name}` has more than 256 variants: `kind` is a byte")]
    TooManyKinds {
        /// The type.
        name: &'static str,
    },
    /// A replica field takes a name the entity record uses.
    #[error(
        "field `{field}` of `{owner}` has the name of the entity record's own field: rename it"
    )]
    Reserved {
        /// The replica.
        owner: &'static str,
        /// The field (`id` or `kind`).
        field: &'static str,
    },
    /// A file could not be written or rustfmt failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// A game's generated files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bindings {
    /// The C ABI crate's `src/lib.rs`, formatted by rustfmt.
    pub rust: String,
    /// The C# binding.
    pub csharp: String,
    /// The C# file's name (`HightickTag.cs`).
    pub csharp_file: String,
}

impl Bindings {
    /// The bindings of game `G`.
    pub fn of<G: HostedGame>() -> Result<Self, BindgenError> {
        let paths = Paths {
            game: type_name::<G>().to_owned(),
            input: type_name::<<G as Game>::Input>().to_owned(),
            event: type_name::<<G as Game>::Event>().to_owned(),
            replica: type_name::<<G as Game>::Replica>().to_owned(),
        };
        let model = Model::new(&GameSchema::of::<G>(), paths)?;
        Ok(Self {
            rust: format_rust(&rust::emit(&model))?,
            csharp: csharp::emit(&model),
            csharp_file: format!("Hightick{}.cs", model.names.pascal),
        })
    }

    /// The files under a C ABI crate's directory: `src/lib.rs` and
    /// `csharp/Hightick<Game>.cs`.
    pub fn files(&self) -> [(PathBuf, &str); 2] {
        [
            (PathBuf::from("src/lib.rs"), self.rust.as_str()),
            (
                Path::new("csharp").join(&self.csharp_file),
                self.csharp.as_str(),
            ),
        ]
    }

    /// Writes [`files`](Self::files) under `dir`, making the folders; the
    /// paths written.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, BindgenError> {
        let mut written = Vec::new();
        for (file, text) in self.files() {
            let path = dir.join(file);
            let io = |source| BindgenError::Io {
                path: path.clone(),
                source,
            };
            std::fs::create_dir_all(path.parent().unwrap_or(dir)).map_err(io)?;
            std::fs::write(&path, text).map_err(io)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// `source` as rustfmt (edition 2024) writes it; as it is, with a note on
/// standard error, where rustfmt is not installed (it compiles the same).
fn format_rust(source: &str) -> Result<String, BindgenError> {
    let io = |source| BindgenError::Io {
        path: PathBuf::from("rustfmt"),
        source,
    };
    let spawned = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "note: rustfmt is not installed (rustup component add rustfmt): src/lib.rs is written unformatted"
            );
            return Ok(source.to_owned());
        }
        spawned => spawned.map_err(io)?,
    };
    let mut stdin = child.stdin.take().expect("piped");
    let text = source.to_owned();
    let feeder = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().map_err(io)?;
    feeder
        .join()
        .expect("the feeding thread does not panic")
        .map_err(io)?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).into_owned();
        return Err(io(std::io::Error::other(format!(
            "rustfmt refused the generated source: {why}"
        ))));
    }
    String::from_utf8(out.stdout).map_err(|e| io(std::io::Error::other(e)))
}

/// Compares a checked-in generated file with what is generated today; with
/// `HIGHTICK_BLESS` set in the environment, rewrites it instead. The error
/// says which file is stale and the command that regenerates it (`bless`).
pub fn check(path: &Path, generated: &str, bless: &str) -> Result<(), String> {
    if std::env::var_os("HIGHTICK_BLESS").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        return std::fs::write(path, generated).map_err(|e| format!("{}: {e}", path.display()));
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    if checked_in == generated {
        return Ok(());
    }
    let first = checked_in
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(checked_in.lines().count().min(generated.lines().count()));
    Err(format!(
        "{} is stale (it first differs at line {}): regenerate it with {bless}",
        path.display(),
        first + 1
    ))
}
