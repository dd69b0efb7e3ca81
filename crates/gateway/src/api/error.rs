//! [`ApiError`]: every refusal the HTTP API gives, as a JSON body
//! `{"error": code, "message": text, "field": name-or-null}` with a 4xx (or,
//! for a real failure, a 5xx) status; and [`JsonBody`], the JSON extractor
//! whose rejections name the field at fault.

use axum::Json;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use hightick_store::StoreError;
use serde::de::DeserializeOwned;
use serde_json::json;

/// A refused or failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Machine-readable code (`bad_request`, `unauthorized`, ...).
    pub code: &'static str,
    /// What went wrong, for a person.
    pub message: String,
    /// The request field at fault, if one is.
    pub field: Option<String>,
    /// Seconds to wait before retrying (429).
    pub retry_after_s: Option<u64>,
}

impl ApiError {
    /// A refusal with `status` and `code`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            field: None,
            retry_after_s: None,
        }
    }

    /// 400 naming `field`.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_field", message).field(field)
    }

    /// 401.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message).field("authorization")
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 429 with a Retry-After.
    pub fn too_many(message: impl Into<String>, retry_after_s: u64) -> Self {
        let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message);
        e.retry_after_s = Some(retry_after_s.max(1));
        e
    }

    /// The same error naming `field`.
    pub fn field(mut self, field: &str) -> Self {
        self.field = Some(field.to_owned());
        self
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        Self::from(&e)
    }
}

impl From<crate::login::LoginError> for ApiError {
    fn from(e: crate::login::LoginError) -> Self {
        use crate::login::LoginError;
        match e {
            LoginError::NameTaken => {
                Self::new(StatusCode::CONFLICT, "name_taken", e.to_string()).field("name")
            }
            LoginError::WrongPassword => Self::unauthorized(e.to_string()).field("password"),
            LoginError::NoSession => Self::not_found(e.to_string()),
            LoginError::WorkerStopped => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                e.to_string(),
            ),
            LoginError::Store(store) => Self::from(&*store),
        }
    }
}

impl From<&StoreError> for ApiError {
    fn from(e: &StoreError) -> Self {
        match e {
            StoreError::InvalidInput { field, reason } => {
                Self::invalid(field, format!("{field}: {reason}"))
            }
            StoreError::NotFound { what } => Self::not_found(format!("{what} not found")),
            StoreError::Conflict { what } => Self::new(
                StatusCode::CONFLICT,
                "conflict",
                format!("conflict: {what}"),
            ),
            StoreError::InsufficientFunds { balance, cost } => Self::new(
                StatusCode::CONFLICT,
                "insufficient_funds",
                format!("balance {balance} is less than the cost {cost}"),
            )
            .field("quantity"),
            other => {
                // A database restart or a full pool passes: ask for a retry.
                let mut e = Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    format!("storage: {other}"),
                );
                e.retry_after_s = Some(STORAGE_RETRY_AFTER_S);
                e
            }
        }
    }
}

/// Seconds a client is asked to wait after a storage failure.
const STORAGE_RETRY_AFTER_S: u64 = 1;

/// The JSON body of every refusal.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Machine-readable code (`invalid_field`, `unauthorized`, `unavailable`, ...).
    pub error: String,
    /// What went wrong, for a person.
    pub message: String,
    /// The request field at fault, if one is.
    pub field: Option<String>,
}

impl ApiError {
    /// Its JSON body: `{"error", "message", "field"}` ([`ErrorBody`]).
    pub fn body(&self) -> serde_json::Value {
        json!(ErrorBody {
            error: self.code.to_owned(),
            message: self.message.clone(),
            field: self.field.clone(),
        })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body())).into_response();
        if let Some(s) = self.retry_after_s
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        response
    }
}

/// A JSON request body of type `T`. Refusals: 415 without a JSON content
/// type, 408 when it does not arrive by the listener's [body
/// deadline](crate::listen::BodyDeadline), 413 past the body limit, 400 for malformed JSON, and 422 for a
/// wrong type, a missing field or an unknown field, each naming the field.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        if !json_type {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "expected content-type: application/json",
            )
            .field("content-type"));
        }
        let deadline = req
            .extensions()
            .get::<crate::listen::BodyDeadline>()
            .map(|d| d.0);
        let read = Bytes::from_request(req, state);
        let read = match deadline {
            Some(at) => tokio::time::timeout_at(at, read).await.map_err(|_| {
                ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "body_timeout",
                    "the request body did not arrive in time",
                )
                .field("body")
            })?,
            None => read.await,
        };
        let bytes = read.map_err(|rejection| {
            let status = rejection.status();
            if status == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(status, "body_too_large", "request body is too large").field("body")
            } else {
                ApiError::new(status, "bad_body", rejection.body_text()).field("body")
            }
        })?;
        parse_json(&bytes).map(JsonBody)
    }
}

/// Parses `bytes` as a `T`, naming the field at fault on failure.
/// Every body of this API is a JSON object.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b != b'{') {
        let message = if serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_field",
                "body: expected a JSON object",
            )
            .field("body"));
        } else {
            "malformed JSON: expected a JSON object"
        };
        return Err(
            ApiError::new(StatusCode::BAD_REQUEST, "malformed_json", message).field("body"),
        );
    }
    let mut value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| json_error(".", &e))?;
    integral_numbers_as_integers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        json_error(&path, &inner)
    })
}

/// JSON Schema counts a number with a zero fraction (`22277.0`, `1e3`) as an
/// integer, and so does the API: such a number becomes the integer it is
/// (when it fits an `i64`), so a field the document calls an integer takes
/// it. A field that wants a float takes an integer as well.
fn integral_numbers_as_integers(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f >= i64::MIN as f64
                && f < i64::MAX as f64
            {
                *value = serde_json::Value::from(f as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_numbers_as_integers),
        serde_json::Value::Object(map) => map.values_mut().for_each(integral_numbers_as_integers),
        _ => {}
    }
}

fn json_error(path: &str, e: &serde_json::Error) -> ApiError {
    use serde_json::error::Category;
    let message = e.to_string();
    let named = ["unknown field `", "missing field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .and_then(|rest| rest.split('`').next());
    let field = match (named, path) {
        (Some(name), ".") => name.to_owned(),
        (Some(name), path) if path == name || path.ends_with(&format!(".{name}")) => {
            path.to_owned()
        }
        (Some(name), parent) => format!("{parent}.{name}"),
        (None, ".") => "body".to_owned(),
        (None, path) => path.to_owned(),
    };
    match e.classify() {
        Category::Syntax | Category::Eof | Category::Io => ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            format!("malformed JSON: {message}"),
        )
        .field("body"),
        Category::Data => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
            format!("{field}: {message}"),
        )
        .field(&field),
    }
}

/// The value of `name` in a raw query string, parsed as an integer in `range`.
pub fn query_int(
    raw: Option<&str>,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, ApiError> {
    let Some(raw) = raw else { return Ok(None) };
    for pair in raw.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key != name {
            continue;
        }
        let parsed: u64 = value
            .parse()
            .map_err(|_| ApiError::invalid(name, format!("{name}: expected a whole number")))?;
        if !range.contains(&parsed) {
            return Err(ApiError::invalid(
                name,
                format!("{name}: must be in {}..={}", range.start(), range.end()),
            ));
        }
        return Ok(Some(parsed));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Buy {
        item_id: String,
        quantity: i64,
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        n: u8,
    }

    fn field_of(body: &str) -> (StatusCode, Option<String>) {
        let e = parse_json::<Buy>(body.as_bytes()).unwrap_err();
        (e.status, e.field)
    }

    #[test]
    fn a_storage_failure_is_a_503_with_retry_after() {
        for failure in [
            StoreError::WriterClosed,
            StoreError::BatchAborted {
                reason: "connection reset".to_owned(),
            },
        ] {
            let e = ApiError::from(failure);
            assert_eq!(e.status, StatusCode::SERVICE_UNAVAILABLE);
            let response = e.into_response();
            assert_eq!(
                response.headers().get(header::RETRY_AFTER).unwrap(),
                &STORAGE_RETRY_AFTER_S.to_string()
            );
        }
    }

    #[test]
    fn each_kind_of_bad_json_names_its_field() {
        let cases = [
            ("{", StatusCode::BAD_REQUEST, "body"),
            (
                "{\"item_id\":\"a\",\"quantity\":\"3\"}",
                StatusCode::UNPROCESSABLE_ENTITY,
                "quantity",
            ),
            (
                "{\"item_id\":\"a\"}",
                StatusCode::UNPROCESSABLE_ENTITY,
                "quantity",
            ),
            (
                "{\"item_id\":\"a\",\"quantity\":1,\"price\":0}",
                StatusCode::UNPROCESSABLE_ENTITY,
                "price",
            ),
            (
                "{\"item_id\":\"a\",\"quantity\":1,\"inner\":{\"n\":300}}",
                StatusCode::UNPROCESSABLE_ENTITY,
                "inner.n",
            ),
            (
                "{\"item_id\":\"a\",\"quantity\":1,\"inner\":{\"m\":1}}",
                StatusCode::UNPROCESSABLE_ENTITY,
                "inner.m",
            ),
            (
                "{\"item_id\":\"a\",\"quantity\":1} x",
                StatusCode::BAD_REQUEST,
                "body",
            ),
            ("[]", StatusCode::UNPROCESSABLE_ENTITY, "body"),
        ];
        for (body, status, field) in cases {
            assert_eq!(field_of(body), (status, Some(field.to_owned())), "{body}");
        }
        let ok: Buy = parse_json(b"{\"item_id\":\"a\",\"quantity\":1}").unwrap();
        assert_eq!(ok.quantity, 1);
    }

    #[test]
    fn a_number_with_a_zero_fraction_is_an_integer_as_json_schema_says() {
        let ok: Buy = parse_json(b"{\"item_id\":\"a\",\"quantity\":22277.0}").unwrap();
        assert_eq!(ok.quantity, 22277);
        let ok: Buy = parse_json(b"{\"item_id\":\"a\",\"quantity\":2e1}").unwrap();
        assert_eq!(ok.quantity, 20);
        assert_eq!(
            field_of("{\"item_id\":\"a\",\"quantity\":1.5}"),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("quantity".to_owned())
            )
        );
        assert_eq!(
            field_of("{\"item_id\":\"a\",\"quantity\":1e300}"),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("quantity".to_owned())
            )
        );
    }

    #[test]
    fn query_integers_are_checked() {
        assert_eq!(
            query_int(Some("limit=5"), "limit", 1..=100).unwrap(),
            Some(5)
        );
        assert_eq!(query_int(Some("a=1"), "limit", 1..=100).unwrap(), None);
        assert_eq!(query_int(None, "limit", 1..=100).unwrap(), None);
        let e = query_int(Some("limit=-1"), "limit", 1..=100).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("limit"));
        let e = query_int(Some("x=1&limit=1000"), "limit", 1..=100).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_bodies_are_values_or_4xx(body in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Err(e) = parse_json::<Buy>(&body) {
                prop_assert!(e.status.is_client_error());
                prop_assert!(e.field.is_some());
            }
        }
    }
}
