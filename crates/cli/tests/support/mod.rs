//! The operator's view, for real: `hightick serve` (one match hosted),
//! `hightick gateway` (SQLite in a temp dir) and a `hightick swarm run`
//! logging guests in through that gateway, all on loopback, each with its
//! `/metrics`; and what reads those bodies and the files in `deploy/`.

#![allow(dead_code)] // each test binary uses its own part

pub(crate) mod kustomize;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A fresh directory under the system's temp dir.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hightick-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The workspace root.
pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An HTTP agent that hands back every status.
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// GET `url`: status and body.
pub(crate) fn get(url: &str) -> (u16, String) {
    let mut r = agent()
        .get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

/// The path of tool `name` (from `PATH`), or `None` after saying loudly
/// that the test is skipped; under `CI=true` a missing tool fails the test
/// instead (`.ci/run` installs `package`).
pub(crate) fn tool(name: &str, package: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let why =
            format!("`{name}` is not installed (Debian package `{package}`; .ci/run installs it)");
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("\n!!! SKIPPED: {why}\n");
    }
    found
}

/// A child process killed when dropped.
pub(crate) struct Proc(pub(crate) Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads `from` line by line until one contains `marker`; returns that line
/// and drains the rest in a thread (so the child never blocks on a full pipe).
fn banner(from: impl Read + Send + 'static, marker: &str, what: &str) -> String {
    let mut lines = BufReader::new(from).lines();
    let mut seen = Vec::new();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.contains(marker) => {
                std::thread::spawn(move || lines.for_each(drop));
                return line;
            }
            Some(Ok(line)) => seen.push(line),
            _ => panic!("{what} ended before saying `{marker}`: {seen:#?}"),
        }
    }
}

/// Which of a child's outputs announces its address.
enum Output {
    Stdout,
    Stderr,
}

/// Starts `command` and reads the address (`http://host:port`) from the
/// first line of `output` that holds `marker`; the other output is dropped.
fn start_announced(mut command: Command, output: Output, marker: &str) -> (Proc, String) {
    let what = format!("{command:?}");
    let (out, err) = match output {
        Output::Stdout => (Stdio::piped(), Stdio::null()),
        Output::Stderr => (Stdio::null(), Stdio::piped()),
    };
    let mut child = command
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let line = match output {
        Output::Stdout => banner(child.stdout.take().unwrap(), marker, &what),
        Output::Stderr => banner(child.stderr.take().unwrap(), marker, &what),
    };
    (Proc(child), url_in(&line))
}

fn url_in(line: &str) -> String {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .trim_end_matches("/metrics")
        .to_owned()
}

/// The three processes and where their `/metrics` are (`host:port`).
pub(crate) struct Running {
    pub(crate) server: String,
    pub(crate) gateway: String,
    pub(crate) swarm: String,
    _procs: Vec<Proc>,
}

impl Running {
    /// Starts the server with one 5v5 match, the gateway, and a swarm run
    /// of a few guests logging in and reading their profile for `hold`.
    pub(crate) fn start(dir: &Path, hold: Duration) -> Self {
        let exe = env!("CARGO_BIN_EXE_hightick");
        let key = dir.join("key.hex");
        std::fs::write(&key, "ab".repeat(32)).unwrap();

        let mut serve = Command::new(exe);
        serve
            .args(["serve", "--bind", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
            .args(["--workers", "1", "--key-file"])
            .arg(&key);
        let (server, server_addr) = start_announced(serve, Output::Stdout, "hightick serve: admin");
        let created = agent()
            .post(&format!("http://{server_addr}/v1/matches"))
            .header("content-type", "application/json")
            .send(r#"{"mode":"5v5","roster":[1,2,3,4,5,6,7,8,9,10]}"#)
            .unwrap();
        assert_eq!(created.status().as_u16(), 201);

        let secret = dir.join("server.secret");
        std::fs::write(&secret, "prometheus-test-server-secret").unwrap();
        let config = dir.join("gateway.toml");
        std::fs::write(
            &config,
            format!(
                "listen = \"127.0.0.1:0\"\nrate_limit_per_s = 0.0\ndata_dir = {:?}\ntoken_key_file = {:?}\nserver_secret_file = {:?}\n",
                dir.join("gateway-data"),
                key,
                secret
            ),
        )
        .unwrap();
        let mut gateway = Command::new(exe);
        gateway.arg("gateway").arg("--config").arg(&config);
        let (gateway, gateway_addr) = start_announced(gateway, Output::Stdout, "listening on");

        let scenario = dir.join("guests.toml");
        std::fs::write(
            &scenario,
            format!(
                r#"name = "guests"
model = "closed"
users = 8
ramp_up = "1s"
duration = "{}s"
[targets]
gateway = "http://{gateway_addr}"
[[setup]]
name = "login"
method = "POST"
url = "/v1/auth/guest"
json = {{ device_id = "prom-{{{{user}}}}" }}
expect_status = 200
wait_while_status = [202]
wait_capture = {{ ticket = "/ticket" }}
poll_url = "/v1/auth/tickets/{{{{ticket}}}}?wait_ms=1000"
capture = {{ token = "/session_token" }}
[[behaviour]]
name = "read"
[[behaviour.step]]
name = "profile"
url = "/v1/me/profile"
headers = {{ authorization = "Bearer {{{{token}}}}" }}
think = "100ms"
"#,
                hold.as_secs().max(1)
            ),
        )
        .unwrap();
        let mut swarm = Command::new(exe);
        swarm
            .args(["swarm", "run"])
            .arg(&scenario)
            .args(["--quiet", "--threads", "1", "--metrics", "127.0.0.1:0"])
            .arg("--report")
            .arg(dir.join("swarm.html"));
        let (swarm, swarm_addr) = start_announced(swarm, Output::Stderr, "metrics at");
        Self {
            server: server_addr,
            gateway: gateway_addr,
            swarm: swarm_addr,
            _procs: vec![server, gateway, swarm],
        }
    }

    /// `(job, host:port)` of each process, as a scrape config names them.
    pub(crate) fn jobs(&self) -> [(&'static str, &str); 3] {
        [
            ("hightick-server", &self.server),
            ("hightick-gateway", &self.gateway),
            ("hightick-swarm", &self.swarm),
        ]
    }

    /// Each job's `/metrics` body, once it shows traffic: a frame recorded
    /// on the server, a login on the gateway, a request in the swarm.
    pub(crate) fn bodies(&self) -> Vec<(&'static str, String)> {
        let ready = [
            "hightick_ticks_total{",
            "hightick_gateway_logins_total ",
            "hightick_swarm_requests_total ",
        ];
        let mut bodies = Vec::new();
        for ((job, addr), marker) in self.jobs().into_iter().zip(ready) {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            loop {
                let (status, body) = get(&format!("http://{addr}/metrics"));
                assert_eq!(status, 200, "{job}: {body}");
                let counted = body
                    .lines()
                    .find(|l| l.starts_with(marker))
                    .and_then(|l| l.rsplit(' ').next())
                    .and_then(|v| v.parse::<f64>().ok())
                    .is_some_and(|v| v > 0.0);
                if counted {
                    bodies.push((job, body));
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{job}: no `{marker}` above 0 in 30 s:\n{body}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        bodies
    }
}

/// The metric families a body declares (`# TYPE` lines): name and type.
pub(crate) fn families(body: &str) -> BTreeMap<String, String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, kind)| (name.to_owned(), kind.to_owned()))
        .collect()
}

/// Every series name a body's families give PromQL: a histogram `h` gives
/// `h_bucket`, `h_sum` and `h_count`; anything else its own name.
pub(crate) fn series_names(bodies: &[(&'static str, String)]) -> BTreeMap<String, &'static str> {
    let mut names = BTreeMap::new();
    for &(job, ref body) in bodies {
        for (name, kind) in families(body) {
            if kind == "histogram" {
                for suffix in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{suffix}"), job);
                }
            } else {
                names.insert(name, job);
            }
        }
    }
    names
}

/// Every `expr` of every panel target in deploy/grafana/*.json: (file, expression).
pub(crate) fn dashboard_expressions() -> Vec<(String, String)> {
    let dir = workspace().join("deploy/grafana");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no dashboards in {}", dir.display());
    let mut exprs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let panels = json["panels"].as_array().cloned().unwrap_or_default();
        assert!(!panels.is_empty(), "{name}: no panels");
        for panel in panels {
            let targets = panel["targets"].as_array().cloned().unwrap_or_default();
            assert!(
                !targets.is_empty(),
                "{name}: panel {} has no query",
                panel["title"]
            );
            for t in targets {
                let expr = t["expr"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{name}: a target without expr"));
                exprs.push((name.clone(), expr.to_owned()));
            }
        }
    }
    exprs
}

/// `expr` with Grafana's built-in variables replaced, as Prometheus would
/// receive it.
pub(crate) fn with_grafana_variables(expr: &str) -> String {
    expr.replace("$__rate_interval", "1m")
        .replace("$__interval", "1m")
        .replace("$__range", "5m")
}

/// Keywords that may be followed by a list of label names.
const GROUPING: [&str; 6] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

/// Other keywords, and aggregation operators (which may come before their
/// `by (..)` rather than right before `(`).
const PROMQL_WORDS: [&str; 17] = [
    "bool",
    "and",
    "or",
    "unless",
    "offset",
    "inf",
    "nan",
    "atan2",
    "sum",
    "avg",
    "min",
    "max",
    "count",
    "group",
    "stddev",
    "stdvar",
    "count_values",
];

/// The metric names a PromQL expression names: identifiers outside label
/// matchers (`{..}`), ranges (`[..]`), strings and grouping lists
/// (`by (..)`), that are neither a function (followed by `(`) nor a keyword.
pub(crate) fn metric_names_in(expr: &str) -> Vec<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' | '[' | '"' => {
                let close = match c {
                    '{' => '}',
                    '[' => ']',
                    _ => '"',
                };
                let mut in_string = c == '"';
                i += 1;
                while i < chars.len() {
                    if chars[i] == '"' && c != '"' {
                        in_string = !in_string;
                    } else if chars[i] == close && (c == '"' || !in_string) {
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == ':' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let mut next = i;
                while next < chars.len() && chars[next] == ' ' {
                    next += 1;
                }
                let lower = word.to_ascii_lowercase();
                if GROUPING.contains(&lower.as_str()) {
                    // Its label list, if it has one.
                    if chars.get(next) == Some(&'(') {
                        i = next;
                        while i < chars.len() && chars[i] != ')' {
                            i += 1;
                        }
                        i += 1;
                    }
                } else if chars.get(next) == Some(&'(') || PROMQL_WORDS.contains(&lower.as_str()) {
                    // a function or a keyword
                } else {
                    names.push(word);
                }
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    names
}
