//! Every handshake message: `HandshakeMessage::read_record` under each key exchange
//! context (none, and every suite, since ServerKeyExchange and ClientKeyExchange parse
//! by suite). A message that parses must re-encode to the same bytes: the transcript
//! hashes the bytes as received, so a lossy parse would hide a Finished mismatch.
//! One documented exception: an RSA ClientKeyExchange is also accepted without its
//! 2-byte length prefix (the bare ciphertext, as some WTLS stacks send it); then the
//! body must be exactly the ciphertext.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wtls::msgs::enums::KeyExchangeSuite;
use wtls::msgs::handshake::{ClientKeyExchange, HandshakeMessage};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, fragment)) = data.split_first() else {
        return;
    };
    let suites = KeyExchangeSuite::ALL;
    let ctx = match usize::from(selector) % (suites.len() + 1) {
        0 => None,
        i => Some(suites[i - 1]),
    };
    if let Ok(msg) = HandshakeMessage::read_record(fragment, ctx) {
        if let HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Rsa(ct)) = &msg {
            if msg.to_bytes() != fragment {
                assert_eq!(&fragment[3..], ct.as_slice(), "bare RSA ciphertext");
                return;
            }
        }
        assert_eq!(msg.to_bytes(), fragment, "{msg:?} is not canonical");
    }
});
