//! Read-only access to a host's `/proc` and `/sys` under a root directory, so the
//! checks run against the live machine (`/`) or against fixture trees in tests.

use std::path::{Path, PathBuf};

/// Files of one host, found under `root`. Every read is best-effort: a missing or
/// unreadable file is `None`, never an error, since kernels and containers expose
/// different subsets.
#[derive(Debug, Clone)]
pub(crate) struct HostFiles {
    root: PathBuf,
}

impl HostFiles {
    pub(crate) fn new(root: &Path) -> Self {
        HostFiles {
            root: root.to_path_buf(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// The file's text with surrounding whitespace trimmed.
    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// The file's content parsed as an unsigned integer.
    pub(crate) fn read_u64(&self, rel: &str) -> Option<u64> {
        self.read(rel)?.parse().ok()
    }

    /// Names of the entries in a directory that start with `prefix` and continue with
    /// digits only (`cpu0`, `node1`, `state3`), ordered by that number.
    pub(crate) fn numbered(&self, rel: &str, prefix: &str) -> Vec<(u32, String)> {
        let Ok(dir) = std::fs::read_dir(self.path(rel)) else {
            return Vec::new();
        };
        let mut found: Vec<(u32, String)> = dir
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let n = name.strip_prefix(prefix)?.parse().ok()?;
                Some((n, name))
            })
            .collect();
        found.sort_unstable();
        found
    }
}

/// Parses a kernel CPU list such as `0-3,8,10-11`. `None` when malformed.
pub(crate) fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 65_536 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("5\n"), Some(vec![5]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert_eq!(parse_cpu_list("0-4294967295"), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn cpu_list_parser_never_panics(text in "[0-9,\\- ]{0,24}") {
            let _ = parse_cpu_list(&text);
        }

        #[test]
        fn cpu_list_ranges_round_trip(a in 0u32..512, len in 0u32..64, single in 0u32..1024) {
            let text = format!("{a}-{},{single}", a + len);
            let cpus = parse_cpu_list(&text).unwrap();
            prop_assert_eq!(cpus.len() as u32, len + 2);
            prop_assert_eq!(cpus[0], a);
            prop_assert_eq!(*cpus.last().unwrap(), single);
        }
    }
}
