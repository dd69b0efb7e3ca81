//! deploy/ runs nothing with more rights than it needs. For each overlay,
//! as `kubectl apply -k` would send it (support/kustomize.rs), this checks:
//! - every container of every pod template runs as non-root
//!   (`runAsNonRoot`, no uid 0), on a read-only root filesystem, without
//!   privilege escalation and with every capability dropped;
//! - every Secret volume is mounted read-only;
//! - every path a container writes (a `hightick` flag that names a file or
//!   directory it writes; PostgreSQL's data, socket and temp dirs) lies on
//!   a writable volume (emptyDir or a claim), since the root is read-only;
//! - NetworkPolicies: the game servers' admin port is open only to the
//!   gateway's pods and the `monitoring` namespace (Prometheus), and the
//!   swarm agents' port only to the coordinator's pods.
//!
//! No cluster and no binary is needed: it reads the YAML.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use support::kustomize::{
    Object, find, flag, opens, pod_labels, pod_templates, port_of, resolve, selects, strings,
};
use support::workspace;

const OVERLAYS: [&str; 2] = ["dev", "production"];

/// `hightick` flags whose value is a file or directory the command writes.
const WRITING_FLAGS: [&str; 6] = [
    "--state-dir",
    "--data-dir",
    "--results",
    "--json",
    "--report",
    "--request-log",
];

fn objects(overlay: &str) -> Vec<Object> {
    resolve(
        &workspace().join("deploy/overlays").join(overlay),
        &mut BTreeSet::new(),
    )
}

/// The paths container `c` writes.
fn written_paths(owner: &str, c: &Value) -> Vec<String> {
    let image = c["image"].as_str().unwrap_or("");
    if image.starts_with("hightick") {
        let args = strings(&c["args"]);
        if args.starts_with(&["swarm".to_owned(), "run".to_owned()]) {
            assert!(
                flag(&args, "--report").is_some(),
                "{owner}: `swarm run` writes its report into the working directory unless --report names a path"
            );
        }
        WRITING_FLAGS
            .iter()
            .filter_map(|f| flag(&args, f).map(str::to_owned))
            .collect()
    } else if image.starts_with("postgres") {
        let pgdata = c["env"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == "PGDATA")
            .and_then(|e| e["value"].as_str())
            .unwrap_or("/var/lib/postgresql/data")
            .to_owned();
        vec![pgdata, "/var/run/postgresql".to_owned(), "/tmp".to_owned()]
    } else {
        panic!("{owner}: image {image}: add what it writes to this test")
    }
}

/// Names of the volume claims a StatefulSet gives its pods, by owner.
fn claims(objects: &[Object]) -> BTreeMap<String, Vec<String>> {
    objects
        .iter()
        .filter(|o| o.kind() == "StatefulSet")
        .map(|o| {
            let names = o.doc["spec"]["volumeClaimTemplates"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["metadata"]["name"].as_str().map(str::to_owned))
                .collect();
            (format!("{} {}", o.kind(), o.name()), names)
        })
        .collect()
}

fn check_containers(overlay: &str, objects: &[Object]) -> usize {
    let claims = claims(objects);
    let mut checked = 0;
    for (owner, _, spec) in pod_templates(objects) {
        let pod = &spec["securityContext"];
        let volumes: BTreeMap<&str, &Value> = spec["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["name"].as_str().map(|n| (n, v)))
            .collect();
        let containers = ["initContainers", "containers"]
            .iter()
            .flat_map(|k| spec[*k].as_array().into_iter().flatten());
        for c in containers {
            let at = format!(
                "{overlay}: {owner}: container {}",
                c["name"].as_str().unwrap_or("?")
            );
            let ctx = &c["securityContext"];
            let either = |key: &str| {
                if ctx[key].is_null() {
                    pod[key].clone()
                } else {
                    ctx[key].clone()
                }
            };
            assert_eq!(either("runAsNonRoot"), true, "{at}: runAsNonRoot");
            assert_ne!(either("runAsUser"), 0, "{at}: runs as uid 0");
            assert_eq!(
                ctx["readOnlyRootFilesystem"], true,
                "{at}: readOnlyRootFilesystem"
            );
            assert_eq!(
                ctx["allowPrivilegeEscalation"], false,
                "{at}: allowPrivilegeEscalation"
            );
            assert!(
                strings(&ctx["capabilities"]["drop"]).contains(&"ALL".to_owned()),
                "{at}: capabilities.drop [ALL]"
            );
            let mut writable = Vec::new();
            for m in c["volumeMounts"].as_array().into_iter().flatten() {
                let name = m["name"].as_str().unwrap_or("");
                let path = m["mountPath"].as_str().unwrap_or("").to_owned();
                let read_only = m["readOnly"] == true;
                let claim = claims
                    .get(&owner)
                    .is_some_and(|c| c.iter().any(|n| n == name));
                let volume = volumes.get(name).copied();
                assert!(
                    volume.is_some() || claim,
                    "{at}: mounts {name}, which is no volume"
                );
                if let Some(v) = volume {
                    let secret = v.get("secret").is_some()
                        || v["projected"]["sources"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|s| s.get("secret").is_some());
                    assert!(
                        !secret || read_only,
                        "{at}: Secret volume {name} at {path} is mounted read-write"
                    );
                }
                let scratch = claim
                    || volume.is_some_and(|v| {
                        v.get("emptyDir").is_some() || v.get("persistentVolumeClaim").is_some()
                    });
                if scratch && !read_only {
                    writable.push(path);
                }
            }
            for path in written_paths(&at, c) {
                assert!(
                    path.starts_with('/'),
                    "{at}: writes {path}, relative to the (read-only) working directory"
                );
                assert!(
                    writable.iter().any(|w| path == *w
                        || path.starts_with(&format!("{}/", w.trim_end_matches('/')))),
                    "{at}: writes {path}, which is on no writable volume (writable: {writable:?}; the root is read-only)"
                );
            }
            checked += 1;
        }
    }
    checked
}

/// Every peer of every rule of `policy` that opens `port`/TCP, checking
/// that no such rule lets everyone in.
fn peers_of(overlay: &str, policy: &Object, port: u64) -> Vec<Value> {
    let mut peers = Vec::new();
    let mut opened = false;
    for rule in policy.doc["spec"]["ingress"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if opens(rule, "TCP", port) {
            opened = true;
            let from = rule["from"].as_array().cloned().unwrap_or_default();
            assert!(
                !from.is_empty(),
                "{overlay}: {} opens port {port} to everyone",
                policy.name()
            );
            peers.extend(from);
        }
    }
    assert!(
        opened,
        "{overlay}: {} opens port {port} to no one",
        policy.name()
    );
    peers
}

/// The NetworkPolicy (with Ingress) that selects pods labelled `labels`.
fn policy_for<'a>(overlay: &str, objects: &'a [Object], labels: &Value, what: &str) -> &'a Object {
    let policy = objects
        .iter()
        .find(|o| {
            o.kind() == "NetworkPolicy"
                && selects(&o.doc["spec"]["podSelector"]["matchLabels"], labels)
        })
        .unwrap_or_else(|| panic!("{overlay}: no NetworkPolicy selects {what}"));
    assert!(
        strings(&policy.doc["spec"]["policyTypes"]).contains(&"Ingress".to_owned()),
        "{overlay}: {} does not filter ingress",
        policy.name()
    );
    policy
}

fn template_labels(o: &Object) -> Value {
    o.doc["spec"]["template"]["metadata"]["labels"].clone()
}

fn check_policies(overlay: &str, objects: &[Object]) {
    // The hosts' admin port: the gateway's pods, and Prometheus' namespace.
    let fleet = find(objects, "Fleet", "hightick-server");
    let args = strings(
        &fleet.doc["spec"]["template"]["spec"]["template"]["spec"]["containers"][0]["args"],
    );
    let admin = port_of(flag(&args, "--admin").expect("serve --admin"));
    let gateway = template_labels(find(objects, "Deployment", "hightick-gateway"));
    let policy = policy_for(overlay, objects, &pod_labels(objects), "the game servers");
    for peer in peers_of(overlay, policy, admin) {
        let gateway_pods = peer.get("namespaceSelector").is_none()
            && selects(&peer["podSelector"]["matchLabels"], &gateway);
        let monitoring = peer.get("podSelector").is_none()
            && peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                == "monitoring";
        assert!(
            gateway_pods || monitoring,
            "{overlay}: {} lets {peer} reach the admin port {admin} (only the gateway's pods and the monitoring namespace may)",
            policy.name()
        );
    }

    // The swarm agents' port: the coordinator's pods only.
    let Some(agents) = objects
        .iter()
        .find(|o| o.kind() == "Job" && o.doc["spec"]["completionMode"] == "Indexed")
    else {
        return;
    };
    let agent_args = strings(&agents.doc["spec"]["template"]["spec"]["containers"][0]["args"]);
    let port = port_of(flag(&agent_args, "--listen").expect("swarm agent --listen"));
    let coordinator = template_labels(find(objects, "Job", "swarm-coordinator"));
    let policy = policy_for(
        overlay,
        objects,
        &template_labels(agents),
        "the swarm agents",
    );
    for peer in peers_of(overlay, policy, port) {
        assert!(
            peer.get("namespaceSelector").is_none()
                && selects(&peer["podSelector"]["matchLabels"], &coordinator),
            "{overlay}: {} lets {peer} reach the agents' port {port} (only the coordinator's pods may)",
            policy.name()
        );
    }
}

#[test]
fn every_container_is_unprivileged_on_a_read_only_root_and_ports_are_fenced() {
    for overlay in OVERLAYS {
        let objects = objects(overlay);
        let checked = check_containers(overlay, &objects);
        assert!(checked >= 2, "{overlay}: only {checked} containers found");
        check_policies(overlay, &objects);
    }
}
