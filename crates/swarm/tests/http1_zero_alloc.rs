//! Once its buffers have grown to the traffic's size, the swarm's HTTP/1.1
//! client writes requests and reads responses without allocating.

use bytes::Bytes;
use hightick_swarm::http1::{Progress, ResponseReader, write_request};
use hightick_telemetry::alloc::count_allocations;
use http::Request;
use http_body_util::Full;

#[global_allocator]
static A: hightick_telemetry::alloc::CountingAllocator =
    hightick_telemetry::alloc::CountingAllocator;

const RESPONSES: [&[u8]; 2] = [
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 16\r\n\r\n{\"token\":\"abcd\"}",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n6;x=1\r\n{\"a\":1\r\n1\r\n}\r\n0\r\nT: 1\r\n\r\n",
];

fn request() -> Request<Full<Bytes>> {
    Request::post("/login")
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(
            b"{\"device\":\"selftest-1\"}",
        )))
        .unwrap()
}

#[test]
fn writing_a_request_allocates_nothing_once_warm() {
    let mut out = Vec::new();
    write_request(&mut out, request());
    for _ in 0..100 {
        let r = request();
        assert_eq!(count_allocations(|| write_request(&mut out, r)), 0);
    }
    assert!(out.ends_with(b"\r\n\r\n{\"device\":\"selftest-1\"}"));
}

/// Reads each response in two pieces, as a socket might deliver them:
/// the allocations made while feeding the second piece.
fn read_all(reader: &mut ResponseReader) -> u64 {
    let mut allocations = 0;
    for wire in RESPONSES {
        reader.start(false);
        let (used, progress) = reader.feed(&wire[..30]).unwrap();
        assert_eq!(progress, Progress::More);
        let mut rest = wire[used..30].to_vec();
        rest.extend_from_slice(&wire[30..]);
        allocations += count_allocations(|| reader.feed(&rest).unwrap());
        assert!(reader.is_done());
        assert_eq!(reader.status(), 200);
        assert!(reader.body().ends_with(b"}"));
    }
    allocations
}

#[test]
fn reading_responses_allocates_nothing_once_warm() {
    let mut reader = ResponseReader::new();
    read_all(&mut reader);
    for _ in 0..100 {
        assert_eq!(read_all(&mut reader), 0);
    }
}
