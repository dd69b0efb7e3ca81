use proptest::prelude::*;

use super::*;

/// What a connection would see: `wire` arriving in pieces cut at `cuts`,
/// unused bytes kept for the next read, the close after the last piece.
fn read(wire: &[u8], cuts: &[usize]) -> Result<(u16, Vec<u8>, bool, usize), ResponseError> {
    let mut reader = ResponseReader::new();
    reader.start(false);
    let mut pending = Vec::new();
    let mut at = 0;
    let mut ends: Vec<usize> = cuts.iter().map(|&c| c.min(wire.len())).collect();
    ends.sort_unstable();
    ends.push(wire.len());
    for end in ends {
        if end < at {
            continue;
        }
        pending.extend_from_slice(&wire[at..end]);
        at = end;
        let (used, progress) = reader.feed(&pending)?;
        pending.drain(..used);
        if progress == Progress::Done {
            let left = pending.len() + wire.len() - at;
            return Ok((
                reader.status(),
                reader.body().to_vec(),
                reader.keep_alive(),
                left,
            ));
        }
    }
    reader.close()?;
    Ok((
        reader.status(),
        reader.body().to_vec(),
        reader.keep_alive(),
        0,
    ))
}

fn whole(wire: &[u8]) -> Result<(u16, Vec<u8>, bool, usize), ResponseError> {
    read(wire, &[])
}

const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
    5;name=value;other\r\nhello\r\n1A \r\n, this is a chunked body!!\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n";

#[test]
fn a_content_length_body_is_read_exactly() {
    let wire = b"HTTP/1.1 201 Created\r\ncontent-length: 5\r\n\r\nhelloEXTRA";
    assert_eq!(whole(wire), Ok((201, b"hello".to_vec(), true, 5)));
    let empty = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(whole(empty), Ok((200, Vec::new(), true, 0)));
}

#[test]
fn a_chunked_body_skips_extensions_and_trailers() {
    let (status, body, keep, left) = whole(CHUNKED).unwrap();
    assert_eq!(status, 200);
    assert_eq!(body, b"hello, this is a chunked body!!");
    assert!(keep);
    assert_eq!(left, 0);
}

#[test]
fn every_split_of_a_chunked_response_reads_the_same() {
    let expected = whole(CHUNKED).unwrap();
    for cut in 0..=CHUNKED.len() {
        assert_eq!(read(CHUNKED, &[cut]), Ok(expected.clone()), "cut at {cut}");
    }
    let every_byte: Vec<usize> = (0..CHUNKED.len()).collect();
    assert_eq!(read(CHUNKED, &every_byte), Ok(expected));
}

#[test]
fn connection_close_and_http_1_0_end_keep_alive() {
    let close = b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(whole(close), Ok((200, b"ok".to_vec(), false, 0)));
    let old = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(whole(old), Ok((200, b"ok".to_vec(), false, 0)));
    let old_kept = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(whole(old_kept), Ok((200, b"ok".to_vec(), true, 0)));
}

#[test]
fn a_body_without_length_runs_to_the_close() {
    let wire = b"HTTP/1.1 200 OK\r\n\r\nall of it";
    assert_eq!(whole(wire), Ok((200, b"all of it".to_vec(), false, 0)));
}

#[test]
fn interim_responses_and_bodiless_statuses() {
    let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n";
    assert_eq!(whole(wire), Ok((204, Vec::new(), true, 0)));
    let mut head = ResponseReader::new();
    head.start(true);
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
    assert_eq!(head.feed(wire), Ok((wire.len(), Progress::Done)));
    assert!(head.body().is_empty());
}

#[test]
fn malformed_responses_are_errors() {
    let cases: &[(&[u8], ResponseError)] = &[
        (
            b"HTTP/1.1 2x0 OK\r\n\r\n",
            ResponseError::Head(httparse::Error::Status),
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
            ResponseError::ContentLength,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            ResponseError::ContentLength,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
            ResponseError::ContentLength,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n",
            ResponseError::BodyTooLarge,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            ResponseError::ChunkSize,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n",
            ResponseError::ChunkEnd,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1234567890abcdef0\r\n",
            ResponseError::ChunkSize,
        ),
        (
            b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
            ResponseError::Upgrade,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel",
            ResponseError::Truncated,
        ),
        (b"HTTP/1.1 200 OK\r\nContent", ResponseError::Truncated),
    ];
    for (wire, error) in cases {
        assert_eq!(
            whole(wire),
            Err(*error),
            "{}",
            String::from_utf8_lossy(wire)
        );
    }
    let long = [b'a'; MAX_HEAD + 10];
    assert_eq!(
        whole(&long),
        Err(ResponseError::Head(httparse::Error::Version))
    );
    let mut long_head = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
    long_head.extend(std::iter::repeat_n(b'a', MAX_HEAD));
    assert_eq!(whole(&long_head), Err(ResponseError::HeadTooLarge));
}

/// A chunked encoding of `body` cut into chunks of the given sizes.
fn chunked(body: &[u8], sizes: &[usize]) -> Vec<u8> {
    let mut wire = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
    let mut rest = body;
    let mut sizes = sizes.iter().cycle();
    while !rest.is_empty() {
        let n = (*sizes.next().unwrap_or(&1)).clamp(1, rest.len());
        wire.extend_from_slice(format!("{n:x};ext=1\r\n").as_bytes());
        wire.extend_from_slice(&rest[..n]);
        wire.extend_from_slice(b"\r\n");
        rest = &rest[n..];
    }
    wire.extend_from_slice(b"0\r\nTrailer: yes\r\n\r\n");
    wire
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_split_reads_the_same_response(
        body in proptest::collection::vec(any::<u8>(), 0..300),
        sizes in proptest::collection::vec(1usize..64, 1..6),
        cuts in proptest::collection::vec(0usize..600, 0..8),
        use_chunks in any::<bool>(),
    ) {
        let wire = if use_chunks {
            chunked(&body, &sizes)
        } else {
            let mut w = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
            w.extend_from_slice(&body);
            w
        };
        prop_assert_eq!(read(&wire, &cuts), Ok((200, body, true, 0)));
    }

    #[test]
    fn garbage_is_an_error_or_a_response_never_a_panic(
        prefix in prop_oneof![
            Just(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec()),
            Just(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n".to_vec()),
            Just(Vec::new()),
        ],
        tail in proptest::collection::vec(any::<u8>(), 0..200),
        cuts in proptest::collection::vec(0usize..300, 0..4),
    ) {
        let mut wire = prefix;
        wire.extend_from_slice(&tail);
        let _ = read(&wire, &cuts);
    }
}
