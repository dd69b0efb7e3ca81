//! The OpenAPI document, generated from the handlers' own types: each
//! handler's `#[utoipa::path]` (method, path, parameters, its own answers)
//! and its request body type (`ToSchema`). Then, each from its one source:
//! - every field rule a handler checks ([`super::rules`]) on its body's
//!   schema or its query parameter;
//! - the refusals every route shares, from the extractors and layers it
//!   runs under (bad bodies, a missing session, the rate limit, a store
//!   that is down);
//! - the running config's limits: the longest long-poll (`max_wait_ms`)
//!   and the mode names;
//! - each integer's bounds, from the Rust type behind its `format`, so a
//!   validator that reads only `minimum`/`maximum` (JSON Schema treats
//!   `format` as a note) refuses what the handler's type cannot hold.

use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use super::rules::{self, Rule};
use super::{auth, events, meta, ops, party, play, servers};
use crate::config::GatewayConfig;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "hightick gateway",
        description = "Accounts, the login queue, sessions, the meta-game API, matchmaking, \
                       push, and the servers' side. Every refusal is a JSON ErrorBody naming \
                       the field at fault.",
    ),
    paths(
        ops::healthz,
        ops::metrics,
        ops::openapi,
        auth::guest,
        auth::sign_up,
        auth::password_login,
        auth::ticket,
        auth::logout,
        meta::profile,
        meta::rename,
        meta::inventory,
        meta::purchase,
        meta::matches,
        meta::shop,
        meta::leaderboard,
        play::join,
        play::status,
        play::cancel,
        play::rejoin,
        party::create,
        party::join,
        party::leave,
        party::mine,
        servers::heartbeat,
        servers::hosts,
        servers::result,
        events::events,
    ),
    components(schemas(super::error::ErrorBody)),
    tags(
        (name = "ops", description = "Health, metrics and this document"),
        (name = "auth", description = "Logins (queued under load) and sessions"),
        (name = "meta", description = "Profile, inventory, shop, history, leaderboard"),
        (name = "play", description = "Matchmaking tickets, parties and rejoining"),
        (name = "servers", description = "Server hosts: heartbeats and results (server secret)"),
        (name = "push", description = "The push WebSocket"),
    ),
)]
struct Generated;

/// Query parameters with a rule, by (path, method).
const QUERY_RULES: &[(&str, &str, Rule)] = &[("/v1/me/matches", "get", Rule::Int(rules::LIMIT))];

/// Long-poll parameters bounded by `max_wait_ms`, by (path, method).
const LONG_POLLS: &[(&str, &str)] = &[
    ("/v1/auth/tickets/{ticket}", "get"),
    ("/v1/matchmaking/tickets/{ticket}", "get"),
];

/// The document for a gateway running `config`.
pub fn document(config: &GatewayConfig) -> Value {
    let mut doc = serde_json::to_value(Generated::openapi())
        .unwrap_or_else(|e| json!({ "error": format!("the OpenAPI document: {e}") }));
    for (schema, rule) in rules::BODY_RULES {
        let property = &mut doc["components"]["schemas"][*schema]["properties"][rule.field()];
        merge(property, &rule.schema());
    }
    for (path, method, rule) in QUERY_RULES {
        if let Some(p) = parameter(&mut doc, path, method, rule.field()) {
            merge(&mut p["schema"], &rule.schema());
        }
    }
    for (path, method) in LONG_POLLS {
        if let Some(p) = parameter(&mut doc, path, method, "wait_ms") {
            merge(
                &mut p["schema"],
                &json!({ "minimum": 0, "maximum": config.max_wait_ms }),
            );
        }
    }
    let modes: Vec<&str> = config.modes.iter().map(|m| m.name.as_str()).collect();
    merge(
        &mut doc["components"]["schemas"]["Join"]["properties"]["mode"],
        &json!({ "enum": modes }),
    );
    integer_bounds(&mut doc);
    shared_refusals(&mut doc);
    doc["components"]["securitySchemes"] = json!({
        "session": { "type": "http", "scheme": "bearer", "description": "A session token from a login" },
        "server": { "type": "http", "scheme": "bearer", "description": "The servers' shared secret" },
    });
    doc
}

/// The range of each integer `format` (utoipa's names for Rust's integer
/// types, with `non_strict_integers`).
fn format_range(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0.into(), u8::MAX.into()),
        "uint16" => (0.into(), u16::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "uint64" => (0.into(), u64::MAX.into()),
        _ => return None,
    })
}

/// Gives every integer schema in `doc` the bounds of its format where it
/// states none narrower, and spells the unsigned formats as OpenAPI's
/// format registry does (`uint32`; utoipa writes `u-int32`).
fn integer_bounds(doc: &mut Value) {
    match doc {
        Value::Object(fields) => {
            if let Some(Value::String(format)) = fields.get_mut("format") {
                if let Some(bits) = format.strip_prefix("u-int") {
                    *format = format!("uint{bits}");
                }
                if let Some((low, high)) = format_range(format) {
                    fields.entry("minimum").or_insert(low);
                    fields.entry("maximum").or_insert(high);
                }
            }
            fields.values_mut().for_each(integer_bounds);
        }
        Value::Array(items) => items.iter_mut().for_each(integer_bounds),
        _ => {}
    }
}

/// Sets each key of `extra` on `target` (an object; made one if not).
fn merge(target: &mut Value, extra: &Value) {
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let (Some(target), Some(extra)) = (target.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            target.insert(k.clone(), v.clone());
        }
    }
}

fn parameter<'d>(
    doc: &'d mut Value,
    path: &str,
    method: &str,
    name: &str,
) -> Option<&'d mut Value> {
    doc["paths"][path][method]["parameters"]
        .as_array_mut()?
        .iter_mut()
        .find(|p| p["name"] == name)
}

/// Adds the refusals an operation gets from what it runs under, where its
/// own attribute does not already say more.
fn shared_refusals(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
            let mut add = Vec::new();
            if op.get("requestBody").is_some() {
                add.extend([
                    (
                        "400",
                        "Malformed JSON, or a field breaking its rule (named in `field`)",
                    ),
                    ("408", "The body did not arrive within the configured time"),
                    ("413", "The body is larger than the configured limit"),
                    ("415", "The body is not `application/json`"),
                    (
                        "422",
                        "A field of the wrong type, missing, or unknown (named in `field`)",
                    ),
                ]);
            }
            let query_ints = op["parameters"].as_array().is_some_and(|ps| {
                ps.iter()
                    .any(|p| p["in"] == "query" && p["schema"]["type"] == "integer")
            });
            if query_ints {
                add.push(("400", "A query parameter out of range (named in `field`)"));
            }
            if op["security"].as_array().is_some_and(|s| !s.is_empty()) {
                add.push(("401", "No, a bad, an expired or a revoked credential"));
            }
            if path.starts_with("/v1/") {
                add.push((
                    "429",
                    "Too many requests from this address (see Retry-After)",
                ));
                add.push((
                    "503",
                    "Storage unavailable or overloaded: retry after Retry-After",
                ));
            }
            let responses = &mut op["responses"];
            for (status, description) in add {
                if responses.get(status).is_none() {
                    responses[status] = json!({
                        "description": description,
                        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorBody" } } },
                    });
                }
            }
        }
    }
}
