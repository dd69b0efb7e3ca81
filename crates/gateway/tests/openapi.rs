//! The OpenAPI document in the repository lists exactly the routes the
//! router has (every route is added through the route table that
//! `api::routes` reads), and the gateway serves that document.

mod common;

use std::collections::BTreeSet;

use hightick_gateway::api::{OPENAPI, routes};
use serde_json::Value;

fn documented() -> BTreeSet<(String, String)> {
    let doc: Value = serde_json::from_str(OPENAPI).expect("openapi.json is JSON");
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().unwrap() {
            assert!(
                op["responses"].is_object(),
                "{method} {path} has no responses"
            );
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
    let documented = documented();
    let missing: Vec<_> = routed.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "routes missing from openapi.json: {missing:?}"
    );
    let stale: Vec<_> = documented.difference(&routed).collect();
    assert!(stale.is_empty(), "documented but not routed: {stale:?}");
    assert!(routed.len() >= 20);
}

#[test]
fn every_schema_reference_resolves() {
    let doc: Value = serde_json::from_str(OPENAPI).unwrap();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let text = OPENAPI;
    for piece in text.split("\"$ref\": \"#/components/schemas/").skip(1) {
        let name = piece.split('"').next().unwrap();
        assert!(schemas.contains_key(name), "dangling $ref {name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_the_document_and_answers_every_documented_route() {
    let (gateway, _, http) = common::sqlite_gateway("openapi", &common::test_config()).await;
    let served = http.get("/openapi.json", None).await;
    assert_eq!(served.status, 200);
    assert_eq!(served.body, serde_json::from_str::<Value>(OPENAPI).unwrap());
    // Every documented route is routed: none falls through to the 404 fallback.
    for (method, path) in documented() {
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
