//! Reading a TOML config file as every hightick service does (the host's and
//! the gateway's): the file's own I/O error, a parse error at the line and
//! column an editor shows, and a field out of range by its dotted name.
//! Secrets beside the config ([`read_secret`]): from a file (a mounted
//! Kubernetes Secret), a variable naming that file, or a variable holding it.
//! The reference file of a config, from its struct ([`reference`]).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::text_position::line_column;

pub mod reference;
pub mod text_position;

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

/// A secret's bytes and where they came from (for error messages). `Debug`
/// never shows the bytes.
pub struct Secret {
    /// The secret, surrounding ASCII whitespace (a file's last newline) trimmed.
    pub bytes: Vec<u8>,
    /// Where it came from: the file's path or `$VARIABLE`.
    pub origin: String,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes from {})", self.bytes.len(), self.origin)
    }
}

/// The secret in the file at `path` (any bytes, surrounding ASCII whitespace
/// trimmed); the error names the file.
pub fn read_secret_file(path: &Path) -> Result<Vec<u8>, ConfigFileError> {
    let bytes = std::fs::read(path).map_err(|source| ConfigFileError::Read {
        file: path.to_path_buf(),
        source,
    })?;
    Ok(bytes.trim_ascii().to_vec())
}

/// A secret from the first of: `file` (a flag or config field), the file
/// named by `${env}_FILE`, the value of `$env`. `None` when none is set (an
/// empty variable counts as unset); an unreadable file is an error naming it.
pub fn read_secret(file: Option<&Path>, env: &str) -> Result<Option<Secret>, ConfigFileError> {
    read_secret_in(file, env, |name| std::env::var_os(name))
}

/// [`read_secret`] with the environment given as `var` (tests).
fn read_secret_in(
    file: Option<&Path>,
    env: &str,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<Option<Secret>, ConfigFileError> {
    let from_file = |path: &Path| {
        read_secret_file(path).map(|bytes| Secret {
            bytes,
            origin: path.display().to_string(),
        })
    };
    if let Some(path) = file {
        return from_file(path).map(Some);
    }
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    if let Some(path) = set(&format!("{env}_FILE")) {
        return from_file(Path::new(&path)).map(Some);
    }
    Ok(set(env).map(|value| Secret {
        bytes: value.into_encoded_bytes().trim_ascii().to_vec(),
        origin: format!("${env}"),
    }))
}

/// Whether an `Authorization` header value carries `secret` as its bearer
/// (compared in constant time, the presented value trimmed); `None` when it
/// carries no bearer at all.
pub fn bearer_matches(authorization: Option<&str>, secret: &str) -> Option<bool> {
    let presented = authorization?.strip_prefix("Bearer ")?;
    Some(constant_time_eq(
        presented.trim().as_bytes(),
        secret.as_bytes(),
    ))
}

/// Equality that takes the same time wherever the first difference is: for
/// comparing a presented secret with the one held.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secrets"));
        assert_eq!(bearer_matches(Some("Bearer secret "), "secret"), Some(true));
        assert_eq!(bearer_matches(Some("Bearer other"), "secret"), Some(false));
        assert_eq!(bearer_matches(Some("Basic secret"), "secret"), None);
        assert_eq!(bearer_matches(None, "secret"), None);
    }

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

    #[test]
    fn secrets_come_from_a_file_a_variable_naming_one_or_a_variable() {
        let dir = std::env::temp_dir().join(format!("hightick-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("secret");
        std::fs::write(&file, b"\xff binary secret\n").unwrap();
        let env = "HIGHTICK_SECRET";
        let none = |_: &str| None;
        assert!(read_secret_in(None, env, none).unwrap().is_none());
        let s = read_secret_in(Some(&file), env, none).unwrap().unwrap();
        assert_eq!(s.bytes, b"\xff binary secret");
        assert_eq!(s.origin, file.display().to_string());
        assert!(!format!("{s:?}").contains("binary"), "Debug shows no bytes");
        let value = |name: &str| (name == env).then(|| " from the variable\n".into());
        let s = read_secret_in(None, env, value).unwrap().unwrap();
        assert_eq!(s.bytes, b"from the variable");
        assert_eq!(s.origin, "$HIGHTICK_SECRET");
        let both = |name: &str| match name {
            "HIGHTICK_SECRET_FILE" => Some(file.clone().into_os_string()),
            _ => Some("ignored".into()),
        };
        assert_eq!(
            read_secret_in(None, env, both).unwrap().unwrap().bytes,
            b"\xff binary secret"
        );
        let empty = |_: &str| Some("".into());
        assert!(read_secret_in(None, env, empty).unwrap().is_none());
        let missing = dir.join("missing");
        let err = read_secret_in(Some(&missing), env, none).unwrap_err();
        assert!(
            err.to_string().starts_with(&missing.display().to_string()),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
