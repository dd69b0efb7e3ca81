//! The binary's promises to a new user: help works, and bad input gets a
//! clear error.

use std::process::Command;

fn hightick(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args(args)
        .output()
        .expect("the hightick binary runs")
}

#[test]
fn help_lists_the_subcommands() {
    let out = hightick(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["demo", "serve", "gateway", "swarm", "lab"] {
        assert!(text.contains(name), "--help lacks {name}: {text}");
    }
}

#[test]
fn print_config_prints_the_reference_files_and_exits_0() {
    let out = hightick(&["serve", "--print-config"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\nbind = \"0.0.0.0:7777\"\n"), "{text}");
    assert_eq!(
        hightick_server::HostConfig::parse(&text, "serve --print-config").unwrap(),
        hightick_server::HostConfig::default()
    );
    let out = hightick(&["gateway", "--print-config"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\n[[modes]]\n"), "{text}");
    assert_eq!(
        hightick_gateway::GatewayConfig::parse(&text, "gateway --print-config").unwrap(),
        hightick_gateway::GatewayConfig::default()
    );
}

#[test]
fn a_bad_scenario_names_its_line_and_field() {
    let dir = std::env::temp_dir().join(format!("hightick-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, "users = 10\nduration = \"1m\"\nthinks = \"1s\"\n").unwrap();
    let out = hightick(&["swarm", "check", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:3:1: thinks: unknown field"), "{err}");
}

#[test]
fn a_bad_flag_is_a_clear_error() {
    let out = hightick(&["demo", "--no-such-flag"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}

#[test]
fn a_swarm_agent_will_not_start_without_a_long_enough_secret_or_with_a_bad_allow_list() {
    let dir = std::env::temp_dir().join(format!("hightick-cli-agent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let short = dir.join("short.secret");
    std::fs::write(&short, "only 16 bytes!!\n").unwrap();
    let good = dir.join("good.secret");
    std::fs::write(&good, "ab".repeat(32)).unwrap();
    let agent = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_hightick"))
            .args(["swarm", "agent", "--listen", "127.0.0.1:0", "--once"])
            .args(extra)
            .env_remove("HIGHTICK_SWARM_SECRET")
            .env_remove("HIGHTICK_SWARM_SECRET_FILE")
            .output()
            .expect("the hightick binary runs");
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = agent(&["--secret-file", short.to_str().unwrap()]);
    assert!(
        err.contains(short.to_str().unwrap()) && err.contains("15 bytes; at least 32"),
        "{err}"
    );
    let err = agent(&[]);
    assert!(err.contains("--secret-file"), "{err}");
    let err = agent(&[
        "--secret-file",
        good.to_str().unwrap(),
        "--allow-target",
        "10.0.0.1/8",
    ]);
    assert!(
        err.contains("10.0.0.1/8") && err.contains("host bits"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hightick swarm target` on any port, as a child that exits when its
/// stdin closes (on drop).
struct SwarmTarget {
    child: std::process::Child,
    url: String,
}

impl SwarmTarget {
    fn start() -> Self {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_hightick"))
            .args(["swarm", "target", "--listen", "127.0.0.1:0"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the target starts");
        let mut banner = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut banner)
            .unwrap();
        let addr = banner.trim().rsplit(' ').next().unwrap().to_owned();
        Self {
            child,
            url: format!("http://{addr}"),
        }
    }
}

impl Drop for SwarmTarget {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn swarm_thresholds_set_the_exit_status_and_results_compare() {
    let target = SwarmTarget::start();
    let dir = std::env::temp_dir().join(format!("hightick-cli-swarm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The same short run twice, once asking a path that answers 500: the
    // error-rate threshold passes on the first and fails on the second.
    let scenario = |path: &str| {
        format!(
            "users = 4\nramp_up = \"0s\"\nduration = \"1s\"\nthink = \"100ms\"\n\
             [targets]\nt = \"{url}\"\n\
             [[behaviour]]\nname = \"ask\"\n[[behaviour.step]]\nname = \"ask\"\nurl = \"{path}\"\n\
             retry = {{ attempts = 1 }}\n\
             [[threshold]]\nmetric = \"error_rate\"\nmax = 0.01\n",
            url = target.url
        )
    };
    let run = |name: &str, path: &str| {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, scenario(path)).unwrap();
        let json = dir.join(format!("{name}.json"));
        let report = dir.join(format!("{name}.html"));
        let out = hightick(&[
            "swarm",
            "run",
            file.to_str().unwrap(),
            "--quiet",
            "--threads",
            "1",
            "--json",
            json.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ]);
        let html = std::fs::read_to_string(&report).unwrap_or_default();
        assert!(html.contains("<svg"), "{name}: no chart in the report");
        (out, json)
    };
    let (good, good_json) = run("good", "/ping");
    let (bad, bad_json) = run("bad", "/status/500");
    let compared = hightick(&[
        "swarm",
        "compare",
        good_json.to_str().unwrap(),
        bad_json.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);

    let stderr = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(good.status.code(), Some(0), "{}", stderr(&good));
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("threshold(s) failed"),
        "{}",
        stderr(&bad)
    );
    assert!(String::from_utf8_lossy(&good.stdout).contains("ask"));
    assert!(compared.status.success(), "{}", stderr(&compared));
    assert!(String::from_utf8_lossy(&compared.stdout).contains("ask"));
}
