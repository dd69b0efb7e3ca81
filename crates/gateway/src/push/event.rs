//! The JSON text of one push: `{"type": ..., "at_ms": ..., ...body}`, where
//! the body is what the polling route answers for the same state.
//!
//! | `type` | when | body |
//! |---|---|---|
//! | `login_queue` | a queued login's position changed (at most 1/s) | `ticket`, `position`, `estimate_ms` |
//! | `admitted` | the login was admitted | the ticket route's 200 body |
//! | `login_refused` | the login failed | the ticket route's error body |
//! | `queue` | a matchmaking position or queue length changed (at most 1/s) | the ticket route's `queued` body |
//! | `match_found` | a match was allocated | the ticket route's `matched` body |
//! | `match_cancelled` | the ticket left the queue | `ticket` |

use serde_json::{Value, json};

/// `body` (a JSON object) as a push of `kind`, stamped `at_ms`.
pub fn render(kind: &str, mut body: Value, at_ms: i64) -> String {
    if let Value::Object(map) = &mut body {
        map.insert("type".to_owned(), Value::from(kind));
        map.insert("at_ms".to_owned(), Value::from(at_ms));
    } else {
        body = json!({ "type": kind, "at_ms": at_ms, "body": body });
    }
    body.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_is_the_body_with_its_type_and_time() {
        let text = render("match_cancelled", json!({ "ticket": "t1" }), 42);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            json!({ "type": "match_cancelled", "ticket": "t1", "at_ms": 42 })
        );
    }
}
