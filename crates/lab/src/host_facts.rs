//! Finding the [`HostFacts`] of a machine from its `/proc` and `/etc` files.

use std::path::Path;

use crate::summary::HostFacts;

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

/// The git commit of this build: `git rev-parse HEAD` in the working directory, else
/// in the source tree the lab was compiled from; `None` without git or a repository.
pub(crate) fn git_commit() -> Option<String> {
    let in_dir = |dir: Option<&Path>| {
        let mut git = std::process::Command::new("git");
        if let Some(d) = dir {
            git.arg("-C").arg(d);
        }
        git.args(["rev-parse", "HEAD"])
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|c| !c.is_empty())
    };
    in_dir(None).or_else(|| in_dir(Some(Path::new(env!("CARGO_MANIFEST_DIR")))))
}

/// `debug` or `release`: how this code was compiled.
#[cfg(feature = "history")]
pub(crate) fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// The value of `key` in `key : value` or `KEY="value"` lines.
fn field<'a>(text: &'a str, key: &str, sep: char) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(sep)?;
        (k.trim() == key).then(|| v.trim().trim_matches('"'))
    })
}

impl HostFacts {
    /// Reads CPU count and model from `root/proc/cpuinfo`, kernel from
    /// `root/proc/sys/kernel/{ostype,osrelease}` and distribution from `root/etc/os-release`.
    /// Pass `/` for this machine. Whatever is missing is left as `unknown`; when no CPU
    /// is listed the count falls back to the CPUs this process may use.
    pub fn detect(root: &Path, git_commit: Option<String>) -> HostFacts {
        let cpuinfo = read(root, "proc/cpuinfo").unwrap_or_default();
        let listed = cpuinfo
            .lines()
            .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
            .count();
        let cores = if listed > 0 {
            listed
        } else {
            std::thread::available_parallelism().map_or(1, usize::from)
        };
        let cpu_model = ["model name", "Model", "cpu model", "uarch"]
            .iter()
            .find_map(|k| field(&cpuinfo, k, ':'))
            .unwrap_or("unknown")
            .to_string();
        let kernel = match (
            read(root, "proc/sys/kernel/ostype"),
            read(root, "proc/sys/kernel/osrelease"),
        ) {
            (Some(t), Some(r)) => format!("{} {}", t.trim(), r.trim()),
            _ => std::env::consts::OS.to_string(),
        };
        let distro = read(root, "etc/os-release")
            .and_then(|t| field(&t, "PRETTY_NAME", '=').map(str::to_string));
        let os = match distro {
            Some(d) => format!("{kernel} ({d})"),
            None => kernel,
        };
        HostFacts {
            cores: u32::try_from(cores).unwrap_or(u32::MAX),
            cpu_model,
            os,
            git_commit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_come_from_the_fixture_tree() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host");
        let facts = HostFacts::detect(&root, Some("abc123".into()));
        assert_eq!(facts.cores, 2);
        assert_eq!(facts.cpu_model, "AMD EPYC 7B13 64-Core Processor");
        assert_eq!(facts.os, "Linux 6.8.0-45-generic (Ubuntu 24.04.1 LTS)");
        assert_eq!(facts.git_commit.as_deref(), Some("abc123"));
    }

    #[test]
    fn an_empty_root_still_gives_facts() {
        let facts = HostFacts::detect(Path::new("/definitely/not/here"), None);
        assert!(facts.cores >= 1);
        assert_eq!(facts.cpu_model, "unknown");
    }

    #[test]
    fn this_machine_has_facts() {
        let facts = HostFacts::detect(Path::new("/"), None);
        assert!(facts.cores >= 1);
        assert!(!facts.os.is_empty());
    }
}
