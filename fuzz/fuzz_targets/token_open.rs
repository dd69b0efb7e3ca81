//! The connect token opener (what a server runs on every connection request)
//! and the client-side token decoder, on arbitrary bytes. Inputs shorter than
//! a request are also tried padded to the request size, so the opener's later
//! checks are reached. Checks: no panic; an input that opens is a real request.
#![no_main]

use hightick_fuzz::{PROTOCOL, UNIX_NOW, private_key, server_addr};
use hightick_net::ConnectToken;
use hightick_net::token::CONNECT_TOKEN_BYTES;
use hightick_net::wire::{self, REQUEST_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let key = private_key();
    let _ = ConnectToken::open(data, &key, PROTOCOL, server_addr(), UNIX_NOW);
    let mut request = [0u8; REQUEST_BYTES];
    let n = data.len().min(REQUEST_BYTES);
    request[..n].copy_from_slice(&data[..n]);
    if let Ok(opened) = ConnectToken::open(&request, &key, PROTOCOL, server_addr(), UNIX_NOW) {
        // Only the gateway's key can produce this: the fuzzer found a valid seal.
        assert!(opened.expire_unix > UNIX_NOW);
        assert!(opened.private.server_addresses.contains(&server_addr()));
    }
    let _ = wire::read_request(data);
    let _ = wire::read_header(data);
    let _ = ConnectToken::decode(data);
    let mut token = [0u8; CONNECT_TOKEN_BYTES];
    let n = data.len().min(CONNECT_TOKEN_BYTES);
    token[..n].copy_from_slice(&data[..n]);
    if let Ok(t) = ConnectToken::decode(&token) {
        // What decodes re-encodes to the same bytes up to the padding.
        assert_eq!(ConnectToken::decode(&t.encode()).as_ref(), Ok(&t));
    }
});
