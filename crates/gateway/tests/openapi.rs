//! The OpenAPI document, generated from the handlers' types, against the
//! router and the running handlers:
//! - it lists exactly the routes the router has, is structurally sound
//!   (every `$ref` resolves, every path parameter is declared, every
//!   operation answers and names a known security scheme);
//! - the served one carries the running config's limits (`max_wait_ms`,
//!   the mode names);
//! - a property test per request body: a field value the served schema
//!   calls valid is never refused as invalid, and one it calls invalid is
//!   refused naming that field; a table does the same for the limited
//!   query parameters.

mod common;

use std::collections::BTreeSet;

use hightick_gateway::GatewayConfig;
use hightick_gateway::api::{openapi_document, routes};
use hightick_gateway::config::ModeConfig;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().unwrap().keys() {
            out.insert((method.to_uppercase(), path.clone()));
        }
    }
    out
}

#[test]
fn every_route_is_documented_and_every_documented_route_exists() {
    let routed: BTreeSet<(String, String)> = routes()
        .into_iter()
        .map(|(m, p)| (m.to_owned(), p.to_owned()))
        .collect();
    let documented = documented(&openapi_document(&GatewayConfig::default()));
    let missing: Vec<_> = routed.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "routes missing from the document: {missing:?}"
    );
    let stale: Vec<_> = documented.difference(&routed).collect();
    assert!(stale.is_empty(), "documented but not routed: {stale:?}");
    assert!(routed.len() >= 20);
}

/// Every `$ref` string anywhere under `v`.
fn refs<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                match (k.as_str(), child) {
                    ("$ref", Value::String(r)) => out.push(r),
                    _ => refs(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|c| refs(c, out)),
        _ => {}
    }
}

/// Every integer schema under `v`, with where it is.
fn integers<'v>(v: &'v Value, at: String, out: &mut Vec<(String, &'v Value)>) {
    match v {
        Value::Object(map) => {
            let kind = map.get("type").unwrap_or(&Value::Null);
            let integer = kind == "integer"
                || kind
                    .as_array()
                    .is_some_and(|t| t.contains(&"integer".into()));
            if integer {
                out.push((at.clone(), v));
            }
            for (k, child) in map {
                integers(child, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                integers(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// JSON Schema validators take `format` as a note, so a bound the Rust
/// type sets must be written out, or a request the document calls valid
/// (`"ticks": 8250862671159335156` for a u32) is refused.
#[test]
fn every_integer_states_the_bounds_of_its_type() {
    let doc = openapi_document(&GatewayConfig::default());
    let mut all = Vec::new();
    integers(&doc, String::new(), &mut all);
    assert!(all.len() > 10, "{} integers", all.len());
    let known = [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    ];
    for (at, schema) in all {
        let format = schema["format"].as_str().unwrap_or_default();
        assert!(
            known.contains(&format),
            "{at}: format {format:?} in {schema}"
        );
        assert!(
            schema["minimum"].is_number() && schema["maximum"].is_number(),
            "{at}: {schema}"
        );
    }
    let ticks = &doc["components"]["schemas"]["MatchResult"]["properties"]["ticks"];
    assert_eq!(
        (&ticks["minimum"], &ticks["maximum"]),
        (&0.into(), &u32::MAX.into())
    );
}

#[test]
fn the_document_is_structurally_sound() {
    let doc = openapi_document(&GatewayConfig::default());
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a $ref outside the schemas: {r}"));
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling $ref {r}"
        );
    }
    let mut operation_ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{method} {path}");
            let responses = op["responses"].as_object().unwrap();
            assert!(!responses.is_empty(), "{at}: no responses");
            for (status, r) in responses {
                assert!(status.parse::<u16>().is_ok(), "{at}: status {status}");
                assert!(
                    r["description"].is_string(),
                    "{at} {status}: no description"
                );
            }
            let declared: BTreeSet<&str> = op["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter(|p| p["in"] == "path")
                        .map(|p| p["name"].as_str().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            let templated: BTreeSet<&str> = path
                .split('{')
                .skip(1)
                .map(|s| s.split('}').next().unwrap())
                .collect();
            assert_eq!(declared, templated, "{at}: path parameters");
            for requirement in op["security"].as_array().into_iter().flatten() {
                for scheme in requirement.as_object().unwrap().keys() {
                    assert!(schemes.contains_key(scheme), "{at}: scheme {scheme}");
                }
            }
            if let Some(id) = op["operationId"].as_str() {
                assert!(
                    operation_ids.insert(id.to_owned()),
                    "{at}: operationId {id} twice"
                );
            }
            if op.get("requestBody").is_some() {
                for status in ["400", "408", "413", "415", "422"] {
                    assert!(responses.contains_key(status), "{at}: no {status}");
                }
            }
        }
    }
}

fn config() -> GatewayConfig {
    let mode = |name: &str, players| ModeConfig {
        name: name.to_owned(),
        players,
        settings: serde_json::Map::new(),
    };
    GatewayConfig {
        max_wait_ms: 1234,
        modes: vec![mode("duel", 2), mode("squad", 4)],
        ..common::test_config()
    }
}

/// The schema of `field` in the component `schema`.
fn field_schema<'d>(doc: &'d Value, schema: &str, field: &str) -> &'d Value {
    let s = &doc["components"]["schemas"][schema]["properties"][field];
    assert!(s.is_object(), "{schema}.{field} is not in the document");
    s
}

/// Whether `value` is valid under `schema` (the keywords this API uses).
fn valid(schema: &Value, value: &Value) -> bool {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => panic!("no type in {schema}"),
    };
    let typed = types.iter().any(|t| match *t {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        other => panic!("type {other}"),
    });
    if !typed {
        return false;
    }
    if let Some(text) = value.as_str() {
        let chars = text.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|min| chars < min)
            || schema["maxLength"].as_u64().is_some_and(|max| chars > max)
        {
            return false;
        }
        if let Some(pattern) = schema["pattern"].as_str() {
            let re = regex::Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            if !re.is_match(text) {
                return false;
            }
        }
    }
    if let Some(n) = value.as_f64().filter(|_| value.is_number())
        && (schema["minimum"].as_f64().is_some_and(|min| n < min)
            || schema["maximum"].as_f64().is_some_and(|max| n > max))
    {
        return false;
    }
    if let Some(options) = schema["enum"].as_array() {
        return options.contains(value);
    }
    true
}

/// Field values of every kind: short and long, ASCII, Unicode, control
/// characters, numbers near each bound, null, a boolean.
fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z0-9._-]{0,70}".prop_map(Value::from),
        "[ -~]{0,140}".prop_map(Value::from),
        "\\PC{0,20}".prop_map(Value::from),
        proptest::collection::vec(any::<char>(), 0..20)
            .prop_map(|c| Value::from(String::from_iter(c))),
        prop_oneof![
            Just("duel"),
            Just("squad"),
            Just("skin.red"),
            Just("127.0.0.1:1")
        ]
        .prop_map(Value::from),
        prop_oneof![
            -3i64..3,
            99_990i64..100_010,
            999_990i64..1_000_010,
            any::<i64>(),
        ]
        .prop_map(Value::from),
        Just(Value::Null),
        Just(json!(true)),
    ]
}

/// A request body with a limited field, where it is sent, and a valid body.
struct Body {
    schema: &'static str,
    method: &'static str,
    path: &'static str,
    base: Value,
    fields: &'static [&'static str],
    /// The credential it needs: a session or the server secret.
    credential: Credential,
}

#[derive(Clone, Copy)]
enum Credential {
    None,
    Session,
    Server,
}

fn bodies() -> Vec<Body> {
    vec![
        Body {
            schema: "GuestLogin",
            method: "POST",
            path: "/v1/auth/guest",
            base: json!({ "device_id": "device-1" }),
            fields: &["device_id"],
            credential: Credential::None,
        },
        Body {
            schema: "Rename",
            method: "PUT",
            path: "/v1/me/profile",
            base: json!({ "display_name": "Ann" }),
            fields: &["display_name"],
            credential: Credential::Session,
        },
        Body {
            schema: "Purchase",
            method: "POST",
            path: "/v1/me/purchases",
            base: json!({ "item_id": "skin.red", "quantity": 1, "idempotency_key": "k-1" }),
            fields: &["item_id", "quantity", "idempotency_key"],
            credential: Credential::Session,
        },
        Body {
            schema: "Join",
            method: "POST",
            path: "/v1/matchmaking/tickets",
            base: json!({ "mode": "duel" }),
            fields: &["mode", "region"],
            credential: Credential::Session,
        },
        Body {
            schema: "JoinParty",
            method: "POST",
            path: "/v1/parties/join",
            base: json!({ "code": "ABCDEF" }),
            fields: &["code"],
            credential: Credential::Session,
        },
        Body {
            schema: "Heartbeat",
            method: "POST",
            path: "/v1/hosts",
            base: json!({ "admin": "127.0.0.1:7780", "capacity": 4 }),
            fields: &["host_id", "capacity", "region", "game"],
            credential: Credential::Server,
        },
        Body {
            schema: "MatchResult",
            method: "POST",
            path: "/v1/results",
            base: json!({ "match_id": "m-1", "mode": "duel", "players": [] }),
            fields: &["match_id", "mode"],
            credential: Credential::Server,
        },
    ]
}

#[test]
fn what_the_served_schema_calls_valid_is_accepted_and_what_it_calls_invalid_is_refused_by_name() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let config = config();
    let (gateway, secrets, http) =
        runtime.block_on(common::sqlite_gateway("openapi_rules", &config));
    let doc = runtime.block_on(http.get("/openapi.json", None)).body;
    assert_eq!(doc, openapi_document(&config), "the served document");
    // The config's limits are in it.
    assert_eq!(
        field_schema(&doc, "Join", "mode")["enum"],
        json!(["duel", "squad"])
    );
    let wait = doc["paths"]["/v1/auth/tickets/{ticket}"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "wait_ms")
        .unwrap();
    assert_eq!(wait["schema"]["maximum"], 1234);

    let (me, token) = runtime.block_on(http.guest("openapi-rules"));
    for mut body in bodies() {
        if body.schema == "MatchResult" {
            body.base["players"] = json!([
                { "account_id": me, "team": 0, "score": 1, "outcome": "win" }
            ]);
        }
        let bearer = match body.credential {
            Credential::None => None,
            Credential::Session => Some(token.as_str()),
            Credential::Server => Some(secrets.server_secret.as_str()),
        };
        for &field in body.fields {
            let schema = field_schema(&doc, body.schema, field).clone();
            let mut runner = TestRunner::new(Config::with_cases(48));
            runner
                .run(&any_value(), |value| {
                    let mut sent = body.base.clone();
                    sent[field] = value.clone();
                    let bytes = serde_json::to_vec(&sent).unwrap();
                    let a = runtime.block_on(http.raw(
                        body.method,
                        body.path,
                        Some(&bytes),
                        Some("application/json"),
                        bearer,
                    ));
                    let refused_as_invalid = a.status == 400 || a.status == 422;
                    let at = format!("{} {}: {field} = {value}", body.method, body.path);
                    if valid(&schema, &value) {
                        prop_assert!(!refused_as_invalid, "{at} is valid but refused: {}", a.text);
                    } else {
                        prop_assert!(
                            refused_as_invalid,
                            "{at} is invalid but answered {}: {}",
                            a.status,
                            a.text
                        );
                        prop_assert_eq!(
                            a.body["field"].as_str(),
                            Some(field),
                            "{}: {}",
                            at,
                            a.text
                        );
                    }
                    Ok(())
                })
                .unwrap();
        }
    }

    // Answers have the fields their schemas say.
    let answers = [
        ("/healthz", "Health"),
        ("/v1/me/profile", "Profile"),
        ("/v1/me/inventory", "Inventory"),
        ("/v1/shop", "Catalog"),
        ("/v1/leaderboard", "Leaderboard"),
        ("/v1/me/matches", "MatchHistory"),
    ];
    for (path, schema) in answers {
        let a = runtime.block_on(http.get(path, Some(&token)));
        assert_eq!(a.status, 200, "{path}: {}", a.text);
        let keys: BTreeSet<&String> = a.body.as_object().unwrap().keys().collect();
        let properties: BTreeSet<&String> = doc["components"]["schemas"][schema]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("no schema {schema}"))
            .keys()
            .collect();
        assert_eq!(keys, properties, "{path} against {schema}");
    }

    // The limited query parameters, at and past their bounds.
    let queries = [
        ("/v1/me/matches?limit=1", true),
        ("/v1/me/matches?limit=100", true),
        ("/v1/me/matches?limit=0", false),
        ("/v1/me/matches?limit=101", false),
        ("/v1/matchmaking/tickets/none?wait_ms=0", true),
        ("/v1/matchmaking/tickets/none?wait_ms=1234", true),
        ("/v1/matchmaking/tickets/none?wait_ms=1235", false),
        ("/v1/auth/tickets/none?wait_ms=1235", false),
    ];
    for (path, ok) in queries {
        let a = runtime.block_on(http.get(path, Some(&token)));
        if ok {
            assert_ne!(a.status, 400, "{path}: {}", a.text);
        } else {
            assert_eq!(a.status, 400, "{path}: {}", a.text);
            let name = if path.contains("limit=") {
                "limit"
            } else {
                "wait_ms"
            };
            assert_eq!(a.body["field"], name, "{path}");
        }
    }
    runtime.block_on(gateway.shutdown()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_answers_every_documented_route() {
    let (gateway, _, http) = common::sqlite_gateway("openapi", &common::test_config()).await;
    let doc = http.get("/openapi.json", None).await.body;
    for (method, path) in documented(&doc) {
        let concrete = path.replace("{ticket}", "0000");
        let a = http
            .raw(
                &method,
                &concrete,
                Some(b"{}"),
                Some("application/json"),
                None,
            )
            .await;
        assert_ne!(a.status, 405, "{method} {path}: {}", a.text);
        assert!(
            a.status != 404 || a.body["field"] == "ticket",
            "{method} {path}: {}",
            a.text
        );
    }
    gateway.shutdown().await.unwrap();
}

/// The answers issue 31 found missing from the document, each now in it
/// for its route: 426 for the push socket without an upgrade, 409 for a
/// party ticket from a player in no party; and `22277.0`, an integer to
/// JSON Schema, is taken as one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_once_undocumented_are_documented_and_integral_numbers_are_integers() {
    let (gateway, _, http) =
        common::sqlite_gateway("openapi_answers", &common::test_config()).await;
    let doc = http.get("/openapi.json", None).await.body;
    let documented = |path: &str, method: &str, status: u16| {
        doc["paths"][path][method]["responses"]
            .get(status.to_string())
            .is_some()
    };
    let (_, token) = http.guest("openapi-answers").await;

    let events = http.get("/v1/events", Some(&token)).await;
    assert_eq!(events.status, 426, "{}", events.text);
    assert!(documented("/v1/events", "get", 426));

    let mode = common::test_config().modes[0].name.clone();
    let party = http
        .post(
            "/v1/matchmaking/tickets",
            &serde_json::json!({ "mode": mode, "party": true }),
            Some(&token),
        )
        .await;
    assert_eq!(party.status, 409, "{}", party.text);
    assert!(documented("/v1/matchmaking/tickets", "post", 409));

    let item = common::test_config().catalog[0].item_id.clone();
    let bought = http
        .post(
            "/v1/me/purchases",
            &serde_json::json!({ "item_id": item, "quantity": 1.0, "idempotency_key": "k-openapi-1" }),
            Some(&token),
        )
        .await;
    assert!(
        bought.status != 422 || bought.body["field"] != "quantity",
        "{}",
        bought.text
    );
    gateway.shutdown().await.unwrap();
}
