//! The error type at the arena crate's boundary.

/// What can go wrong when loading a map. Every problem in a map file names the
/// file, the 1-based line and column, and the field at fault.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// The map file could not be read.
    #[error("{file}: cannot read map file: {source}")]
    Read {
        /// The path as given.
        file: String,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, does not have the map's shape, or breaks a
    /// rule of map geometry (a box with `min > max`, a spawn zone outside the
    /// world bounds, a team without a spawn zone, ...).
    #[error("{file}:{line}:{column}: field `{field}`: {message}")]
    Invalid {
        /// The file (or source name) the text came from.
        file: String,
        /// 1-based line of the offending value.
        line: usize,
        /// 1-based column of the offending value.
        column: usize,
        /// Dotted path of the field, e.g. `boxes[3].max` or `spawns`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// [`crate::Map::builtin`] was asked for a map that is not shipped.
    #[error("no built-in map named `{name}` (built-in maps: {known})")]
    UnknownBuiltin {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: &'static str,
    },
}
