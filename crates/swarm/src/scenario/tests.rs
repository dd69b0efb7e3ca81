use super::*;
use crate::threshold::{Bound, Metric, Stat};
use http::Method;

const GOOD: &str = r#"
name = "mix"
users = 100
ramp_up = "10s"
duration = "1m"
think = { exponential = "7.5s" }

[targets]
gateway = "http://127.0.0.1:8080/api"

[retry]
attempts = 5

[[setup]]
name = "login"
method = "post"
url = "/v1/auth/guest"
json = { device = "swarm-{{user}}", note = "a \"quoted\" {{token}}" }
capture = { token = "/token", account = "/account/id" }
wait_while_status = [202]

[[behaviour]]
name = "profile"
weight = 3
[[behaviour.step]]
url = "/v1/profile/{{account}}"
headers = { authorization = "Bearer {{token}}" }
think = "1s"

[[behaviour]]
name = "play"
[[behaviour.step]]
name = "queue"
method = "POST"
url = "/v1/matchmaking"
capture = { connect_token = "/connect_token" }
retry = { attempts = 2, on_status = [409] }
[[behaviour.step]]
play_match = { token = "{{connect_token}}", duration = "30s" }

[[threshold]]
metric = "p99"
step = "login"
max = "200ms"

[[threshold]]
metric = "error_rate"
max = 0.01

[[threshold]]
metric = "desyncs"
max = 0
"#;

fn parse(text: &str) -> Result<Scenario, SwarmError> {
    Scenario::parse(text, "test.toml")
}

/// The error's (line, field, message) for a broken scenario.
fn error(text: &str) -> (usize, String, String) {
    match parse(text) {
        Err(SwarmError::Scenario {
            file,
            line,
            column,
            field,
            message,
        }) => {
            assert_eq!(file, "test.toml");
            assert!(column >= 1);
            (line, field, message)
        }
        other => panic!("expected a scenario error, got {other:?}"),
    }
}

#[test]
fn a_good_scenario_compiles() {
    let s = parse(GOOD).unwrap();
    assert_eq!(s.name, "mix");
    assert_eq!((s.model, s.users), (Model::Closed, 100));
    assert_eq!(s.total_duration(), Duration::from_secs(70));
    assert_eq!(s.targets[0].urls[0].authority, "127.0.0.1:8080");
    assert_eq!(s.targets[0].urls[0].prefix, "/api");
    assert_eq!(
        s.step_names,
        [
            "login",
            "GET /v1/profile/{{account}}",
            "queue",
            "play_match"
        ]
    );
    assert_eq!(s.variables, ["account", "token", "connect_token"]);
    let StepKind::Http(login) = &s.setup[0].kind else {
        panic!()
    };
    assert_eq!(login.method, Method::POST);
    assert!(login.json);
    assert_eq!(login.retry.attempts, 5);
    assert_eq!(login.wait_while, [202]);
    assert_eq!(
        login.captures[0],
        Capture {
            slot: 0,
            pointer: "/account/id".into()
        }
    );
    assert_eq!(s.behaviours[0].weight, 3);
    assert_eq!(
        s.behaviours[0].steps[0].think,
        ThinkTime::Constant(Duration::from_secs(1))
    );
    assert_eq!(
        s.behaviours[1].steps[0].think,
        ThinkTime::Exponential {
            mean: Duration::from_millis(7_500)
        }
    );
    let StepKind::Http(queue) = &s.behaviours[1].steps[0].kind else {
        panic!()
    };
    assert_eq!(
        (queue.retry.attempts, queue.retry.on_status.as_slice()),
        (2, &[409u16][..])
    );
    assert!(matches!(
        s.behaviours[1].steps[1].kind,
        StepKind::PlayMatch(_)
    ));
    assert_eq!(s.thresholds.len(), 3);
    assert_eq!(
        s.thresholds[0].metric,
        Metric::Latency(Stat::Quantile(0.99))
    );
    assert_eq!(s.thresholds[0].bound, Bound::Max(200_000.0));
    assert_eq!(s.thresholds[0].step.as_deref(), Some("login"));
}

#[test]
fn an_unknown_field_is_named_with_its_line() {
    let text = GOOD.replace("think = \"1s\"", "thinks = \"1s\"");
    let (line, field, message) = error(&text);
    assert_eq!(line, 28);
    assert_eq!(field, "behaviour[0].step[0].thinks");
    assert!(message.contains("unknown field `thinks`"), "{message}");
}

#[test]
fn a_wrong_type_is_named_with_its_line() {
    let (line, field, message) = error(&GOOD.replace("users = 100", "users = \"many\""));
    assert_eq!((line, field.as_str()), (3, "users"));
    assert!(message.contains("expected u64"), "{message}");
}

#[test]
fn a_bad_duration_is_named() {
    let (line, field, message) = error(&GOOD.replace("ramp_up = \"10s\"", "ramp_up = \"10\""));
    assert_eq!((line, field.as_str()), (4, "ramp_up"));
    assert!(message.contains("unit is missing"), "{message}");
}

#[test]
fn syntax_errors_have_a_line() {
    let (line, _, _) = error("users = 1\nduration = \"1s\"\n[targets\n");
    assert_eq!(line, 3);
}

#[test]
fn an_undefined_variable_is_an_error_at_its_template() {
    let text = GOOD.replace("Bearer {{token}}", "Bearer {{tokn}}");
    let (line, field, message) = error(&text);
    assert_eq!(line, 27);
    assert_eq!(field, "behaviour[0].step[0].headers.authorization");
    assert!(message.contains("`{{tokn}}`"), "{message}");
}

#[test]
fn cross_field_mistakes_are_named() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "step = \"login\"",
            "step = \"logn\"",
            "threshold[0].step",
            "no step named `logn`",
        ),
        (
            "metric = \"p99\"",
            "metric = \"p99x\"",
            "threshold[0].metric",
            "unknown metric",
        ),
        ("max = 0.01", "max = 1.5", "threshold[1].max", "fraction"),
        (
            "max = \"200ms\"",
            "max = 200",
            "threshold[0].max",
            "duration",
        ),
        ("users = 100", "users = 0", "users", "at least 1"),
        (
            "weight = 3",
            "weight = 3\ntarget = \"nowhere\"",
            "behaviour[0].target",
            "",
        ),
        (
            "url = \"/v1/matchmaking\"",
            "url = \"v1/matchmaking\"",
            "behaviour[1].step[0].url",
            "starting with `/`",
        ),
        (
            "\"http://127.0.0.1:8080/api\"",
            "\"ftp://127.0.0.1\"",
            "targets.gateway",
            "http or https",
        ),
        (
            "method = \"POST\"",
            "method = \"P O S T\"",
            "behaviour[1].step[0].method",
            "not an HTTP method",
        ),
        (
            "\"/connect_token\"",
            "\"connect_token\"",
            "behaviour[1].step[0].capture.connect_token",
            "JSON pointer",
        ),
        (
            "name = \"mix\"",
            "name = \"mix\"\narrival_rate = 5.0",
            "arrival_rate",
            "only for model = \"open\"",
        ),
        (
            "token = \"/token\"",
            "user = \"/token\"",
            "setup.capture.user",
            "built-in",
        ),
    ];
    for (from, to, field_expected, message_part) in cases {
        let text = GOOD.replacen(from, to, 1);
        assert_ne!(text, GOOD, "{from}");
        let (_, field, message) = error(&text);
        assert_eq!(field, *field_expected, "{to}: {message}");
        assert!(message.contains(message_part), "{to}: {message}");
    }
}

#[test]
fn an_open_model_needs_a_rate_and_a_step_its_target() {
    let open = "model = \"open\"\nusers = 10\nduration = \"5s\"\n[targets]\na = \"http://127.0.0.1:1\"\n[[setup]]\nurl = \"/\"\n";
    let (_, field, _) = error(open);
    assert_eq!(field, "arrival_rate");
    let s = parse(&open.replace("users = 10", "users = 10\narrival_rate = 20.5")).unwrap();
    assert_eq!((s.model, s.arrival_rate), (Model::Open, 20.5));
    let two = open
        .replace("users = 10", "users = 10\narrival_rate = 1.0")
        .replace("[[setup]]", "b = \"http://127.0.0.1:2\"\n[[setup]]");
    let (line, field, message) = error(&two);
    assert_eq!((line, field.as_str()), (9, "setup[0].target"));
    assert!(message.contains("several targets"));
}

#[test]
fn pacing_and_sources_compile() {
    let text = format!(
        "{GOOD}\n[pacing]\ntarget_response_time = \"50ms\"\npercentile = 95\nwindow = \"5s\"\ninitial_rate = 40.0\n[http]\nconnections = 64\nsource_addresses = [\"127.0.0.2\", \"127.0.1.0/30\"]\n"
    );
    let s = parse(&text).unwrap();
    let p = s.pacing.unwrap();
    assert_eq!(p.target, Duration::from_millis(50));
    assert!((p.quantile - 0.95).abs() < 1e-9);
    assert_eq!((p.window, p.initial_rate), (5, 40.0));
    assert_eq!(s.http.connections, 64);
    assert_eq!(s.http.sources.len(), 3);
    assert_eq!(s.http.sources[1].to_string(), "127.0.1.1");
    let bad = text.replace("127.0.1.0/30", "127.0.1.0/3");
    assert_eq!(error(&bad).1, "http.source_addresses[1]");
}

#[test]
fn overrides_change_users_and_targets() {
    let mut s = parse(GOOD).unwrap();
    s.apply(&Overrides {
        users: Some(7),
        duration_ms: Some(2_000),
        targets: vec![("gateway".into(), "http://10.0.0.1:9000".into())],
        ..Overrides::default()
    })
    .unwrap();
    assert_eq!((s.users, s.duration), (7, Duration::from_secs(2)));
    assert_eq!(s.targets[0].urls[0].port, 9000);
    assert!(
        s.apply(&Overrides {
            targets: vec![("nope".into(), "http://x".into())],
            ..Overrides::default()
        })
        .is_err()
    );
}

#[test]
fn the_shipped_scenarios_compile() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml") {
            Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            seen += 1;
        }
    }
    assert!(seen >= 3 || !dir.exists(), "scenarios/ has {seen} files");
}

#[test]
fn a_request_log_is_off_unless_asked_for_and_checked() {
    assert_eq!(parse(GOOD).unwrap().request_log, None);
    let asked = "users = 1\nduration = \"1s\"\n[targets]\nt = \"http://127.0.0.1:1\"\n\
                 [request_log]\npath = \"r.log\"\nrotate_bytes = 100\n\
                 [[behaviour]]\nname = \"b\"\n[[behaviour.step]]\nurl = \"/\"\n";
    let (line, field, message) = error(asked);
    assert_eq!((line, field.as_str()), (7, "request_log.rotate_bytes"));
    assert!(message.contains("at least 4096"), "{message}");
    let good = parse(&asked.replace("rotate_bytes = 100", "keep = 2")).unwrap();
    let log = good.request_log.unwrap();
    assert_eq!((log.path.to_str(), log.keep), (Some("r.log"), 2));
    assert_eq!(log.rotate_bytes, 64 << 20);
}

#[test]
fn a_push_wait_compiles_with_its_defaults_and_refuses_polling_beside_it() {
    let base = "users = 1\nduration = \"1s\"\n[targets]\nt = \"http://127.0.0.1:1\"\n\
                [[behaviour]]\nname = \"b\"\n[[behaviour.step]]\nname = \"mm\"\nmethod = \"POST\"\n\
                url = \"/v1/matchmaking/tickets\"\nheaders = { authorization = \"Bearer x\" }\n\
                capture = { token = \"/match/connect_token\" }\n";
    let good = parse(&format!(
        "{base}push = {{ event = \"match_found\", same = \"/ticket\" }}\n"
    ))
    .unwrap();
    let StepKind::Http(h) = &good.behaviours[0].steps[0].kind else {
        panic!("an HTTP step")
    };
    let push = h.push.as_ref().expect("a push wait");
    assert_eq!(push.event, "match_found");
    assert_eq!(push.same.as_deref(), Some("/ticket"));
    assert_eq!(push.headers.len(), 1, "the step's own headers by default");
    assert_eq!(good.step_names[push.latency_id as usize], "mm push");
    let (line, field, message) = error(&format!(
        "{base}wait_while_status = [202]\npush = {{ event = \"match_found\" }}\n"
    ));
    assert_eq!((line, field.as_str()), (14, "behaviour[0].step[0].push"));
    assert!(message.contains("replaces polling"), "{message}");
    let (_, field, _) = error(&format!(
        "{base}push = {{ event = \"match_found\", same = \"ticket\" }}\n"
    ));
    assert_eq!(field, "behaviour[0].step[0].push.same");
}

#[test]
fn a_link_is_a_name_or_a_table_and_bad_ones_are_named() {
    assert!(parse(GOOD).unwrap().link.is_none());
    let with = |link: &str| format!("link = {link}\n{GOOD}");
    let all = parse(&with("\"bad\"")).unwrap().link.unwrap();
    assert_eq!((all.link.as_str(), all.share, all.seed), ("bad", 1.0, 1));
    assert_eq!(all.profile.name, "bad");
    let some = parse(&with("{ profile = \"wifi\", share = 0.25, seed = 9 }"))
        .unwrap()
        .link
        .unwrap();
    assert_eq!((some.share, some.seed), (0.25, 9));
    assert!(!some.behind(0) && some.behind(3));
    for (link, field) in [
        ("\"dialup\"", "link"),
        ("{ profile = \"wifi\", share = 2.0 }", "link.share"),
        ("{ share = 0.5 }", "link.profile"),
        ("{ profile = \"wifi\", shares = 0.5 }", "link.shares"),
        ("7", "link"),
    ] {
        let (line, f, message) = error(&with(link));
        assert_eq!((line, f.as_str()), (1, field), "{link}: {message}");
    }
}

#[test]
fn a_target_may_name_several_urls() {
    let text = GOOD.replace(
        "gateway = \"http://127.0.0.1:8080/api\"",
        "gateway = [\"http://127.0.0.1:8080/api\", \"http://127.0.0.1:8081\"]\nstore = \"http://127.0.0.1:9000\"",
    );
    let text = text.replace(
        "url = \"/v1/auth/guest\"",
        "url = \"/v1/auth/guest\"\ntarget = \"gateway\"",
    );
    let text = text.replace(
        "url = \"/v1/profile/",
        "target = \"store\"\nurl = \"/v1/profile/",
    );
    let text = text.replace(
        "url = \"/v1/matchmaking\"",
        "url = \"/v1/matchmaking\"\ntarget = \"gateway\"",
    );
    let s = parse(&text).unwrap();
    let gateway = &s.targets[0];
    assert_eq!(gateway.name, "gateway");
    assert_eq!(
        gateway.url,
        "http://127.0.0.1:8080/api, http://127.0.0.1:8081"
    );
    let ports: Vec<u16> = gateway.urls.iter().map(|u| u.port).collect();
    assert_eq!(ports, [8080, 8081]);
    assert_eq!(
        (
            gateway.urls[0].prefix.as_str(),
            gateway.urls[1].prefix.as_str()
        ),
        ("/api", "")
    );
    let flat: Vec<(&str, u16)> = s
        .target_urls()
        .map(|(t, u)| (t.name.as_str(), u.port))
        .collect();
    assert_eq!(
        flat,
        [("gateway", 8080), ("gateway", 8081), ("store", 9000)]
    );
    // One URL in a list is a list of one.
    let one = GOOD.replace(
        "gateway = \"http://127.0.0.1:8080/api\"",
        "gateway = [\"http://127.0.0.1:8080/api\"]",
    );
    assert_eq!(parse(&one).unwrap().targets[0].urls.len(), 1);
    // The command line may give a list too.
    let mut s = parse(GOOD).unwrap();
    s.apply(&Overrides {
        targets: vec![(
            "gateway".into(),
            "http://10.0.0.1:1, http://10.0.0.2:2".into(),
        )],
        ..Overrides::default()
    })
    .unwrap();
    let hosts: Vec<&str> = s.targets[0].urls.iter().map(|u| u.host.as_str()).collect();
    assert_eq!(hosts, ["10.0.0.1", "10.0.0.2"]);
}

#[test]
fn bad_target_lists_name_the_field() {
    let with = |value: &str| {
        GOOD.replace(
            "gateway = \"http://127.0.0.1:8080/api\"",
            &format!("gateway = {value}"),
        )
    };
    let (line, field, message) = error(&with("[]"));
    assert_eq!((line, field.as_str()), (9, "targets.gateway"));
    assert!(message.contains("at least one URL"), "{message}");
    let (line, field, message) = error(&with("[\"http://127.0.0.1:1\", 8081]"));
    assert_eq!((line, field.as_str()), (9, "targets.gateway[1]"));
    assert!(message.contains("a URL string, not integer"), "{message}");
    let (_, field, message) = error(&with("[\"http://127.0.0.1:1\", \"ws://x\"]"));
    assert_eq!(field, "targets.gateway[1]");
    assert!(message.contains("scheme ws"), "{message}");
    let (_, field, message) = error(&with("8080"));
    assert_eq!(field, "targets.gateway");
    assert!(
        message.contains("a URL string or a list of them"),
        "{message}"
    );
}

#[test]
fn an_https_target_defaults_to_443_and_a_ca_file_that_does_not_read_is_named() {
    let url = TargetUrl::parse("https://gateway.example/api").unwrap();
    assert!(url.tls);
    assert_eq!((url.port, url.prefix.as_str()), (443, "/api"));
    assert!(!TargetUrl::parse("http://127.0.0.1:8080").unwrap().tls);

    let text = "users = 1\nduration = \"1s\"\n[targets]\ngateway = \"https://127.0.0.1:8443\"\n\
                [http]\nca_file = \"/nonexistent/ca.crt\"\n\
                [[behaviour]]\nname = \"b\"\n[[behaviour.step]]\nurl = \"/healthz\"\n";
    let (line, field, message) = error(text);
    assert_eq!((line, field.as_str()), (6, "http.ca_file"));
    assert!(message.contains("/nonexistent/ca.crt"), "{message}");
}

#[test]
fn a_stampede_is_read_for_a_closed_model_and_refused_otherwise() {
    let text = GOOD.replace(
        "ramp_up = \"10s\"",
        "ramp_up = \"10s\"\nstampede = { share = 0.4, within = \"2s\" }",
    );
    let s = parse(&text).unwrap();
    assert_eq!(
        s.stampede,
        Some(Stampede {
            share: 0.4,
            within: Duration::from_secs(2)
        })
    );
    let bad = GOOD.replace(
        "ramp_up = \"10s\"",
        "ramp_up = \"10s\"\nstampede = { share = 1.5, within = \"2s\" }",
    );
    let (line, field, message) = error(&bad);
    assert_eq!((line, field.as_str()), (5, "stampede.share"), "{message}");
    let open = GOOD
        .replace(
            "users = 100",
            "model = \"open\"\nusers = 100\narrival_rate = 5.0",
        )
        .replace(
            "ramp_up = \"10s\"",
            "ramp_up = \"10s\"\nstampede = { share = 0.5, within = \"2s\" }",
        );
    let (_, field, message) = error(&open);
    assert_eq!(field, "stampede", "{message}");
}
