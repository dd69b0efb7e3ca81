//! docs/ARCHITECTURE.md draws the workspace's crate graph; this test reads
//! `cargo metadata` and fails when the drawing and the real dependencies
//! part: a real dependency neither drawn nor implied by a drawn path, or a
//! drawn edge that is no dependency.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

type Edges = BTreeSet<(String, String)>;

/// A package's name as the drawing writes it.
fn short(name: &str) -> String {
    name.replace("hightick-example-", "examples/")
        .replace("hightick-", "")
}

/// Every normal dependency between workspace packages, as (used, user).
fn real_edges(root: &Path) -> Edges {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let mut edges = Edges::new();
    for p in packages {
        let user = p["name"].as_str().unwrap();
        for d in p["dependencies"].as_array().unwrap() {
            let used = d["name"].as_str().unwrap();
            if names.contains(used) && d["kind"].is_null() && used != user {
                edges.insert((short(used), short(user)));
            }
        }
    }
    edges
}

/// The `a --> b` lines of the first mermaid block of `doc`.
fn drawn_edges(doc: &str) -> Edges {
    let block = doc
        .split("```mermaid")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/ARCHITECTURE.md has a mermaid block");
    block
        .lines()
        .filter_map(|line| line.trim().split_once("-->"))
        .map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned()))
        .collect()
}

fn reaches(edges: &Edges, from: &str, to: &str) -> bool {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    let mut stack = vec![from];
    let mut seen = BTreeSet::new();
    while let Some(at) = stack.pop() {
        if at == to {
            return true;
        }
        if seen.insert(at) {
            stack.extend(next.get(at).into_iter().flatten());
        }
    }
    false
}

#[test]
fn the_drawn_crate_graph_is_the_real_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let real = real_edges(&root);
    let drawn = drawn_edges(&doc);
    assert!(real.len() > 20, "cargo metadata gave {} edges", real.len());
    let not_real: Vec<_> = drawn.difference(&real).collect();
    let not_drawn: Vec<_> = real
        .iter()
        .filter(|(a, b)| !reaches(&drawn, a, b))
        .collect();
    assert!(
        not_real.is_empty() && not_drawn.is_empty(),
        "docs/ARCHITECTURE.md's crate graph: drawn but no dependency: {not_real:?}; \
         a dependency neither drawn nor implied by a drawn path: {not_drawn:?}"
    );
}
