//! Reading a TOML config file as every hightick service does (the host's and
//! the gateway's): the file's own I/O error, a parse error at the line and
//! column an editor shows, and a field out of range by its dotted name.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::text_position::line_column;

/// What is wrong with a config file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file could not be read.
    #[error("{}: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The text is not valid TOML for the config.
    #[error("{file}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column of the fault.
        column: usize,
        /// What is wrong (names the field).
        message: String,
    },
    /// A field holds a value out of range.
    #[error("config field `{field}`: {reason}")]
    InvalidField {
        /// The field, dotted path.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl ConfigFileError {
    /// `field` is out of range: `reason` says how.
    pub fn invalid(field: &'static str, reason: &str) -> Self {
        Self::InvalidField {
            field,
            reason: reason.to_owned(),
        }
    }
}

/// The text of the config file at `path`.
pub fn read(path: &Path) -> Result<String, ConfigFileError> {
    std::fs::read_to_string(path).map_err(|source| ConfigFileError::Read {
        file: path.to_path_buf(),
        source,
    })
}

/// `text` parsed as TOML into `T`; `file` names it in errors.
pub fn parse_toml<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, ConfigFileError> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|span| line_column(text, span.start))
            .unwrap_or((1, 1));
        ConfigFileError::Parse {
            file: file.to_owned(),
            line,
            column,
            message: e.message().trim().to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        port: u16,
    }

    #[test]
    fn errors_name_the_file_the_place_and_the_field() {
        let err = parse_toml::<Sample>("\nport = \"x\"\n", "a.toml").unwrap_err();
        assert!(err.to_string().starts_with("a.toml:2:8:"), "{err}");
        let err = read(Path::new("/nonexistent/hightick.toml")).unwrap_err();
        assert!(
            err.to_string().starts_with("/nonexistent/hightick.toml: "),
            "{err}"
        );
        let err = ConfigFileError::invalid("port", "must be above 0");
        assert_eq!(err.to_string(), "config field `port`: must be above 0");
    }
}
