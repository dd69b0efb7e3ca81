//! deploy/ as `kubectl apply -k` would send it, resolved without kubectl
//! (resources, generators, merge patches, namespace), and what the deploy
//! tests ask of the objects: pod templates, label selection, ports, flags.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize as _;
use serde_json::Value;

/// One object of an overlay and the file it came from.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    pub(crate) file: PathBuf,
    pub(crate) doc: Value,
}

impl Object {
    pub(crate) fn kind(&self) -> &str {
        self.doc["kind"].as_str().unwrap_or("")
    }
    pub(crate) fn name(&self) -> &str {
        self.doc["metadata"]["name"].as_str().unwrap_or("")
    }
}

pub(crate) fn read_yaml(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::Deserializer::from_str(&text)
        .map(|doc| {
            let v = serde_norway::Value::deserialize(doc)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            serde_json::to_value(v).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .filter(|v| !v.is_null())
        .collect()
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// JSON merge patch (RFC 7386), as kustomize applies a patch to a custom resource.
pub(crate) fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// The objects kustomization `dir` produces; every file it reads goes into `used`.
pub(crate) fn resolve(dir: &Path, used: &mut BTreeSet<PathBuf>) -> Vec<Object> {
    let file = dir.join("kustomization.yaml");
    let k = read_yaml(&file)
        .pop()
        .unwrap_or_else(|| panic!("{} is empty", file.display()));
    used.insert(file.canonicalize().unwrap());
    let exists = |p: &Path| {
        assert!(
            p.exists(),
            "{}: names {} which does not exist",
            file.display(),
            p.display()
        );
        p.canonicalize().unwrap()
    };
    let mut objects = Vec::new();
    for r in strings(&k["resources"]) {
        let path = exists(&dir.join(&r));
        if path.is_dir() {
            objects.extend(resolve(&path, used));
        } else {
            used.insert(path.clone());
            objects.extend(read_yaml(&path).into_iter().map(|doc| Object {
                file: path.clone(),
                doc,
            }));
        }
    }
    for (kind, key) in [
        ("ConfigMap", "configMapGenerator"),
        ("Secret", "secretGenerator"),
    ] {
        for generator in k[key].as_array().cloned().unwrap_or_default() {
            let mut data = serde_json::Map::new();
            for f in strings(&generator["files"]) {
                let (key, rel) = f.split_once('=').unwrap_or((f.as_str(), f.as_str()));
                assert!(
                    !rel.starts_with(".."),
                    "{}: kustomize may not read {rel} (outside the directory)",
                    file.display()
                );
                let path = exists(&dir.join(rel));
                used.insert(path.clone());
                data.insert(
                    key.to_owned(),
                    Value::String(std::fs::read_to_string(&path).unwrap()),
                );
            }
            for l in strings(&generator["literals"]) {
                let (key, value) = l.split_once('=').expect("literal KEY=VALUE");
                data.insert(key.to_owned(), Value::String(value.to_owned()));
            }
            let doc = serde_json::json!({
                "kind": kind,
                "metadata": { "name": generator["name"] },
                "data": data,
            });
            objects.push(Object {
                file: file.clone(),
                doc,
            });
        }
    }
    for patch in k["patches"].as_array().cloned().unwrap_or_default() {
        let path = exists(&dir.join(patch["path"].as_str().expect("patch path")));
        used.insert(path.clone());
        for p in read_yaml(&path) {
            let target = objects
                .iter_mut()
                .find(|o| {
                    o.doc["kind"] == p["kind"] && o.doc["metadata"]["name"] == p["metadata"]["name"]
                })
                .unwrap_or_else(|| {
                    panic!(
                        "{}: patches nothing: {} {}",
                        path.display(),
                        p["kind"],
                        p["metadata"]["name"]
                    )
                });
            merge(&mut target.doc, &p);
        }
    }
    if let Some(ns) = k["namespace"].as_str() {
        for o in &mut objects {
            if o.kind() != "Namespace" {
                o.doc["metadata"]["namespace"] = Value::String(ns.to_owned());
            }
        }
    }
    objects
}

pub(crate) fn find<'a>(objects: &'a [Object], kind: &str, name: &str) -> &'a Object {
    objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// Pod templates: (owner, pod labels, pod spec).
pub(crate) fn pod_templates(objects: &[Object]) -> Vec<(String, Value, Value)> {
    let mut pods = Vec::new();
    for o in objects {
        let template = match o.kind() {
            "Deployment" | "StatefulSet" | "Job" => &o.doc["spec"]["template"],
            "Fleet" => &o.doc["spec"]["template"]["spec"]["template"],
            _ => continue,
        };
        let owner = format!("{} {}", o.kind(), o.name());
        pods.push((
            owner,
            template["metadata"]["labels"].clone(),
            template["spec"].clone(),
        ));
    }
    pods
}

pub(crate) fn selects(selector: &Value, labels: &Value) -> bool {
    selector
        .as_object()
        .is_some_and(|s| !s.is_empty() && s.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

pub(crate) fn container_ports(spec: &Value) -> Vec<(String, u64)> {
    let mut ports = Vec::new();
    for c in spec["containers"].as_array().into_iter().flatten() {
        for p in c["ports"].as_array().into_iter().flatten() {
            let name = p["name"].as_str().unwrap_or("").to_owned();
            ports.push((name, p["containerPort"].as_u64().expect("containerPort")));
        }
    }
    ports
}

pub(crate) fn port_of(addr: &str) -> u64 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {addr}"))
}

/// The value after `flag` in `args`.
pub(crate) fn flag<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// The labels of the game servers' pods (the Fleet's pod template).
pub(crate) fn pod_labels(objects: &[Object]) -> Value {
    find(objects, "Fleet", "hightick-server").doc["spec"]["template"]["spec"]["template"]["metadata"]
        ["labels"]
        .clone()
}

/// Whether a NetworkPolicy ingress `rule` opens `port` over `protocol`.
pub(crate) fn opens(rule: &Value, protocol: &str, port: u64) -> bool {
    rule["ports"].as_array().into_iter().flatten().any(|p| {
        let first = p["port"].as_u64().unwrap_or(0);
        let last = p["endPort"].as_u64().unwrap_or(first);
        p["protocol"] == protocol && (first..=last).contains(&port)
    })
}
