//! The endpoint (peer table, eviction, expiry, re-answer bound, response limiter) fed
//! arbitrary datagram sequences from several addresses while time advances.
//!
//! First byte: bits 0-1 pick the server configuration, bit 2 turns the response limiter
//! on. Then operations, each: one byte whose low 3 bits pick the source address (of 8,
//! two of them in one /24) and whose high 5 bits advance the clock by that many times
//! 50 ms; one byte choosing the datagram (0-3: a real ClientHello of a fixture client,
//! anything else: the length-prefixed bytes that follow). See
//! `wtls_fuzz::drive_endpoint` for the invariants checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wtls_fuzz::{drive_endpoint, fixture, EndpointOp};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, mut rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    let server = f.servers[usize::from(selector & 0b11) % f.servers.len()].clone();
    let mut ops = Vec::new();
    while let [source, kind, tail @ ..] = rest {
        let (datagram, next): (&[u8], &[u8]) = if *kind < 4 {
            (&f.hellos[usize::from(*kind) % f.hellos.len()], tail)
        } else if let [hi, lo, body @ ..] = tail {
            let len = usize::from(u16::from_be_bytes([*hi, *lo])).min(body.len());
            body.split_at(len)
        } else {
            break;
        };
        ops.push(EndpointOp {
            source: source & 0b111,
            advance_ms: u64::from(source >> 3) * 50,
            datagram,
        });
        rest = next;
    }
    drive_endpoint(server, selector & 0b100 != 0, &ops);
});
