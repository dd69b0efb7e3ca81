//! The swarm against a gateway that terminates TLS itself: `hightick
//! gateway` with `[tls]` (a certificate from a CA the test makes with
//! rcgen), and `hightick swarm run` with an `https://` target and
//! `[http] ca_file`: every player logs in over https and joins the queue
//! with its push socket open over wss, where queue positions arrive; no
//! request fails. The same
//! scenario without the CA file fails at the start, naming the target.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
};
use support::{Proc, temp_dir};

fn named(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

/// A CA in `dir/ca.crt` and the gateway's certificate and key signed by it.
fn pki(dir: &Path) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name = named("hightick test CA");
    let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    params.distinguished_name = named("hightick gateway");
    let cert = params.signed_by(&key, &ca).unwrap();
    std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
    std::fs::write(dir.join("gateway.crt"), cert.pem()).unwrap();
    std::fs::write(dir.join("gateway.key"), key.serialize_pem()).unwrap();
}

/// `hightick gateway` with `[tls]`, and its `https://` URL.
fn gateway(dir: &Path) -> (Proc, String) {
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nrate_limit_per_s = 0.0\ndata_dir = {:?}\n\
             [tls]\ncert_file = {:?}\nkey_file = {:?}\n",
            dir.join("data"),
            dir.join("gateway.crt"),
            dir.join("gateway.key"),
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hightick"))
        .arg("gateway")
        .arg("--config")
        .arg(&config)
        .env("HIGHTICK_KEY", "ab".repeat(32))
        .env("HIGHTICK_SERVER_SECRET", "tls-test-server-secret")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let url = loop {
        let line = lines
            .next()
            .expect("the gateway says where it listens")
            .unwrap();
        if let Some(at) = line.find("https://") {
            break line[at..].trim().to_owned();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (Proc(child), url)
}

fn scenario(url: &str, ca_file: Option<&Path>) -> String {
    let ca = ca_file.map_or(String::new(), |f| format!("ca_file = {f:?}\n"));
    format!(
        r#"users = 4
ramp_up = "2s"
duration = "4s"
[targets]
gateway = "{url}"
[http]
connections = 2
{ca}
[[setup]]
name = "login"
method = "POST"
url = "/v1/auth/guest"
json = {{ device_id = "tls-{{{{user}}}}" }}
expect_status = 200
wait_while_status = [202]
wait_capture = {{ ticket = "/ticket" }}
poll_url = "/v1/auth/tickets/{{{{ticket}}}}?wait_ms=1000"
capture = {{ token = "/session_token" }}
think = "0s"
[[behaviour]]
name = "queue"
[[behaviour.step]]
name = "join"
method = "POST"
url = "/v1/matchmaking/tickets"
headers = {{ authorization = "Bearer {{{{token}}}}" }}
json = {{ mode = "5v5" }}
expect_status = 202
# The answer has no `at_ms`; a `queue` push does: it is waited for there.
capture = {{ pushed_at = "/at_ms" }}
push = {{ event = "queue", max_wait = "20s" }}
think = "1m"
"#
    )
}

fn swarm(dir: &Path, name: &str, text: &str) -> (std::process::Output, serde_json::Value) {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let json = dir.join(format!("{name}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args(["swarm", "run", file.to_str().unwrap(), "--quiet", "--json"])
        .arg(&json)
        .arg("--report")
        .arg(dir.join(format!("{name}.html")))
        .output()
        .unwrap();
    let result = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (out, result)
}

#[test]
fn the_swarm_logs_in_over_https_and_waits_on_wss_with_the_scenarios_ca() {
    let dir = temp_dir("tls");
    pki(&dir);
    let (_gateway, url) = gateway(&dir);

    let (out, result) = swarm(&dir, "trusted", &scenario(&url, Some(&dir.join("ca.crt"))));
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    assert_eq!(result["total"]["failed"], 0, "{said}\n{result}");
    let table = String::from_utf8_lossy(&out.stdout);
    // Requests per step (at least): every player logs in and joins; a
    // queue position reaches the earlier ones as the later ones join.
    for (step, least) in [("login", 4), ("join", 4), ("join push", 1)] {
        let requests: u64 = table
            .lines()
            .find_map(|l| {
                l.strip_prefix(step)?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {step} row in\n{table}"));
        assert!(requests >= least, "{step}: {requests}\n{table}");
    }

    // Without the CA the public roots do not know the test's CA: every
    // connection fails, and the run says so.
    let (out, result) = swarm(&dir, "untrusted", &scenario(&url, None));
    let failed = result["total"]["failed"].as_u64().unwrap_or(0);
    assert!(
        !out.status.success() || failed > 0,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
