//! The endpoint (peer table, eviction, expiry, re-answer bound, response limiter) fed
//! arbitrary datagram sequences from several addresses while time advances.
//!
//! First byte: bits 0-1 pick the server configuration, bit 2 turns the response limiter
//! on. Then operations, each: one byte whose low 3 bits pick the source address (of 8,
//! two of them in one /24) and whose high 5 bits advance the clock by that many times
//! 50 ms; one byte choosing the datagram (0-3: a real ClientHello of a fixture client,
//! anything else: the length-prefixed bytes that follow). See
//! `wtls_fuzz::endpoint_input` and `drive_endpoint` for the parsing and the invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wtls_fuzz::endpoint_input(data));
