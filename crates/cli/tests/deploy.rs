//! deploy/ is a Kustomize install whose pieces fit together and fit the
//! code. The test resolves each overlay itself (resources, generators,
//! merge patches, namespace: what `kubectl apply -k` would send, without
//! needing kubectl; where kubectl is installed, `kubectl kustomize` must
//! agree) and checks:
//! - every file in deploy/ is used by a kustomization, and every file a
//!   kustomization names exists;
//! - each Service selects a workload's pods and targets a port they have;
//!   each ServiceMonitor selects a Service and scrapes a port it names; the
//!   dashboards' `job` labels are those Services' names;
//! - every `hightick` container's flags exist (`hightick ... --help`), and
//!   its ports are the CLI's defaults and its containers' ports;
//! - the Fleet: ports `game-<i>` for each worker, a grace period longer than
//!   the drain timeout, the Counter `matches` the FleetAutoscaler scales on;
//! - the gateway's HPA metric is exported by a real gateway's `/metrics`
//!   and named by the Prometheus adapter's rule;
//! - the swarm's Indexed Job and the coordinator's --agents list agree.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde::Deserialize as _;
use serde_json::Value;
use support::kustomize::{
    Object, container_ports, find, flag, opens, pod_labels, pod_templates, port_of, resolve,
    selects, strings,
};
use support::{Running, dashboard_expressions, series_names, temp_dir, workspace};

/// Flags the manifests use that another branch adds (none now: `serve
/// --agones` is merged).
const PENDING_FLAGS: [(&str, &str); 0] = [];

const OVERLAYS: [&str; 2] = ["dev", "production"];

/// `hightick ARGS --help`, cached.
fn help(cache: &mut BTreeMap<String, String>, path: &[&str]) -> String {
    cache
        .entry(path.join(" "))
        .or_insert_with(|| {
            let out = Command::new(env!("CARGO_BIN_EXE_hightick"))
                .args(path)
                .arg("--help")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "hightick {} --help failed",
                path.join(" ")
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .clone()
}

fn check_overlay(
    overlay: &str,
    exported: &BTreeMap<String, &'static str>,
    help_cache: &mut BTreeMap<String, String>,
    used: &mut BTreeSet<PathBuf>,
) {
    let dir = workspace().join("deploy/overlays").join(overlay);
    let objects = resolve(&dir, used);
    let pods = pod_templates(&objects);
    let at = |o: &Object| {
        format!(
            "{overlay}: {} {} ({})",
            o.kind(),
            o.name(),
            o.file.display()
        )
    };

    // Services select pods and target their ports.
    for svc in objects.iter().filter(|o| o.kind() == "Service") {
        let selector = &svc.doc["spec"]["selector"];
        let matching: Vec<_> = pods
            .iter()
            .filter(|(_, labels, _)| selects(selector, labels))
            .collect();
        assert!(!matching.is_empty(), "{}: selects no pods", at(svc));
        for port in svc.doc["spec"]["ports"].as_array().into_iter().flatten() {
            let target = &port["targetPort"];
            for (owner, _, spec) in &matching {
                let ports = container_ports(spec);
                let found = match target {
                    Value::String(name) => ports.iter().any(|(n, _)| n == name),
                    Value::Number(n) => ports.iter().any(|(_, p)| Some(*p) == n.as_u64()),
                    _ => ports.iter().any(|(_, p)| Some(*p) == port["port"].as_u64()),
                };
                assert!(found, "{}: port {target} is not a port of {owner}", at(svc));
            }
        }
    }

    // ServiceMonitors select Services and scrape ports they name.
    let mut monitored = BTreeSet::new();
    for sm in objects.iter().filter(|o| o.kind() == "ServiceMonitor") {
        let selector = &sm.doc["spec"]["selector"]["matchLabels"];
        let services: Vec<_> = objects
            .iter()
            .filter(|o| o.kind() == "Service" && selects(selector, &o.doc["metadata"]["labels"]))
            .collect();
        assert_eq!(services.len(), 1, "{}: should select one Service", at(sm));
        for ep in sm.doc["spec"]["endpoints"].as_array().into_iter().flatten() {
            let port = ep["port"].as_str().expect("endpoint port name");
            assert!(
                services[0].doc["spec"]["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["name"] == port),
                "{}: port {port} is not on Service {}",
                at(sm),
                services[0].name()
            );
            assert_eq!(ep["path"], "/metrics", "{}", at(sm));
        }
        monitored.insert(services[0].name().to_owned());
    }
    for (file, expr) in dashboard_expressions() {
        for job in expr
            .split("job=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
        {
            assert!(
                monitored.contains(job) || (overlay == "production" && job == "hightick-swarm"),
                "{file}: job=\"{job}\" is no scraped Service in {overlay} (scraped: {monitored:?})"
            );
        }
    }

    // hightick containers: flags that exist, ports that agree.
    let server_defaults = hightick_server::HostConfig::default();
    for (owner, _, spec) in &pods {
        for c in spec["containers"].as_array().into_iter().flatten() {
            if !c["image"]
                .as_str()
                .is_some_and(|i| i.starts_with("hightick"))
            {
                continue;
            }
            let args = strings(&c["args"]);
            let depth = if args[0] == "swarm" { 2 } else { 1 };
            let path: Vec<&str> = args[..depth].iter().map(String::as_str).collect();
            let text = help(help_cache, &path);
            for a in args.iter().filter(|a| a.starts_with("--")) {
                let pending = PENDING_FLAGS
                    .iter()
                    .any(|&(sub, f)| sub == path[0] && f == a);
                assert!(
                    pending || text.contains(&format!("{a} ")) || text.contains(&format!("{a}\n")),
                    "{overlay}: {owner}: `hightick {}` has no flag {a}",
                    path.join(" ")
                );
            }
            let ports = container_ports(spec);
            let named = |name: &str| {
                ports
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|&(_, p)| p)
                    .unwrap_or_else(|| panic!("{overlay}: {owner}: no container port named {name}"))
            };
            match path.as_slice() {
                ["serve"] => {
                    let admin = port_of(flag(&args, "--admin").expect("serve --admin"));
                    assert_eq!(
                        admin,
                        u64::from(server_defaults.admin.port()),
                        "{owner}: admin port is the default"
                    );
                    assert_eq!(admin, named("admin"), "{owner}: --admin and the admin port");
                }
                ["gateway"] => {
                    let config_map = objects
                        .iter()
                        .find(|o| o.kind() == "ConfigMap" && o.name() == "hightick-gateway-config")
                        .expect("the gateway's ConfigMap");
                    let text = config_map.doc["data"]["gateway.toml"]
                        .as_str()
                        .expect("gateway.toml");
                    let config =
                        hightick_gateway::GatewayConfig::parse(text, "deploy/base/gateway.toml")
                            .unwrap_or_else(|e| panic!("{e}"));
                    let listen = u64::from(config.listen.port());
                    assert_eq!(
                        listen,
                        u64::from(hightick_gateway::GatewayConfig::default().listen.port())
                    );
                    assert_eq!(listen, named("http"), "{owner}: listen and the http port");
                    assert_eq!(flag(&args, "--config"), Some("/etc/hightick/gateway.toml"));
                }
                ["swarm", "agent"] => {
                    let listen = port_of(flag(&args, "--listen").expect("agent --listen"));
                    assert!(
                        text.contains(&format!(":{listen}]")),
                        "{owner}: {listen} is not the agent's default port"
                    );
                    assert_eq!(listen, named("agent"));
                }
                ["swarm", "run"] => {
                    let metrics = port_of(flag(&args, "--metrics").expect("swarm run --metrics"));
                    assert_eq!(metrics, named("metrics"));
                }
                other => panic!("{owner}: unexpected hightick {other:?}"),
            }
        }
    }

    // The Fleet and its autoscaler.
    let fleet = find(&objects, "Fleet", "hightick-server");
    let gs = &fleet.doc["spec"]["template"]["spec"];
    let pod = &gs["template"]["spec"];
    let args = strings(&pod["containers"][0]["args"]);
    let workers: u64 = flag(&args, "--workers")
        .and_then(|w| w.parse().ok())
        .expect("--workers N");
    let bind = port_of(flag(&args, "--bind").expect("--bind"));
    assert_eq!(
        bind,
        u64::from(server_defaults.bind.port()),
        "game port is the default"
    );
    let game_ports: Vec<(String, u64)> = gs["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or("").to_owned(),
                p["containerPort"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = (0..workers)
        .map(|i| (format!("game-{i}"), bind + i))
        .collect();
    assert_eq!(
        game_ports, want,
        "{overlay}: a port game-<i> at bind + i for each worker"
    );
    let drain: u64 = flag(&args, "--drain-timeout")
        .and_then(|d| d.parse().ok())
        .expect("--drain-timeout");
    let grace = pod["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("terminationGracePeriodSeconds");
    assert!(
        grace > drain,
        "{overlay}: grace {grace} s must exceed the drain timeout {drain} s"
    );
    assert!(
        gs["counters"]["matches"]["capacity"].as_u64().is_some(),
        "{overlay}: Counter `matches`"
    );
    let fas = find(&objects, "FleetAutoscaler", "hightick-server");
    assert_eq!(fas.doc["spec"]["fleetName"], "hightick-server");
    assert_eq!(fas.doc["spec"]["policy"]["type"], "Counter");
    assert_eq!(fas.doc["spec"]["policy"]["counter"]["key"], "matches");

    check_advertised(overlay, &objects, pod, &args, bind, workers);

    // The gateway's HPA: a metric we export, served by the adapter's rule.
    let hpa = find(&objects, "HorizontalPodAutoscaler", "hightick-gateway");
    let target = &hpa.doc["spec"]["scaleTargetRef"];
    find(
        &objects,
        target["kind"].as_str().unwrap(),
        target["name"].as_str().unwrap(),
    );
    let metric = hpa.doc["spec"]["metrics"][0]["pods"]["metric"]["name"]
        .as_str()
        .expect("a Pods metric");
    assert_eq!(
        exported.get(metric),
        Some(&"hightick-gateway"),
        "{metric} is not on the gateway's /metrics"
    );
    let rules =
        find(&objects, "ConfigMap", "hightick-prometheus-adapter").doc["data"]["config.yaml"]
            .as_str()
            .expect("adapter config.yaml")
            .to_owned();
    let rules: serde_norway::Value = serde_norway::from_str(&rules).expect("adapter rules parse");
    let rules = serde_json::to_value(rules).unwrap();
    assert!(
        rules["rules"].as_array().into_iter().flatten().any(|r| {
            r["seriesQuery"]
                .as_str()
                .is_some_and(|q| q.starts_with(metric))
                && r["name"]["as"] == metric
        }),
        "{overlay}: no adapter rule serves {metric}"
    );

    // Secrets the pods read exist (dev generates them; production's are made by hand).
    if overlay == "dev" {
        for (_, _, spec) in &pods {
            let mut names = BTreeSet::new();
            for v in spec["volumes"].as_array().into_iter().flatten() {
                if let Some(s) = v["secret"]["secretName"].as_str()
                    && v["secret"]["optional"] != true
                {
                    names.insert(s.to_owned());
                }
            }
            for c in spec["containers"].as_array().into_iter().flatten() {
                for e in c["env"].as_array().into_iter().flatten() {
                    if let Some(s) = e["valueFrom"]["secretKeyRef"]["name"].as_str() {
                        names.insert(s.to_owned());
                    }
                }
            }
            for name in names {
                find(&objects, "Secret", &name);
            }
        }
    }

    // Swarm: the Indexed Job and the coordinator's list agree.
    if let Some(job) = objects
        .iter()
        .find(|o| o.kind() == "Job" && o.doc["spec"]["completionMode"] == "Indexed")
    {
        let n = job.doc["spec"]["completions"]
            .as_u64()
            .expect("completions");
        assert_eq!(
            job.doc["spec"]["parallelism"].as_u64(),
            Some(n),
            "every agent at once"
        );
        let sub = job.doc["spec"]["template"]["spec"]["subdomain"]
            .as_str()
            .expect("subdomain");
        let headless = find(&objects, "Service", sub);
        assert_eq!(headless.doc["spec"]["clusterIP"], "None");
        let port = port_of(
            flag(
                &strings(&job.doc["spec"]["template"]["spec"]["containers"][0]["args"]),
                "--listen",
            )
            .unwrap(),
        );
        let coordinator = find(&objects, "Job", "swarm-coordinator");
        let args = strings(&coordinator.doc["spec"]["template"]["spec"]["containers"][0]["args"]);
        let agents: Vec<&str> = flag(&args, "--agents")
            .expect("--agents")
            .split(',')
            .collect();
        let want: Vec<String> = (0..n)
            .map(|i| format!("{}-{i}.{sub}:{port}", job.name()))
            .collect();
        assert_eq!(agents, want, "{overlay}: --agents lists each indexed agent");
    }

    // kubectl, where installed, builds the same objects.
    match Command::new("kubectl")
        .args(["kustomize"])
        .arg(&dir)
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "kubectl kustomize {overlay}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let built: Vec<Value> =
                serde_norway::Deserializer::from_str(&String::from_utf8_lossy(&out.stdout))
                    .map(|d| {
                        serde_json::to_value(serde_norway::Value::deserialize(d).unwrap()).unwrap()
                    })
                    .collect();
            let ours: BTreeSet<(String, String)> = objects
                .iter()
                .map(|o| (o.kind().to_owned(), o.name().to_owned()))
                .collect();
            let theirs: BTreeSet<(String, String)> = built
                .iter()
                .map(|d| {
                    let kind = d["kind"].as_str().unwrap_or("").to_owned();
                    let name = d["metadata"]["name"].as_str().unwrap_or("").to_owned();
                    // A generated name may carry a content hash: `name-<hash>`.
                    let unhashed = name.rsplit_once('-').map(|(b, _)| b.to_owned());
                    match unhashed {
                        Some(b) if !ours.contains(&(kind.clone(), name.clone())) => (kind, b),
                        _ => (kind, name),
                    }
                })
                .collect();
            assert_eq!(
                ours, theirs,
                "{overlay}: this test's resolution and kubectl kustomize differ"
            );
        }
        Err(_) => eprintln!(
            "\n!!! kubectl is not installed: `kubectl kustomize` not cross-checked ({overlay})\n"
        ),
    }
}

/// Hosts are reached where they advertise, and nothing else reaches their
/// admin API: the Fleet's server binds 0.0.0.0, so its game addresses come
/// from the GameServer (`--agones`) or `--public-address`, and its admin
/// address from `--advertise-admin` or `$POD_IP` (the downward API); a
/// NetworkPolicy opens the admin port only to pods inside the cluster and
/// the game ports to everyone; the Ingress reaches the gateway's Service.
fn check_advertised(
    overlay: &str,
    objects: &[Object],
    pod: &Value,
    args: &[String],
    bind: u64,
    workers: u64,
) {
    let container = &pod["containers"][0];
    let unspecified =
        |flag_name: &str| flag(args, flag_name).is_some_and(|a| a.starts_with("0.0.0.0:"));
    if unspecified("--bind") {
        assert!(
            args.iter().any(|a| a == "--agones") || flag(args, "--public-address").is_some(),
            "{overlay}: the Fleet's server binds 0.0.0.0 and advertises nothing (--agones or --public-address)"
        );
    }
    if unspecified("--admin") && flag(args, "--gateway").is_some() {
        let pod_ip = container["env"].as_array().into_iter().flatten().any(|e| {
            e["name"] == "POD_IP" && e["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
        });
        assert!(
            pod_ip || flag(args, "--advertise-admin").is_some(),
            "{overlay}: --admin 0.0.0.0 with a gateway needs $POD_IP from status.podIP or --advertise-admin"
        );
    }
    let admin = port_of(flag(args, "--admin").expect("--admin"));
    let policy = objects
        .iter()
        .find(|o| {
            o.kind() == "NetworkPolicy"
                && selects(
                    &o.doc["spec"]["podSelector"]["matchLabels"],
                    &pod_labels(objects),
                )
        })
        .unwrap_or_else(|| panic!("{overlay}: no NetworkPolicy selects the game servers"));
    let rules: Vec<&Value> = policy.doc["spec"]["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    for rule in &rules {
        if opens(rule, "TCP", admin) {
            let from = rule["from"].as_array().map_or(0, Vec::len);
            assert!(
                from > 0,
                "{overlay}: {} opens the admin port {admin} to anyone",
                policy.name()
            );
            assert!(
                rule["from"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .all(|f| f.get("ipBlock").is_none()),
                "{overlay}: {} opens the admin port to addresses, not in-cluster pods",
                policy.name()
            );
        }
    }
    assert!(
        rules.iter().any(|r| opens(r, "TCP", admin)),
        "{overlay}: {} leaves the admin port {admin} closed to the gateway",
        policy.name()
    );
    for port in bind..bind + workers {
        assert!(
            rules
                .iter()
                .any(|r| r.get("from").is_none() && opens(r, "UDP", port)),
            "{overlay}: {} must open game port {port}/udp to everyone",
            policy.name()
        );
    }
    let ingress = find(objects, "Ingress", "hightick-gateway");
    for path in ingress.doc["spec"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["http"]["paths"].as_array().into_iter().flatten())
    {
        let backend = &path["backend"]["service"];
        let svc = find(
            objects,
            "Service",
            backend["name"].as_str().expect("a Service backend"),
        );
        let port = &backend["port"];
        assert!(
            svc.doc["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| {
                    p["name"] == port["name"]
                        || (port["number"].is_u64() && p["port"] == port["number"])
                }),
            "{overlay}: the Ingress names port {port} that {} lacks",
            svc.name()
        );
    }
}

#[test]
fn deploy_manifests_fit_each_other_and_the_code() {
    let dir = temp_dir("deploy");
    let running = Running::start(&dir, Duration::from_secs(30));
    let exported = series_names(&running.bodies());
    drop(running);
    let mut used = BTreeSet::new();
    let mut help_cache = BTreeMap::new();
    for overlay in OVERLAYS {
        check_overlay(overlay, &exported, &mut help_cache, &mut used);
    }
    let deploy = workspace().join("deploy").canonicalize().unwrap();
    let mut stack = vec![deploy.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            // The image build (deploy/image) is no Kubernetes object.
            if path == deploy.join("image") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                assert!(
                    used.contains(&path),
                    "{} is used by no kustomization",
                    path.display()
                );
            }
        }
    }
}
