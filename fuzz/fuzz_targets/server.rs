//! The server state machine fed arbitrary sequences of datagrams.
//!
//! First byte: bits 0-1 pick the server configuration (server-auth with the thesis'
//! CertificateRequest, mutual, permissive); bits 2-4 pick a real ClientHello to send
//! first (0 = none, 1-4 = one of the fixture clients); bit 5 switches to a real
//! handshake whose client datagrams are tampered with (see `tampered_handshake`).
//! The rest is length-prefixed datagrams.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wtls_fuzz::{drive_server, fixture, read_tampers, split_datagrams, tampered_handshake};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    let server = f.servers[usize::from(selector & 0b11) % f.servers.len()].clone();
    let hello = usize::from((selector >> 2) & 0b111);
    if selector & 0b10_0000 != 0 {
        let client = f.clients[hello % f.clients.len()].clone();
        let (tampers, rest) = read_tampers(rest);
        tampered_handshake(client, server, &tampers, &split_datagrams(rest));
        return;
    }
    let mut datagrams: Vec<&[u8]> = Vec::new();
    if hello > 0 {
        datagrams.push(&f.hellos[(hello - 1) % f.hellos.len()]);
    }
    datagrams.extend(split_datagrams(rest));
    drive_server(server, &datagrams);
});
