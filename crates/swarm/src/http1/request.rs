//! Writing one HTTP/1.1 request into a reused buffer: request line
//! (origin form), `Host` (from the URI when the request has none), the
//! request's headers, `content-length` when there is a body (or the
//! method expects one), then the body.

use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use http::{Method, Request};
use http_body_util::Full;
use hyper::body::Body;

/// Appends `request` to `out` (cleared first) and says whether it was a
/// `HEAD` (whose response has no body). Writing into a `Vec` cannot fail.
pub fn write_request(out: &mut Vec<u8>, request: Request<Full<Bytes>>) -> bool {
    let (parts, body) = request.into_parts();
    let body = body_bytes(body);
    out.clear();
    out.extend_from_slice(parts.method.as_str().as_bytes());
    out.push(b' ');
    let target = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    out.extend_from_slice(if target.is_empty() {
        b"/"
    } else {
        target.as_bytes()
    });
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !parts.headers.contains_key(HOST)
        && let Some(authority) = parts.uri.authority()
    {
        header(out, b"host", authority.as_str().as_bytes());
    }
    for (name, value) in &parts.headers {
        // The framing is ours to state, from the body we send.
        if name != CONTENT_LENGTH && name != TRANSFER_ENCODING {
            header(out, name.as_str().as_bytes(), value.as_bytes());
        }
    }
    let expects_body = matches!(parts.method, Method::POST | Method::PUT | Method::PATCH);
    if !body.is_empty() || expects_body {
        let _ = write!(out, "content-length: {}\r\n", body.len());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&body);
    parts.method == Method::HEAD
}

fn header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// A `Full` body's bytes: it is always ready, so one poll takes them.
fn body_bytes(mut body: Full<Bytes>) -> Bytes {
    let mut cx = Context::from_waker(Waker::noop());
    match Pin::new(&mut body).poll_frame(&mut cx) {
        Poll::Ready(Some(Ok(frame))) => frame.into_data().unwrap_or_default(),
        _ => Bytes::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(request: Request<Full<Bytes>>) -> (String, bool) {
        let mut out = b"stale".to_vec();
        let head = write_request(&mut out, request);
        (String::from_utf8(out).unwrap(), head)
    }

    #[test]
    fn a_post_carries_host_type_length_and_body() {
        let request = Request::builder()
            .method(Method::POST)
            .uri("/login?x=1")
            .header(HOST, "127.0.0.1:8080")
            .header("content-type", "application/json")
            .header("content-length", "999")
            .body(Full::new(Bytes::from_static(b"{\"a\":1}")))
            .unwrap();
        assert_eq!(
            written(request),
            (
                "POST /login?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\ncontent-type: application/json\r\n\
                 content-length: 7\r\n\r\n{\"a\":1}"
                    .to_owned(),
                false
            )
        );
    }

    #[test]
    fn a_get_has_no_length_and_takes_host_from_the_uri() {
        let request = Request::builder()
            .uri("http://example.test:81")
            .header("authorization", "Bearer t")
            .body(Full::new(Bytes::new()))
            .unwrap();
        assert_eq!(
            written(request),
            (
                "GET / HTTP/1.1\r\nhost: example.test:81\r\nauthorization: Bearer t\r\n\r\n"
                    .to_owned(),
                false
            )
        );
        let head = Request::head("/x").body(Full::new(Bytes::new())).unwrap();
        assert_eq!(written(head), ("HEAD /x HTTP/1.1\r\n\r\n".to_owned(), true));
        let empty_post = Request::post("/p").body(Full::new(Bytes::new())).unwrap();
        assert_eq!(
            written(empty_post).0,
            "POST /p HTTP/1.1\r\ncontent-length: 0\r\n\r\n"
        );
    }
}
