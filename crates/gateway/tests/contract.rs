//! Every route against the served OpenAPI document, as a property test
//! (issue 31, "the contract, checked"). For each documented operation it
//! sends requests made from the document alone: bodies generated from the
//! request schema (valid ones, and ones mutated until the schema's validator
//! says whether they still are), path and query parameters from their
//! schemas, the route's credential or none, and a few bodies that are not
//! JSON at all. Every answer must:
//! - have a status the document lists for that operation, and never a 5xx;
//! - carry a body that validates against the schema documented for that
//!   status (and the documented content type);
//! - refuse a body the schema calls invalid (400 or 422), and never refuse
//!   one it calls valid as invalid.
//!
//! The schemas are checked by the `jsonschema` crate (draft 2020-12, as
//! OpenAPI 3.1 says), not by the gateway's own rules.

mod common;

use std::collections::BTreeMap;

use common::{Answer, Http};
use hightick_gateway::GatewayConfig;
use proptest::prelude::*;
use proptest::strategy::Union;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

/// Cases per operation; operations that hash a password (argon2id, slow in a
/// debug build) get fewer.
const CASES: u32 = 40;
const CASES_HASHING: u32 = 6;

/// Rules a JSON Schema cannot say (one field against another, what an
/// address means), each written in its field's description: a valid body
/// refused naming one of these fields is as documented, if the description
/// says the rule in these words.
const BEYOND_SCHEMA: &[(&str, &str, &str)] = &[
    (
        "POST /v1/hosts",
        "admin",
        "a concrete IP and a non-zero port",
    ),
    ("POST /v1/hosts", "active", "at most its capacity"),
    ("POST /v1/results", "players", "each at most once"),
];

/// The schema `schema` points at, following `$ref`s.
fn resolve<'d>(doc: &'d Value, schema: &'d Value) -> &'d Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let pointer = reference.strip_prefix('#').expect("a local $ref");
            let target = doc
                .pointer(pointer)
                .unwrap_or_else(|| panic!("{reference} does not resolve"));
            resolve(doc, target)
        }
        None => schema,
    }
}

/// A validator of `schema` with the document's components beside it, so its
/// `$ref`s resolve.
fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    if let Value::Object(fields) = &mut root {
        fields.insert("components".into(), doc["components"].clone());
    }
    jsonschema::draft202012::new(&root).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

/// Values `schema` calls valid (its example among them).
fn valid_value(doc: &Value, schema: &Value) -> BoxedStrategy<Value> {
    let schema = resolve(doc, schema);
    if let Some(example) = schema.get("example") {
        let mut rest = schema.clone();
        rest.as_object_mut().unwrap().remove("example");
        return prop_oneof![Just(example.clone()), valid_value(doc, &rest)].boxed();
    }
    if let Some(options) = schema["enum"].as_array() {
        return proptest::sample::select(options.clone()).boxed();
    }
    if let Some(any) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
        return Union::new(any.iter().map(|s| valid_value(doc, s))).boxed();
    }
    if let Some([only]) = schema["allOf"].as_array().map(Vec::as_slice) {
        return valid_value(doc, only);
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        Value::Null => return any_json().boxed(),
        other => panic!("type {other}"),
    };
    Union::new(types.into_iter().map(|t| typed_value(doc, schema, t))).boxed()
}

fn typed_value(doc: &Value, schema: &Value, kind: &str) -> BoxedStrategy<Value> {
    match kind {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::from).boxed(),
        "integer" => {
            // The document bounds every integer by its type; a bound
            // beyond i64 (u64::MAX) is taken as i64's.
            let low = schema["minimum"].as_i64().unwrap_or(i64::MIN);
            let high = schema["maximum"].as_i64().unwrap_or(i64::MAX);
            prop_oneof![Just(low), Just(high), low..=high]
                .prop_map(Value::from)
                .boxed()
        }
        "string" => string_value(schema),
        "array" => {
            let min = schema["minItems"].as_u64().unwrap_or(0) as usize;
            let max = schema["maxItems"].as_u64().map_or(min + 3, |m| m as usize);
            let items = valid_value(doc, &schema["items"]);
            proptest::collection::vec(items, min..=max.min(min + 3))
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => object_value(doc, schema),
        other => panic!("the generator knows no type {other}"),
    }
}

/// Strings of the schema's length whose characters are the pattern's class.
/// The document's patterns are all `^[class]*$`; another shape fails here,
/// naming it, so the generator learns it before it is trusted.
fn string_value(schema: &Value) -> BoxedStrategy<Value> {
    let min = schema["minLength"].as_u64().unwrap_or(0);
    let max = schema["maxLength"].as_u64().unwrap_or(min + 40);
    let class = match schema["pattern"].as_str() {
        Some(pattern) => pattern
            .strip_prefix('^')
            .and_then(|p| p.strip_suffix("*$"))
            .unwrap_or_else(|| panic!("pattern {pattern} is not ^[class]*$"))
            .to_owned(),
        None => "\\PC".to_owned(),
    };
    proptest::string::string_regex(&format!("{class}{{{min},{max}}}"))
        .unwrap_or_else(|e| panic!("{class}: {e}"))
        .prop_map(Value::from)
        .boxed()
}

fn object_value(doc: &Value, schema: &Value) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let name = name.clone();
        let value = valid_value(doc, field);
        fields.push(if required.contains(&name.as_str()) {
            value.prop_map(move |v| Some((name.clone(), v))).boxed()
        } else {
            proptest::option::of(value.prop_map(move |v| (name.clone(), v))).boxed()
        });
    }
    let extra = match &schema["additionalProperties"] {
        map @ Value::Object(_) => {
            proptest::collection::btree_map("[a-z_]{1,12}", valid_value(doc, map), 0..3).boxed()
        }
        _ => Just(BTreeMap::new()).boxed(),
    };
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut object: Map<String, Value> = extra.into_iter().collect();
            object.extend(fields.into_iter().flatten());
            Value::Object(object)
        })
        .boxed()
}

/// Any JSON scalar, of every kind and near the bounds the document uses.
fn any_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[ -~]{0,140}".prop_map(Value::from),
        "\\PC{0,20}".prop_map(Value::from),
        proptest::collection::vec(any::<char>(), 0..10)
            .prop_map(|c| Value::from(String::from_iter(c))),
        prop_oneof![-3i64..3, 999_990i64..1_000_010, any::<i64>()].prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
    ]
}

/// How a valid body is spoiled (it may stay valid: the validator decides).
#[derive(Debug, Clone)]
enum Spoil {
    None,
    Drop(usize),
    Set(usize, Value),
    Extra(Value),
    Whole(Value),
}

fn spoil() -> impl Strategy<Value = Spoil> {
    prop_oneof![
        2 => Just(Spoil::None),
        1 => any::<usize>().prop_map(Spoil::Drop),
        3 => (any::<usize>(), any_json()).prop_map(|(i, v)| Spoil::Set(i, v)),
        1 => any_json().prop_map(Spoil::Extra),
        1 => any_json().prop_map(Spoil::Whole),
    ]
}

fn spoiled(mut body: Value, how: &Spoil, names: &[String]) -> Value {
    let pick = |i: usize| names.get(i % names.len().max(1)).cloned();
    match (how, &mut body) {
        (Spoil::None, _) => {}
        (Spoil::Drop(i), Value::Object(o)) => {
            if let Some(name) = pick(*i) {
                o.remove(&name);
            }
        }
        (Spoil::Set(i, v), Value::Object(o)) => {
            if let Some(name) = pick(*i) {
                o.insert(name, v.clone());
            }
        }
        (Spoil::Extra(v), Value::Object(o)) => {
            o.insert("unexpected".into(), v.clone());
        }
        (Spoil::Whole(v), _) => body = v.clone(),
        _ => {}
    }
    body
}

/// A path or query value made URL-safe.
fn escape(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One documented operation.
struct Operation {
    method: String,
    path: String,
    spec: Value,
}

impl Operation {
    fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    fn parameters(&self, place: &str) -> Vec<&Value> {
        self.spec["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == place)
            .collect()
    }

    fn credential(&self) -> Option<&str> {
        let first = self.spec["security"].as_array()?.first()?.as_object()?;
        first.keys().next().map(String::as_str)
    }

    fn hashes_a_password(&self) -> bool {
        self.path == "/v1/auth/login" || self.path == "/v1/auth/signup"
    }
}

fn operations(doc: &Value) -> Vec<Operation> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, spec) in item.as_object().unwrap() {
            out.push(Operation {
                method: method.to_uppercase(),
                path: path.clone(),
                spec: spec.clone(),
            });
        }
    }
    out
}

/// A request made from an operation's schemas.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    body: Option<Value>,
    /// Query parameters out of their schema's range.
    bad_query: Vec<String>,
    /// Send the route's credential (else none).
    credential: bool,
}

fn request(doc: &Value, op: &Operation) -> BoxedStrategy<Request> {
    let path_values: Vec<BoxedStrategy<(String, String)>> = op
        .parameters("path")
        .into_iter()
        .map(|p| {
            let name = p["name"].as_str().unwrap().to_owned();
            prop_oneof![
                "[A-Za-z0-9._~-]{1,70}".prop_map(|s| s.to_string()),
                "\\PC{1,20}".prop_map(|s| s.to_string()),
            ]
            .prop_map(move |v| (name.clone(), v))
            .boxed()
        })
        .collect();
    let query_values: Vec<BoxedStrategy<Option<(String, String, bool)>>> = op
        .parameters("query")
        .into_iter()
        .map(|p| {
            let name = p["name"].as_str().unwrap().to_owned();
            let schema = p["schema"].clone();
            let checker = validator(doc, &schema);
            let integer = schema["type"] == "integer";
            let value = prop_oneof![valid_value(doc, &schema), any_json()];
            proptest::option::of(value.prop_map(move |v| {
                let text = match &v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                // An integer travels as its decimal digits, and only so.
                let ok = if integer {
                    text.parse::<i64>()
                        .is_ok_and(|n| checker.is_valid(&Value::from(n)))
                        && text.bytes().all(|b| b.is_ascii_digit() || b == b'-')
                } else {
                    checker.is_valid(&Value::String(text.clone()))
                };
                (name.clone(), text, ok)
            }))
            .boxed()
        })
        .collect();
    let body_schema = &op.spec["requestBody"]["content"]["application/json"]["schema"];
    let body = if body_schema.is_null() {
        Just(None).boxed()
    } else {
        let names: Vec<String> = resolve(doc, body_schema)["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        (valid_value(doc, body_schema), spoil())
            .prop_map(move |(v, how)| Some(spoiled(v, &how, &names)))
            .boxed()
    };
    let path = op.path.clone();
    (
        path_values,
        query_values,
        body,
        proptest::bool::weighted(0.9),
    )
        .prop_map(move |(params, query, body, credential)| {
            let mut concrete = path.clone();
            for (name, value) in params {
                concrete = concrete.replace(&format!("{{{name}}}"), &escape(&value));
            }
            let mut bad_query = Vec::new();
            let mut pairs = Vec::new();
            for (name, text, ok) in query.into_iter().flatten() {
                pairs.push(format!("{name}={}", escape(&text)));
                if !ok {
                    bad_query.push(name);
                }
            }
            if !pairs.is_empty() {
                concrete = format!("{concrete}?{}", pairs.join("&"));
            }
            Request {
                path: concrete,
                body,
                bad_query,
                credential,
            }
        })
        .boxed()
}

/// The credentials of a test: a session (renewed after a logout) and the
/// server secret.
struct Credentials {
    session: String,
    server: String,
    logins: u32,
}

impl Credentials {
    async fn renew(&mut self, http: &Http) {
        self.logins += 1;
        self.session = http.guest(&format!("contract-{}", self.logins)).await.1;
    }

    fn of(&self, scheme: &str) -> &str {
        match scheme {
            "session" => &self.session,
            "server" => &self.server,
            other => panic!("unknown security scheme {other}"),
        }
    }
}

/// What the document says about `answer` to `op`; `Err` names the breach.
fn check_answer(
    doc: &Value,
    op: &Operation,
    sent: &Request,
    answer: &Answer,
) -> Result<(), String> {
    let at = format!("{} (sent {} {:?})", op.name(), sent.path, sent.body);
    if answer.status >= 500 {
        return Err(format!("{at}: answered {}: {}", answer.status, answer.text));
    }
    let Some(documented) = op.spec["responses"].get(answer.status.to_string()) else {
        return Err(format!(
            "{at}: status {} is not documented: {}",
            answer.status, answer.text
        ));
    };
    let documented = resolve(doc, documented);
    let Some(content) = documented["content"].as_object() else {
        return Ok(());
    };
    let media = answer.content_type.as_deref().unwrap_or("");
    let Some((_, schema)) = content
        .iter()
        .find(|(kind, _)| media.starts_with(kind.as_str()))
    else {
        return Err(format!(
            "{at}: {} answered as {media:?}, documented as {:?}",
            answer.status,
            content.keys().collect::<Vec<_>>()
        ));
    };
    if media.starts_with("application/json") {
        let body: Value = serde_json::from_str(&answer.text)
            .map_err(|e| format!("{at}: {} is not JSON ({e}): {}", answer.status, answer.text))?;
        let schema = &schema["schema"];
        if let Some(error) = validator(doc, schema).iter_errors(&body).next() {
            return Err(format!(
                "{at}: the {} body breaks its schema at {}: {error}: {}",
                answer.status,
                error.instance_path(),
                answer.text
            ));
        }
    }
    Ok(())
}

/// Whether the request's own shape must be refused, or must not be.
fn check_verdict(
    doc: &Value,
    op: &Operation,
    sent: &Request,
    answer: &Answer,
) -> Result<(), String> {
    let refused = answer.status == 400 || answer.status == 422;
    let at = format!("{} (sent {} {:?})", op.name(), sent.path, sent.body);
    if !sent.credential && op.credential().is_some() {
        return Ok(()); // 401 comes first: the shape is never looked at.
    }
    let body_schema = &op.spec["requestBody"]["content"]["application/json"]["schema"];
    let body_ok = match (&sent.body, body_schema.is_null()) {
        (Some(body), false) => validator(doc, body_schema).is_valid(body),
        _ => true,
    };
    if body_ok && sent.bad_query.is_empty() && refused {
        let field = answer.body["field"].as_str().unwrap_or_default();
        let schema = resolve(doc, body_schema);
        let described = schema["properties"][field]["description"]
            .as_str()
            .unwrap_or_default();
        let beyond = BEYOND_SCHEMA
            .iter()
            .any(|(name, f, rule)| *name == op.name() && *f == field && described.contains(rule));
        if beyond {
            return Ok(());
        }
        return Err(format!("{at}: valid, but refused: {}", answer.text));
    }
    if !body_ok && !refused {
        return Err(format!(
            "{at}: invalid, but answered {}: {}",
            answer.status, answer.text
        ));
    }
    if !sent.bad_query.is_empty() && answer.status != 400 {
        return Err(format!(
            "{at}: query {:?} out of its schema, but answered {}: {}",
            sent.bad_query, answer.status, answer.text
        ));
    }
    Ok(())
}

fn config() -> GatewayConfig {
    GatewayConfig {
        // Long polls answer within a few milliseconds.
        max_wait_ms: 20,
        ..common::test_config()
    }
}

#[test]
fn every_route_answers_as_documented_to_requests_made_from_the_document() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let config = config();
    let (gateway, secrets, http) = runtime.block_on(common::sqlite_gateway("contract", &config));
    let doc = runtime.block_on(http.get("/openapi.json", None)).body;
    let mut credentials = Credentials {
        session: String::new(),
        server: secrets.server_secret.clone(),
        logins: 0,
    };
    runtime.block_on(credentials.renew(&http));
    let credentials = std::cell::RefCell::new(credentials);
    let sent = std::cell::Cell::new(0u32);
    for op in operations(&doc) {
        let cases = if op.hashes_a_password() {
            CASES_HASHING
        } else {
            CASES
        };
        let mut runner = TestRunner::new(Config {
            failure_persistence: None,
            ..Config::with_cases(cases)
        });
        let statuses = std::cell::RefCell::new(BTreeMap::<u16, u32>::new());
        let outcome = runner.run(&request(&doc, &op), |req| {
            let bearer = match (req.credential, op.credential()) {
                (true, Some(scheme)) => Some(credentials.borrow().of(scheme).to_owned()),
                _ => None,
            };
            let bytes = req.body.as_ref().map(|b| serde_json::to_vec(b).unwrap());
            let answer = runtime.block_on(http.raw(
                &op.method,
                &req.path,
                bytes.as_deref(),
                bytes.as_ref().map(|_| "application/json"),
                bearer.as_deref(),
            ));
            sent.set(sent.get() + 1);
            *statuses.borrow_mut().entry(answer.status).or_default() += 1;
            if op.path == "/v1/auth/logout" && answer.status == 200 {
                runtime.block_on(credentials.borrow_mut().renew(&http));
            }
            check_answer(&doc, &op, &req, &answer).map_err(TestCaseError::fail)?;
            check_verdict(&doc, &op, &req, &answer).map_err(TestCaseError::fail)?;
            Ok(())
        });
        if let Err(e) = outcome {
            panic!("{}: {e}", op.name());
        }
        eprintln!("{}: {:?}", op.name(), statuses.borrow());
        // Bodies that are not JSON, or not declared as JSON.
        if !op.spec["requestBody"].is_null() {
            let bearer = op
                .credential()
                .map(|s| credentials.borrow().of(s).to_owned());
            for (bytes, content_type) in [
                (&b"{"[..], "application/json"),
                (b"not json", "application/json"),
                (b"{\"a\":", "application/json"),
                (b"{}", "text/plain"),
            ] {
                let answer = runtime.block_on(http.raw(
                    &op.method,
                    &op.path.replace('{', "x").replace('}', ""),
                    Some(bytes),
                    Some(content_type),
                    bearer.as_deref(),
                ));
                sent.set(sent.get() + 1);
                let req = Request {
                    path: op.path.clone(),
                    body: Some(Value::from(String::from_utf8_lossy(bytes).into_owned())),
                    bad_query: Vec::new(),
                    credential: true,
                };
                if let Err(e) = check_answer(&doc, &op, &req, &answer) {
                    panic!("{e}");
                }
                assert!(
                    [400, 415, 422].contains(&answer.status),
                    "{} with {content_type} {:?}: {} {}",
                    op.name(),
                    String::from_utf8_lossy(bytes),
                    answer.status,
                    answer.text
                );
            }
        }
    }
    eprintln!(
        "contract: {} requests, every answer as documented",
        sent.get()
    );
    runtime.block_on(gateway.shutdown()).unwrap();
}
