//! docs/GUIDE.md's shell steps, walked as a new user would: `cargo new
//! dots`, the guide's Rust blocks written into the crate, then every `sh`
//! block before section 8 run as written (build, key, serve, create a
//! match, schema, bindings, the whole journey with `stack`), and what each
//! step should have made is checked.
//!
//! Two changes, the ones the guide names: the host binds 127.0.0.1, not
//! 0.0.0.0 (tests stay on loopback), and the release profile builds
//! without optimisation (`CARGO_PROFILE_RELEASE_*` in the environment; a
//! fat-LTO build of the stack would take most of CI's time). The crate's
//! target folder is kept under this workspace's (`target/guide-dots`), so
//! a second run builds only what changed.
//!
//! The Rust blocks' items (what comes before a block's first `let`) make
//! `src/lib.rs`, the `use` lines once each; the checks after them stay
//! doc-tests of this crate (`cargo test --doc -p hightick-example-tag`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One fenced block of the guide and the `## ` section it is in.
#[derive(Debug)]
struct Block {
    section: String,
    lang: String,
    text: String,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let (mut out, mut section, mut open) = (Vec::new(), String::new(), None::<Block>);
    for line in markdown.lines() {
        match open.as_mut() {
            Some(_) if line.starts_with("```") => out.extend(open.take()),
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            None if line.starts_with("```") => {
                open = Some(Block {
                    section: section.clone(),
                    lang: line.trim_start_matches('`').to_owned(),
                    text: String::new(),
                });
            }
            None if line.starts_with("## ") => section = line[3..].to_owned(),
            None => {}
        }
    }
    out
}

/// A Rust block as the reader sees it: no hidden (`# `) lines.
fn visible(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !(l.starts_with("# ") || *l == "#"))
}

/// A block's items: its visible lines before the first statement (`let`),
/// without the comments and blank lines that lead into it.
fn items(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = visible(text)
        .take_while(|l| !l.starts_with("let "))
        .collect();
    while lines
        .last()
        .is_some_and(|l| l.trim().is_empty() || l.starts_with("// "))
    {
        lines.pop();
    }
    lines
}

/// `src/lib.rs` from the items of sections 1 to 4: each name a `use` line
/// brings in is brought in once (each block repeats what it needs).
fn lib_rs(blocks: &[Block]) -> String {
    let (mut uses, mut names, mut body) = (String::new(), Vec::new(), String::new());
    let crate_blocks = blocks.iter().filter(|b| {
        b.lang == "rust"
            && ["1.", "2.", "3.", "4."]
                .iter()
                .any(|n| b.section.starts_with(n))
    });
    for block in crate_blocks {
        for line in items(&block.text) {
            let Some(path) = line.strip_prefix("use ").and_then(|l| l.strip_suffix(';')) else {
                body.push_str(line);
                body.push('\n');
                continue;
            };
            let (prefix, list) = match path.split_once("::{") {
                Some((prefix, list)) => (prefix, list.trim_end_matches('}')),
                None => path.rsplit_once("::").expect("a use path has ::"),
            };
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if !names.contains(&name.to_owned()) {
                    names.push(name.to_owned());
                    uses.push_str(&format!("use {prefix}::{name};\n"));
                }
            }
        }
        body.push('\n');
    }
    format!("//! Dots, from docs/GUIDE.md.\n#![allow(unused_imports)]\n\n{uses}\n{body}")
}

/// The guide's `sh` blocks to run: every one before section 8.
fn shell_steps(blocks: &[Block]) -> Vec<&Block> {
    let before_load_tests = blocks.iter().take_while(|b| !b.section.starts_with("8."));
    before_load_tests.filter(|b| b.lang == "sh").collect()
}

/// Runs `script` in bash in `dir` (its own process group, so what it
/// leaves in the background can be stopped), up to `patience`; panics
/// with its output when it fails.
fn run_step(script: &str, dir: &Path, groups: &mut Vec<i32>, patience: Duration) -> String {
    use std::os::unix::process::CommandExt;
    let log = dir.join(format!("step-{}.log", groups.len()));
    let mut child = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .envs(cheap_release())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .expect("bash runs");
    groups.push(child.id() as i32);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < patience,
            "this step ran past {patience:?}:\n{script}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        status.success(),
        "this step failed ({status}):\n{script}\n--- stdout ---\n{out}"
    );
    out
}

/// The release profile without optimisation or LTO.
fn cheap_release() -> [(&'static str, &'static str); 4] {
    [
        ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0"),
        ("CARGO_PROFILE_RELEASE_LTO", "false"),
        ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256"),
        ("CARGO_PROFILE_RELEASE_DEBUG", "line-tables-only"),
    ]
}

/// Stops what the steps left running (the host) when the test ends,
/// passed or failed.
struct Groups(Vec<i32>);

impl Drop for Groups {
    fn drop(&mut self) {
        for &group in &self.0 {
            // SAFETY: kill(2) with a process group id; no memory involved.
            unsafe { libc::kill(-group, libc::SIGTERM) };
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// This test binary's target folder (`target/<profile>/deps/<binary>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .nth(3)
        .expect("target/<profile>/deps")
        .to_path_buf()
}

#[test]
fn the_guides_shell_steps_take_a_new_crate_to_the_whole_journey() {
    let root = workspace_root();
    let guide = std::fs::read_to_string(root.join("docs/GUIDE.md")).unwrap();
    let blocks = blocks(&guide);
    let steps = shell_steps(&blocks);
    assert!(steps.len() >= 4, "the guide's sh blocks: {steps:?}");

    // Outside this workspace, as a user's crate is (`cargo new` inside it
    // would add itself to the workspace's members).
    let work = std::env::temp_dir().join(format!("hightick-guide-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let mut groups = Groups(Vec::new());
    let mut outputs = Vec::new();
    let mut dir = work.clone();
    for step in steps {
        let script = step.text.replace("0.0.0.0:", "127.0.0.1:");
        let patience = Duration::from_secs(if script.contains("cargo build") {
            1800
        } else {
            300
        });
        outputs.push(run_step(&script, &dir, &mut groups.0, patience));
        // A step that enters a folder leaves the next ones there.
        if let Some(cd) = script.lines().find_map(|l| l.strip_prefix("cd ")) {
            dir = dir.join(cd.trim());
        }
        // Once the crate exists: the guide's Rust and manifest, and the
        // kept target folder.
        if script.contains("cargo new") {
            write_crate(&dir, &blocks, &root);
        }
    }
    let all = outputs.join("\n");

    // The host made the match and names its public address.
    assert!(all.contains("\"address\":\"203.0.113.7:27015\""), "{all}");
    // The schema is dots' and complete.
    assert!(all.contains("\"game\": \"dots\""), "{all}");
    assert!(all.contains("\"hash\""), "{all}");
    // The bindings were written, naming dots' types.
    let ffi = std::fs::read_to_string(dir.join("dots-ffi/src/lib.rs")).unwrap();
    assert!(ffi.contains("pub struct HightickDotsInput"), "{ffi}");
    assert!(dir.join("dots-ffi/csharp/HightickDots.cs").exists());
    // The journey: matches played and recorded once, books balanced.
    let journey = std::fs::read_to_string(dir.join("journey.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&journey).unwrap();
    assert_eq!(report["mode"], "dots", "{journey}");
    let finished = report["matches_finished"].as_u64().unwrap_or(0);
    assert!(finished >= 1, "{journey}");
    assert_eq!(report["audit"]["matches_recorded"], finished, "{journey}");
    assert_eq!(
        report["audit"]["balance_total"], report["audit"]["ledger_total"],
        "{journey}"
    );
    assert_eq!(report["bots"]["desyncs"], 0, "{journey}");
    drop(groups);
    let _ = std::fs::remove_dir_all(&work);
}

/// Writes the guide's `src/lib.rs`, `src/main.rs` and dependencies into the
/// crate `cargo new` made, its paths pointing at this checkout, and links
/// its target folder to the kept one.
fn write_crate(dir: &Path, blocks: &[Block], root: &Path) {
    let in_section_5 = |lang: &str| {
        let b = blocks
            .iter()
            .find(|b| b.section.starts_with("5.") && b.lang.starts_with(lang));
        b.unwrap_or_else(|| panic!("section 5 has a {lang} block"))
    };
    std::fs::write(dir.join("src/lib.rs"), lib_rs(blocks)).unwrap();
    let main: Vec<&str> = visible(&in_section_5("rust").text).collect();
    std::fs::write(dir.join("src/main.rs"), main.join("\n")).unwrap();
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let package = manifest.split("[dependencies]").next().unwrap();
    let deps = in_section_5("toml")
        .text
        .replace("../hightick/", &format!("{}/", root.display()));
    // The workspace's lock: the same versions, nothing new to resolve.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), format!("{package}{deps}")).unwrap();
    let kept = target_dir().join("guide-dots");
    std::fs::create_dir_all(&kept).unwrap();
    std::os::unix::fs::symlink(&kept, dir.join("target")).unwrap();
}
