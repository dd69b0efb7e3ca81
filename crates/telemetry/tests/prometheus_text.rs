//! Rendered metrics obey the Prometheus text format 0.0.4, checked by parsing
//! them back: lines end in `\n`; `# HELP` and `# TYPE` appear at most once per
//! family and before its samples; a family's samples form one group; every
//! sample belongs to a declared family (histograms: `_bucket` with `le`,
//! `_sum`, `_count`); label names and values are well formed; no sample
//! repeats; buckets are cumulative and end with `le="+Inf"` equal to `_count`.

use std::collections::{BTreeMap, HashMap, HashSet};

use hightick_telemetry::prometheus::{self, BUCKET_BOUNDS_NS, Series};
use hightick_telemetry::{
    Budget, BudgetTarget, FrameRecorder, ModeBudget, RecorderConfig, Subsystem, TscClock,
};

#[derive(Debug)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

fn is_metric_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == ':')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == ':')
}

fn is_label_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// Parses `{a="x",b="y"}` (escapes `\\`, `\"`, `\n`) and returns the labels and the rest.
fn parse_labels(s: &str) -> (Vec<(String, String)>, &str) {
    let mut labels = Vec::new();
    let mut rest = s.strip_prefix('{').expect("labels start with {");
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return (labels, r);
        }
        let eq = rest.find('=').expect("label has =");
        let name = &rest[..eq];
        assert!(is_label_name(name), "bad label name {name:?}");
        let mut chars = rest[eq + 1..].char_indices();
        assert_eq!(
            chars.next().map(|(_, c)| c),
            Some('"'),
            "label value is quoted"
        );
        let mut value = String::new();
        let end = loop {
            let (i, c) = chars.next().expect("label value is closed");
            match c {
                '"' => break eq + 1 + i + 1,
                '\\' => match chars.next().expect("escape has a char").1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    other => panic!("bad escape \\{other}"),
                },
                '\n' => panic!("raw newline in label value"),
                c => value.push(c),
            }
        };
        labels.push((name.to_owned(), value));
        rest = &rest[end..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
}

fn parse_value(s: &str) -> f64 {
    match s {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        s => s.parse().unwrap_or_else(|_| panic!("bad value {s:?}")),
    }
}

/// Checks the text against the format's rules; returns families' types and samples.
fn parse(text: &str) -> (HashMap<String, String>, Vec<Sample>) {
    assert!(text.ends_with('\n'), "last line must end with a line feed");
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps: HashSet<String> = HashSet::new();
    let mut samples = Vec::new();
    let mut finished_families: HashSet<String> = HashSet::new();
    let mut current_family: Option<String> = None;
    let mut seen: HashSet<String> = HashSet::new();

    let family_of = |name: &str, types: &HashMap<String, String>| -> String {
        if types.contains_key(name) {
            return name.to_owned();
        }
        for suffix in ["_bucket", "_sum", "_count"] {
            if let Some(base) = name.strip_suffix(suffix)
                && types.get(base).map(String::as_str) == Some("histogram")
            {
                return base.to_owned();
            }
        }
        panic!("sample {name} has no declared family");
    };

    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut tokens = comment.trim_start().splitn(3, ' ');
            match tokens.next() {
                Some("HELP") => {
                    let name = tokens.next().expect("HELP has a name");
                    assert!(is_metric_name(name));
                    assert!(helps.insert(name.to_owned()), "HELP {name} twice");
                    assert!(
                        !finished_families.contains(name),
                        "HELP {name} after its samples"
                    );
                }
                Some("TYPE") => {
                    let name = tokens.next().expect("TYPE has a name");
                    let kind = tokens.next().expect("TYPE has a kind").trim();
                    assert!(is_metric_name(name));
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                        "bad type {kind}"
                    );
                    assert!(
                        types.insert(name.to_owned(), kind.to_owned()).is_none(),
                        "TYPE {name} twice"
                    );
                    assert!(
                        !finished_families.contains(name)
                            && current_family.as_deref() != Some(name),
                        "TYPE {name} after its samples"
                    );
                }
                _ => {}
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).expect("sample has a value");
        let name = &line[..name_end];
        assert!(is_metric_name(name), "bad metric name {name:?}");
        let (labels, rest) = if line[name_end..].starts_with('{') {
            parse_labels(&line[name_end..])
        } else {
            (Vec::new(), &line[name_end..])
        };
        let mut fields = rest.split_whitespace();
        let value = parse_value(fields.next().expect("sample has a value"));
        if let Some(ts) = fields.next() {
            ts.parse::<i64>().expect("timestamp is an integer");
        }
        assert!(fields.next().is_none(), "trailing tokens in {line:?}");

        let family = family_of(name, &types);
        if current_family.as_deref() != Some(family.as_str()) {
            assert!(
                !finished_families.contains(&family),
                "family {family} is not one group"
            );
            if let Some(previous) = current_family.replace(family.clone()) {
                finished_families.insert(previous);
            }
        }
        let mut names: Vec<&str> = labels.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        assert!(
            names.windows(2).all(|w| w[0] != w[1]),
            "repeated label in {line:?}"
        );
        let is_bucket = types[&family] == "histogram" && name.ends_with("_bucket");
        assert_eq!(
            names.contains(&"le"),
            is_bucket,
            "le only on buckets: {line:?}"
        );
        let key = format!("{name}{labels:?}");
        assert!(seen.insert(key), "sample repeated: {line:?}");
        samples.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    (types, samples)
}

/// Per histogram series (family + labels without `le`): its buckets in order, and its count.
fn check_histograms(types: &HashMap<String, String>, samples: &[Sample]) -> usize {
    let mut buckets: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut counts: BTreeMap<String, f64> = BTreeMap::new();
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    for s in samples {
        let without_le: Vec<_> = s.labels.iter().filter(|(k, _)| k != "le").collect();
        if let Some(base) = s.name.strip_suffix("_bucket") {
            if types.get(base).map(String::as_str) == Some("histogram") {
                let le = &s.labels.iter().find(|(k, _)| k == "le").unwrap().1;
                let key = format!("{base}{without_le:?}");
                buckets
                    .entry(key)
                    .or_default()
                    .push((parse_value(le), s.value));
            }
        } else if let Some(base) = s.name.strip_suffix("_count") {
            counts.insert(format!("{base}{without_le:?}"), s.value);
        } else if let Some(base) = s.name.strip_suffix("_sum") {
            sums.insert(format!("{base}{without_le:?}"), s.value);
        }
    }
    for (key, series) in &buckets {
        assert!(
            series.windows(2).all(|w| w[0].0 < w[1].0),
            "{key}: le not increasing"
        );
        assert!(
            series.windows(2).all(|w| w[0].1 <= w[1].1),
            "{key}: buckets not cumulative"
        );
        let (last_le, last_count) = *series.last().unwrap();
        assert_eq!(last_le, f64::INFINITY, "{key}: last bucket is not +Inf");
        assert_eq!(Some(&last_count), counts.get(key), "{key}: +Inf != _count");
        assert!(sums.get(key).is_some_and(|s| *s >= 0.0), "{key}: no _sum");
    }
    assert_eq!(buckets.len(), counts.len());
    buckets.len()
}

fn recorded(budget: ModeBudget, frames: u64, step_ns: u64) -> FrameRecorder {
    let (clock, time) = TscClock::mock();
    let mut rec = FrameRecorder::with_clock(RecorderConfig::default(), budget, clock).unwrap();
    for tick in 0..frames {
        let frame = rec.begin(tick);
        for (i, s) in Subsystem::ALL.into_iter().enumerate() {
            let _scope = frame.scope(s, "work");
            time.advance(step_ns * (i as u64 + 1) * (tick % 7 + 1));
        }
        time.advance(step_ns);
        frame.end();
    }
    rec
}

#[test]
fn rendered_text_follows_the_exposition_format() {
    let budgets =
        hightick_telemetry::Budgets::load(concat!(env!("CARGO_MANIFEST_DIR"), "/budgets.toml"))
            .unwrap();
    let mut small = recorded(budgets.mode("5v5").unwrap().clone(), 300, 700);
    let mut few = ModeBudget::unlimited();
    few.set(
        BudgetTarget::Subsystem(Subsystem::Replication),
        Budget {
            mean_ns: None,
            p99_ns: Some(1_000_000),
        },
    );
    let mut big = recorded(few, 50, 90_000);

    let mut text = String::new();
    prometheus::render(
        &mut text,
        &[
            Series {
                labels: &[("mode", "5v5"), ("worker", "0")],
                stats: small.stats(),
            },
            Series {
                labels: &[("mode", "plaza\"100\""), ("worker", "1")],
                stats: big.stats(),
            },
        ],
    )
    .unwrap();

    let (types, samples) = parse(&text);
    assert_eq!(types.len(), 8);
    // One tick histogram and one per subsystem, for each of the two series.
    assert_eq!(
        check_histograms(&types, &samples),
        2 * (1 + Subsystem::COUNT)
    );
    let buckets_per_series = samples
        .iter()
        .filter(|s| s.name == "hightick_tick_duration_seconds_bucket")
        .count();
    assert_eq!(buckets_per_series, 2 * (BUCKET_BOUNDS_NS.len() + 1));

    let find = |name: &str, labels: &[(&str, &str)]| -> f64 {
        samples
            .iter()
            .find(|s| {
                s.name == name
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.iter().any(|(a, b)| a == k && b == v))
            })
            .unwrap_or_else(|| panic!("no {name} {labels:?}"))
            .value
    };
    assert_eq!(find("hightick_ticks_total", &[("mode", "5v5")]), 300.0);
    assert_eq!(
        find("hightick_ticks_total", &[("mode", "plaza\"100\"")]),
        50.0
    );
    assert_eq!(
        find("hightick_late_ticks_total", &[("mode", "plaza\"100\"")]),
        big.stats().late_ticks() as f64
    );
    assert!(big.stats().late_ticks() > 0);
    assert_eq!(
        find(
            "hightick_budget_violations_total",
            &[("mode", "5v5"), ("budget", "tick"), ("stat", "mean")]
        ),
        0.0 // 300 frames: no 1280-tick window closed yet
    );
    assert_eq!(
        find(
            "hightick_budget_over_p99_frames_total",
            &[("mode", "plaza\"100\""), ("budget", "replication")]
        ),
        big.stats()
            .frames_over_p99(BudgetTarget::Subsystem(Subsystem::Replication)) as f64
    );
    assert_eq!(
        find(
            "hightick_budget_seconds",
            &[("mode", "5v5"), ("budget", "tick"), ("stat", "p99")]
        ),
        0.001 // the shipped live 5v5 tick p99 budget, 1000 us
    );
    // Only limits that are set are listed.
    assert!(!samples.iter().any(|s| s.name == "hightick_budget_seconds"
        && s.labels.iter().any(|(_, v)| v == "plaza\"100\"")
        && s.labels.iter().any(|(k, v)| k == "stat" && v == "mean")));
    let sum = find(
        "hightick_subsystem_duration_seconds_sum",
        &[("mode", "5v5"), ("subsystem", "movement")],
    );
    let exact = small
        .stats()
        .sum_ns(BudgetTarget::Subsystem(Subsystem::Movement)) as f64
        / 1e9;
    assert!((sum - exact).abs() < 1e-12);
}

#[test]
fn an_empty_recorder_renders_valid_text() {
    let mut rec = FrameRecorder::new(RecorderConfig::default(), ModeBudget::unlimited()).unwrap();
    let mut text = String::new();
    prometheus::render(
        &mut text,
        &[Series {
            labels: &[],
            stats: rec.stats(),
        }],
    )
    .unwrap();
    let (types, samples) = parse(&text);
    assert_eq!(check_histograms(&types, &samples), 1 + Subsystem::COUNT);
    assert!(
        samples
            .iter()
            .any(|s| s.name == "hightick_ticks_total" && s.value == 0.0)
    );
}

#[test]
fn the_checker_rejects_broken_histograms() {
    // The rules above can fail: a non-cumulative histogram is caught.
    let bad = "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"+Inf\"} 3\nh_sum 1\nh_count 3\n";
    let (types, samples) = parse(bad);
    let caught = std::panic::catch_unwind(|| check_histograms(&types, &samples));
    assert!(caught.is_err());
    let split = "# TYPE a counter\na 1\n# TYPE b counter\nb 1\na{x=\"y\"} 2\n";
    assert!(std::panic::catch_unwind(|| parse(split)).is_err());
}
